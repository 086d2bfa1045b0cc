"""Versions, URL moves, retirement: each version its own entry, the old one retired but kept."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from arena.services import bot_owner, bot_status, bot_versions
from arena.services import bots as bot_service
from arena.services.bot_events import BotEventKind, event_json, events
from arena.services.errors import Conflict, Invalid
from arena.storage.models import Bot, BotStatus
from tests.arena.owner_fakes import FakeHealth, account, owner_with_bot


def test_a_new_version_is_a_new_entry_and_the_old_one_retires_with_its_name_marked(database, settings) -> None:
    owner, v1 = owner_with_bot(database)
    health = FakeHealth()
    v2 = bot_versions.publish_version(database, v1, owner, "http://127.0.0.1:9002", settings, health)
    assert v2["name"] == "pedro" and v2["version_number"] == 2 and v2["lineage_id"] == v1
    assert health.calls == [("http://127.0.0.1:9002", "s" * 48)]  # checked with the secret the program has
    v3 = bot_versions.publish_version(database, v2["id"], owner, None, settings, health)  # same URL, declared new
    with database.session() as session:
        old, mid, new = (session.get(Bot, i) for i in (v1, v2["id"], v3["id"]))
        assert (old.name, mid.name, new.name) == ("pedro (v1)", "pedro (v2)", "pedro")
        assert old.retired_at and mid.retired_at and new.retired_at is None
        assert old.status == mid.status == BotStatus.DISABLED and new.status == BotStatus.ACTIVE
        assert new.lineage_id == v1 and new.version == 3 and new.url == "http://127.0.0.1:9002"
        assert new.secret == old.secret
        assert [v["version"] for v in bot_status.versions_json(session, old)] == [1, 2, 3]
        assert bot_status.status(session, old).state == "retired"
        assert bot_status.status(session, new).state == "placing"
        kinds = [e.kind for e in events(session, mid.id)]
        assert kinds == [BotEventKind.VERSION_PUBLISHED, BotEventKind.RETIRED, BotEventKind.VERSION_PUBLISHED]


def test_only_the_newest_version_can_be_replaced(database, settings) -> None:
    owner, v1 = owner_with_bot(database)
    bot_versions.publish_version(database, v1, owner, None, settings, FakeHealth())
    with pytest.raises(Conflict, match="publish from the newest version"):
        bot_versions.publish_version(database, v1, owner, None, settings, FakeHealth())


def test_a_new_version_that_fails_its_health_check_changes_nothing(database, settings) -> None:
    owner, v1 = owner_with_bot(database)
    with pytest.raises(Invalid) as refused:
        bot_versions.publish_version(database, v1, owner, "http://127.0.0.1:9003", settings,
                                     FakeHealth(sick={"http://127.0.0.1:9003"}))
    assert "connection refused" in refused.value.details["problems"][0]
    with database.session() as session:
        assert session.scalar(select(Bot.retired_at).where(Bot.id == v1)) is None
        assert len(list(session.scalars(select(Bot)))) == 1


def test_a_url_move_keeps_the_entry_and_is_recorded_with_the_urls_for_the_owner_only(database, settings) -> None:
    owner, bot_id = owner_with_bot(database)
    bot_service.change_bot(database, bot_id, owner, {"url": "http://127.0.0.1:9005"}, settings, FakeHealth())
    with database.session() as session:
        (moved,) = events(session, bot_id)
        assert moved.kind == BotEventKind.URL_MOVED and session.get(Bot, bot_id).version == 1
        assert event_json(moved, owner_view=True)["detail"] == {"old_url": "http://127.0.0.1:9001",
                                                                 "new_url": "http://127.0.0.1:9005"}
        assert event_json(moved, owner_view=False)["detail"] == {}


def test_a_retired_bot_keeps_its_name_and_refuses_changes_until_a_new_version(database, settings) -> None:
    owner, bot_id = owner_with_bot(database)
    alice = account(database, owner)
    with database.session() as session:
        bot_service.delete_bot(session, bot_id, alice)
    with database.session() as session:
        bot = session.get(Bot, bot_id)
        assert bot.name == "pedro" and bot.retired_at is not None and bot.url == "http://127.0.0.1:9001"
        with pytest.raises(Conflict, match="retired"):
            bot_owner.pause(session, bot_id, alice)
    with pytest.raises(Conflict, match="retired"):
        bot_service.change_bot(database, bot_id, owner, {"url": "http://127.0.0.1:9006"}, settings, FakeHealth())
    back = bot_versions.publish_version(database, bot_id, owner, None, settings, FakeHealth())
    assert back["name"] == "pedro" and back["version_number"] == 2 and back["retired_at"] is None
