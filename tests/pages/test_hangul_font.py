"""The Hangul font the pages ship (static/fonts/noto-sans-kr-hangul.woff2, made by
scripts/subset_korean_font.py): it holds every Hangul character of the arena's own text and the 2,350
everyday syllables, the stylesheet loads it for Hangul only, and the policy lets the browser load it."""

from __future__ import annotations

from pathlib import Path

from fontTools.ttLib import TTFont  # reading WOFF2 needs brotli: fonttools[woff] in the test extras

from arena.web.headers import CONTENT_SECURITY_POLICY
from scripts.subset_korean_font import OUT, own_hangul, wanted

STATIC = Path(__file__).resolve().parents[2] / "arena/web/static"


def test_the_subset_covers_our_own_korean_text_and_everyday_syllables() -> None:
    cmap = set(TTFont(OUT).getBestCmap())
    ours = own_hangul()
    assert {ord(c) for c in "피라니아통나무"} <= ours  # the games' titles and rules pages
    missing = sorted(chr(cp) for cp in wanted() - cmap)
    assert not missing, f"regenerate with scripts/subset_korean_font.py: {''.join(missing[:40])}"
    assert OUT.stat().st_size < 200_000  # Hangul only: no Latin, no Han


def test_the_stylesheet_uses_it_for_hangul_only_and_the_policy_allows_it() -> None:
    css = (STATIC / "arena.css").read_text(encoding="utf-8")
    assert 'url("fonts/noto-sans-kr-hangul.woff2")' in css
    assert "unicode-range: U+1100-11FF, U+3131-318E, U+AC00-D7A3" in css
    assert '"Arena Hangul"' in css.split(":root {", 1)[1].split("}", 1)[0]
    assert "font-src 'self'" in CONTENT_SECURITY_POLICY
    assert (STATIC / "fonts/OFL.txt").read_text(encoding="utf-8").count("SIL OPEN FONT LICENSE Version 1.1") == 1
