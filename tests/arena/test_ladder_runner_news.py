"""The ladder scheduler's terminal tells what bots' owners do (``bot_events.news_since``): submissions,
pauses, resumes, new versions, secret rotations, new URLs, capacity and retirement, by bot name.

Regression (a helper trying the new-secret hold as a user): the terminal of ``arena up`` said nothing when a
bot was submitted, held for its restart or resumed by its owner; only the scheduler's re-check lines, by bot
id, and its placements appeared, so an operator could not tell why a new bot was not being placed."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import select

from arena.composition import Context
from arena.runtime.ladder_runner import LadderRunner
from arena.services import probation
from arena.storage.models import Bot, BotEvent
from arena.web import create_app
from tests.arena.helpers import auth, token_for
from tests.arena.owner_fakes import FakeHealth


@pytest.fixture
def held_context(queued_context):  # type: ignore[no-untyped-def]
    """The arena's defaults outside tests: the ladder on, a new bot held two minutes for its restart."""
    settings = replace(queued_context.settings, ladder=True, ladder_players="3", ladder_new_secret_s=120,
                       ladder_per_hour=10_000)
    return Context(settings=settings, db=queued_context.db, queue=queued_context.queue)


def _runner(context: Context) -> tuple[LadderRunner, list[str]]:
    said: list[str] = []
    runner = LadderRunner(context, say=said.append)
    runner.take_over()
    said.clear()
    return runner, said


def test_regression_the_schedulers_terminal_was_silent_on_what_owners_do(held_context) -> None:
    health = FakeHealth()
    client = create_app(context=replace(held_context, health_check=health)).test_client()
    token = token_for(held_context, "alice")
    headers = auth(token)
    early = client.post("/api/bots", json={"name": "early", "url": "http://127.0.0.1:9001", "game": "piranha-pedro"},
                        headers=headers).get_json()
    runner, said = _runner(held_context)  # took over after "early" was submitted: its news is not told again
    runner.tick_once()
    assert said == []

    bot = client.post("/api/bots", json={"name": "pedro", "url": "http://127.0.0.1:9002", "game": "piranha-pedro"},
                      headers=headers).get_json()
    path = f"/api/bots/{bot['id']}"
    runner.tick_once()
    assert said[0] == "bot pedro (piranha-pedro) submitted by alice"
    assert said[1].startswith("bot pedro (piranha-pedro): given a signing secret: off the ladder until its owner "
                              "restarts it with it (looked at from ")
    assert said[1].endswith(" UTC, or at once when its owner resumes it)") and len(said) == 2
    said.clear()

    assert client.post(f"{path}/resume", headers=headers).status_code == 200
    assert client.post(f"{path}/pause", json={"reason": "rebuilding"}, headers=headers).status_code == 200
    assert client.post(f"{path}/resume", headers=headers).status_code == 200
    assert client.post(f"{path}/capacity", json={"capacity": 2}, headers=headers).status_code == 200
    assert client.patch(path, json={"url": "http://127.0.0.1:9003"}, headers=headers).status_code == 200
    assert client.post(f"{path}/secret", headers=headers).status_code == 200
    runner.told_waiting.add(bot["id"])  # told of its first wait: a new secret is a new wait, told again
    runner.tick_once()
    assert bot["id"] not in runner.told_waiting
    assert said[:6] == [
        "bot pedro (piranha-pedro): resumed by its owner: on the ladder",
        "bot pedro (piranha-pedro): paused by its owner: rebuilding",
        "bot pedro (piranha-pedro): resumed by its owner: on the ladder",
        "bot pedro (piranha-pedro): capacity changed: 1 → 2",
        "bot pedro (piranha-pedro): moved to a new URL (same version, same rating)",
        "bot pedro (piranha-pedro): signing secret rotated",
    ]
    assert said[6].startswith("bot pedro (piranha-pedro): given a signing secret: off the ladder")
    assert len(said) == 7
    new = client.post(f"{path}/versions", json={"url": "http://127.0.0.1:9004"}, headers=headers).get_json()
    assert client.post(f"/api/bots/{new['id']}/retire", headers=headers).status_code == 200
    runner.tick_once()
    rest = said[7:]
    assert not any("submitted" in line for line in rest)  # a version is told by its own event, not as a new bot
    assert "bot pedro (piranha-pedro): version published: version 2" in rest
    assert rest[-1] == "bot pedro (piranha-pedro): retired from the ladder: retired by its owner"
    assert not any("127.0.0.1" in line for line in said)  # URLs are their owners' alone
    assert early["id"] != bot["id"]


