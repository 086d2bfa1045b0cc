"""``arena ladder run``: the ladder scheduler process. Any number may run (``arena up`` starts one); a
Redis lock with an expiry (redis-py's ``Lock``) makes one of them the active scheduler, renewed every tick,
and a standby takes over within ``lock_s`` when the active one dies. The lock's value names the holder's
host and process (``holder_token``).

The active scheduler ticks (``services.ladder_scheduler.tick``) every ``ARENA_LADDER_TICK_MS``, or at once
when woken (``MatchQueue.wake_ladder``: a bot was submitted), and enqueues what the tick released after its
commit. On taking the lock it first creates the configured ladders and enqueues the released ladder
matches the queue lost (``reconcile_ladders``): the database, not Redis, says what is owed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta

from redis.exceptions import LockError, RedisError
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from arena.composition import Context
from arena.domain.ladder_planner import Table
from arena.runtime.queue import LADDER_LOCK, MatchQueue
from arena.services import probation
from arena.services.bot_news import NewsCursor, news_since, news_start
from arena.services.ladder_scheduler import TickReport, tick
from arena.services.ladders import ensure_ladders, ladder_names
from arena.services.reconcile import reconcile_ladders
from arena.storage.models import Bot, utcnow
from referee.faults import printable

log = logging.getLogger("arena.ladder")
MAX_LINE = 1000  # characters of one terminal line
RECHECK_EVERY_S = 5.0  # how often bots on probation whose back-off is over are health-checked


def holder_token() -> str:
    """The lock's value: which host and process hold it (``GET`` the lock key to see where the active
    scheduler runs), made unique per acquisition as redis-py's own token is."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex}"


