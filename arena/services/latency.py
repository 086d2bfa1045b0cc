"""Latency histograms: fixed buckets, so per-match counts add up into per-bot percentiles and into the
Prometheus decision-latency histogram without storing every sample twice."""

from __future__ import annotations

import bisect
from collections.abc import Iterable

BUCKETS_MS: tuple[float, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)


def histogram(latencies_ms: Iterable[float]) -> list[int]:
    """Counts per bucket; the last slot counts everything above the largest bound."""
    counts = [0] * (len(BUCKETS_MS) + 1)
    for value in latencies_ms:
        counts[bisect.bisect_left(BUCKETS_MS, value)] += 1
    return counts


def add(a: list[int], b: list[int]) -> list[int]:
    if not a:
        return list(b)
    if not b:
        return list(a)
    return [x + y for x, y in zip(a, b, strict=True)]


def percentile(counts: list[int], q: float) -> float | None:
    """The upper bound of the bucket holding the q-th percentile (None without samples)."""
    total = sum(counts)
    if not total:
        return None
    rank = q / 100 * total
    running = 0
    for index, count in enumerate(counts):
        running += count
        if running >= rank and count:
            return BUCKETS_MS[index] if index < len(BUCKETS_MS) else float("inf")
    return float("inf")
