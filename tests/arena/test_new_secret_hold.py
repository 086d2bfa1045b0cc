"""A bot just given a signing secret (submitted, or its secret rotated) stays off the ladder while its owner
restarts it with the secret: ``bots.hold_for_new_secret``, ended by probation's re-check or the owner's resume.

Regression: following the README (start the bot without a secret, submit it, restart it with the secret it
was answered), the ladder had already played the new bot in the second of the restart: 9 connection errors
counted as rated losses, and probation paused it within a minute of its submission."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select

from arena.config import ConfigError, load_settings
from arena.services import bot_owner, probation
from arena.services import bots as bot_service
from arena.services.bot_events import BotEventKind, aware, event_json, events
from arena.services.ladder_scheduler import tick
from arena.services.ladders import ensure_ladders
from arena.storage.models import Account, Bot, MatchSeat, PausedBy, utcnow
from arena.web import create_app
from tests.arena.helpers import auth, token_for
from tests.arena.owner_fakes import FakeHealth, account, owner_with_bot

HOLD_S = 120


@pytest.fixture
def held(settings):  # type: ignore[no-untyped-def]
    """The arena's defaults outside tests: the ladder on, new bots held ``HOLD_S``."""
    return replace(settings, ladder=True, ladder_players="3", ladder_new_secret_s=HOLD_S, ladder_per_hour=10_000)


def _client(context, settings, health):  # type: ignore[no-untyped-def]
    return create_app(context=replace(context, settings=settings, health_check=health)).test_client()


def _submit(client, token: str, name: str, url: str = "http://127.0.0.1:9001"):  # type: ignore[no-untyped-def]
    answer = client.post("/api/bots", json={"name": name, "url": url, "game": "piranha-pedro"}, headers=auth(token))
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def _seated(context, settings) -> set[int]:
    with context.db.session() as session:
        ensure_ladders(session, settings)
        tick(session, settings, b"k" * 32, random.Random(1))
    with context.db.session(readonly=True) as session:
        return set(session.scalars(select(MatchSeat.bot_id)))


def test_regression_a_submitted_bot_is_not_seated_while_its_owner_restarts_it_with_its_secret(context, held) -> None:
    client = _client(context, held, FakeHealth())
    tokens = [token_for(context, name) for name in ("alice", "bob", "carol", "dave")]  # one owner's bots never meet
    before = utcnow()
    ids = [_submit(client, token, f"bot-{i}", f"http://127.0.0.1:900{i}")["id"] for i, token in enumerate(tokens)]
    shown = client.get(f"/api/bots/{ids[0]}", headers=auth(tokens[0])).get_json()
    assert shown["paused_by"] == "new_secret" and shown["ladder"]["state"] == "paused"
    assert "restart it with the signing secret it was given" in shown["ladder"]["reason"]
    until = aware(datetime.fromisoformat(shown["recheck_at"]))
    assert timedelta(seconds=HOLD_S - 5) < until - before <= timedelta(seconds=HOLD_S + 5)
    assert until.strftime("%H:%M:%S UTC") in shown["ladder"]["reason"]
    assert _seated(context, held) == set()  # four bots, a 3-player ladder: no table while they are held
    # the owner restarted three of them and resumes them: each checked with its own secret, then seated
    health = FakeHealth()
    client = _client(context, held, health)
    for bot_id, token in zip(ids[:3], tokens, strict=False):
        resumed = client.post(f"/api/bots/{bot_id}/resume", headers=auth(token))
        assert resumed.status_code == 200 and resumed.get_json()["paused_by"] is None
    with context.db.session(readonly=True) as session:
        secrets = {session.get(Bot, b).url: session.get(Bot, b).secret for b in ids[:3]}
    assert sorted(health.calls) == sorted(secrets.items())
    assert _seated(context, held) == set(ids[:3])


