"""``arena tournament`` and ``arena sprt`` against real sample bots on loopback, no service."""

from __future__ import annotations

import json
import re

import pytest

from arena.cli import main
from sample_bots import heuristic_bot, random_bot
from sample_bots.sdk import start_in_thread


@pytest.fixture(scope="module")
def mixed_bots():
    servers = [start_in_thread(random_bot.make_bot(1)), start_in_thread(heuristic_bot.make_bot(2)),
               start_in_thread(random_bot.make_bot(3)), start_in_thread(heuristic_bot.make_bot(4))]
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


# Seeded bots draw each decision from the seed and the request (sample_bots.seeding) and local match ids come
# from the job, so each run plays the same matches. Regression: the bots shared one RNG between concurrent
# matches, so a loaded run played other matches, and 24 Piranha Pedro matches left honest intervals
# overlapping (1449 > 1493 failed in CI); 36 separate them.
@pytest.mark.parametrize(("game", "seats", "cycles"), [("piranha-pedro", 3, 3), ("pajarracos", 3, 2)])
def test_every_heuristic_bot_ranks_above_every_random_bot_with_separate_intervals(
        mixed_bots, capsys, tmp_path, game, seats, cycles) -> None:
    urls = [s.url for s in mixed_bots]
    args = ["tournament", "--game", game, "--seats", str(seats), "--cycles", str(cycles), "--seed", "7",
            "--workers", "4", "--out", str(tmp_path)]
    for url in urls:
        args += ["--bot", url]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = [re.match(r"\s*\S+\s+(\S+)\s+\d+\s+\[\s*(\d+),\s*(\d+)\]", line)
            for line in out.splitlines() if "127.0.0.1:" in line and "[" in line]
    order = [row.group(1) for row in rows]
    heuristics = {urls[1].split("://")[1], urls[3].split("://")[1]}
    assert set(order[:2]) == heuristics, out
    lows = {row.group(1): float(row.group(2)) for row in rows}
    highs = {row.group(1): float(row.group(3)) for row in rows}
    randoms = set(order) - heuristics
    assert min(lows[h] for h in heuristics) > max(highs[r] for r in randoms), out
    replays = sorted(tmp_path.glob("match-*.json"))
    assert len(replays) == 4 * seats * cycles  # 4 tables of 3 from 4 bots, every rotation, every cycle
    assert main(["replay", str(replays[0])]) == 0


def test_sprt_stops_by_itself_and_prints_the_decision(mixed_bots, capsys) -> None:
    heuristic, rnd = mixed_bots[1].url, mixed_bots[0].url
    assert main(["sprt", "--game", "piranha-pedro", "--bot", heuristic, "--bot", rnd, "--elo0", "0",
                 "--elo1", "20", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "H1 accepted" in out and "LLR" in out and "colour-swapped pairs" in out
    # regression: without a terminal its progress was one line of carriage returns; now lines of their own
    assert "\r" not in out
    progress = [line for line in out.splitlines() if line.startswith("pairs ")]
    assert progress and all(int(line.split()[1]) % 10 == 0 for line in progress)


def test_a_tampered_replay_fails_arena_replay(mixed_bots, capsys, tmp_path) -> None:
    out = tmp_path / "r.json"
    assert main(["play", "--game", "piranha-pedro", "--bot", mixed_bots[0].url, "--bot", mixed_bots[1].url,
                 "--seed", "3", "--out", str(out)]) == 0
    assert main(["replay", str(out)]) == 0
    doc = json.loads(out.read_text())
    doc["steps"][0]["decisions"][0]["commitment"] = "0" * 64
    out.write_text(json.dumps(doc))
    assert main(["replay", str(out)]) == 1
    assert "commitment does not match" in capsys.readouterr().out
