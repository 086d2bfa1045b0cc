"""The web app while its database cannot be reached (a restart, a network partition): quick, clear 503s,
never a request held for minutes and never a web server that exits (found by tests/cluster/)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from arena.composition import Context
from arena.storage.db import Database
from tests.arena.service_harness import ROOT, free_port

REFUSED = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/arena"  # nothing listens there


@pytest.fixture
def unreachable(settings) -> Context:
    return Context(settings=settings, db=Database(REFUSED, timeout_s=1), queue=None)


def test_database_unreachable_regression_the_api_answered_500_internal_error(unreachable) -> None:
    from arena.web import create_app

    response = create_app(context=unreachable).test_client().get("/api/bots")
    assert response.status_code == 503
    assert "database cannot be reached" in response.get_json()["error"]
    assert response.headers["Retry-After"] == "5"


def test_database_unreachable_regression_pages_said_something_went_wrong(unreachable) -> None:
    from arena.web import create_app

    response = create_app(context=unreachable).test_client().get("/leaderboards/piranha-pedro")
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert "database cannot be reached" in response.get_data(as_text=True)


def test_silent_database_regression_a_request_waited_for_the_kernel_to_give_up() -> None:
    """A database host cut off by the network answers nothing at all: connecting used to wait for the
    kernel's SYN retries (about two minutes). Here a server that accepts and then never speaks."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True).start()
    db = Database(f"postgresql+psycopg://postgres@127.0.0.1:{server.getsockname()[1]}/arena", timeout_s=1)
    started = time.monotonic()
    try:
        with pytest.raises(OperationalError), db.session() as session:
            session.execute(text("SELECT 1"))
        assert time.monotonic() - started < 5
    finally:
        db.dispose()
        for sock in [*accepted, server]:
            sock.close()


def test_web_boot_without_database_regression_gunicorn_exited(tmp_path) -> None:
    """Every gunicorn worker builds the app when it boots, and building it migrated the database: a
    worker (re)started while the database was cut off failed to boot and gunicorn's master exited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update({"ARENA_ENV": "test", "ARENA_DATA_DIR": str(tmp_path), "ARENA_DATABASE_URL": REFUSED,
                "ARENA_DB_TIMEOUT_S": "1", "PYTHONPATH": str(ROOT)})
    booted = subprocess.run([sys.executable, "-c", "import arena.web.wsgi as w; print(type(w.app).__name__)"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert booted.returncode == 0, booted.stderr[-2000:]
    assert booted.stdout.strip() == "Flask" and "cannot be reached at start" in booted.stderr


def test_client_cut_off_mid_transaction_regression_the_server_kept_its_locks_for_hours() -> None:
    """A worker or ladder scheduler cut off inside a transaction left its backend idle in transaction,
    holding its row locks, until the server's kernel gave up on it (two hours of keepalive silence): every
    tick, and every record on that leaderboard, waited as long. The server now probes each connection
    and ends it when the client is gone: about timeout + 3 probes."""
    from tests.arena.conftest import POSTGRES_URL

    db = Database(POSTGRES_URL, timeout_s=4)
    try:
        with db.session(readonly=True) as session:
            settings = dict(session.execute(text(
                "select name, setting from pg_settings where name in ('tcp_keepalives_idle', "
                "'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout')")).all())
    except OperationalError as exc:
        pytest.skip(f"no PostgreSQL to test against: {exc}")
    finally:
        db.engine.dispose()
    assert settings == {"tcp_keepalives_idle": "4", "tcp_keepalives_interval": "2", "tcp_keepalives_count": "3",
                        "tcp_user_timeout": "4000"}
