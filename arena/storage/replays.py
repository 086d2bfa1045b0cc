"""Replays as stored in a match row: compact JSON, gzip level 1 (fast to write from a worker)."""

from __future__ import annotations

import gzip
import json
from typing import Any


def compress(replay: dict[str, Any]) -> bytes:
    return gzip.compress(json.dumps(replay, separators=(",", ":")).encode("utf-8"), compresslevel=1)


def decompress(blob: bytes) -> dict[str, Any]:
    return json.loads(gzip.decompress(blob))
