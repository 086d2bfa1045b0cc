"""The live feed keeps the redaction contract: two states that differ only in hidden information give
byte-identical live events, for every registered game (the states and their variants are the ones of
test_view_redaction_properties: other seats' unrevealed cards and hands, the reserve, the barrel bag).
Checked on the bytes that go out: the feed's events as published, not the view they start from."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.services.live_feed import MatchFeed
from referee.games import GAMES
from referee.live_view import public_step
from tests.security.test_view_redaction_properties import MAX_STEPS, VARIANTS, reach

HIDDEN_KEYS = {"hand", "hands", "my_unrevealed", "pending", "reserve", "barrel_bag", "seed", "result", "stalled"}


class Recorder:
    def __init__(self) -> None:
        self.out: list[bytes] = []

    def publish(self, topic: str, kind: str, data: dict[str, Any], keep: bool = False) -> None:
        self.out.append(f"{topic} {kind} {keep} ".encode() + json.dumps(data, sort_keys=True).encode())

    def keep(self, topic: str, kind: str, data: dict[str, Any]) -> None:
        self.out.append(f"{topic} {kind} kept ".encode() + json.dumps(data, sort_keys=True).encode())


def live_bytes(game: Any, before: Any, after: Any, turn: int) -> list[bytes]:
    """What the feed publishes for a board at ``before`` followed by one step to ``after``."""
    sink = Recorder()
    feed = MatchFeed(sink, 1, may_show=lambda: True, wall=lambda: 1.0)
    players = before.num_players
    feed(public_step(game, before, turn - 1, [100.0] * players, [False] * players))
    feed(public_step(game, after, turn, [150.0] * players, [False] * players))
    return sink.out


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for item in value.values() for k in _keys(item)}
    if isinstance(value, list | tuple):
        return {k for item in value for k in _keys(item)}
    return set()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_live_events_are_identical_whatever_nobody_may_see(name: str) -> None:
    game = GAMES[name]
    low = 2 if name == "pajarracos" else game.spec.min_players
    stats = {"examples": 0, "differed": 0}

    @given(seed=st.integers(0, 2**31 - 1), players=st.integers(low, game.spec.max_players),
           steps=st.integers(1, MAX_STEPS))
    @settings(max_examples=40, deadline=None, database=None)
    def prop(seed: int, players: int, steps: int) -> None:
        before = reach(game, players, seed, steps - 1, until_hidden=True)  # someone holds unrevealed cards
        if game.is_terminal(before):
            return
        rng = random.Random(seed ^ 0x11FE)
        after = game.apply(before, {s: rng.choice(game.legal_actions(before, s)) for s in game.to_act(before)})
        variant_of = VARIANTS[type(before)]
        other_before, other_after = variant_of(before, None, rng), variant_of(after, None, rng)
        stats["examples"] += 1
        stats["differed"] += other_before != before or other_after != after
        real, other = live_bytes(game, before, after, steps), live_bytes(game, other_before, other_after, steps)
        assert real == other, "a live event shows what no seat but its owner may see"
        for line in real:
            assert not HIDDEN_KEYS & _keys(json.loads(line.split(b" ", 3)[3]))

    prop()
    assert stats["differed"] >= stats["examples"] // 2, stats  # not vacuous: the variants changed something