def test_when_the_while_is_up_the_bot_is_checked_and_placed_or_put_on_probation(context, held) -> None:
    client = _client(context, held, FakeHealth())
    token = token_for(context, "alice")
    well, down = (_submit(client, token, name, url)["id"]
                  for name, url in (("well", "http://127.0.0.1:9001"), ("down", "http://127.0.0.1:9002")))
    health = FakeHealth(sick={"http://127.0.0.1:9002"})
    now = utcnow()
    assert probation.recheck_due(context.db, held, health, now + timedelta(seconds=HOLD_S - 10)) == []
    assert health.calls == []  # not before its time: its owner may be restarting it right now
    later = now + timedelta(seconds=HOLD_S + 1)
    results = {r.bot_id: r for r in probation.recheck_due(context.db, held, health, later)}
    assert results[well].resumed and not results[down].resumed
    assert "connection refused" in results[down].problems[0]
    assert "failed its check after it was given its secret: on probation; next at" in results[down].line()
    with context.db.session(readonly=True) as session:
        placed, failed = session.get(Bot, well), session.get(Bot, down)
        assert placed.paused_by is None and placed.recheck_at is None
        assert event_json(events(session, well)[0], True)["summary"] == (
            "on the ladder: its check after it was given its secret passed")
        assert failed.paused_by == PausedBy.PROBATION and failed.strikes == 1
        assert failed.paused_reason.startswith("its health check failed")
        assert [e.kind for e in events(session, down)][:2] == [BotEventKind.PROBATION, BotEventKind.AWAITING_SECRET]
        waiting = event_json(events(session, down)[1], True)["summary"]
        assert waiting.startswith("off the ladder while its owner restarts it with the signing secret it was "
                                  "given: checked and on it from ")


def test_a_resume_that_fails_its_check_leaves_the_bot_waiting(context, held) -> None:
    client = _client(context, held, FakeHealth())
    token = token_for(context, "alice")
    bot_id = _submit(client, token, "pedro")["id"]
    client = _client(context, held, FakeHealth(sick={"http://127.0.0.1:9001"}))
    refused = client.post(f"/api/bots/{bot_id}/resume", headers=auth(token))
    assert refused.status_code == 422 and "connection refused" in refused.get_json()["details"]["problems"][0]
    assert client.get(f"/api/bots/{bot_id}", headers=auth(token)).get_json()["paused_by"] == "new_secret"


@pytest.mark.parametrize("before", [None, PausedBy.OWNER, PausedBy.PROBATION])
def test_a_new_secret_holds_a_bot_on_the_ladder_and_leaves_a_paused_one_as_it_was(database, held, before) -> None:
    account_id, bot_id = owner_with_bot(database)
    with database.session() as session:
        bot = session.get(Bot, bot_id)
        bot.paused_by, bot.recheck_at = before, (utcnow() + timedelta(seconds=30) if before else None)
    with database.session() as session:
        _bot, secret = bot_owner.rotate_secret(session, bot_id, account(database, account_id), held)
    with database.session(readonly=True) as session:
        bot = session.get(Bot, bot_id)
        assert bot.secret == secret
        if before is None:
            assert bot.paused_by == PausedBy.NEW_SECRET
            assert timedelta(seconds=HOLD_S - 5) < aware(bot.recheck_at) - utcnow() <= timedelta(seconds=HOLD_S)
        elif before == PausedBy.OWNER:  # its owner resumes it: nothing to add
            assert bot.paused_by == before and aware(bot.recheck_at) - utcnow() <= timedelta(seconds=30)
        else:  # its re-check (with the new secret) waits for the restart too: mid-restart it would be a strike
            assert bot.paused_by == before
            assert timedelta(seconds=HOLD_S - 5) < aware(bot.recheck_at) - utcnow() <= timedelta(seconds=HOLD_S)


def test_no_hold_without_a_ladder_with_a_zero_while_or_for_a_bot_given_its_secret_by_the_caller(
        context, held) -> None:
    token = token_for(context, "alice")
    for n, settings in enumerate((replace(held, ladder=False), replace(held, ladder_new_secret_s=0))):
        bot = _submit(_client(context, settings, FakeHealth()), token, f"plain-{n}", f"http://127.0.0.1:900{n}")
        assert bot["paused_by"] is None and bot["recheck_at"] is None
    data, _secret = bot_service.submit_bot(context.db, account_id_of(context, "alice"), "demo-like",
                                           "http://127.0.0.1:9005", "piranha-pedro", held, FakeHealth(),
                                           knows_secret=True)  # the demo hands its own servers the secret
    assert data["paused_by"] is None


def account_id_of(context, name: str) -> int:  # type: ignore[no-untyped-def]
    with context.db.session(readonly=True) as session:
        return session.scalar(select(Account.id).where(Account.name == name))


def test_the_while_is_configured_and_checked(tmp_path) -> None:
    assert load_settings({}, data_dir=tmp_path).ladder_new_secret_s == HOLD_S
    assert load_settings({}, env="test", data_dir=tmp_path).ladder_new_secret_s == 0  # tests ask for it
    assert load_settings({"ARENA_LADDER_NEW_SECRET_S": "30"}, env="test", data_dir=tmp_path).ladder_new_secret_s == 30
    with pytest.raises(ConfigError, match="ARENA_LADDER_NEW_SECRET_S"):
        load_settings({"ARENA_LADDER_NEW_SECRET_S": "-1"}, data_dir=tmp_path)


