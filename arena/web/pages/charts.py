"""Geometry for the inline SVG drawings (interval bars, rating history): numbers in, coordinates out."""

from __future__ import annotations

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


SERIES_COLOURS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df")


def history_chart(series: dict[int, list[tuple[int, float, float]]], width: int = 640,
                  height: int = 220) -> dict[str, Any] | None:
    """Polylines of Elo (solid) and live Elo (dashed) per player count, x = the bot's n-th rated match."""
    points = [p for rows in series.values() for p in rows]
    if not points:
        return None
    values = [v for _m, e, le in points for v in (e, le)]
    low, high = min(values), max(values)
    if high - low < 40:
        low, high = (low + high) / 2 - 20, (low + high) / 2 + 20
    left, right, top, bottom = 48, 8, 8, 24
    plot_w, plot_h = width - left - right, height - top - bottom
    longest = max(len(rows) for rows in series.values())

    x_step = plot_w / (longest - 1) if longest > 1 else 0.0
    x_first = left if longest > 1 else left + plot_w / 2
    y_scale = plot_h / (high - low)

    def x(i: int) -> float:
        return x_first + i * x_step

    def y(v: float) -> float:
        return top + (high - v) * y_scale

    lines = []
    for n, (players, rows) in enumerate(sorted(series.items())):
        colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
        lines.append({
            "players": players, "colour": colour, "count": len(rows), "last": rows[-1][1],
            "elo": " ".join(f"{x(i):.1f},{y(e):.1f}" for i, (_m, e, _l) in enumerate(rows)),
            "live": " ".join(f"{x(i):.1f},{y(le):.1f}" for i, (_m, _e, le) in enumerate(rows)),
        })
    ticks = [round(low + (high - low) * k / 4) for k in range(5)]
    return {"width": width, "height": height, "left": left, "right": width - right, "top": top,
            "bottom": height - bottom, "lines": lines, "ticks": [(t, round(y(t), 1)) for t in ticks], "points": longest}
