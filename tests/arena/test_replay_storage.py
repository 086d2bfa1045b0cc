"""Replays as stored (arena.storage.replays): written with orjson, read back as ``json`` would have."""

from __future__ import annotations

import gzip
import json
import math

from arena.storage.replays import compress, decompress


def test_a_replay_reads_back_as_json_wrote_it() -> None:
    replay = {"game": "pajarracos", "seed": 2**63 - 1, "steps": [{"turn": 1, "view": {3: "é", "x": [1.5, None]}}],
              "result": {"ranks": [1, 2], "scores": [0.1, 1e-7]}}
    assert decompress(compress(replay)) == json.loads(json.dumps(replay))  # int keys become strings, as ever


def test_what_orjson_refuses_is_written_and_read_by_json() -> None:
    replay = {"seed": 2**70, "steps": []}  # beyond 64 bits
    assert decompress(compress(replay)) == replay
    old = gzip.compress(json.dumps({"score": float("nan")}).encode(), compresslevel=1)  # stored by json.dumps
    assert math.isnan(decompress(old)["score"])
