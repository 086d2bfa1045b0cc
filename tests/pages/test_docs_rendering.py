"""The documentation pages: Markdown rendered by a CommonMark library (fences inside lists, newlines and
indentation kept, code highlighted), repository paths linked to the pages that show those files, and a
players' rules page for every game."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from arena.storage.db import Database
from arena.web.pages.docs import GAME_DOCS
from arena.web.pages.markdown_render import render_markdown
from referee.games import GAMES


@pytest.fixture
def database(tmp_path):  # type: ignore[no-untyped-def]
    """SQLite only: these pages read files, not the database."""
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    yield db
    db.dispose()


def text_of(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_regression_the_tutorial_showed_literal_fences_and_lost_newlines_and_indentation(client) -> None:
    """/docs#tutorial: a fence inside a numbered list came out as ``` and one run-on line of code."""
    page = client.get("/docs").get_data(as_text=True)
    tutorial = page.split('id="tutorial"', 1)[1].split('id="protocol"', 1)[0]
    assert "```" not in text_of(tutorial)
    blocks = [text_of(b) for b in re.findall(r"<pre[^>]*>(.*?)</pre>", tutorial, re.S)]
    assert len(blocks) >= 5
    python = next(b for b in blocks if "def act(" in b)
    assert "\n    " in python  # the body of the function keeps its indentation, on lines of its own
    assert any("random_bot --port 9001 &\n" in b for b in blocks)  # the fence inside the list item


def test_fences_inside_list_items_keep_lines_and_indentation() -> None:
    html = render_markdown("1. Run:\n\n   ```python\n   def f():\n       return 1\n   ```\n2. Done\n")
    assert "```" not in html and "<ol>" in html
    code = text_of(re.search(r"<pre.*?</pre>", html, re.S).group(0))
    assert code == "def f():\n    return 1\n"


def test_code_is_highlighted_and_plain_fences_are_escaped() -> None:
    html = render_markdown("```python\nx = '<b>'\n```\n\n```\n<script>alert(1)</script>\n```\n")
    assert '<pre class="highlight"><code class="language-python">' in html and 'class="s1"' in html
    assert "&lt;b&gt;" in html and "<script>" not in html and "&lt;script&gt;" in html


def test_repository_paths_become_links_to_the_files_the_arena_shows(client) -> None:
    page = client.get("/docs").get_data(as_text=True)
    assert '<a href="/docs/files/sample_bots/starters"><code>sample_bots/starters/</code></a>' in page
    assert '<a href="/docs/files/docs/protocol.md"><code>docs/protocol.md</code></a>' in page
    assert "<code>my-bot-py/bot.py</code>" in page and 'href="/docs/files/my-bot-py' not in page  # not in the repo
    links = set(re.findall(r'href="(/docs/files/[^"#]+)"', page))
    assert len(links) >= 5
    for link in links:
        assert client.get(link).status_code == 200, link


def test_relative_markdown_links_resolve_from_the_file_s_folder() -> None:
    seen = []

    def linker(path: str) -> str | None:
        seen.append(path)
        return "/docs/files/" + path

    html = render_markdown("[go](../sample_bots/starters/go/README.md#run) [web](https://example.org) [top](#x)",
                           "docs/bots.md", linker)
    assert 'href="/docs/files/sample_bots/starters/go/README.md#run"' in html
    assert 'href="https://example.org"' in html and 'href="#x"' in html
    assert seen == ["sample_bots/starters/go/README.md"]


def test_the_files_page_shows_folders_code_markdown_and_raw_text(client) -> None:
    listing = client.get("/docs/files/sample_bots/starters").get_data(as_text=True)
    assert 'href="/docs/files/sample_bots/starters/python"' in listing
    code = client.get("/docs/files/sample_bots/sdk.py")
    assert code.status_code == 200
    assert '<pre class="highlight"><code class="language-python">' in code.get_data(as_text=True)
    readme = client.get("/docs/files/sample_bots/starters/python/README.md").get_data(as_text=True)
    assert '<div class="prose">' in readme and "<h1" in readme
    raw = client.get("/docs/files/sample_bots/sdk.py?raw=1")
    assert raw.mimetype == "text/plain" and raw.get_data(as_text=True).startswith('"""')
    assert client.get("/docs/files/").status_code == 200


