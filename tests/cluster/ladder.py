"""The ladder on the cluster: ``arena ladder run`` on every worker host (one active through the Redis lock,
the others standing by), a newcomer submitted by a user in every scenario, and what the driver does
around each scenario: pause the ladders once the scenario is over, let what is owed be played (drain),
check the invariants over a quiet database, resume.

The lock's value names its holder (``arena.runtime.ladder_runner.holder_token``), so a scenario can cut or
kill the host of the active scheduler and time the takeover.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import requests
from sqlalchemy import func, select

from arena.runtime.queue import LADDER_LOCK
from arena.services.bot_versions import retire
from arena.services.ladders import list_ladders, pause_ladder, resume_ladder
from arena.services.leaderboards import stale_boards
from arena.storage.models import Account, Bot, Match, MatchStatus

if TYPE_CHECKING:
    from tests.cluster.scenarios import Run

OPEN = (MatchStatus.SCHEDULED, MatchStatus.QUEUED, MatchStatus.RUNNING, MatchStatus.SEALED)
ORGANIZER = Account(name="the cluster test", is_admin=True)


def holder(run: Run) -> str | None:
    """The host whose ladder scheduler holds the lock (None: nobody does)."""
    assert run.context.queue is not None
    value = run.context.queue.redis.get(LADDER_LOCK.format(queue=run.context.settings.queue_name))
    return value.decode().split(":")[0] if value else None


def wait_holder(run: Run, hosts: tuple[str, ...], timeout_s: float = 30) -> tuple[str, float]:
    """Until the lock is held from one of ``hosts``; returns that host and how long it took."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        found = holder(run)
        if found in hosts:
            return found, time.monotonic() - started
        time.sleep(0.05)
    raise AssertionError(f"no ladder scheduler on {hosts} took the lock within {timeout_s} s (holder {holder(run)})")


def set_running(run: Run, running: bool) -> None:
    with run.context.db.session() as session:
        for ladder in list_ladders(session):
            if running:
                resume_ladder(session, ORGANIZER, ladder.id)
            else:
                pause_ladder(session, ORGANIZER, ladder.id, "the cluster test checks its invariants")
    run.context.queue.wake_ladder()


def newcomer(run: Run) -> int:
    """A user submits a bot through the web API (its server not knowing a secret yet), is shown its
    secret, gives it to the bot (the bots host, on SIGHUP) and resumes it: the ladder places it at once."""
    from tests.cluster.scenarios import GAME, _user

    port = run.hosts.next_newcomer_port()
    token = _user(run, f"owner-{port}")
    response = requests.post(run.hosts.web_url + "/api/bots", json={
        "name": f"newcomer-{port}", "url": run.hosts.bot_url(port), "game": GAME},
        headers={"Authorization": f"Bearer {token}"}, timeout=40)
    assert response.status_code == 201, (response.status_code, response.text[:300])
    run.hosts.give_secrets({port: response.json()["secret"]})
    resumed = requests.post(run.hosts.web_url + f"/api/bots/{response.json()['id']}/resume",
                            headers={"Authorization": f"Bearer {token}"}, timeout=40)
    assert resumed.status_code == 200, (resumed.status_code, resumed.text[:300])
    run.newcomers.append(response.json()["id"])
    return response.json()["id"]


def retire_tried_out(run: Run) -> int:
    """Bots submitted to the shared, unsigned ports (scenario 2's users trying the API) leave the ladder,
    as their owners would once done: the next tick cancels the tables they had not started; the started
    ones are played out first."""
    with run.context.db.session() as session:
        bots = list(session.scalars(select(Bot).where(Bot.name.like("sub-%"), Bot.retired_at.is_(None))))
        for bot in bots:
            retire(session, bot, "tried out")
    if bots:
        run.context.queue.wake_ladder()
    return len(bots)


def owed(run: Run) -> dict[str, int]:
    with run.context.db.session(readonly=True) as session:
        return {getattr(status, "value", status): n for status, n in session.execute(
            select(Match.status, func.count()).where(Match.ladder_id.is_not(None), Match.status.in_(OPEN))
            .group_by(Match.status)).all()}


def drain(run: Run, timeout_s: float = 90) -> float:
    """Until no ladder match is owed, in flight or sealed and every leaderboard's fit is fresh; returns
    how long it took (the ladders are paused first)."""
    set_running(run, False)
    retire_tried_out(run)
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        left = owed(run)
        with run.context.db.session(readonly=True) as session:
            fresh = not stale_boards(session)
        if not left and fresh:
            return time.monotonic() - started
        time.sleep(0.2)
    raise AssertionError(f"the paused ladders did not drain within {timeout_s} s: {owed(run)} left")


def ladder_matches(run: Run, since_id: int = 0) -> dict[str, int]:
    """Ladder matches by status (those with an id above ``since_id``)."""
    with run.context.db.session(readonly=True) as session:
        return {getattr(status, "value", status): n for status, n in session.execute(
            select(Match.status, func.count()).where(Match.ladder_id.is_not(None), Match.id > since_id)
            .group_by(Match.status)).all()}


def last_match_id(run: Run) -> int:
    with run.context.db.session(readonly=True) as session:
        return session.scalar(select(func.max(Match.id))) or 0
