"""Issue 15, "SQLite write lock held during a bot's health check": submitting a bot (API and form) and
moving it to a new URL call the bot for seconds; that call must run with no transaction open, so other
requests keep writing to the SQLite database meanwhile. The health check here is a seam that blocks
until the test lets it go (no network at all)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from sqlalchemy import select

from arena.composition import Context
from arena.config import Settings
from arena.storage.db import Database
from arena.storage.models import Bot
from referee.health import HealthReport
from tests import bot_zoo
from tests.arena.helpers import auth, token_for
from tests.pages.builders import csrf_token, log_in

INFO = {"apiversion": "1", "name": "slow", "author": "t", "version": "1", "games": ["piranha-pedro"]}


class SlowHealthCheck:
    """Blocks inside the health check until released, like a bot that takes seconds to answer."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, url: str, secret: str, game: str, settings: Settings,
                 knows_secret: bool = False) -> HealthReport:
        self.started.set()
        self.release.wait(10)
        return HealthReport(ok=True, info=dict(INFO))


@pytest.fixture
def sqlite_context(tmp_path, settings) -> Iterator[Context]:
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    yield Context(settings=replace(settings, rate_limits=False), db=db, queue=None, health_check=SlowHealthCheck())
    db.dispose()


def _while_health_check_runs(context: Context, request: Callable[[], int]) -> float:
    """Start ``request`` in a thread, and once it is inside the health check write to the database
    from another request; returns how long that write took. ``request`` must then succeed."""
    from arena.web import create_app

    slow: SlowHealthCheck = context.health_check  # type: ignore[assignment]
    outcome: list[int] = []
    worker = threading.Thread(target=lambda: outcome.append(request()), daemon=True)
    worker.start()
    try:
        assert slow.started.wait(5), "the health check never started"
        other = create_app(context=context).test_client()
        t0 = time.perf_counter()
        assert other.post("/api/accounts", json={"name": "quick-writer"}).status_code == 201
        took = time.perf_counter() - t0
    finally:
        slow.release.set()
        worker.join(10)
    assert outcome and outcome[0] in (200, 201, 303), outcome  # 303: the page form redirects (PRG)
    return took


def test_sqlite_write_lock_held_during_health_check_api_submit(sqlite_context) -> None:
    from arena.web import create_app

    token = token_for(sqlite_context, "alice")
    client = create_app(context=sqlite_context).test_client()
    took = _while_health_check_runs(sqlite_context, lambda: client.post(
        "/api/bots", json={"name": "slow", "url": "http://127.0.0.1:9/", "game": "piranha-pedro"},
        headers=auth(token)).status_code)
    assert took < 1.0, f"a quick write waited {took:.1f} s for another request's health check"
    with sqlite_context.db.session(readonly=True) as session:
        assert session.scalar(select(Bot.info).where(Bot.name == "slow")) == INFO


def test_sqlite_write_lock_held_during_health_check_api_new_url(sqlite_context) -> None:
    from arena.web import create_app

    token = token_for(sqlite_context, "alice")
    client = create_app(context=sqlite_context).test_client()
    no_check = replace(sqlite_context, settings=replace(sqlite_context.settings, health_check=False))
    created = create_app(context=no_check).test_client().post(
        "/api/bots", json={"name": "mover", "url": "http://127.0.0.1:9", "game": "piranha-pedro"},
        headers=auth(token)).get_json()
    took = _while_health_check_runs(sqlite_context, lambda: client.patch(
        f"/api/bots/{created['id']}", json={"url": "http://127.0.0.1:10"}, headers=auth(token)).status_code)
    assert took < 1.0, f"a quick write waited {took:.1f} s for another request's health check"
    with sqlite_context.db.session(readonly=True) as session:
        assert session.scalar(select(Bot.url).where(Bot.id == created["id"])) == "http://127.0.0.1:10"


def test_sqlite_write_lock_held_during_health_check_bot_form(sqlite_context) -> None:
    from arena.web import create_app

    token = token_for(sqlite_context, "alice")
    client = create_app(context=sqlite_context).test_client()
    log_in(client, token)
    csrf = csrf_token(client.get("/bots/new").get_data(as_text=True))
    took = _while_health_check_runs(sqlite_context, lambda: client.post("/bots/new", data={
        "name": "slow", "url": "http://127.0.0.1:9", "game": "piranha-pedro", "csrf_token": csrf}).status_code)
    assert took < 1.0, f"a quick write waited {took:.1f} s for another request's health check"


def test_changing_a_bot_is_rate_limited_like_submitting_one(sqlite_context) -> None:
    from arena.web import create_app

    context = replace(sqlite_context, health_check=lambda *args: HealthReport(ok=True, info=dict(INFO)),
                      settings=replace(sqlite_context.settings, rate_limits=True, bot_rate="2/hour"))
    token = token_for(context, "alice")
    client = create_app(context=context).test_client()
    bot = client.post("/api/bots", json={"name": "b", "url": "http://127.0.0.1:9", "game": "piranha-pedro"},
                      headers=auth(token)).get_json()
    codes = [client.patch(f"/api/bots/{bot['id']}", json={"url": f"http://127.0.0.1:{port}"},
                          headers=auth(token)).status_code for port in (10, 11, 12)]
    assert codes == [200, 200, 429]


def test_sqlite_write_lock_held_during_health_check_eight_slow_bots(tmp_path, settings) -> None:
    """As reported: eight slow registrations at once (a real bot on loopback that takes 1.5 s to answer
    GET /, through the real health check); meanwhile other requests' writes take milliseconds."""
    from arena.web import create_app

    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    context = Context(settings=replace(settings, rate_limits=False), db=db, queue=None)
    try:
        tokens = [token_for(context, f"user-{i}") for i in range(8)]
        with bot_zoo.zoo_bot(bot_zoo.late(1.5)) as slow:
            codes: list[int] = []
            # the apps are made first: on a busy CI machine eight apps made at once in eight threads took
            # most of the time the health checks were given to start
            clients = [create_app(context=context).test_client() for _token in tokens]

            def submit(client, token: str, name: str) -> None:  # type: ignore[no-untyped-def]
                codes.append(client.post("/api/bots", json={"name": name, "url": slow.url, "game": "piranha-pedro"},
                                         headers=auth(token)).status_code)

            threads = [threading.Thread(target=submit, args=(client, token, f"slow-{chr(97 + n)}"), daemon=True)
                       for n, (client, token) in enumerate(zip(clients, tokens, strict=True))]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 15
            while len(slow.requests) < 8 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(slow.requests) == 8, "the health checks did not all start"
            other = create_app(context=context).test_client()
            waits = []
            for i in range(3):
                t0 = time.perf_counter()
                assert other.post("/api/accounts", json={"name": f"quick-{i}"}).status_code == 201
                waits.append(time.perf_counter() - t0)
            for thread in threads:
                thread.join(20)
        assert max(waits) < 0.5, waits
        assert codes == [201] * 8, codes
    finally:
        db.dispose()