@pytest.mark.parametrize("path", ["../README.md", "arena/config.py", "pyproject.toml", "docs/../pyproject.toml",
                                  "sample_bots/../arena/config.py", ".git/config", "arena", "referee/runner.py",
                                  "sample_bots/nope.py", "docs/%2e%2e/pyproject.toml"])
def test_the_files_page_shows_nothing_outside_the_served_folders(client, path) -> None:
    response = client.get(f"/docs/files/{path}")
    assert response.status_code == 404, path


def test_every_game_has_a_players_rules_page(client) -> None:
    assert set(GAME_DOCS) == set(GAMES)
    docs = client.get("/docs").get_data(as_text=True)
    for name, game in GAMES.items():
        response = client.get(f"/docs/games/{name}")
        assert response.status_code == 200, name
        page = response.get_data(as_text=True)
        prose = text_of(page.split('<div class="prose">', 1)[1])
        assert game.spec.title in page and f'href="/docs/games/{name}"' in docs
        for words in ("What your bot receives and answers", "How a match is played here", "legal_actions"):
            assert words in prose, (name, words)
        for internal in ("referee/", "tests/", "DECISIONS", "RECONSTRUCTION", "../shared"):
            assert internal not in prose, (name, internal)


def test_regression_the_korean_edition_s_rules_page_was_a_404(client) -> None:
    page = client.get("/docs/games/piranha-pedro-ko")
    assert page.status_code == 200 and "피라니아" in page.get_data(as_text=True)
    assert client.get("/docs/games/nope").status_code == 404


def test_a_path_already_inside_a_link_is_not_linked_again() -> None:
    html = render_markdown("[`sample_bots/starters/go/`](../sample_bots/starters/go/README.md)", "docs/protocol.md",
                           lambda path: "/docs/files/" + path)
    assert html.count("<a ") == 1 and 'href="/docs/files/sample_bots/starters/go/README.md"' in html


def relative_luminance(colour: str) -> float:
    digits = colour.lstrip("#")
    digits = "".join(c * 2 for c in digits) if len(digits) == 3 else digits
    channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_highlighted_code_meets_wcag_aa_contrast_in_light_and_dark() -> None:
    """The browser tests' axe scan skips highlighted code (thousands of spans); its colours are checked here,
    each token colour against the code background of its scheme (whitespace tokens draw nothing)."""
    css = (Path(__file__).resolve().parents[2] / "arena/web/static/highlight.css").read_text(encoding="utf-8")
    light, dark = css.split("@media (prefers-color-scheme: dark)")
    for part in (light, dark):
        background = re.search(r"\.highlight \{ background: (#[0-9a-fA-F]{3,6})", part).group(1)
        tokens = re.findall(r"\.highlight \.(\w+) \{ color: (#[0-9a-fA-F]{3,6})", part)
        assert len(tokens) > 40
        low = [(token, colour) for token, colour in tokens if token != "w" and contrast(colour, background) < 4.5]
        assert low == [], (background, low)


def test_regression_no_rendered_doc_carries_an_inline_style_the_pages_policy_refuses() -> None:
    """Regression (a user's trial, twenty-first session): markdown-it writes a table column's alignment as an inline
    ``style``, which the pages' Content-Security-Policy (``style-src 'self'``) refuses: about 200 console errors
    on docs/bots.md, and its number columns lost their alignment. Alignment is a class now (arena.css)."""
    html = render_markdown("| a | b | c |\n|:--|--:|:-:|\n| 1 | 2 | 3 |\n")
    assert '<th class="align-left">a</th>' in html and '<td class="align-right">2</td>' in html
    assert '<td class="align-center">3</td>' in html and "style=" not in html
    css = (Path(__file__).resolve().parents[2] / "arena" / "web" / "static" / "arena.css").read_text()
    assert all(f".align-{side} {{ text-align: {side}; }}" in css for side in ("left", "center", "right"))
    root = Path(__file__).resolve().parents[2]
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        rendered = render_markdown(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
        assert not re.search(r"<[a-z][^>]*\sstyle=", rendered), path  # (an attribute, not the word in a text)
