"""Every view a bot or a spectator can receive matches its game's published JSON Schema.

Seeded random matches of every registered game run in process (no HTTP): each seat view and the
public view at every step, after a JSON round trip, must validate against ``protocol.view_schema``.
The schemas refuse unknown keys (the Pajarracos one at every level), so a field leaked into a view
fails here first.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import pytest

from referee import protocol
from referee.games import GAMES


def _matches(game: str, players: int) -> int:
    """jsonschema spends 2-5 ms on one view here (~7 views a step at six players), so the match
    counts are what keeps this file near 12 s: 22 matches, about 2,400 views."""
    return max(1, 6 - players) if game == "pajarracos" else 1


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """The same schema with each local ``{"$ref": "#/$defs/x"}`` replaced by its target: the schemas
    are not recursive, so this changes nothing they accept, and it saves a third of the time."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: _inline_refs(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline_refs(value, defs) for value in node]
    return node


@cache
def _validator(game: str) -> jsonschema.protocols.Validator:
    schema = protocol.view_schema(game)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(_inline_refs(schema, schema.get("$defs", {})))


def _views(name: str, players: int, seed: int, params: dict | None = None) -> Iterator[tuple[str, Any]]:
    """(who, view) for every seat and the public, at every step of one random match, JSON round-tripped."""
    game = GAMES[name]
    rng = random.Random(seed)
    state = game.initial_state(players, seed, params) if params else game.initial_state(players, seed)
    while True:
        for seat in range(players):
            yield f"seat {seat}", json.loads(json.dumps(game.view(state, seat)))
        yield "public", json.loads(json.dumps(game.public_view(state)))
        if game.is_terminal(state):
            return
        state = game.apply(state, {s: rng.choice(game.legal_actions(state, s)) for s in game.to_act(state)})


CASES = [(name, n) for name in sorted(GAMES) for n in range(GAMES[name].spec.min_players,
                                                             GAMES[name].spec.max_players + 1)]


@pytest.mark.parametrize(("game", "players"), CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_every_view_of_random_matches_matches_the_schema(game: str, players: int) -> None:
    validator = _validator(game)
    checked = 0
    for seed in range(_matches(game, players)):
        for who, view in _views(game, players, seed * 7919 + players):
            errors = list(validator.iter_errors(view))
            assert not errors, f"{game} n={players} seed={seed} {who}: {errors[0].message} at {list(errors[0].path)}"
            assert ("seat" in view) == (who != "public")
            checked += 1
    assert checked >= 2 * (players + 1)


def test_pajarracos_two_player_mode_views_match_the_schema() -> None:
    validator = _validator("pajarracos")
    for seed in range(2):
        for who, view in _views("pajarracos", 2, seed, {"allow_two_players": True, "juicy_per_fruit": 3}):
            assert validator.is_valid(view), (seed, who)
            assert view["two_player_mode"] is True


def _mid_game_view(public: bool) -> dict:
    """A fresh copy of a view from the middle of a 3-player match, taken while a crow sits on a tree."""
    return copy.deepcopy(_mid_game_views()[public])


@cache
def _mid_game_views() -> dict[bool, dict]:
    found = {}
    for public in (False, True):
        views = [v for who, v in _views("pajarracos", 3, 5) if (who == "public") == public]
        with_crow = [v for v in views if any(t["crow"] for o in v["orchards"] for t in o)]
        found[public] = with_crow[len(with_crow) // 2]
    return found


LEAKS = [
    ("a top-level field", lambda v: v.__setitem__("reserve", ["apples"])),
    ("a field in a tree", lambda v: next(o for o in v["orchards"] if o)[0].__setitem__("owner", 0)),
    ("a field in juicy_per_fruit", lambda v: v["juicy_per_fruit"].__setitem__("lemons", 1)),
    ("another seat's hand", lambda v: v.__setitem__("hands", [[], [], []])),
    ("a card name that does not exist", lambda v: v["discard"].append("lemons")),
    ("a foreign card in a tree", lambda v: next(t for o in v["orchards"] for t in o)["cards"].append("crow")),
    ("a crow of an unknown kind", lambda v: next(t for o in v["orchards"] for t in o).__setitem__("crow", "owl")),
]


@pytest.mark.parametrize("public", [False, True], ids=["seat", "public"])
@pytest.mark.parametrize(("what", "leak"), LEAKS, ids=[w for w, _ in LEAKS])
def test_pajarracos_schema_refuses_a_leaked_or_malformed_field(what: str, leak, public: bool) -> None:
    validator = _validator("pajarracos")
    view = _mid_game_view(public)
    assert validator.is_valid(view)
    bad = _mid_game_view(public)
    leak(bad)
    assert not validator.is_valid(bad), what


def test_pajarracos_schema_tells_the_public_view_from_a_seat_view() -> None:
    """A public view with a hand, or a seat view without one, is refused; so is a result mid-game."""
    validator = _validator("pajarracos")
    public, seat = _mid_game_view(True), _mid_game_view(False)
    assert not validator.is_valid({**public, "hand": []})
    assert not validator.is_valid({k: v for k, v in seat.items() if k != "hand"})
    assert not validator.is_valid({**seat, "result": {"ranks": [1, 2, 3], "scores": [3, 2, 1]}})
