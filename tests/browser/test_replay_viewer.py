"""The replay viewers in Chromium, on finished matches of every game (``showcase``): regression tests for
what issue 18 found wrong (the turn number, unrevealed cards, Pedro's path, Pajarracos' symbols, arrow
keys), and the Korean text and the tutorial as a reader sees them."""

from __future__ import annotations

import json
import re
from itertools import pairwise

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
CELL = 30  # replay_boards.js: one square of the river, in SVG units
PIRANHA_GAMES = ["piranha-pedro", "piranha-pedro-ko", "piranha-pedro-ko-advanced"]


def open_match(chromium, showcase, game: str, index: int = 0, step: int | None = None):  # type: ignore[no-untyped-def]
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    suffix = f"#step={step}" if step is not None else ""
    page.goto(f"{showcase.url}/matches/{showcase.matches[game][index]}{suffix}")
    page.wait_for_function("() => document.getElementById('replay').dataset.step !== undefined")
    return context, page, errors


def replay_data(page) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(page.locator("#replay-data").text_content())


def open_match_where(chromium, showcase, game: str, wanted):  # type: ignore[no-untyped-def]
    """The first of the game's showcase matches whose replay steps satisfy ``wanted`` (random bots play
    them: a case one match lacks, another has)."""
    for index in range(len(showcase.matches[game])):
        context, page, errors = open_match(chromium, showcase, game, index)
        if wanted(replay_data(page)["steps"]):
            return context, page, errors
        context.close()
    pytest.fail(f"no {game} match of the showcase has the case this test needs")


def bends(path: list) -> bool:
    return len({a[0] == b[0] for a, b in pairwise(path)}) > 1


def go_to(page, step: int) -> None:  # type: ignore[no-untyped-def]
    page.evaluate("k => { const s = document.getElementById('replay-slider'); s.value = k;"
                  " s.dispatchEvent(new Event('input')); }", step)


@pytest.mark.parametrize("game", [*PIRANHA_GAMES, "pajarracos"])
def test_regression_the_slider_and_the_side_panel_disagreed_on_the_turn(chromium, showcase, game) -> None:
    """Turn 10 on the slider, 11 in the side panel (Pajarracos); 40 against 37 (Piranha Pedro): both now
    print the game's own turn of the step."""
    context, page, errors = open_match_where(chromium, showcase, game, lambda steps: any(
        s["game_turn"]["number"] != s["turn"] for s in steps))  # where the two counters differ
    try:
        steps = replay_data(page)["steps"]
        word = "move round" if game.startswith("piranha") else "turn"
        for k in range(1, len(steps) + 1):
            go_to(page, k)
            label = page.locator("#step-label").text_content()
            facts = page.locator("#table-state p").filter(has_text=re.compile(rf"^{word} \d+")).first.text_content()
            on_label = re.search(rf"{word} (\d+)", label).group(1)
            on_side = re.match(rf"{word} (\d+)", facts).group(1)
            assert on_label == on_side == str(steps[k - 1]["game_turn"]["number"]), (k, label, facts)
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("game", PIRANHA_GAMES)
def test_regression_cards_never_revealed_after_pedro_fell_are_marked(chromium, showcase, game) -> None:
    """A step said "plays N3" for a card that went under the board unseen (the Played column, which lists
    revealed cards only, rightly showed N2): such cards are now marked in both places."""
    context, page, errors = open_match_where(chromium, showcase, game, lambda steps: any(
        not c["revealed"] for s in steps for d in s["decisions"] for c in d.get("cards", [])))
    try:
        steps = replay_data(page)["steps"]
        hidden = [(k, d["seat"], c["card"]) for k, s in enumerate(steps, start=1) for d in s["decisions"]
                  for c in d.get("cards", []) if not c["revealed"]]
        k, _seat, card = hidden[0]
        go_to(page, k)
        marked = page.locator("#decisions .card-unrevealed")
        assert marked.count() == sum(1 for h in hidden if h[0] == k)
        assert card in marked.all_text_contents() and "never revealed" in page.locator("#decisions").text_content()
        assert page.locator("#table-state td .card-unrevealed").count() == marked.count()
        revealed = [c["card"] for d in steps[k - 1]["decisions"] for c in d.get("cards", []) if c["revealed"]]
        for line in page.locator("#decisions .decision-action").all_text_contents():
            if line.startswith("plays "):
                assert any(r in line for r in revealed)
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("game", PIRANHA_GAMES)
def test_regression_the_last_move_line_cut_diagonally(chromium, showcase, game) -> None:
    """The line from Pedro's old square to his new one cut across the river; it now follows his path,
    one square per arrow."""
    context, page, errors = open_match_where(chromium, showcase, game, lambda steps: any(
        bends(s.get("path", [])) for s in steps))  # where the old straight line was a diagonal
    try:
        steps = replay_data(page)["steps"]
        walked = [k for k, s in enumerate(steps, start=1) if len(s.get("path", [])) > 2]
        turned = 0
        for k in walked:
            go_to(page, k)
            points = page.locator("svg.river polyline.trail").get_attribute("points")
            xy = [tuple(float(v) for v in p.split(",")) for p in points.split()]
            assert len(xy) == len(steps[k - 1]["path"]) and page.locator("svg.river line.trail").count() == 0
            for (x1, y1), (x2, y2) in pairwise(xy):
                assert abs(x1 - x2) + abs(y1 - y2) == CELL, (k, points)  # one square, never a diagonal
            turned += bends(xy)
        assert turned >= 1
        assert errors == []
    finally:
        context.close()


