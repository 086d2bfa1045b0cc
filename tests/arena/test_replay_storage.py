"""Replays as stored (arena.storage.replays): written with orjson, read back as ``json`` would have."""

from __future__ import annotations

import gzip
import json
import math

from arena.storage import replays
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


def test_a_remembered_replay_is_recalled_only_for_the_bytes_stored_with_it() -> None:
    replay, other = {"steps": [], "result": {"ranks": [1, 2]}}, {"steps": [], "result": {"ranks": [2, 1]}}
    blob = compress(replay)
    replays.remember(101, blob, replay)
    assert replays.recall(101, blob) is replay  # no decompression: this very object
    assert replays.recall(101, blob) == replay and replays.recall(101, blob) is not replay  # recalled once only
    replays.remember(102, blob, replay)
    assert replays.recall(102, compress(other)) == other  # another attempt stored other bytes: those are read


def test_only_the_last_replays_are_remembered() -> None:
    first = {"steps": [], "n": 0}
    replays.remember(200, compress(first), first)
    for n in range(1, replays.KEPT + 1):
        replay = {"steps": [], "n": n}
        replays.remember(200 + n, compress(replay), replay)
    assert replays.recall(200, compress(first)) is not first  # pushed out: decompressed
    last = {"steps": [], "n": replays.KEPT}
    assert replays.recall(200 + replays.KEPT, compress(last))["n"] == replays.KEPT