def test_regression_a_bot_still_running_without_its_secret_keeps_waiting_with_no_strike(context, held) -> None:
    """The first version only health-checked a held bot when its time was up: a bot not restarted yet (it
    accepts every signature) passed, was seated, and met its restart in rated matches all the same."""
    client = _client(context, held, FakeHealth())
    token = token_for(context, "alice")
    bot_id = _submit(client, token, "slow-owner")["id"]
    lazy = FakeHealth(unsigned_answered={"http://127.0.0.1:9001"})
    later = utcnow() + timedelta(seconds=HOLD_S + 1)
    (result,) = probation.recheck_due(context.db, held, lazy, later)
    assert not result.resumed and lazy.probed == ["http://127.0.0.1:9001"]
    # the scheduler's terminal (a trial read "failed its re-check" for a bot that failed nothing)
    assert result.line().startswith(f"bot {bot_id} still answers unsigned requests: not restarted with its secret "
                                    "yet (no strike); looked at again")
    assert result.recheck_at == later + timedelta(seconds=held.ladder_recheck_s)
    shown = client.get(f"/api/bots/{bot_id}", headers=auth(token)).get_json()
    assert shown["paused_by"] == "new_secret"
    with context.db.session(readonly=True) as session:
        assert session.get(Bot, bot_id).strikes == 0
    assert "still answers requests without a signature" in shown["ladder"]["reason"]
    assert probation.recheck_due(context.db, held, FakeHealth(), later + timedelta(seconds=30)) == []
    (placed,) = probation.recheck_due(context.db, held, FakeHealth(), result.recheck_at)  # restarted by now
    assert placed.resumed and placed.line() == f"bot {bot_id} restarted with its secret: on the ladder"
    # a bot on probation is re-checked as before: no signature probe
    plain = FakeHealth()
    with context.db.session() as session:
        probation.failed_health_check(session, bot_id, ["GET /: connection_error"], held, later)
    probation.recheck_due(context.db, held, plain, later + timedelta(hours=1))
    assert plain.probed == [] and len(plain.calls) == 1


def test_a_new_version_of_a_waiting_bot_waits_too(context, held) -> None:
    client = _client(context, held, FakeHealth())
    token = token_for(context, "alice")
    old = _submit(client, token, "pedro")
    new = client.post(f"/api/bots/{old['id']}/versions", json={"url": "http://127.0.0.1:9002"}, headers=auth(token))
    assert new.status_code == 201, new.get_json()
    assert new.get_json()["paused_by"] == "new_secret" and new.get_json()["recheck_at"] == old["recheck_at"]
    assert _seated(context, held) == set()


def test_a_resume_is_refused_when_the_secret_changed_during_its_check(context, held) -> None:
    client = _client(context, held, FakeHealth())
    token = token_for(context, "alice")
    bot_id = _submit(client, token, "pedro")["id"]

    class RotatingMeanwhile(FakeHealth):
        def __call__(self, url, secret, game, settings, knows_secret=False):  # type: ignore[no-untyped-def]
            with context.db.session() as session:  # the owner asks for another secret while this one is checked
                bot = session.get(Bot, bot_id)
                bot_owner.rotate_secret(session, bot_id, bot.owner, held)
            return super().__call__(url, secret, game, settings, knows_secret)

    refused = _client(context, held, RotatingMeanwhile()).post(f"/api/bots/{bot_id}/resume", headers=auth(token))
    assert refused.status_code == 409 and "changed while it was checked" in refused.get_json()["error"]
    assert client.get(f"/api/bots/{bot_id}", headers=auth(token)).get_json()["paused_by"] == "new_secret"


def test_the_service_path_holds_as_the_web_path_does(context, held) -> None:
    """``register_bot`` (the services' own path, used by the CLI's helpers and harnesses) holds a new bot too,
    unless its caller hands the running bot the secret itself."""
    with context.db.session() as session:
        owner = session.get(Account, _account(context, "carol"))
        waiting, _ = bot_service.register_bot(session, owner, "svc", "http://127.0.0.1:9001", "piranha-pedro", held,
                                              FakeHealth())
        told, _ = bot_service.register_bot(session, owner, "told", "http://127.0.0.1:9002", "piranha-pedro", held,
                                           FakeHealth(), knows_secret=True)
        assert waiting.paused_by == PausedBy.NEW_SECRET and waiting.recheck_at is not None
        assert told.paused_by is None and told.recheck_at is None


def _account(context, name: str) -> int:  # type: ignore[no-untyped-def]
    token_for(context, name)
    return account_id_of(context, name)
