"""``/docs/files/<path>``: the repository files the documentation points at (the sample bots and starters,
the docs themselves, the rules engine and its view schemas), shown by the arena itself: a folder as a
list, Markdown rendered, code highlighted, and ``?raw=1`` as plain text to save or ``curl``.

Only the folders in ``SERVED`` are shown, and only text files of the kinds listed: nothing else of the
checkout (configuration, data folders) is reachable, and ``..`` or a link that leads outside is refused.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from flask import Response, request, url_for
from markupsafe import Markup
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

from arena.web.pages import pages
from arena.web.pages.common import page
from arena.web.pages.docs import docs_dir, render
from arena.web.pages.errors import error_page
from arena.web.pages.markdown_render import highlight_code

SERVED = ("README.md", "docs", "sample_bots", "referee/games", "referee/schemas")
TEXT_SUFFIXES = {".md", ".py", ".js", ".go", ".json", ".txt", ".sh", ".toml", ".mod", ".yaml", ".yml"}
HIDDEN = {"__pycache__", "node_modules"}
MAX_BYTES = 400_000


def repo_root() -> Path:
    return docs_dir().parent


def served_path(rel: str) -> Path | None:
    """The file or folder ``rel`` (repository-relative, forward slashes) if it may be shown, else None."""
    parts = PurePosixPath(rel.strip("/")).parts
    if not parts or any(p in ("..", ".") or p.startswith(".") or p in HIDDEN for p in parts):
        return None
    joined = "/".join(parts)
    if not any(joined == s or joined.startswith(s + "/") or s.startswith(joined + "/") for s in SERVED):
        return None
    root = repo_root().resolve()
    path = (root / joined).resolve()
    if not path.is_relative_to(root) or not path.exists():
        return None
    if path.is_file() and (path.suffix not in TEXT_SUFFIXES or path.stat().st_size > MAX_BYTES):
        return None
    return path


def link_for(rel: str) -> str | None:
    """The URL showing a repository path, for the Markdown renderer; None when it is not shown here."""
    rel = rel.strip("/") if rel not in ("", ".") else ""
    return url_for("pages.source_file", path=rel) if rel and served_path(rel) else None


def _listing(path: Path, rel: str) -> list[dict[str, str]]:
    entries = []
    for child in sorted(path.iterdir(), key=lambda p: (p.is_file(), p.name)):
        child_rel = f"{rel}/{child.name}"
        if served_path(child_rel) is not None:
            entries.append({"name": child.name + ("/" if child.is_dir() else ""), "url": url_for(
                "pages.source_file", path=child_rel)})
    return entries


def _code(path: Path) -> Markup:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        lexer = get_lexer_for_filename(path.name, text)
    except ClassNotFound:
        lexer = TextLexer()
    return Markup(highlight_code(text, lexer.aliases[0] if lexer.aliases else "text") or "")


@pages.get("/docs/files/")
@pages.get("/docs/files/<path:path>")
def source_file(path: str = "") -> tuple[str, int] | Response:
    rel = path.strip("/")
    if not rel:
        entries = [{"name": s + ("" if s.endswith(".md") else "/"), "url": url_for("pages.source_file", path=s)}
                   for s in SERVED if served_path(s) is not None]
        return page("source_file.html", rel="", crumbs=[], entries=entries, html=None, raw_url=None)
    found = served_path(rel)
    if found is None:
        return error_page(404, f"The arena does not show {rel!r}: only the documentation, the sample bots and the "
                               "rules engine's files are served here.")
    crumbs = _crumbs(rel)
    if found.is_dir():
        return page("source_file.html", rel=rel, crumbs=crumbs, entries=_listing(found, rel), html=None, raw_url=None)
    if request.args.get("raw"):
        return Response(found.read_bytes(), mimetype="text/plain", headers={"X-Content-Type-Options": "nosniff"})
    html = render(found, source=rel) if found.suffix == ".md" else _code(found)
    return page("source_file.html", rel=rel, crumbs=crumbs, entries=None, html=html,
                raw_url=url_for("pages.source_file", path=rel, raw=1), markdown=found.suffix == ".md")


def _crumbs(rel: str) -> list[dict[str, str]]:
    parts = rel.split("/")
    return [{"name": part, "url": url_for("pages.source_file", path="/".join(parts[:i + 1]))}
            for i, part in enumerate(parts[:-1])]
