"""Layout faults a user saw on a phone, checked in the browser: measured, not eyeballed."""

from __future__ import annotations

from tests.browser.test_every_page import PHONE, open_page


def test_regression_a_tables_bot_names_broke_at_their_hyphens_on_a_phone(chromium, sessions, showcase) -> None:
    """A tournament's standings at 390 px showed "pj-" over "heuristic": a table that scrolls sideways now
    grows instead, and every bot's name in it stays on one line."""
    path = "/tournaments/{tournaments[pajarracos]}"
    context, page, _response, _errors = open_page(chromium, sessions, showcase, path, None, PHONE)
    try:
        lines = page.evaluate("""() => Array.from(document.querySelectorAll('.table-wrap a[href^="/bots/"]'))
            .map(a => [a.textContent, a.getClientRects().length])""")
    finally:
        context.close()
    assert lines and all(n == 1 for _name, n in lines), [name for name, n in lines if n != 1]


def test_regression_a_long_bot_label_shrank_its_checkbox(chromium, sessions, showcase) -> None:
    """On the new tournament form at 390 px, a bot whose label wrapped had a smaller checkbox than the
    others (a flex item that shrank)."""
    context, page, _response, _errors = open_page(chromium, sessions, showcase, "/tournaments/new", "organizer",
                                                  PHONE)
    try:
        widths = page.evaluate("""() => Array.from(document.querySelectorAll('.bot-picker input'))
            .map(box => Math.round(box.getBoundingClientRect().width))""")
    finally:
        context.close()
    assert len(widths) > 1 and len(set(widths)) == 1, widths