def test_pajarracos_has_a_legend_for_its_symbols(chromium, showcase) -> None:
    context, page, errors = open_match(chromium, showcase, "pajarracos", step=5)
    try:
        legend = page.locator("#board .board-legend")
        assert legend.is_visible()
        text = legend.text_content()
        for word in ("cherries", "apples", "oranges", "bananas", "grapes", "juicy", "crow", "flock", "scarecrow",
                     "the player to act"):
            assert word in text, word
        chips = legend.locator(".card-chip")
        assert chips.count() == 6 and all(b["height"] > 5 for b in (c.bounding_box() for c in chips.all()))
        assert errors == []
    finally:
        context.close()


def test_regression_arrow_keys_worked_only_after_twelve_tabs(chromium, showcase) -> None:
    """Arrow keys step the viewer when nothing else on the page has focus; widgets keep their own keys."""
    context, page, errors = open_match(chromium, showcase, "pajarracos")
    try:
        slider = page.locator("#replay-slider")
        assert page.evaluate("() => document.activeElement === document.body")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert slider.input_value() == "2" and "Step 2 of" in page.locator("#step-label").text_content()
        page.keyboard.press("ArrowLeft")
        assert slider.input_value() == "1"
        page.locator("h1").click()  # clicking the page's text focuses <main> (tabindex -1): still the viewer's keys
        page.keyboard.press("ArrowRight")
        assert slider.input_value() == "2"
        page.get_by_role("button", name="Next step").focus()  # the viewer's own buttons pass keys on
        page.keyboard.press("ArrowRight")
        assert slider.input_value() == "3"
        page.locator("#replay-speed").focus()  # a menu keeps its arrow keys
        page.keyboard.press("ArrowRight")
        assert slider.input_value() == "3"
        page.locator(".facts a").first.focus()  # a link elsewhere on the page has focus: its keys, not the viewer's
        page.keyboard.press("ArrowRight")
        assert slider.input_value() == "3"
        assert errors == []
    finally:
        context.close()


def test_korean_text_renders_without_boxes_on_a_machine_without_a_korean_font(chromium, showcase) -> None:
    """The browser has no Korean font of its own (the CI machine installs none): the shipped Hangul subset
    draws 피라니아, in the text and in the links laid out while the font was still loading."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(showcase.url + "/docs/games/piranha-pedro-ko")
        page.wait_for_function("() => document.documentElement.classList.contains('hangul-ready')")
        assert page.evaluate("() => document.fonts.check('16px \"Arena Hangul\"', '피라니아')")
        # Distinct syllables drawn with the page's fonts differ; boxes for missing glyphs all look alike.
        distinct = page.evaluate("""() => {
            const font = getComputedStyle(document.body).fontFamily;
            const draw = text => { const c = document.createElement('canvas'); c.width = 80; c.height = 40;
                const g = c.getContext('2d'); g.font = '32px ' + font; g.fillText(text, 4, 32); return c.toDataURL(); };
            return [draw('가') !== draw('나'), draw('가') !== draw('\\ue000')];
        }""")
        assert distinct == [True, True]
        # The sidebar's link was laid out while the font was still loading: it must now be as wide as the same
        # text laid out afresh (boxes and Hangul glyphs have different widths, checked on the last line).
        widths = page.evaluate("""() => {
            const a = document.querySelector('nav.toc a[aria-current]'), list = a.parentElement.parentElement;
            const item = text => { const li = a.parentElement.cloneNode(true); li.firstElementChild.textContent = text;
                                   list.appendChild(li); return li.firstElementChild; };
            const copy = item(a.textContent), boxes = item(a.textContent.replace(/[\\uac00-\\ud7a3]/g, '\\ue000'));
            return [a.getBoundingClientRect().width, copy.getBoundingClientRect().width,
                    boxes.getBoundingClientRect().width, a.textContent]; }""")
        assert "피라니아" in widths[3]
        assert abs(widths[0] - widths[1]) < 0.5, widths
        assert abs(widths[1] - widths[2]) > 2, widths
    finally:
        context.close()


def test_the_tutorial_keeps_its_code_blocks(chromium, showcase) -> None:
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(showcase.url + "/docs#tutorial")
        tutorial = page.locator("#tutorial")
        assert "```" not in tutorial.inner_text()
        blocks = tutorial.locator("pre").all_inner_texts()
        assert any("def act(" in b and "\n    " in b for b in blocks), blocks
        link = tutorial.get_by_role("link", name="sample_bots/starters/").first
        link.click()
        # /docs itself links "sample_bots/starters/python/": wait for the listing, not the page being left
        page.wait_for_url(re.compile(r"/docs/files/sample_bots/starters$"))
        expect(page.get_by_role("link", name="python/")).to_be_visible()
    finally:
        context.close()
