"""Replays as stored in a match row: compact JSON, gzip level 1 (fast to write from a worker).

The JSON is written and read with orjson: ``json.dumps`` of a Piranha Pedro replay (21 kB) took 0.37 ms
here against 0.04 ms, the largest single part of a worker's own work per match (docs/benchmarks.md).
What orjson refuses (an integer beyond 64 bits, NaN in a replay stored before) goes through ``json``.

A worker that sealed a match often publishes its deal itself a moment later (a tournament's twins are queued
next to each other, in one job): ``remember`` keeps the few replays it sealed last, and ``recall`` hands one
back instead of decompressing its stored bytes, when those bytes are the very ones it stored.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections import OrderedDict
from typing import Any

import orjson

KEPT = 16  # replays ``remember`` keeps (a batch of ARENA_MATCHES_PER_JOB's 16 seals at most 16 before publishing)
_kept: OrderedDict[int, tuple[bytes, dict[str, Any]]] = OrderedDict()
_lock = threading.Lock()


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


def remember(match_id: int, blob: bytes, replay: dict[str, Any]) -> None:
    """This process stored ``blob``, the compressed ``replay``, in the match's row (``recall`` may hand the replay
    back). The replay is not to be changed afterwards: whoever recalls it gets this very object."""
    with _lock:
        _kept[match_id] = (blob, replay)
        _kept.move_to_end(match_id)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)


def recall(match_id: int, blob: bytes) -> dict[str, Any]:
    """``decompress(blob)``, the match's stored replay, without decompressing when this process remembers storing
    exactly these bytes for it (another worker's later attempt stored others: decompressed). Forgotten once
    recalled: a sealed replay is published once."""
    with _lock:
        kept = _kept.pop(match_id, None)
    if kept is not None and kept[0] == bytes(blob):
        return kept[1]
    return decompress(blob)
