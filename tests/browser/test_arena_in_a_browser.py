"""The whole journey in Chromium against a live arena: sign up, log in, submit a bot through the form,
start a tournament as an organizer, watch its progress bar reach the end, read the leaderboard, and
step through a replay whose commitments the page checks itself. Screenshots of every page go to
``test-artifacts/screenshots/``. No page may log an error, a Content-Security-Policy violation included."""

from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from arena.services import bots as bot_service
from arena.services.accounts import create_account
from arena.storage.models import Account, Match, MatchStatus
from referee.commitments import canonical_json

pytestmark = pytest.mark.browser
TIMEOUT_MS = 120_000
EXPECTED = "status of 422"  # the form shown again with its validation messages
# Every Content-Security-Policy violation becomes a console error (the test fails on any console error).
CSP_REPORTER = """document.addEventListener("securitypolicyviolation", function (e) {
    console.error("CSP violation: " + e.violatedDirective + " blocked " + e.blockedURI + " at " + e.sourceFile
                  + ":" + e.lineNumber);
});"""


def shot(page, folder, name: str) -> None:  # type: ignore[no-untyped-def]
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def organizer_with_bots(arena, urls: list[str]) -> tuple[str, list[int]]:
    """The organizer's account (made through the service, as `arena token create --admin` does) and bots."""
    with arena.context.db.session() as session:
        organizer, token = create_account(session, "org", admin=True)
        ids = [bot_service.register_bot(session, organizer, f"org-random-{n}", url, "pajarracos",
                                        arena.context.settings, arena.context.health_check)[0].id
               for n, url in enumerate(urls)]
    return token, ids


def log_out(page) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/$"))


