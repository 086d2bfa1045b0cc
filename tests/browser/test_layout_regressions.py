"""Layout faults a user saw on a phone, checked in the browser: measured, not eyeballed."""

from __future__ import annotations

from tests.browser.test_every_page import DESKTOP, PHONE, open_page


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
            .filter(box => box.getClientRects().length > 0)  // the chosen game's bots: the others are hidden
            .map(box => Math.round(box.getBoundingClientRect().width))""")
    finally:
        context.close()
    assert len(widths) > 1 and len(set(widths)) == 1, widths


def test_regression_the_tournament_form_showed_every_games_bots_after_a_game_was_chosen(chromium, sessions,
                                                                                       showcase) -> None:
    """The form's script marks other games' bots ``hidden``, but ``.bot-picker li {display: flex}`` overrode
    the attribute: after choosing a game every bot stayed visible and tickable, and ticking another game's bot
    was refused on submission ("do not play piranha-pedro-ko")."""
    context, page, _response, _errors = open_page(chromium, sessions, showcase, "/tournaments/new", "organizer",
                                                  DESKTOP)
    try:
        games = page.evaluate("""() => Array.from(new Set(Array.from(
            document.querySelectorAll('.bot-picker li[data-game]')).map(li => li.dataset.game)))""")
        assert len(games) > 1, games
        for game in games:
            page.select_option("#game", game)
            shown = page.evaluate("""() => Array.from(document.querySelectorAll('.bot-picker li[data-game]'))
                .filter(li => li.getClientRects().length > 0).map(li => li.dataset.game)""")
            assert shown and set(shown) == {game}, (game, shown)
    finally:
        context.close()
