"""The README's step 3, end to end with the Python starter: start it without a secret, submit it (the
real health check), restart it with the secret the arena answered once, and it passes the signed check.
The ladder leaves it alone meanwhile (``ARENA_LADDER_NEW_SECRET_S``, as outside tests), also past that
while if it still runs without the secret, and takes it once it refuses an unsigned request.
Regression: a starter started with any other secret is refused with words that say what to do."""

from __future__ import annotations

import sys
from datetime import timedelta

from arena.composition import Context
from arena.config import load_settings
from arena.services import probation
from arena.storage.db import Database
from arena.storage.models import utcnow
from referee.health import check_bot
from tests.sample_bots.starter_processes import STARTERS, free_port, running


def _client(tmp_path):  # type: ignore[no-untyped-def]
    from arena.web import create_app

    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    settings = load_settings({}, env="test", data_dir=tmp_path, secret_key="readme", rate_limits=False,
                             allow_loopback_bots=True, ladder=True, ladder_new_secret_s=120)
    return create_app(context=Context(settings=settings, db=db, queue=None)).test_client(), db, settings


def test_the_readme_submission_works_as_written(tmp_path) -> None:
    client, db, settings = _client(tmp_path)
    try:
        token = client.post("/api/accounts", json={"name": "me"}).get_json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        port = free_port()
        bare = [sys.executable, "bot.py", "--port", str(port)]
        with running(bare, STARTERS / "python", port) as url:
            answer = client.post("/api/bots", json={"name": "my-bot", "url": url, "game": "piranha-pedro"},
                                 headers=headers)
            assert answer.status_code == 201, answer.get_json()
            secret = answer.get_json()["secret"]
            assert answer.get_json()["paused_by"] == "new_secret"  # no ladder match while it restarts
            # its owner is slow: when the while is up it still runs without the secret, and keeps waiting
            later = utcnow() + timedelta(seconds=121)
            (waiting,) = probation.recheck_due(db, settings, now=later)
            assert not waiting.resumed and waiting.problems == [probation.NOT_RESTARTED]
        with running([*bare, "--secret", secret], STARTERS / "python", port) as url:
            assert check_bot(url, secret, "piranha-pedro", knows_secret=True).refuses_unsigned is True
            (placed,) = probation.recheck_due(db, settings, now=waiting.recheck_at)
            assert placed.resumed
        other = free_port()
        with running([sys.executable, "bot.py", "--port", str(other), "--secret", "another"], STARTERS / "python",
                     other) as url:
            refused = client.post("/api/bots", json={"name": "mine-2", "url": url, "game": "piranha-pedro"},
                                  headers=headers)
        assert refused.status_code == 422
        assert "start it without a secret first" in refused.get_json()["details"]["problems"][0]
    finally:
        db.dispose()
