"""Replays as stored in a match row: compact JSON, gzip level 1 (fast to write from a worker).

The JSON is written and read with orjson: ``json.dumps`` of a Piranha Pedro replay (21 kB) took 0.37 ms
here against 0.04 ms, the largest single part of a worker's own work per match (docs/benchmarks.md).
What orjson refuses (an integer beyond 64 bits, NaN in a replay stored before) goes through ``json``.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import orjson


def compress(replay: dict[str, Any]) -> bytes:
    """A replay as stored (a replay holds no NaN: bots' answers are strict JSON, and orjson would write null)."""
    try:
        text = orjson.dumps(replay, option=orjson.OPT_NON_STR_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        text = json.dumps(replay, separators=(",", ":")).encode("utf-8")
    return gzip.compress(text, compresslevel=1)


def decompress(blob: bytes) -> dict[str, Any]:
    text = gzip.decompress(blob)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
