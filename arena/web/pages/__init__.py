"""The server-rendered pages: thin views over the same service functions as the JSON API.

Forms are CSRF-protected here only: the API under ``/api`` authenticates with Bearer tokens (no
cookies), so it stays exempt. A signed-in page visitor's session cookie carries only a random key, whose
SHA-256 the database keeps with the account (``arena.services.web_sessions``): signing out revokes it.
"""

from __future__ import annotations

from flask import Blueprint, Flask, current_app
from flask_wtf.csrf import CSRFProtect

from referee.games import GAMES

pages = Blueprint("pages", __name__)


def register_pages(app: Flask) -> None:
    """Attach the pages and their CSRF check to an app built by ``create_app``."""
    app.config.setdefault("WTF_CSRF_CHECK_DEFAULT", False)  # checked by the pages blueprint, not app-wide
    CSRFProtect(app)
    app.register_blueprint(pages)
    app.jinja_env.globals.update(ladder_name=ladder_name, game_title=game_title)


def game_title(game: str) -> str:
    """A game as people read it ("Piranha Pedro"), not its identifier ("piranha-pedro")."""
    return GAMES[game].spec.title if game in GAMES else game


def ladder_name(game: str, players: int) -> str:
    """A ladder as the ladder pages name it ("Piranha Pedro ladder, 3 players"): its id means nothing to a
    reader, and a ladder is its game and table size (one per board)."""
    return f"{game_title(game)} ladder, {players} players"


@pages.before_request
def _check_csrf() -> None:
    current_app.extensions["csrf"].protect()


from arena.web.pages import (  # noqa: E402,F401 - routes register themselves on the blueprint
    accounts,
    bots,
    docs,
    errors,
    find,
    home,
    ladders,
    leaderboards,
    matches,
    my_bots,
    source_files,
    tournaments,
)
