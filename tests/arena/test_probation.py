"""Probation: paused by its ladder fault rate or a failed health check, re-checked on a back-off that
doubles per strike, resumed by itself once healthy."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from arena.services import bot_owner, probation
from arena.services.bot_events import BotEventKind, aware, event_json, events
from arena.services.bots import bot_json
from arena.storage.models import Bot, PausedBy, utcnow
from referee.health import check_bot
from referee.url_guard import AddressPolicy
from tests.arena.owner_fakes import FakeHealth, account, ladder_matches, owner_with_bot


def _settings(settings):  # type: ignore[no-untyped-def]
    return replace(settings, ladder_fault_rate=0.5, ladder_fault_window=6, ladder_fault_min_matches=4,
                   ladder_recheck_s=60, ladder_recheck_max_s=300)


def test_a_bot_faulting_in_most_of_its_recent_ladder_matches_is_paused_with_the_reason(database, settings) -> None:
    settings = _settings(settings)
    _, bot_id = owner_with_bot(database)
    ladder_matches(database, bot_id, [True, True, False])
    with database.session() as session:
        assert probation.review(session, [bot_id], settings) == []  # 3 matches: too few to judge
    ladder_matches(database, bot_id, [True])
    with database.session() as session:
        (paused,) = probation.review(session, [bot_id, bot_id], settings)
    assert paused.strikes == 1 and paused.reason.startswith("3 of its last 4 ladder matches had faults")
    assert "timeout at /act ×3" in paused.reason
    with database.session() as session:
        bot = session.get(Bot, bot_id)
        assert bot.paused_by == PausedBy.PROBATION and bot.paused_reason == paused.reason
        assert timedelta(seconds=55) < aware(bot.recheck_at) - utcnow() <= timedelta(seconds=60)
        assert [e.kind for e in events(session, bot_id)] == [BotEventKind.PROBATION]


def test_tournament_matches_and_healthy_matches_do_not_count(database, settings) -> None:
    settings = _settings(settings)
    _, bot_id = owner_with_bot(database)
    ladder_matches(database, bot_id, [True] * 5, ladder_id=None)  # a tournament's faults are its own business
    ladder_matches(database, bot_id, [False, False, True, False])
    with database.session() as session:
        assert probation.review(session, [bot_id], settings) == []


def test_rechecks_back_off_per_strike_and_a_healthy_bot_resumes_by_itself(database, settings) -> None:
    settings = _settings(settings)
    _, bot_id = owner_with_bot(database)
    sick = FakeHealth(sick={"http://127.0.0.1:9001"})
    start = utcnow()
    with database.session() as session:
        probation.failed_health_check(session, bot_id, ["GET /: connection_error"], settings, start)
    assert probation.recheck_due(database, settings, sick, start + timedelta(seconds=59)) == []  # not yet
    waits = []
    now = start
    for _ in range(4):
        now += timedelta(seconds=400)
        (result,) = probation.recheck_due(database, settings, sick, now)
        assert not result.resumed and "connection refused" in result.problems[0]
        waits.append((result.recheck_at - now).total_seconds())
    assert waits == [120, 240, 300, 300]  # doubling, capped at ARENA_LADDER_RECHECK_MAX_S
    (healthy,) = probation.recheck_due(database, settings, FakeHealth(), now + timedelta(seconds=301))
    assert healthy.resumed
    with database.session() as session:
        bot = session.get(Bot, bot_id)
        assert bot.paused_by is None and bot.recheck_at is None and bot.strikes == 5
        assert events(session, bot_id)[0].kind == BotEventKind.RESUMED
        assert "its health check failed" in events(session, bot_id)[1].detail["reason"]


def test_faults_before_a_resume_are_not_held_against_the_bot_again(database, settings) -> None:
    settings = _settings(settings)
    _, bot_id = owner_with_bot(database)
    ladder_matches(database, bot_id, [True] * 4, minutes_ago=10)
    with database.session() as session:
        assert len(probation.review(session, [bot_id], settings)) == 1
    probation.recheck_due(database, settings, FakeHealth(), utcnow() + timedelta(hours=1))
    with database.session() as session:
        assert probation.review(session, [bot_id], settings) == []  # the old faults are behind it
    ladder_matches(database, bot_id, [True] * 4, minutes_ago=-120)  # after the (simulated) resume
    with database.session() as session:
        (again,) = probation.review(session, [bot_id], settings)
    assert again.strikes == 2  # a repeat offender waits longer


def test_regression_pausing_and_resuming_after_every_table_escaped_probation(database, settings) -> None:
    """A red-team owner: probation judges no fewer than 4 ladder matches since the bot's last resume, and a
    table is 3, so pausing and resuming after each table meant the bot was never judged however often it
    faulted. An owner's resume of the owner's own pause no longer wipes the slate; one that ends a probation,
    after a passing check, still does."""
    settings = _settings(settings)
    owner, bot_id = owner_with_bot(database)
    alice = account(database, owner)
    for minutes_ago in (30, 20):  # two tables of three faulty matches, a pause and a resume after each
        ladder_matches(database, bot_id, [True] * 3, minutes_ago=minutes_ago)
        with database.session() as session:
            bot_owner.pause(session, bot_id, alice)
        bot_owner.resume(database, bot_id, owner, settings, FakeHealth())
    with database.session() as session:
        (paused,) = probation.review(session, [bot_id], settings)
    assert paused.reason.startswith("6 of its last 6 ladder matches had faults")
    bot_owner.resume(database, bot_id, owner, settings, FakeHealth())  # ends the probation: a clean slate
    with database.session() as session:
        assert probation.review(session, [bot_id], settings) == []


def test_probation_never_resumes_an_owners_pause(database, settings) -> None:
    settings = _settings(settings)
    owner, bot_id = owner_with_bot(database)
    alice = account(database, owner)
    with database.session() as session:
        probation.failed_health_check(session, bot_id, ["x"], settings)
    with database.session() as session:
        bot_owner.pause(session, bot_id, alice)
    assert probation.recheck_due(database, settings, FakeHealth(), utcnow() + timedelta(hours=1)) == []
    with database.session() as session:
        assert session.get(Bot, bot_id).paused_by == PausedBy.OWNER


def test_regression_a_failed_recheck_publishes_the_bots_resolved_address_and_port(database, settings) -> None:
    """The guard's refusal names the address the bot's host resolved to and its port ("refused to contact
    10.20.30.40 port 8443: ... private address"); a ladder re-check stored it as the public paused reason
    (``GET /api/bots/<id>`` and the bot's event log, for anyone), though a bot's URL is its owner's."""
    settings = _settings(settings)
    _, bot_id = owner_with_bot(database, url="http://hidden-bot.example:8443")

    def real_check(url: str, secret: str, game: str, _settings) -> object:  # type: ignore[no-untyped-def]
        return check_bot(url, secret, game, guard=AddressPolicy(allow_loopback=False),
                         resolver=lambda host, port: ["10.20.30.40"])

    start = utcnow()
    with database.session() as session:
        probation.failed_health_check(session, bot_id, ["GET /: connection_error"], settings, start)
    (result,) = probation.recheck_due(database, settings, real_check, start + timedelta(hours=1))
    assert not result.resumed and "unsafe_url" in result.problems[0]
    with database.session(readonly=True) as session:
        bot = session.get(Bot, bot_id)
        shown = [bot_json(bot, None)["paused_reason"], *(str(event_json(e, False)) for e in events(session, bot_id))]
    assert "unsafe_url" in shown[0]  # the reason still says what went wrong
    for text in shown:
        assert "10.20.30.40" not in text and "8443" not in text and "hidden-bot" not in text, text
