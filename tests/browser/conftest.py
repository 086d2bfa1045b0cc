"""A live arena for browser tests: the real app on a real server on loopback, a real ``arena worker``
process on Redis (``ARENA_TEST_REDIS_URL``, flushed before and after), real sample bots, and
Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from arena.composition import Context, build_context
from arena.config import load_settings
from arena.runtime.queue import connect
from tests.arena.conftest import _redis_url_for_worker

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("ARENA_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REDIS_URL = _redis_url_for_worker()  # a Redis database of this pytest-xdist worker's own


def chromium_or_skip() -> str:
    """Debian's Chromium; installed with apt-get when missing and possible, else the test is skipped."""
    if Path(CHROMIUM).exists():
        return CHROMIUM
    if shutil.which("apt-get") and os.geteuid() == 0:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=600, check=False)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], env=env, capture_output=True, timeout=1200,
                       check=False)
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} and it could not be installed (apt-get install chromium)")
    return CHROMIUM


@dataclass
class LiveArena:
    url: str
    context: Context
    worker: subprocess.Popen
    worker_log: Path

    def worker_output(self) -> str:
        return self.worker_log.read_text(errors="replace")[-4000:]


@pytest.fixture
def live_arena(tmp_path: Path, random_bots) -> Iterator[LiveArena]:
    """App + server thread + one worker process sharing a SQLite file and a queue of their own."""
    redis = connect(REDIS_URL)
    redis.flushdb()
    settings = load_settings({}, env="test", data_dir=tmp_path, secret_key="browser-test", redis_url=REDIS_URL,
                             queue_name=f"arena-pages-{uuid.uuid4().hex[:8]}", allow_loopback_bots=True,
                             decision_ms=2000, match_lease_s=30, reconcile_interval_s=2)
    context = build_context(settings)
    from arena.web import create_app

    server = make_server("127.0.0.1", 0, create_app(context=context), threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-arena", daemon=True)
    thread.start()
    env = dict(os.environ, ARENA_ENV="test", ARENA_DATABASE_URL=context.db.url, ARENA_REDIS_URL=REDIS_URL,
               ARENA_DATA_DIR=str(tmp_path), ARENA_QUEUE_NAME=settings.queue_name, ARENA_SECRET_KEY="browser-test",
               ARENA_ALLOW_LOOPBACK_BOTS="1", ARENA_DECISION_MS="2000", PYTHONPATH=str(ROOT))
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen([sys.executable, "-m", "arena.cli", "worker"], cwd=ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield LiveArena(f"http://127.0.0.1:{server.server_port}", context, worker, log_path)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=10)
        server.shutdown()
        server.server_close()
        context.db.dispose()
        redis.flushdb()
        redis.close()


@pytest.fixture
def browser(chromium) -> Iterator[object]:
    """The session's Chromium, with every page and context a test opened closed after it. (Each test used
    to start Playwright of its own: once the session's ``chromium`` was running, a second sync Playwright in
    the same thread failed, and every later browser test errored in a whole-suite run.)"""
    before = set(chromium.contexts)
    yield chromium
    for context in set(chromium.contexts) - before:
        context.close()


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def showcase(tmp_path_factory, random_bots) -> Iterator[object]:
    """A finished arena with every game (tests/browser/showcase.py), shared by the page-wide tests."""
    from tests.browser.showcase import serve_showcase

    with serve_showcase(tmp_path_factory.mktemp("showcase"), [b.url for b in random_bots]) as arena:
        yield arena


@pytest.fixture(scope="session")
def chromium() -> Iterator[object]:
    """One Chromium for the page-wide tests (each test opens its own context)."""
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def sessions(showcase, chromium) -> dict[str | None, dict]:
    """Each kind of showcase visitor's signed-in browser storage, made once through the login form."""
    states: dict[str | None, dict] = {None: {"cookies": [], "origins": []}}
    for who, token in (("owner", showcase.owner_token), ("organizer", showcase.organizer_token)):
        context = chromium.new_context()
        page = context.new_page()
        page.goto(showcase.url + "/login")
        page.get_by_label("API token").fill(token)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(showcase.url + "/")
        states[who] = context.storage_state()
        context.close()
    return states
