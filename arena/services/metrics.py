"""Operational counters and their Prometheus exposition.

Counters live in the database (``MetricCounter``) and grow in the transaction that records a match, so
every web process reports the same exact totals; gauges (queue depth, matches by status) are read at
scrape time. The text format is ``prometheus_client``'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.services.latency import BUCKETS_MS
from arena.storage.models import Match, MetricCounter
from arena.storage.upsert import upsert

MATCHES = "matches_played"
FAULTS = "bot_faults"
LATENCY_BUCKET = "decision_latency_bucket"
LATENCY_SUM = "decision_latency_sum_ms"
LATENCY_COUNT = "decision_latency_count"


def increment(session: Session, amounts: dict[tuple[str, str], float]) -> None:
    """Atomic upsert-add of several counters in one statement, safe under concurrent writers
    (INSERT ... ON CONFLICT DO UPDATE)."""
    rows = [{"name": name, "labels": labels, "value": value} for (name, labels), value in sorted(amounts.items())
            if value]
    upsert(session, MetricCounter, rows, ("name", "labels"), add=("value",))


def count_matches(session: Session, matches: list[tuple[str, list[str], list[int], float]]) -> None:
    """Everything recorded matches add to the counters, in one statement: for each, its game, its faults'
    kinds, its decisions' latency histogram and their sum."""
    amounts: Counter[tuple[str, str]] = Counter()
    for game, fault_kinds, latency_hist, latency_sum_ms in matches:
        amounts[(MATCHES, f"game={game}")] += 1
        amounts.update((FAULTS, f"kind={kind}") for kind in fault_kinds)
        for index, count in enumerate(latency_hist):
            amounts[(LATENCY_BUCKET, f"le={index}")] += count
        amounts[(LATENCY_SUM, "")] += latency_sum_ms
        amounts[(LATENCY_COUNT, "")] += sum(latency_hist)
    increment(session, amounts)


class ArenaCollector:
    """A prometheus_client collector reading the counters, the match table and the queue."""

    def __init__(self, session: Session, queue_depth: int | None) -> None:
        self.session = session
        self.queue_depth = queue_depth

    def collect(self) -> Iterator[Metric]:
        rows = self.session.execute(select(MetricCounter.name, MetricCounter.labels, MetricCounter.value)).all()
        counters: dict[str, dict[str, float]] = {}
        for name, labels, value in rows:
            counters.setdefault(name, {})[labels] = value
        played = CounterMetricFamily("arena_matches_played", "Matches recorded, by game", labels=["game"])
        for labels, value in sorted(counters.get(MATCHES, {}).items()):
            played.add_metric([labels.split("=", 1)[1]], value)
        yield played
        faults = CounterMetricFamily("arena_bot_faults", "Bot faults recorded, by kind", labels=["kind"])
        for labels, value in sorted(counters.get(FAULTS, {}).items()):
            faults.add_metric([labels.split("=", 1)[1]], value)
        yield faults
        yield self._latency(counters)
        status = GaugeMetricFamily("arena_matches", "Matches by status", labels=["status"])
        for name, count in self.session.execute(select(Match.status, func.count()).group_by(Match.status)).all():
            status.add_metric([name], count)
        yield status
        if self.queue_depth is not None:
            yield GaugeMetricFamily("arena_queue_depth", "Match jobs waiting in the queue", value=self.queue_depth)

    @staticmethod
    def _latency(counters: dict[str, dict[str, float]]) -> HistogramMetricFamily:
        buckets = counters.get(LATENCY_BUCKET, {})
        cumulative, running = [], 0.0
        for index, bound in enumerate(BUCKETS_MS):
            running += buckets.get(f"le={index}", 0.0)
            cumulative.append((str(bound / 1000), running))
        running += buckets.get(f"le={len(BUCKETS_MS)}", 0.0)
        cumulative.append(("+Inf", running))
        total_ms = counters.get(LATENCY_SUM, {}).get("", 0.0)
        return HistogramMetricFamily("arena_decision_latency_seconds", "Bot answer latency per decision",
                                     buckets=cumulative, sum_value=total_ms / 1000)


def exposition(session: Session, queue_depth: int | None) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ArenaCollector(session, queue_depth))  # type: ignore[arg-type]
    return generate_latest(registry)
