"""Geometry for the inline SVG drawings (interval bars, rating history): numbers in, coordinates out."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Scale:
    """A linear map from [low, high] onto [0, width] (a flat range maps to the middle)."""

    low: float
    high: float
    width: float = 100.0

    def __call__(self, value: float) -> float:
        if self.high <= self.low:
            return self.width / 2
        return round((value - self.low) / (self.high - self.low) * self.width, 2)


def interval_scale(entries: list[dict[str, Any]], pad: float = 10.0) -> Scale:
    """One scale for every row's 95% interval on a leaderboard, so the bars compare."""
    if not entries:
        return Scale(1400, 1600)
    low = min(e["elo_low"] for e in entries) - pad
    high = max(e["elo_high"] for e in entries) + pad
    return Scale(low, high)


def interval_bar(scale: Scale, low: float, elo: float, high: float) -> tuple[float, float, float]:
    """x and width of the interval band and x of the estimate, on a 0-100 axis (a band stays visible)."""
    start = scale(low)
    return start, max(round(scale(high) - start, 2), 0.6), scale(elo)


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering [low, high]."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda step: abs(math.log(step / raw)))
    first = math.ceil(low / step) * step
    return [first + k * step for k in range(int((high - first) / step + 1e-9) + 1)]


def _path(points: list[tuple[float, float]]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _band(points: list[tuple[int, float, float, float]], x: Any, y: Any) -> str:
    """A closed outline from each point's high, left to right, back along its low."""
    return _path([(x(n), y(hi)) for n, _e, _lo, hi in points] + [(x(n), y(lo)) for n, _e, lo, _hi in reversed(points)])


def rating_chart(board: dict[str, Any], width: int = 480, height: int = 260) -> dict[str, Any] | None:
    """One leaderboard's rating chart (``services.rating_history.history``): live Elo after every rated
    match (a dot each, or a band of lowest to highest per bucket when there are too many to draw), the
    fitted Elo with its 95% band where fits were made; x is the bot's n-th rated match, y is Elo."""
    live, fits, matches = board["live"], board["fits"], board["matches"]
    if not live and not fits:
        return None
    values = [v for _x, e, lo, hi in live + fits for v in (e, lo, hi)]
    low, high = min(values), max(values)
    if high - low < 40:
        low, high = (low + high) / 2 - 20, (low + high) / 2 + 20
    pad = (high - low) * 0.06
    low, high = low - pad, high + pad
    left, right, top, bottom = 52, 14, 10, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    last = max([matches] + [p[0] for p in live + fits])

    def x(n: float) -> float:
        return left + plot_w / 2 if last <= 1 else left + (n - 1) / (last - 1) * plot_w

    def y(v: float) -> float:
        return top + (high - v) / (high - low) * plot_h

    bucketed = board["bucket"] > 1
    chart: dict[str, Any] = {
        "width": width, "height": height, "left": left, "right": width - right, "top": top,
        "bottom": height - bottom, "matches": matches, "bucket": board["bucket"], "players": board["players"],
        "live_line": _path([(x(n), y(e)) for n, e, _lo, _hi in live]) if len(live) > 1 else "",
        "live_dots": [] if bucketed else [(round(x(n), 1), round(y(e), 1), n, round(e)) for n, e, _lo, _hi in live],
        "live_range": _band(live, x, y) if bucketed else "",
        "band": _band(fits, x, y) if len(fits) > 1 else "",
        "bars": [(round(x(n), 1), round(y(hi), 1), round(y(lo), 1)) for n, _e, lo, hi in fits]
        if len(fits) <= 40 else [],
        "fit_line": _path([(x(n), y(e)) for n, e, _lo, _hi in fits]) if len(fits) > 1 else "",
        "fit_dots": [(round(x(n), 1), round(y(e), 1), n, round(e), round(lo), round(hi)) for n, e, lo, hi in fits]
        if len(fits) <= 40 else [],
        "y_ticks": [(round(t), round(y(t), 1)) for t in nice_ticks(low, high)],
        "x_ticks": [(int(t), round(x(t), 1)) for t in nice_ticks(1, last) if t >= 1 and float(t).is_integer()] or
        [(1, round(x(1), 1))],
        "fits": len(fits),
        "now": fits[-1] if fits else None,
        "live_now": live[-1][1] if live else None,
    }
    return chart