class LadderRunner:
    """One scheduler process's loop; ``ticked`` is called after every tick that did something."""

    def __init__(self, context: Context, say: Callable[[str], None] | None = None,
                 rng: random.Random | None = None, tell_settling: bool = True) -> None:
        if context.queue is None:
            raise SystemExit("the ladder scheduler needs Redis: set ARENA_REDIS_URL")
        self.context = context
        self.queue: MatchQueue = context.queue
        raw = say or (lambda line: print(f"ladder {time.strftime('%H:%M:%S')}: {line}", flush=True))
        # every line printable, on one line: owners' words (a pause reason) and bots' (a health check's problems)
        # reach this terminal; a newline or an escape sequence forged lines or cleared the screen (a review)
        self.say = lambda line: raw(printable(line, MAX_LINE))
        self.rng = rng or random.Random()
        self.tick_s = context.settings.ladder_tick_ms / 1000
        self.lock_s = max(3.0, 3 * self.tick_s)
        self.lock = self._new_lock()
        self.active = False
        self.names: dict[int, str] = {}
        self.placed: set[int] = set()  # bots whose placement was told: a bot's first table, not every one
        self.settled: dict[int, bool] = {}
        # False under ``arena demo``, whose own board lines say when a board settles: read from the same
        # database state, but printed by another process, the two raced and the terminal contradicted itself
        self.tell_settling = tell_settling
        self.reviewed_at = utcnow()
        self.news: NewsCursor | None = None  # the bots' submissions and owners' actions told from here on
        self.rechecks: threading.Thread | None = None
        self.told_waiting: set[int] = set()  # bots told to be waiting for their restart, told once

    def _new_lock(self):  # type: ignore[no-untyped-def]
        return self.queue.redis.lock(LADDER_LOCK.format(queue=self.context.settings.queue_name),
                                     timeout=self.lock_s, blocking=False)

    def run(self, stop: threading.Event) -> None:
        """Until ``stop`` is set: stand by for the lock, then tick while holding it."""
        self.start_rechecks(stop)
        while not stop.is_set():
            try:
                if not self.active:
                    self.active = bool(self.lock.acquire(blocking=False, token=holder_token()))
                    if not self.active:
                        stop.wait(min(self.tick_s, self.lock_s / 3))
                        continue
                    self.take_over()
                self.lock.reacquire()  # the expiry starts again: a dead scheduler's lock lapses in lock_s
                self.tick_once()
                self.queue.wait_for_ladder_wake(self.tick_s)
            except LockError:
                self.say("lost the scheduler lock; standing by")
                self.active = False
                self.lock = self._new_lock()
            except RedisError as exc:
                log.warning("ladder scheduler: Redis unavailable (%s); retrying in 1 s", exc)
                self.active = False
                self.lock = self._new_lock()
                stop.wait(1)
            except SQLAlchemyError as exc:
                log.warning("ladder scheduler: database unavailable (%s); retrying in 1 s", exc)
                stop.wait(1)
        if self.active:
            with contextlib.suppress(LockError, RedisError):
                self.lock.release()

    def take_over(self) -> None:
        with self.context.db.session() as session:
            ensure_ladders(session, self.context.settings)
            self.names = ladder_names(session)
            recovered = reconcile_ladders(session, self.queue)
            self.news = news_start(session)
        self.say(f"active scheduler for {len(self.names)} ladder(s); re-queued "
                 f"{recovered['ladder_requeued'] + recovered['ladder_expired_leases']} lost match(es)")

    def tick_once(self) -> TickReport:
        started = time.perf_counter()
        now = utcnow()
        # a match published while the previous tick ran (finished_at before its commit) is reviewed again,
        # never missed: probation's review is idempotent
        since, self.reviewed_at = self.reviewed_at - timedelta(seconds=self.lock_s), now
        workers = self.queue.workers()
        with self.context.db.session() as session:
            report = tick(session, self.context.settings, self.context.settings.deal_key(), self.rng, now, since,
                          workers=workers)
            if report.created or report.placements:
                self.names = ladder_names(session)
            told = {b for _ladder, table in report.placements for b in table.bot_ids}
            told |= {paused.bot_id for paused in report.probation}
            bots = bot_names(session, told)
            news = None
            if self.news is not None:
                self.news, news = news_since(session, self.news)
        if news is not None:
            self.told_waiting -= news.awaiting  # a new wait for a restart: told again when it lasts
            for line in news.lines:
                self.say(line)
        for match_id in report.cancelled:
            self.queue.cancel(match_id)
        for match_id in report.release:  # after the commit: a worker must find the row QUEUED
            self.queue.enqueue(match_id, at_front=match_id in report.front)
        self._tell(report, time.perf_counter() - started, bots)
        return report

    def start_rechecks(self, stop: threading.Event) -> None:
        """Bots on probation, or waiting for their restart with a new secret, are health-checked when due, from a
        thread (a check takes seconds; the tick must not wait for it); one that passes is on the ladder again
        and wakes the scheduler."""
        def loop() -> None:
            while not stop.wait(RECHECK_EVERY_S):
                if not self.active:
                    continue
                try:
                    results = probation.recheck_due(self.context.db, self.context.settings,
                                                    self.context.health_check)
                    if results:
                        with self.context.db.session() as session:
                            names = bot_names(session, {r.bot_id for r in results})
                        self.tell_rechecks(results, names)
                except Exception:  # the database or a bot misbehaving: the next round tries again
                    log.exception("probation re-checks failed")

        self.rechecks = threading.Thread(target=loop, name="ladder-rechecks", daemon=True)
        self.rechecks.start()

    def tell_rechecks(self, results: list[probation.Recheck], names: dict[int, str]) -> None:
        """Each re-check's line, but a bot still waiting for its restart only the first time: it is looked at
        every ``ARENA_LADDER_RECHECK_S``, and a line a minute for each waiting bot buried the terminal (188 of
        321 lines in 16 minutes of a user's trial). Its page and My bots keep saying it."""
        for result in results:
            line = result.line(names.get(result.bot_id))
            if result.not_restarted:
                if result.bot_id in self.told_waiting:
                    log.info("%s", line)
                    continue
                self.told_waiting.add(result.bot_id)
            else:
                self.told_waiting.discard(result.bot_id)
            self.say(line)

    def _tell(self, report: TickReport, seconds: float, bots: dict[int, str] | None = None) -> None:
        for paused in report.probation:
            self.say(f"bot {(bots or {}).get(paused.bot_id, paused.bot_id)} on probation: {paused.reason}")
        for ladder_id, table in report.placements:
            bot_id = placed_bot(table)
            if bot_id is None or bot_id not in self.placed:
                self.say(f"{self.names.get(ladder_id, ladder_id)}: {placement_line(table, bots or {})}")
            if bot_id is not None:
                self.placed.add(bot_id)
        for ladder_id, settled in report.settled.items():
            if self.settled.get(ladder_id, False) != settled and (settled or ladder_id in self.settled):
                line = (f"{self.names.get(ladder_id, ladder_id)}: "
                        + ("settled, now at the maintenance rate" if settled else "unsettled, full rate"))
                if self.tell_settling:
                    self.say(line)
                else:
                    log.info("%s", line)
            self.settled[ladder_id] = settled
        if report.tables or report.cancelled:
            log.info("ladder tick: %s table(s), %s released, %s cancelled in %.0f ms", report.tables,
                     len(report.release), len(report.cancelled), seconds * 1000)


def bot_names(session: Session, bot_ids: set[int]) -> dict[int, str]:
    """The bots' names, as the terminal tells them (an operator knows bots by name, not by id)."""
    return dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(bot_ids))).all()) if bot_ids else {}


def placed_bot(table: Table) -> int | None:
    """The bot a placement table is for (the planner's reason: ``placement of <bot id>``)."""
    last = table.reason.rsplit(" ", 1)[-1]
    return int(last) if table.reason.startswith("placement") and last.isdigit() else None


def placement_line(table: Table, bots: dict[int, str]) -> str:
    """``placing pp-random: a table with pp-heuristic and pp-blunders-25`` (by name, as the boards
    show them). Told once per bot: a provisional bot's later tables are placements too, and the boards'
    lines show where it is going."""
    def name(bot_id: int) -> str:
        return bots.get(bot_id, f"bot {bot_id}")

    placed = placed_bot(table)
    others = [name(b) for b in table.bot_ids if b != placed]
    if placed is None:
        return f"{table.reason}: a table of {', '.join(others)}"
    listed = " and ".join([", ".join(others[:-1]), others[-1]] if len(others) > 2 else others)
    return f"placing {name(placed)}: a table with {listed}"


def run_scheduler(context: Context, tell_settling: bool = True) -> int:
    """``arena ladder run`` until SIGTERM/SIGINT."""
    import signal

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    LadderRunner(context, tell_settling=tell_settling).run(stop)
    return 0
