"""Owner actions: pause and resume (also out of probation), capacity, a new secret; each one logged."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arena.services import bot_owner, probation
from arena.services.bot_events import BotEventKind, events
from arena.services.errors import Invalid
from arena.storage.models import Bot, PausedBy
from tests.arena.owner_fakes import FakeHealth, account, owner_with_bot


def test_an_owner_pause_waits_for_the_owner(database, settings) -> None:
    owner, bot_id = owner_with_bot(database)
    alice = account(database, owner)
    with database.session() as session:
        bot_owner.pause(session, bot_id, alice, "new build tonight")
    with database.session() as session:
        bot = session.get(Bot, bot_id)
        assert bot.paused_by == PausedBy.OWNER and bot.paused_reason == "new build tonight"
        assert probation.failed_health_check(session, bot_id, ["x"], settings) is None  # probation leaves it be
    health = FakeHealth()
    data = bot_owner.resume(database, bot_id, owner, settings, health)
    assert data["paused_by"] is None and health.calls == [("http://127.0.0.1:9001", "s" * 48)]  # checked first
    with database.session() as session:
        assert [e.kind for e in events(session, bot_id)] == [BotEventKind.RESUMED, BotEventKind.PAUSED]


@pytest.mark.parametrize("under", [PausedBy.PROBATION, PausedBy.NEW_SECRET])
def test_regression_a_pause_laid_over_probation_then_a_resume_skipped_the_check(database, settings, under) -> None:
    """A second red-team review: an owner's pause replaced probation (or the wait for a restart with a new
    secret), and a resume of an owner's pause checked nothing: pause, resume, and a dead bot was back on the
    ladder at once. Every resume checks the bot first."""
    owner, bot_id = owner_with_bot(database)
    with database.session() as session:
        session.get(Bot, bot_id).paused_by = under
    with database.session() as session:
        bot_owner.pause(session, bot_id, account(database, owner))
    with pytest.raises(Invalid, match="still fails"):
        bot_owner.resume(database, bot_id, owner, settings, FakeHealth(sick={"http://127.0.0.1:9001"}))
    with database.session() as session:
        assert session.get(Bot, bot_id).paused_by == PausedBy.OWNER


def test_resuming_a_bot_on_probation_checks_it_first(database, settings) -> None:
    owner, bot_id = owner_with_bot(database)
    with database.session() as session:
        assert probation.failed_health_check(session, bot_id, ["GET /: connection_error"], settings) is not None
    with pytest.raises(Invalid, match="still fails"):
        bot_owner.resume(database, bot_id, owner, settings, FakeHealth(sick={"http://127.0.0.1:9001"}))
    with database.session() as session:
        assert session.get(Bot, bot_id).paused_by == PausedBy.PROBATION
    assert bot_owner.resume(database, bot_id, owner, settings, FakeHealth())["paused_by"] is None


def test_capacity_is_capped_and_a_bot_may_declare_less(database, settings) -> None:
    owner, bot_id = owner_with_bot(database)
    alice = account(database, owner)
    capped = replace(settings, ladder_max_capacity=3)
    with database.session() as session:
        for bad in (0, 4, "2", True):
            with pytest.raises(Invalid, match="from 1 to 3"):
                bot_owner.set_capacity(session, bot_id, alice, bad, capped)
        bot = bot_owner.set_capacity(session, bot_id, alice, 3, capped)
        assert bot_owner.effective_capacity(bot, capped) == 3
        bot.info = bot.info | {"capacity": 2}
        assert bot_owner.effective_capacity(bot, capped) == 2
        assert bot_owner.effective_capacity(bot, replace(capped, ladder_max_capacity=1)) == 1


def test_a_rotated_secret_is_new_and_never_logged(database, settings) -> None:
    owner, bot_id = owner_with_bot(database)
    alice = account(database, owner)
    with database.session() as session:
        bot, secret = bot_owner.rotate_secret(session, bot_id, alice, settings)
        assert secret == bot.secret and secret != "s" * 48 and len(secret) == 48
        (event,) = events(session, bot_id)
        assert event.kind == BotEventKind.SECRET_ROTATED and secret not in str(event.detail)
        fingerprint = bot_owner.fingerprint(secret)
        assert secret not in fingerprint
        assert bot_owner.secret_to_show(session, bot_id, alice, fingerprint) == secret
        assert bot_owner.secret_to_show(session, bot_id, alice, bot_owner.fingerprint("x")) is None


def test_a_declared_capacity_counts_without_the_owner_raising_it(database, settings) -> None:
    """The SDK's bots declare ``capacity: 2`` (threaded servers): that is their load on the ladder, though
    their owner left the setting at 1; the arena's cap still bounds it; no declaration: the owner's."""
    from arena.storage.models import Bot

    bot = Bot(name="b", url="http://127.0.0.1:1/", game="piranha-pedro", secret="s", info={"capacity": 2},
              capacity=1)
    assert bot_owner.effective_capacity(bot, settings) == 2
    assert bot_owner.effective_capacity(bot, replace(settings, ladder_max_capacity=1)) == 1
    bot.info = {"capacity": True}  # not a number: ignored
    assert bot_owner.effective_capacity(bot, settings) == 1
