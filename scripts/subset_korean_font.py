"""Make arena/web/static/fonts/noto-sans-kr-hangul.woff2: the Hangul of Noto Sans CJK KR (SIL OFL 1.1),
so Korean text (the 피라니아 games, Korean bot names) renders on machines without a Korean font.

It keeps the 2,350 syllables of KS X 1001 (what everyday Korean uses), the compatibility jamo, and every
Hangul character of the arena's own docs, templates and game titles; the page's @font-face loads it only
for Hangul (unicode-range), so other pages never download it. Needs fonttools and brotli
(``pip install 'fonttools[woff]'``) and the collection from Debian's fonts-noto-cjk:

    apt-get download fonts-noto-cjk && dpkg-deb -x fonts-noto-cjk_*.deb /tmp/noto
    python scripts/subset_korean_font.py /tmp/noto/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "arena/web/static/fonts/noto-sans-kr-hangul.woff2"
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)
COMPATIBILITY_JAMO = range(0x3131, 0x318F)
OWN_TEXT = ("docs", "arena/web/templates", "referee/games", "README.md")


def is_hangul(cp: int) -> bool:
    return cp in HANGUL_SYLLABLES or cp in COMPATIBILITY_JAMO or 0x1100 <= cp <= 0x11FF


def own_hangul(root: Path = ROOT) -> set[int]:
    """Every Hangul code point in the arena's own text files."""
    found: set[int] = set()
    for rel in OWN_TEXT:
        path = root / rel
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.suffix in (".md", ".html", ".py")]
        for file in files:
            found.update(cp for cp in map(ord, file.read_text(encoding="utf-8", errors="ignore")) if is_hangul(cp))
    return found


def wanted() -> set[int]:
    common = {cp for cp in HANGUL_SYLLABLES if len(chr(cp).encode("euc-kr")) == 2}  # KS X 1001: 2,350
    return common | set(COMPATIBILITY_JAMO) | own_hangul() | {0x20}


def main() -> None:
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", help="NotoSansCJK-Regular.ttc")
    args = parser.parse_args()
    fonts = [f for f in TTCollection(args.collection).fonts if f["name"].getDebugName(4) == "Noto Sans CJK KR"]
    if not fonts:
        raise SystemExit("no 'Noto Sans CJK KR' in that collection")
    font = fonts[0]
    options = subset.Options()
    options.flavor = "woff2"
    options.hinting = False
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(wanted()))
    subsetter.subset(font)
    font.flavor = "woff2"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    font.save(OUT)
    print(f"{OUT.relative_to(ROOT)}: {OUT.stat().st_size} bytes, {len(font.getBestCmap())} characters")


if __name__ == "__main__":
    main()
