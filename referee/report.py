"""Readable summaries of a replay: placings, faults by kind, latency percentiles per seat."""

from __future__ import annotations

from collections import Counter
from typing import Any


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[index]


def seat_stats(replay: dict[str, Any]) -> list[dict[str, Any]]:
    """Per seat: decisions asked, latency percentiles, faults by kind, placing."""
    stats = []
    for player in replay["players"]:
        seat = player["seat"]
        latencies = sorted(
            d["latency_ms"] for s in replay["steps"] for d in s["decisions"]
            if d["seat"] == seat and d["latency_ms"] is not None and not d["fault"]
        )
        faults = Counter(f["kind"] for f in replay["faults"] if f["seat"] == seat)
        stats.append({
            "seat": seat,
            "name": player["name"],
            "rank": replay["result"]["ranks"][seat],
            "score": replay["result"]["scores"][seat],
            "forfeited": seat in replay["result"]["forfeited"],
            "decisions": sum(1 for s in replay["steps"] for d in s["decisions"] if d["seat"] == seat),
            "latency_ms": {q: percentile(latencies, q) for q in (50, 90, 99)} | {
                "max": latencies[-1] if latencies else float("nan")},
            "faults": dict(faults),
        })
    return stats


def summary_text(replay: dict[str, Any]) -> str:
    lines = [f"{replay['game']} match {replay['match_id']} (seed {replay['seed']}): "
             f"{len(replay['steps'])} steps"]
    lines.append(f"{'rank':>4}  {'seat':>4}  {'bot':20} {'score':>6}  {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7}"
                 f" {'max ms':>7}  faults")
    for st in sorted(seat_stats(replay), key=lambda s: (s["rank"], s["seat"])):
        lat = st["latency_ms"]
        faults = ", ".join(f"{k} x{v}" for k, v in sorted(st["faults"].items())) or "-"
        if st["forfeited"]:
            faults += "  (forfeited)"
        cells = " ".join(_ms(lat[q]) for q in (50, 90, 99, "max"))
        lines.append(f"{st['rank']:>4}  {st['seat']:>4}  {st['name'][:20]:20} {st['score']:>6}  {cells}  {faults}")
    return "\n".join(lines)


def _ms(value: float) -> str:
    return f"{'-':>7}" if value != value else f"{value:>7.1f}"  # NaN: no answered decision
