"""One place that wires the real adapters (database, Redis queue) for the web app, CLI and workers;
tests pass their own settings or fakes instead."""

from __future__ import annotations

from dataclasses import dataclass, field

from arena.config import Settings, load_settings
from arena.runtime.live_bus import LiveBus
from arena.runtime.queue import MatchQueue, connect
from arena.services import ladder_wake
from arena.services.bots import HealthCheck, default_health_check
from arena.storage.db import Database


@dataclass
class Context:
    settings: Settings
    db: Database
    queue: MatchQueue | None  # None: no Redis configured (matches are not played)
    health_check: HealthCheck = field(default=default_health_check)
    live: LiveBus | None = None  # live events for spectators (Redis pub/sub); None without Redis


def build_context(settings: Settings | None = None, migrate: bool = True) -> Context:
    settings = settings or load_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = Database(settings.resolved_database_url, timeout_s=settings.db_timeout_s)
    if migrate:
        db.migrate()
    queue = MatchQueue(connect(settings.redis_url), settings) if settings.redis_url else None
    if queue is not None and settings.ladder:
        ladder_wake.set_waker(queue.wake_ladder)  # a submitted bot wakes the ladder scheduler
    live = LiveBus(queue.redis, settings.queue_name, settings.live_streams) if queue is not None else None
    return Context(settings=settings, db=db, queue=queue, live=live)
