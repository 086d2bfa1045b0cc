"""Pages that follow the arena live, in Chromium against a live arena (a real worker on Redis, real bots that
think 50-150 ms a decision): a match's board arrives step by step, the tournament's standings change and the
leaderboard shows its refit without a reload; a match whose deal is still secret shows no board, seed, hand
or result at any moment, and its replay appears by itself once the deal is over."""

from __future__ import annotations

import contextlib
import json
import re
import time

import pytest
from playwright.sync_api import Error as PlaywrightError
from sqlalchemy import select

from arena.services import bots as bot_service
from arena.services.accounts import create_account
from arena.services.tournaments import create_tournament, queue_tournament
from arena.storage.models import Match
from sample_bots.sdk import start_in_thread
from tests.arena.service_harness import slow_bot

pytestmark = pytest.mark.browser
# Every event the page's EventSource delivers, kept where the test can read it.
RECORD_EVENTS = """(() => {
  window.__live = [];
  const Original = window.EventSource;
  if (!Original) return;
  window.EventSource = function (url, options) {
    const source = new Original(url, options);
    const add = source.addEventListener.bind(source);
    source.addEventListener = (type, listener, o) => add(type, e => {
      if (e.data) window.__live.push(type + " " + e.data);
      return listener(e);
    }, o);
    return source;
  };
  window.EventSource.CLOSED = Original.CLOSED;
})();"""


def tournament_of(arena, game: str, seats: int, deals: str, servers) -> tuple[int, list[int]]:
    """A tournament of ``servers``, not queued yet: the pages are opened before its first match starts."""
    with arena.context.db.session() as session:
        organizer, _token = create_account(session, "org", admin=True)
        ids = []
        for n, server in enumerate(servers):
            bot, secret = bot_service.register_bot(session, organizer, f"live-{n}", server.url, game,
                                                   arena.context.settings, arena.context.health_check)
            server.bot.secret = secret
            ids.append(bot.id)
        tournament_id = create_tournament(session, organizer, {"game": game, "bots": ids, "seats": seats,
                                                               "deals": deals, "time_limit_ms": 2000},
                                          arena.context.settings.deal_key()).id
    with arena.context.db.session() as session:
        matches = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)))
    return tournament_id, matches


def play(arena, tournament_id: int) -> None:
    with arena.context.db.session() as session:
        queue_tournament(session, arena.context.queue, tournament_id)


def new_page(browser, errors: list[str]):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.add_init_script(RECORD_EVENTS)
    return page


def page_html(page) -> str:  # type: ignore[no-untyped-def]
    """The page's HTML now. The match page reloads itself when its match ends or its deal is published, and
    ``content()`` refuses while a navigation is under way: then the new document is awaited and read."""
    for _ in range(20):
        try:
            return page.content()
        except PlaywrightError as error:
            if "navigating" not in str(error):
                raise
            page.wait_for_load_state("domcontentloaded")
    raise AssertionError("the page kept navigating for 20 tries")


# One look at the match page, in one call (the page may reload itself between two calls).
LOOK = """() => ({
  same: window.__same === true, replay: !!document.getElementById('replay'),
  status: (document.getElementById('live-status') || {}).textContent || null,
  drawn: !!document.querySelector('#live-board svg, #live-board .orchard, #live-board .orchards, #live-board pre'),
  clocks: (document.getElementById('live-clocks') || {}).textContent || '',
  step_events: (window.__live || []).filter(e => e.startsWith('step ')).length})"""


