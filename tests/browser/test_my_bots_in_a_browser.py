"""The owner's pages in Chromium: sign up, submit, then every My bots action through its form; a refresh
never resubmits (post/redirect/get), a secret is shown once, a signed-in visitor is not offered log in
or sign up, health-check failures read as words. Screenshots at 1280 and 390 px, light and dark, with
no horizontal overflow on a phone."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select
from werkzeug.serving import make_server

from arena.composition import build_context
from arena.config import load_settings
from arena.services import probation
from arena.storage.models import Bot, BotEvent, Fault, Match, MatchSeat, MatchStatus, utcnow
from tests.browser.test_arena_in_a_browser import CSP_REPORTER, EXPECTED

pytestmark = pytest.mark.browser


@pytest.fixture
def owner_arena(tmp_path: Path) -> Iterator[tuple[str, object]]:
    """The app on loopback with the real health check; no worker (nothing here plays a match)."""
    yield from _owner_arena(tmp_path)


@pytest.fixture
def held_owner_arena(tmp_path: Path) -> Iterator[tuple[str, object]]:
    """``owner_arena`` with the ladder on and new bots held as outside tests (``ARENA_LADDER_NEW_SECRET_S``)."""
    yield from _owner_arena(tmp_path, ladder=True, ladder_new_secret_s=120)


def _owner_arena(tmp_path: Path, **overrides: object) -> Iterator[tuple[str, object]]:
    settings = load_settings({}, env="test", data_dir=tmp_path, secret_key="browser-owner", rate_limits=False,
                             allow_loopback_bots=True, **overrides)
    context = build_context(settings)
    from arena.web import create_app

    server = make_server("127.0.0.1", 0, create_app(context=context), threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="owner-arena", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", context
    finally:
        server.shutdown()
        server.server_close()
        context.db.dispose()


def _faulty_ladder_matches(context, bot_id: int) -> None:  # type: ignore[no-untyped-def]
    with context.db.session() as session:
        for n in range(4):
            match = Match(ladder_id=1, game="pajarracos", num_players=3, seed=n, time_limit_ms=1000,
                          status=MatchStatus.FINISHED, finished_at=utcnow())
            session.add(match)
            session.flush()
            session.add(MatchSeat(match_id=match.id, seat=0, bot_id=bot_id, rank=3, faults=1))
            session.add(Fault(match_id=match.id, bot_id=bot_id, seat=0, turn=2, path="/act", kind="bad_json",
                              message="not JSON: Expecting value", excerpt="<html>oops</html>"))
        probation.review(session, [bot_id], context.settings)


def _no_overflow(page) -> None:  # type: ignore[no-untyped-def]
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{page.url} is {width} px wide at 390"


def _shots(browser, base: str, cookies, path: str, name: str, folder: Path,  # type: ignore[no-untyped-def]
           schemes: tuple[str, ...] = ("light", "dark"), widths: tuple[int, ...] = (1280, 390)) -> None:
    for scheme in schemes:
        for width in widths:
            view = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme)
            view.context.add_cookies(cookies)
            view.goto(base + path)
            if width == 390:
                _no_overflow(view)
            view.screenshot(path=str(folder / f"owner-{name}-{width}-{scheme}.png"), full_page=True)
            view.close()


def _watched_page(browser):  # type: ignore[no-untyped-def]
    """A desktop-sized page and the list its page errors and console errors (CSP refusals included) land in."""
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text)
            if msg.type == "error" and EXPECTED not in msg.text else None)
    page.add_init_script(CSP_REPORTER)
    return page, errors


def _sign_up(page, base: str, name: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(base + "/signup")
    page.get_by_label("Account name").fill(name)
    page.get_by_role("button", name="Create account").click()


def test_my_bots_in_a_browser(owner_arena, browser, screenshots, random_bots) -> None:
    base, context = owner_arena
    page, errors = _watched_page(browser)

    # Sign up: the token is shown once; a refresh neither signs up again nor shows it again.
    _sign_up(page, base, "olga")
    token = page.locator("#token").text_content()
    assert token and token.startswith("arena_") and page.url.endswith("/signup/done")
    page.reload()
    assert token not in page.content() and page.url.endswith("/me/bots")

    # Signed in: no log in or sign up on offer; the name in the header leads to My bots.
    page.goto(base + "/")
    assert page.get_by_role("link", name="Log in").count() == 0
    assert page.get_by_role("link", name="Sign up").count() == 0
    page.goto(base + "/login")
    assert page.get_by_text("You are signed in as olga").is_visible() and page.get_by_label("API token").count() == 0
    page.locator(".site-nav .who").click()
    page.wait_for_url(re.compile(r"/me/bots$"))

    # Submit a bot: its secret once, then gone on refresh.
    page.goto(base + "/bots/new")
    page.get_by_label("Bot name").fill("pedro")
    page.get_by_label("Base URL").fill(random_bots[0].url)
    page.get_by_label("Game", exact=True).select_option("pajarracos")
    page.get_by_role("button", name="Check and register").click()
    secret = page.locator("#secret").text_content()
    assert secret and len(secret) == 48
    page.reload()
    assert secret not in page.content()
    with context.db.session() as session:
        bot_id = session.scalar(select(Bot.id).where(Bot.name == "pedro"))
        assert session.scalar(select(func.count()).select_from(Bot)) == 1

    # Pause, and a refresh that resubmits nothing.
    page.goto(base + "/me/bots")
    card = page.locator(f"#bot-{bot_id}")
    card.get_by_role("button", name="Pause").click()
    expect(page.get_by_text("Paused: it plays no new ladder match")).to_be_visible()
    page.reload()
    assert page.get_by_text("Paused: it plays no new ladder match").count() == 0
    with context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(BotEvent).where(BotEvent.kind == "paused")) == 1
    page.locator(f"#bot-{bot_id}").get_by_role("button", name="Resume").click()
    expect(page.get_by_text("Resumed: it is on the ladder.")).to_be_visible()

    # A new secret, shown once.
    page.locator(f"#bot-{bot_id}").get_by_role("button", name="New secret").click()
    rotated = page.locator("#secret").text_content()
    assert rotated and rotated != secret
    page.reload()
    assert rotated not in page.content()

    # A URL nothing answers: refused, in words.
    card = page.locator(f"#bot-{bot_id}")
    card.get_by_text("Change the URL, name, capacity, or retire").click()
    card.get_by_label("New URL").fill("http://127.0.0.1:9")
    card.get_by_role("button", name="Move (same version)").click()
    expect(page.locator("#notice")).to_contain_text("connection refused at the bot's address")
    assert "urllib3" not in (page.locator("#notice").text_content() or "")

    # Probation shows with its reason and the faults' excerpts; then a new version and the pages.
    _faulty_ladder_matches(context, bot_id)
    page.goto(base + "/me/bots")
    assert page.get_by_text("on probation: 4 of its last 4 ladder matches had faults").is_visible()
    page.locator(f"#bot-{bot_id}").get_by_text("recent faults").click()
    assert page.get_by_text("<html>oops</html>").first.is_visible()
    cookies = page.context.cookies()
    _shots(browser, base, cookies, "/me/bots", "my-bots-probation", screenshots)
    page.locator(f"#bot-{bot_id}").get_by_role("button", name="Same URL as a new version").click()
    expect(page.get_by_text("New version published")).to_be_visible()
    expect(page.get_by_role("link", name="pedro (v1)")).to_be_visible()
    with context.db.session() as session:
        v2 = session.scalar(select(Bot.id).where(Bot.name == "pedro"))
    _shots(browser, base, cookies, "/me/bots", "my-bots", screenshots)
    _shots(browser, base, cookies, f"/bots/{v2}", "bot-page-v2", screenshots)
    _shots(browser, base, cookies, f"/bots/{bot_id}", "bot-page-v1-retired", screenshots, ("light",), (390,))
    page.goto(base + f"/bots/{v2}")
    assert page.get_by_role("link", name="v1: pedro (v1)").is_visible()

    # Retire the new version.
    page.goto(base + "/me/bots")
    card = page.locator(f"#bot-{v2}")
    card.get_by_text("Change the URL, name, capacity, or retire").click()
    card.get_by_role("button", name="Retire pedro").click()
    expect(page.get_by_text("Retired: it plays no more ladder matches")).to_be_visible()
    assert errors == [], errors


def test_a_new_bot_waits_for_its_restart_and_resume_puts_it_on_the_ladder(held_owner_arena, browser, screenshots,
                                                                        random_bots) -> None:
    base, context = held_owner_arena
    page, errors = _watched_page(browser)
    _sign_up(page, base, "nina")
    page.goto(base + "/bots/new")
    page.get_by_label("Bot name").fill("fresh")
    page.get_by_label("Base URL").fill(random_bots[0].url)
    page.get_by_label("Game", exact=True).select_option("pajarracos")
    page.get_by_role("button", name="Check and register").click()
    with context.db.session() as session:
        bot = session.scalars(select(Bot).where(Bot.name == "fresh")).one()
        bot_id, joins = bot.id, bot.recheck_at.strftime("%H:%M:%S UTC")
    notice = page.locator(".alert.success")
    expect(notice).to_contain_text("Restart your bot with it")
    expect(notice).to_contain_text(joins)
    cookies = page.context.cookies()
    for width in (1280, 390):  # the secret page shows once: its screenshots from this page itself
        page.set_viewport_size({"width": width, "height": 900})
        if width == 390:
            _no_overflow(page)
        page.screenshot(path=str(screenshots / f"owner-bot-created-held-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("link", name="My bots").last.click()
    card = page.locator(f"#bot-{bot_id}")
    expect(card.locator(".ladder-reason")).to_contain_text("waiting for its owner to restart it with the "
                                                           "signing secret it was given")
    expect(card.locator(".ladder-reason")).to_contain_text(joins)
    _shots(browser, base, cookies, "/me/bots", "my-bots-new-secret", screenshots)
    card.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("Resumed: it is on the ladder.")).to_be_visible()
    expect(page.locator(f"#bot-{bot_id} .tag.ladder-placing")).to_be_visible()
    with context.db.session() as session:
        assert session.get(Bot, bot_id).paused_by is None
    assert errors == [], errors