def log_in(page, base: str, token: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(base + "/login")
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/$"))


def test_sign_up_submit_a_bot_run_a_tournament_and_replay_a_match(live_arena, browser, screenshots,
                                                                   random_bots) -> None:
    base, errors = live_arena.url, []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" and EXPECTED not in msg.text else None)
    page.add_init_script(CSP_REPORTER)  # Chromium logs violations itself; this names the directive too

    response = page.goto(base + "/")
    assert "script-src 'self'" in response.headers["content-security-policy"]  # the policy is on
    shot(page, screenshots, "01-home-empty")

    # Sign up: the token is shown once, and the new account is signed in.
    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("Account name").fill("alice")
    page.get_by_role("button", name="Create account").click()
    token = page.locator("#token").text_content()
    assert token and token.startswith("arena_")
    shot(page, screenshots, "02-signup-token")

    # Log out, then log in again by pasting the token.
    log_out(page)
    log_in(page, base, token)
    assert page.locator(".site-nav .who").text_content().startswith("alice")

    # Submit a bot through the form: first a mistake, then the real thing.
    page.goto(base + "/bots/new")
    page.get_by_role("button", name="Check and register").click()
    expect(page.get_by_text("Give your bot a name.")).to_be_visible()
    shot(page, screenshots, "03-bot-form-errors")
    page.get_by_label("Bot name").fill("alice-random")
    page.get_by_label("Base URL").fill(random_bots[0].url)
    page.get_by_label("Game", exact=True).select_option("pajarracos")
    page.get_by_role("button", name="Check and register").click()
    secret = page.locator("#secret").text_content()
    assert secret and len(secret) == 48
    shot(page, screenshots, "04-bot-registered")
    page.get_by_role("link", name="Go to the bot's page").click()
    page.wait_for_url(re.compile(r"/bots/\d+$"))  # the bot's page loaded, not /bots/new/done mid-navigation
    assert random_bots[0].url in page.content() and secret not in page.content()
    alice_bot = int(page.url.rsplit("/", 1)[1])

    # An organizer starts a tournament through the form.
    org_token, org_bots = organizer_with_bots(live_arena, [b.url for b in random_bots[1:4]])
    log_out(page)
    log_in(page, base, org_token)
    page.goto(base + "/tournaments/new")
    page.get_by_label("Game", exact=True).select_option("pajarracos")
    for bot_id in [alice_bot, *org_bots]:
        page.locator(f"#bot-{bot_id}").check()
    page.get_by_label("Seats per table").fill("3")
    page.get_by_label("Decision time (ms)").fill("2000")
    shot(page, screenshots, "05-tournament-form")
    page.get_by_role("button", name="Start the tournament").click()
    page.wait_for_url(re.compile(r"/tournaments/\d+$"))
    tournament_url = page.url
    shot(page, screenshots, "06-tournament-running")

    # The progress bar follows the tournament (polling the API) until every match is played.
    bar = page.locator("#tournament-progress")
    total = int(bar.get_attribute("aria-valuemax"))
    seen = {int(bar.get_attribute("aria-valuenow"))}
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while page.locator("#tournament-status").text_content() != "finished":
        assert time.monotonic() < deadline, f"tournament did not finish: {seen}\n{live_arena.worker_output()}"
        seen.add(int(page.locator("#tournament-progress").get_attribute("aria-valuenow")))
        page.wait_for_timeout(200)
    # The poll that saw the end drew the full bar before it set the status (the page reloads itself
    # 600 ms later): on a quick machine the whole tournament can fall between two polls, and this last
    # value is still one the bar showed while we watched.
    seen.add(int(page.locator("#tournament-progress").get_attribute("aria-valuenow")))
    page.wait_for_timeout(1500)  # the page reloads itself for the final standings
    page.wait_for_load_state()
    assert page.locator("#progress-note").count() == 0  # the server-rendered page of a finished tournament
    bar = page.locator("#tournament-progress")
    assert int(bar.get_attribute("aria-valuenow")) == total == int(bar.get_attribute("aria-valuemax"))
    assert len(seen) >= 2 or min(seen) == total, seen  # it moved while we watched (unless it was already done)
    assert page.locator(".progress-fill").get_attribute("width") == "100.0"
    assert page.locator("table.cross td").count() == 4 * 4
    shot(page, screenshots, "07-tournament-finished")

    # The leaderboard of the tournament's game and table size.
    page.get_by_role("link", name="Pajarracos").first.click()
    page.wait_for_url(re.compile(r"/leaderboards/pajarracos"))
    deadline = time.monotonic() + 60  # refits run as their own queued job, a moment after the last match
    while page.locator("table.leaderboard tbody tr").count() < 4:
        assert time.monotonic() < deadline, f"the leaderboard was not refitted\n{live_arena.worker_output()}"
        page.wait_for_timeout(500)
        page.reload()
    assert page.locator("table.leaderboard tbody tr").count() == 4
    assert page.locator("svg.interval").count() == 4
    shot(page, screenshots, "08-leaderboard")
    page.get_by_role("link", name="alice-random").first.click()
    # Measured only after the load event: until the stylesheet has come back (a 304 on a cached page) the
    # browser lays the swatch out unstyled, as wide as the page (a CI run measured it there).
    page.wait_for_url(re.compile(r"/bots/\d+$"))
    page.wait_for_load_state("load")
    assert "Rating history" in page.content() and random_bots[0].url not in page.content()  # not the owner
    swatch = page.locator(".legend .swatch").first.bounding_box()
    assert swatch and swatch["width"] < 30 and swatch["height"] < 10  # the legend's colour key, not a block
    shot(page, screenshots, "09-bot-page")

    # A replay: play, pause, the slider, and every commitment checked in the browser.
    page.goto(tournament_url)
    page.locator("table.matches a[href^='/matches/']").first.click()
    page.wait_for_url(re.compile(r"/matches/\d+"))
    slider = page.locator("#replay-slider")
    steps = int(slider.get_attribute("max"))
    assert steps > 3
    summary = page.locator("#commit-summary")
    # A function, not a bare expression: Playwright evaluates an expression with eval, which the CSP refuses.
    page.wait_for_function("() => document.getElementById('commit-summary').dataset.checked !== undefined")
    assert summary.get_attribute("data-failed") == "0", summary.text_content()
    assert summary.text_content().startswith("✓ All") and "✗" not in page.content()
    shot(page, screenshots, "10-replay-start")
    page.locator("#replay-speed").select_option("80")
    page.get_by_role("button", name="Play").click()
    page.wait_for_function("() => Number(document.getElementById('replay-slider').value) >= 3")
    page.locator("#play-button").click()  # pause
    paused_at = int(slider.input_value())
    page.wait_for_timeout(400)
    assert int(slider.input_value()) == paused_at and page.locator("#play-button").text_content() == "Play"
    assert page.locator("#decisions .check.ok").count() >= 1 and page.locator(".check.bad").count() == 0
    shot(page, screenshots, "11-replay-playing")
    slider.focus()
    page.keyboard.press("Home")
    assert slider.input_value() == "0" and "Start" in page.locator("#step-label").text_content()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    assert slider.input_value() == "5" and "Step 5 of" in page.locator("#step-label").text_content()
    shot(page, screenshots, "12-replay-slider")
    page.keyboard.press("End")
    assert slider.input_value() == str(steps) and "final position" in page.locator("#step-label").text_content()
    assert page.locator("#table-state .result").is_visible()
    for step in range(1, steps + 1, max(1, steps // 10)):  # the ✓ of every decision of sampled steps
        page.evaluate(f"document.getElementById('replay-slider').value = {step}")
        slider.dispatch_event("input")
        marks = page.locator("#decisions .check")
        assert marks.count() >= 1 and marks.count() == page.locator("#decisions .check.ok").count()
    shot(page, screenshots, "13-replay-end")
    assert page.locator("a[href$='/replay.json']").get_attribute("download") is not None

    # Same canonical JSON as Python, and the page's own SHA-256 agrees with crypto.subtle.
    samples = [{"b": 1, "a": [1, "é", None, True]}, ["N1", "S3"], {"type": "fruit", "orchard": 2,
               "cards": ["apples", "apples*"], "crow_from": {"orchard": 1, "fruit": "grapes"}}, "피라니아 \"q\" \n"]
    assert page.evaluate("v => v.map(window.arenaCanonicalJson)", samples) == [canonical_json(s) for s in samples]
    agree = page.evaluate("""async () => {
        const bytes = new TextEncoder().encode('salt' + window.arenaCanonicalJson([3, 1, {"é": 1}]));
        const subtle = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)))
            .map(b => b.toString(16).padStart(2, '0')).join('');
        return subtle === window.arenaSha256(bytes);
    }""")
    assert agree
    with live_arena.context.db.session() as session:
        finished = session.scalars(select(Match.status).where(Match.tournament_id.is_not(None))).all()
        assert set(finished) == {MatchStatus.FINISHED}
        assert session.scalar(select(Account.name).where(Account.name == "alice")) == "alice"

    page.goto(base + "/docs")
    shot(page, screenshots, "14-docs")

    # The same pages on a phone-sized screen.
    phone = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    phone.add_init_script(CSP_REPORTER)
    for name, url in [("phone-home", base + "/"), ("phone-leaderboard", base + "/leaderboards/pajarracos?players=3"),
                      ("phone-tournament", tournament_url), ("phone-match", page.url)]:
        phone.goto(url.split("#")[0])
        phone.wait_for_load_state("networkidle")
        overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{name} is wider than the phone screen by {overflow}px"
        shot(phone, screenshots, name)
    assert not errors, json.dumps(errors, indent=1)
