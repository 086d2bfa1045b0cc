"""Finding things in Chromium: the index pages and their filters and paging, two bots' head-to-head, the
styled 404, the rating chart (one dot per rated match and the 95% band) and shared places in a
tournament with ties. Screenshots at 1280 and 390 px, light and dark, go to
``test-artifacts/screenshots/``; at 390 px none of these pages is wider than the screen."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from sqlalchemy import insert, select, update
from werkzeug.serving import make_server

from arena.composition import Context
from arena.config import load_settings
from arena.storage.db import Database
from arena.storage.models import Bot, LiveRating, Match, MatchSeat, MatchStatus
from tests import bot_zoo
from tests.pages.builders import World, build_world, tied_piranha_tournament

pytestmark = pytest.mark.browser
EXTRA = 70  # cancelled matches of rnd1 and rnd2, so the match list has more than one page


@dataclass
class FindArena:
    url: str
    context: Context
    world: World
    tied: int


@pytest.fixture
def find_arena(tmp_path, random_bots) -> Iterator[FindArena]:
    """The page-test world (played through the services, no worker needed) behind a real server."""
    settings = load_settings({}, env="test", data_dir=tmp_path, secret_key="find-test", rate_limits=False,
                             allow_loopback_bots=True, decision_ms=2000)
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    context = Context(settings=settings, db=db, queue=None)
    with bot_zoo.zoo_bot(bot_zoo.on_act(bot_zoo.illegal)) as faulty:
        world = build_world(context, [b.url for b in random_bots], faulty.url)
    tied = tied_piranha_tournament(context, world, 6)
    with db.session() as session:
        ids = [session.execute(insert(Match).values(game="pajarracos", num_players=2, seed=n, time_limit_ms=1000,
                                                    status=MatchStatus.CANCELLED).returning(Match.id)).scalar_one()
               for n in range(EXTRA)]
        session.execute(insert(MatchSeat), [{"match_id": m, "seat": s, "bot_id": world.bots[name]}
                                            for m in ids for s, name in enumerate(("rnd1", "rnd2"))])
    from arena.web import create_app

    server = make_server("127.0.0.1", 0, create_app(context=context), threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="find-arena", daemon=True)
    thread.start()
    try:
        yield FindArena(f"http://127.0.0.1:{server.server_port}", context, world, tied)
    finally:
        server.shutdown()
        server.server_close()
        db.dispose()


def _page(browser, width: int = 1280, scheme: str = "light", errors: list | None = None):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": width, "height": 900}, color_scheme=scheme,
                            is_mobile=width < 500, has_touch=width < 500)
    page.set_default_timeout(20_000)
    if errors is not None:
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page


def _row_ids(page) -> list[int]:  # type: ignore[no-untyped-def]
    return [int(t[1:]) for t in page.locator("table.matches-list tbody td[data-label=Match] a").all_inner_texts()]


def test_index_pages_filters_paging_head_to_head_404_chart_and_ties(find_arena, browser) -> None:
    base, world, errors = find_arena.url, find_arena.world, []
    page = _page(browser, errors=errors)

    page.goto(base + "/")  # the nav's Leaderboards link goes to the index of every leaderboard
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Leaderboards").click()
    page.wait_for_url(re.compile(r"/leaderboards$"))
    assert page.locator("table.boards-list tbody tr").count() >= 2

    page.goto(base + "/matches")  # the newest 50, then older ones by keyset, and back
    first = _row_ids(page)
    assert len(first) == 50 and first == sorted(first, reverse=True)
    page.get_by_role("link", name="Older →").first.click()
    page.wait_for_url(re.compile(r"before=\d+"))
    second = _row_ids(page)
    assert second and max(second) < min(first)
    page.get_by_role("link", name="← Newer").first.click()
    page.wait_for_url(re.compile(r"after=\d+"))
    assert _row_ids(page) == first

    page.goto(base + "/matches")  # the filter form: a game and a status narrow the list
    page.get_by_label("Game").select_option("piranha-pedro")
    page.get_by_label("Status").select_option("finished")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"game=piranha-pedro"))
    shown = page.locator("table.matches-list tbody tr").all_inner_texts()
    assert len(shown) == 2 + 6 and all("Piranha Pedro" in row and "finished" in row for row in shown)

    rnd1, rnd2 = world.bots["rnd1"], world.bots["rnd2"]
    page.goto(f"{base}/matches?bot={rnd1}&opponent={rnd2}&result=win")  # a result keeps sealed matches out
    assert world.sealed[0] not in _row_ids(page)
    page.goto(f"{base}/bots/{rnd1}/vs/{rnd2}")
    total = page.locator("#h2h-total").inner_text()
    assert re.match(r"\d+ matches: \d+ won, \d+ drawn, \d+ lost", total), total

    page.goto(base + "/bots?game=piranha-pedro")
    assert page.locator("table.bots-list tbody tr").count() == 2

    response = page.goto(base + "/no/such/page")
    assert response.status == 404 and page.get_by_role("heading", name="Not found").is_visible()
    assert page.get_by_role("navigation", name="Main").is_visible()
    errors[:] = [e for e in errors if "status of 404" not in e]  # the browser reports the 404 it was shown

    page.goto(f"{base}/bots/{rnd1}")  # the chart: one dot per rated match, and the fitted rating's band
    with find_arena.context.db.session(readonly=True) as session:
        games = session.scalar(select(LiveRating.games).where(LiveRating.bot_id == rnd1))
    assert page.locator("figure.rating-chart circle.live-dot").count() == games > 1
    assert page.locator("figure.rating-chart .band, figure.rating-chart .bar").count() >= 1
    assert page.locator("#headline-rating .value").inner_text().isdigit()

    page.goto(f"{base}/tournaments/{find_arena.tied}")  # six shared first places: level in both tables
    places = page.locator("table.standings tbody tr td:first-child").all_inner_texts()
    assert places == ["1–2", "1–2"]
    cells = page.locator("table.cross tbody td:not(.self)").all_inner_texts()
    assert cells == ["0–6–0", "0–6–0"]
    assert errors == []


def test_find_pages_fit_a_phone_and_are_photographed(find_arena, browser, screenshots) -> None:
    base, world = find_arena.url, find_arena.world
    rnd1, rnd2 = world.bots["rnd1"], world.bots["rnd2"]
    pages = {"bots": "/bots", "matches": "/matches", "matches-filtered": f"/matches?bot={rnd1}&opponent={rnd2}",
             "tournaments": "/tournaments", "leaderboards": "/leaderboards", "head-to-head": f"/bots/{rnd1}/vs/{rnd2}",
             "not-found": "/no/such/page", "tournament-ties": f"/tournaments/{find_arena.tied}",
             "bot-chart": f"/bots/{rnd1}"}
    for width, scheme in ((1280, "light"), (1280, "dark"), (390, "light"), (390, "dark")):
        page = _page(browser, width, scheme)
        for name, path in pages.items():
            page.goto(base + path)
            page.screenshot(path=str(screenshots / f"find-{name}-{width}-{scheme}.png"), full_page=True)
            if width == 390 and name != "bot-chart":  # the bot page's other sections are another helper's
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{name} is wider than the phone screen by {overflow}px"
            if name == "bot-chart":
                box = page.locator("figure.rating-chart svg").first.bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= width + 1
        page.close()


def test_bot_names_in_a_match_list_do_not_break_mid_word_on_a_phone(find_arena, browser) -> None:
    """Regression: at 390 px each match row's cells were flex rows, so every seat and comma became a column of
    its own and the demo's names broke mid-word ("pj-rando m", "pj-blunder s-25")."""
    world = find_arena.world
    with find_arena.context.db.session() as session:
        for key, name in (("rnd1", "pj-blunders-25"), ("rnd2", "pj-blunders-50")):
            session.execute(update(Bot).where(Bot.id == world.bots[key]).values(name=name))
    page = _page(browser, 390)
    page.goto(f"{find_arena.url}/matches?bot={world.bots['rnd1']}")
    lines = page.locator("table.matches-list td.seats .seat a").evaluate_all(
        "links => links.map(a => [a.textContent, a.getClientRects().length])")
    assert {name for name, _ in lines} >= {"pj-blunders-25", "pj-blunders-50"}
    assert [name for name, rects in lines if rects != 1] == []
    page.close()
