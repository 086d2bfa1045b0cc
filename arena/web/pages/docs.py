"""``/docs``: the bot tutorial and the protocol; ``/docs/games/<game>``: each game's rules for players.
All rendered from the repository's ``docs/`` folder (``markdown_render``: CommonMark, highlighted code,
repository paths linked to ``/docs/files/``).

The folder sits next to the ``arena`` package in a checkout; an installed copy without it gets a page
that says where the documentation lives instead of an error. Rendered HTML is cached per file and
re-rendered when the file changes, so the page costs a ``stat`` per file.
"""

from __future__ import annotations

import re
from pathlib import Path

from flask import current_app, has_request_context
from markupsafe import Markup

from arena.web.pages import pages
from arena.web.pages.common import page
from arena.web.pages.errors import error_page
from arena.web.pages.markdown_render import render_markdown
from referee.games import GAMES

REPO_ROOT = Path(__file__).resolve().parents[3]
#: The players' rules page of every game, in the order the docs list them.
GAME_DOCS = {"piranha-pedro": "rules/piranha-pedro.md", "piranha-pedro-ko": "rules/piranha-pedro-ko.md",
             "piranha-pedro-ko-advanced": "rules/piranha-pedro-ko-advanced.md", "pajarracos": "rules/pajarracos.md"}
TUTORIAL_HEADING = re.compile(r"^(#{2,3}) [^\n]*(?:tutorial|first bot)[^\n]*\n.*?(?=^\1 |\Z)", re.I | re.M | re.S)
_cache: dict[tuple[Path, str, bool], tuple[float, Markup]] = {}


def docs_dir() -> Path:
    return Path(current_app.config.get("ARENA_DOCS_DIR") or REPO_ROOT / "docs")


def render(path: Path, part: str = "", source: str = "") -> Markup | None:
    """HTML of a trusted repository file (or of its section matching ``part``: "tutorial"); None if absent.
    ``source`` is its repository path (relative links are read from its folder)."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    key = (path, part, has_request_context())
    cached = _cache.get(key)
    if cached and cached[0] == mtime:
        return cached[1]
    text = path.read_text(encoding="utf-8")
    if part:
        found = TUTORIAL_HEADING.search(text)
        if found is None:
            return None
        text = found.group(0)
    from arena.web.pages.source_files import link_for  # the files page renders through this module too

    linker = link_for if has_request_context() else None  # links need the request's URL map
    if not source and linker:
        try:
            source = path.resolve().relative_to(docs_dir().parent.resolve()).as_posix()
        except ValueError:
            source = path.name
    result = Markup(render_markdown(text, source, linker))  # our own documentation files, never user input
    _cache[key] = (mtime, result)
    return result


def tutorial(folder: Path) -> Markup | None:
    """``docs/tutorial.md`` if there is one, else the README's tutorial ("... first bot ...") section."""
    return render(folder / "tutorial.md") or render(folder.parent / "README.md", "tutorial")


def game_titles(folder: Path) -> list[tuple[str, str]]:
    """(game, title) of every game whose rules page exists."""
    return [(name, GAMES[name].spec.title) for name, rel in GAME_DOCS.items() if (folder / rel).is_file()]


@pages.get("/docs")
def docs() -> tuple[str, int]:
    folder = docs_dir()
    protocol = render(folder / "protocol.md")
    if protocol is None:
        return page("docs.html", 503, missing=str(folder))
    return page("docs.html", tutorial=tutorial(folder), protocol=protocol, games=game_titles(folder), missing=None)


@pages.get("/docs/games/<name>")
def game_docs(name: str) -> tuple[str, int]:
    rel = GAME_DOCS.get(name)
    html = render(docs_dir() / rel) if rel else None
    if html is None:
        return error_page(404, f"No rules page for the game {name!r}.")
    return page("game_docs.html", name=name, title=GAMES[name].spec.title, html=html,
                games=game_titles(docs_dir()))