def test_a_resume_by_a_recheck_is_told_once_by_its_own_line_with_the_bots_name(held_context) -> None:
    health = FakeHealth()
    client = create_app(context=replace(held_context, health_check=health)).test_client()
    headers = auth(token_for(held_context, "alice"))
    bot = client.post("/api/bots", json={"name": "pedro", "url": "http://127.0.0.1:9002", "game": "piranha-pedro"},
                      headers=headers).get_json()
    runner, said = _runner(held_context)
    with held_context.db.session() as session:
        row = session.get(Bot, bot["id"])
        row.recheck_at = row.recheck_at.replace(year=2000)  # its wait is over
    results = probation.recheck_due(held_context.db, held_context.settings, health)
    assert [r.line("pedro") for r in results] == ["bot pedro restarted with its secret: on the ladder"]
    runner.tick_once()
    assert not any("resumed" in line or "on the ladder" in line for line in said)


def test_regression_an_owners_words_forged_lines_on_the_operators_terminal(held_context) -> None:
    """A review: a pause reason "ok\\n2026-... ladder: bot house-1 retired...\\x1b[2J" reached the scheduler's
    terminal as typed, so an owner could fake the arena's own lines or clear the screen. A reason must be one
    printable line, and every line the scheduler says is made printable (a health check's problems quote bots)."""
    client = create_app(context=replace(held_context, health_check=FakeHealth())).test_client()
    headers = auth(token_for(held_context, "alice"))
    bot = client.post("/api/bots", json={"name": "pedro", "url": "http://127.0.0.1:9002", "game": "piranha-pedro"},
                      headers=headers).get_json()
    forged = client.post(f"/api/bots/{bot['id']}/pause", json={"reason": "ok\nladder 10:00:00: bot x retired\x1b[2J"},
                         headers=headers)
    assert forged.status_code == 422 and "one line of printable text" in forged.get_json()["error"]
    runner, said = _runner(held_context)
    runner.say("bot pedro failed: GET /: a\nb\x1b[2J")
    assert said == ["bot pedro failed: GET /: a\ufffdb\ufffd[2J"]


def test_regression_news_committed_out_of_id_order_was_never_told(context) -> None:
    """A review: the news went on from the newest id it had told, but ids are handed out before their
    transaction commits (PostgreSQL), so a pause committed just after a newer event was never told. It looks
    ``LOOKBACK`` ids back and skips what it told already."""
    from arena.services.bot_news import NewsCursor, news_since
    from arena.services.bot_owner import pause
    from tests.arena.owner_fakes import account, owner_with_bot

    owner, bot_id = owner_with_bot(context.db)
    with context.db.session() as session:
        pause(session, bot_id, account(context.db, owner), "first")
    with context.db.session() as session:
        pause(session, bot_id, account(context.db, owner), "second")
    with context.db.session(readonly=True) as session:
        first, second = sorted(session.scalars(select(BotEvent.id)))
        # as if "second" had been read while "first" was still uncommitted
        cursor, news = news_since(session, NewsCursor(bot_id, second, frozenset({bot_id}), frozenset({second})))
        assert news.lines == ["bot pedro (piranha-pedro): paused by its owner: first"]
        assert cursor.event_id == second and first in cursor.told_events
        assert news_since(session, cursor)[1].lines == []  # told once
