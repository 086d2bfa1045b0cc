"""``/docs``: the bot tutorial and the protocol, rendered from the repository's ``docs/`` folder.

The folder sits next to the ``arena`` package in a checkout; an installed copy without it gets a page
that says where the documentation lives instead of an error. Rendered HTML is cached per file and
re-rendered when the file changes, so the page costs a ``stat`` per file.
"""

from __future__ import annotations

import re
from pathlib import Path

import markdown
from flask import current_app
from markupsafe import Markup

from arena.web.pages import pages
from arena.web.pages.common import page
from arena.web.pages.errors import error_page

REPO_ROOT = Path(__file__).resolve().parents[3]
GAME_DOCS = {"piranha-pedro": "games/piranha-pedro.md", "pajarracos": "games/pajarracos.md"}
TUTORIAL_HEADING = re.compile(r"^(#{2,3}) [^\n]*(?:tutorial|first bot)[^\n]*\n.*?(?=^\1 |\Z)", re.I | re.M | re.S)
_cache: dict[tuple[Path, str], tuple[float, Markup]] = {}


def docs_dir() -> Path:
    return Path(current_app.config.get("ARENA_DOCS_DIR") or REPO_ROOT / "docs")


def render(path: Path, part: str = "") -> Markup | None:
    """HTML of a trusted repository file (or of its section matching ``part``: "tutorial"); None if absent."""
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    cached = _cache.get((path, part))
    if cached and cached[0] == mtime:
        return cached[1]
    text = path.read_text(encoding="utf-8")
    if part:
        found = TUTORIAL_HEADING.search(text)
        if found is None:
            return None
        text = found.group(0)
    html = markdown.markdown(text, extensions=["fenced_code", "tables", "toc", "sane_lists"],
                             extension_configs={"tables": {"use_align_attribute": True}})  # no style= (CSP)
    result = Markup(html)  # our own documentation files, never user input
    _cache[(path, part)] = (mtime, result)
    return result


def tutorial(folder: Path) -> Markup | None:
    """``docs/tutorial.md`` if there is one, else the README's tutorial ("... first bot ...") section."""
    return render(folder / "tutorial.md") or render(folder.parent / "README.md", "tutorial")


@pages.get("/docs")
def docs() -> tuple[str, int]:
    folder = docs_dir()
    protocol = render(folder / "protocol.md")
    if protocol is None:
        return page("docs.html", 503, missing=str(folder))
    games = [name for name, rel in GAME_DOCS.items() if (folder / rel).is_file()]
    return page("docs.html", tutorial=tutorial(folder), protocol=protocol, games=games, missing=None)


@pages.get("/docs/games/<name>")
def game_docs(name: str) -> tuple[str, int]:
    rel = GAME_DOCS.get(name)
    html = render(docs_dir() / rel) if rel else None
    if html is None:
        return error_page(404, f"No documentation for the game {name!r}.")
    return page("game_docs.html", name=name, html=html)
