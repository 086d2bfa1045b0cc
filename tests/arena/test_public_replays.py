"""What anyone may download of a match: the full replay, verifiable, minus the bots' fault excerpts."""

from __future__ import annotations

import json

from sqlalchemy import select

from arena.services.matches import run_match
from arena.storage.models import Match
from arena.web.ratelimit import storage_uri
from referee.replay import verify_replay
from tests import bot_zoo
from tests.arena import service_harness as h


def test_fault_excerpts_stay_with_the_owner_and_replays_still_verify(context, client) -> None:
    def secret_garbage(req, sock):
        if req.path == "/act":
            sock.sendall(bot_zoo.http_response(200, b"{my private debug: position 42"))
        else:
            bot_zoo.polite(req, sock)

    with bot_zoo.zoo_bot(secret_garbage) as zoo, h.slow_bots(1, 0) as others:
        bots = h.register_bots(context, [*others], "piranha-pedro")
        with context.db.session() as session:
            from arena.services import bots as bot_service
            from arena.storage.models import Account

            owner = session.scalar(select(Account).where(Account.name == "owner"))
            zoo_bot, _secret = bot_service.register_bot(
                session, owner, "zoo", zoo.url, "piranha-pedro", context.settings,
                health_check=lambda *args: bot_service.HealthReport(ok=True))
        h.start_tournament(context, {"game": "piranha-pedro", "bots": [zoo_bot.id, *bots], "seats": 2, "seed": 3})
        with context.db.session() as session:
            match_id, twin = session.scalars(select(Match.id).order_by(Match.id).limit(2)).all()
        for played in (match_id, twin):  # both rotations of the deal: published only then
            assert run_match(context.db, context.settings, played, "w") == "recorded"
    api = client.get(f"/api/matches/{match_id}").get_json()["replay"]
    download = client.get(f"/matches/{match_id}/replay.json")
    assert download.status_code == 200
    for doc in (api, json.loads(download.data)):
        assert "private debug" not in json.dumps(doc)
        assert doc["faults"] and all(f["excerpt"] == "" for f in doc["faults"])
        assert verify_replay(doc).ok


def test_rate_limit_storage_reaches_the_embedded_redis_on_its_socket() -> None:
    """Regression: Flask-Limiter refused the embedded Redis's unix:// URL, so `arena up` crashed."""
    assert storage_uri("unix:///tmp/arena/redis.socket") == "redis+unix:///tmp/arena/redis.socket"
    assert storage_uri("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    assert storage_uri("") == "memory://"
