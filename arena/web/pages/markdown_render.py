"""Our own Markdown files as HTML: CommonMark (markdown-it-py) with tables and heading anchors, code
highlighted by Pygments, and repository paths turned into links to the pages that show those files.

Only the arena's own documentation goes through here (never user input), so raw HTML in a file is
passed through as written. CommonMark keeps fences inside list items, line breaks in code blocks and
indentation, which the previous renderer lost. A path is linked when it names a file or folder that
``/docs/files/`` serves (``source_files.SERVED``), written as inline code (``sample_bots/sdk.py``) or as a
Markdown link relative to the file being rendered.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from html import escape

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.anchors import anchors_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

#: Fence names our files use that Pygments spells differently.
LEXER_ALIASES = {"sh": "bash", "shell": "bash", "console": "shell-session", "js": "javascript", "jsonc": "json"}
PATHLIKE = re.compile(r"^(?:\./)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/?$")

Linker = Callable[[str], str | None]  # repository path -> URL of a page showing it, or None


def highlight_code(code: str, lang: str) -> str:
    """Pygments HTML for ``code`` in ``lang`` (a <pre> of its own, which markdown-it keeps as it is), or ""
    to let markdown-it escape it as plain code."""
    name = LEXER_ALIASES.get(lang.lower(), lang.lower()) if lang else ""
    if not name:
        return ""
    try:
        lexer = get_lexer_by_name(name)
    except ClassNotFound:
        return ""
    spans = highlight(code, lexer, HtmlFormatter(nowrap=True))
    return f'<pre class="highlight"><code class="language-{escape(name)}">{spans}</code></pre>\n'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "highlight": lambda code, lang, _attrs: highlight_code(code, lang)})
    md.enable("table")
    md.use(anchors_plugin, min_level=1, max_level=3, slug_func=slug)
    # A wide table scrolls inside its own wrap on a phone (static/scroll_regions.js adds the hint).
    md.add_render_rule("table_open", lambda *_args: '<div class="table-wrap"><table>\n')
    md.add_render_rule("table_close", lambda *_args: "</table></div>\n")
    return md


def slug(text: str) -> str:
    """GitHub-like heading ids ("Your first bot" -> "your-first-bot"), so links into the README still work."""
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return re.sub(r"\s", "-", text)


_MD = _parser()


def render_markdown(text: str, source: str = "", linker: Linker | None = None) -> str:
    """HTML of ``text``, from the repository file ``source`` (its folder anchors relative links)."""
    tokens = _MD.parse(text)
    _aligned_by_class(tokens)
    if linker is not None:
        _link_paths(tokens, posixpath.dirname(source), linker)
    return _MD.renderer.render(tokens, _MD.options, {})


def _aligned_by_class(tokens: list[Token]) -> None:
    """A table column's alignment as a class (``align-right``; arena.css), not the inline ``style`` markdown-it
    writes: the pages' Content-Security-Policy (``style-src 'self'``) refused every such attribute, a console
    error per cell, and the columns lost their alignment."""
    for token in tokens:
        style = str(token.attrGet("style") or "")
        if token.type in ("th_open", "td_open") and style.startswith("text-align:"):
            del token.attrs["style"]
            token.attrSet("class", f"align-{style.removeprefix('text-align:').strip()}")


def _link_paths(tokens: list[Token], folder: str, linker: Linker) -> None:
    inside_link = 0  # a path already inside a link stays as it is (no link in a link)
    for token in tokens:
        if token.children:
            _link_paths(token.children, folder, linker)
        if token.type == "link_close":
            inside_link -= 1
        if token.type == "link_open":
            inside_link += 1
            href = str(token.attrGet("href") or "")
            if href and not re.match(r"^[a-z][a-z0-9+.-]*:|^[/#]", href):
                path, _, anchor = href.partition("#")
                url = linker(posixpath.normpath(posixpath.join(folder, path)))
                if url:
                    token.attrSet("href", url + (f"#{anchor}" if anchor else ""))
        elif (token.type == "code_inline" and not inside_link and PATHLIKE.match(token.content)
              and "/" in token.content):
            url = linker(posixpath.normpath(token.content.removeprefix("./")))
            if url:
                token.type = "html_inline"
                token.content = f'<a href="{escape(url)}"><code>{escape(token.content)}</code></a>'


def highlight_css(light_style: str = "default", dark_style: str = "github-dark") -> str:
    """The stylesheet for highlighted code, light and dark (written to static/highlight.css)."""
    light = HtmlFormatter(style=light_style).get_style_defs(".highlight")
    dark = HtmlFormatter(style=dark_style).get_style_defs(".highlight")
    return (f"/* Pygments {light_style} and {dark_style}: made by arena.web.pages.markdown_render.highlight_css */\n"
            f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n")
