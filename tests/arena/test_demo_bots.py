"""The demo's bots on a data folder an earlier demo used: its own current bots are re-pointed, the bots of an
earlier population leave the ladder."""

from __future__ import annotations

from sqlalchemy import select

from arena.cli import demo
from arena.storage.models import Account, Bot, BotStatus
from sample_bots import random_bot
from sample_bots.sdk import start_in_thread
from tests.arena.service_harness import register_owned_bots


def test_a_rerun_on_an_older_demos_data_left_its_stale_bots_on_the_ladder(context) -> None:
    """Regression: the demo's population changed (two random and two heuristic bots per game before); the
    older bots, whose servers died with that demo, stayed active and were seated until probation."""
    servers = [start_in_thread(random_bot.make_bot(n)) for n in (1, 2)]
    try:
        (current, stale), _token = register_owned_bots(context, servers, "pajarracos", owner="demo")
        with context.db.session() as session:
            owner_id = session.scalar(select(Account.id).where(Account.name == "demo"))
        demo._disable_others(context, owner_id, {current})
        with context.db.session(readonly=True) as session:
            assert session.get(Bot, current).status == BotStatus.ACTIVE
            assert session.get(Bot, stale).status == BotStatus.DISABLED
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