def phone_check(browser, url: str, screenshots, errors: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The live match on a phone in dark mode: the board arrives and nothing is wider than the screen."""
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                             color_scheme="dark")
    phone.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    try:
        phone.goto(url)
        phone.wait_for_function("() => /Step \\d+|over/.test((document.getElementById('live-status') || {}).textContent"
                                " || 'over')")
        overflow = phone.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"the live match page is wider than a phone by {overflow}px"
        phone.screenshot(path=str(screenshots / "live-match-phone-dark.png"), full_page=True)
    finally:
        phone.close()


def test_a_running_match_and_its_tournament_update_live(live_arena, browser, screenshots) -> None:
    servers = [start_in_thread(slow_bot(n, 0.15)) for n in range(3)]
    errors: list[str] = []
    try:
        tournament_id, matches = tournament_of(live_arena, "pajarracos", 3, "independent", servers)
        standings = new_page(browser, errors)
        standings.goto(f"{live_arena.url}/tournaments/{tournament_id}")
        standings.evaluate("() => { window.__same = true; }")  # gone if the page reloads
        assert standings.locator("table.standings tbody tr td:nth-child(3)").all_text_contents() == ["0"] * 3
        leaderboard = new_page(browser, errors)  # nothing fitted yet: the refit after the matches shows up live
        leaderboard.goto(f"{live_arena.url}/leaderboards/pajarracos?players=3")
        leaderboard.evaluate("() => { window.__same = true; }")
        board = new_page(browser, errors)
        board.goto(f"{live_arena.url}/matches/{matches[0]}")
        board.evaluate("() => { window.__same = true; }")
        board.wait_for_function("() => document.getElementById('live').dataset.liveMode === 'events'")
        play(live_arena, tournament_id)

        steps, step_events, deadline = [], 0, time.monotonic() + 40
        while True:  # until the page shows the published replay
            assert time.monotonic() < deadline, f"no replay: steps seen {steps}\n{live_arena.worker_output()}"
            try:
                now = board.evaluate(LOOK)
            except PlaywrightError:  # it reloaded itself just then (the match is over): look again
                board.wait_for_load_state()
                continue
            if now["replay"]:
                break
            step_events = max(step_events, now["step_events"])
            found = re.search(r"Step (\d+)", now["status"] or "")
            if now["same"] and found and (not steps or steps[-1] != int(found.group(1))):
                steps.append(int(found.group(1)))
                if len(steps) == 3:
                    assert now["drawn"] and "thinking" in now["clocks"], now
                    board.screenshot(path=str(screenshots / "live-match.png"), full_page=True)
                    phone_check(browser, f"{live_arena.url}/matches/{matches[0]}", screenshots, errors)
            board.wait_for_timeout(50)
        assert len(steps) >= 3 and steps == sorted(steps), steps  # the board moved, step by step, before the end
        assert step_events >= 3  # as server-sent events, each a step's changes

        # The standings counted the played matches without the page being loaded again.
        standings.wait_for_function("""() => Array.from(document.querySelectorAll(
            'table.standings tbody tr td:nth-child(3)')).some(td => td.textContent.trim() !== '0')""", timeout=30_000)
        assert standings.evaluate("() => window.__same === true")
        standings.screenshot(path=str(screenshots / "live-tournament.png"), full_page=True)
        # The leaderboard page showed the refitted table without being loaded again.
        leaderboard.wait_for_function("""() => /fitted over [1-9]/.test(
            (document.getElementById('fit-note') || {}).textContent || '')""", timeout=30_000)
        assert leaderboard.evaluate("() => window.__same === true")
        assert leaderboard.locator("table tbody tr").count() >= 3
        assert not errors, json.dumps(errors, indent=1)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def status_line(page) -> str:  # type: ignore[no-untyped-def]
    """The live block's status line, or "" once the page shows no live block (it reloaded)."""
    return page.evaluate("() => (document.getElementById('live-status') || {}).textContent || ''")


def test_a_sealed_match_shows_no_board_seed_hand_or_result_until_its_deal_is_over(live_arena, browser,
                                                                                  screenshots) -> None:
    servers = [start_in_thread(slow_bot(n, 0.05)) for n in range(2)]
    errors: list[str] = []
    try:
        tournament_id, (first, _twin) = tournament_of(live_arena, "piranha-pedro", 2, "duplicate", servers)
        with live_arena.context.db.session(readonly=True) as session:
            seed = str(session.scalar(select(Match.seed).where(Match.id == first)))
        page = new_page(browser, errors)
        page.goto(f"{live_arena.url}/matches/{first}")
        page.wait_for_function("() => document.getElementById('live').dataset.liveMode === 'events'")
        play(live_arena, tournament_id)
        seen_hidden, contents, deadline = False, [], time.monotonic() + 45
        while page.locator("#sealed-note").count() == 0 or page.locator("#replay").count() == 0:
            assert time.monotonic() < deadline, f"the deal was not published\n{live_arena.worker_output()}"
            html = page_html(page)
            contents.append(html)
            if "stays hidden" in status_line(page) and not seen_hidden:
                seen_hidden = True
                # regression (a user's trial): a "running" status after the "hidden" event put "The match is
                # being played…" in the status line, which no longer said why the page showed no board
                # what a twin starting now announces to this match's topic (``live_feed.announce_deal``)
                live_arena.context.live.publish(f"match-{first}", "status", {"match": first, "status": "running"},
                                                keep=True)
                page.wait_for_timeout(400)
                said = status_line(page)
                assert "stays hidden" in said or 'id="sealed-note"' in page_html(page), said
                # once, and only an artifact for people: in one CI run (loaded machine) the screenshot, then taken
                # at every look, went past Playwright's 30 s and failed the test
                with contextlib.suppress(PlaywrightError):
                    page.screenshot(path=str(screenshots / "live-sealed-match.png"), full_page=True, timeout=10_000)
            if page.locator("#replay").count():
                break
            page.wait_for_timeout(150)
        assert seen_hidden, "the page never said the board is hidden while the twin was open"
        for html in contents[:-1]:  # every moment before the deal was published
            assert seed not in html and 'id="replay-data"' not in html
            assert page.locator("#live-board svg").count() == 0 or "replay" in html
        live = page.evaluate("() => window.__live || []")
        for event in live:  # statuses and "hidden" only: no board, no turn, no clock, no result
            kind, data = event.split(" ", 1)
            assert kind in ("hidden", "status"), event
            assert set(json.loads(data)) <= {"seq", "match", "status"}, event
        page.wait_for_selector("#replay")  # the deal is over: the page shows the replay by itself
        assert seed in page_html(page)
        assert not errors, json.dumps(errors, indent=1)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def test_without_server_sent_events_the_match_page_polls(live_arena, browser) -> None:
    servers = [start_in_thread(slow_bot(n, 0.3)) for n in range(3)]
    errors: list[str] = []
    try:
        tournament_id, matches = tournament_of(live_arena, "pajarracos", 3, "independent", servers)
        page = new_page(browser, errors)
        page.add_init_script("delete window.EventSource;")  # a browser (or a proxy) without them
        page.goto(f"{live_arena.url}/matches/{matches[0]}")
        page.wait_for_function("() => document.getElementById('live').dataset.liveMode === 'polling'")
        play(live_arena, tournament_id)
        steps, deadline = [], time.monotonic() + 40
        while len(steps) < 2:
            assert time.monotonic() < deadline, f"no board by polling: {steps}\n{live_arena.worker_output()}"
            try:
                now = page.evaluate(LOOK)
            except PlaywrightError:
                page.wait_for_load_state()
                continue
            assert not now["replay"], f"the match ended before two polls showed its board: {steps}"
            found = re.search(r"Step (\d+)", now["status"] or "")
            if found and (not steps or steps[-1] != int(found.group(1))):
                steps.append(int(found.group(1)))
            page.wait_for_timeout(200)
        assert steps == sorted(steps) and now["drawn"]
        assert not errors, json.dumps(errors, indent=1)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
