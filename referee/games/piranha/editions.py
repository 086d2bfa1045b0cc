"""What differs between the editions, as data: the rules engine reads one ``Rules`` value.

The original (Goldsieber 2004) and the Korean edition differ in a handful of stages: loss thresholds,
the two-player commitment, random and moving piranhas, the supply, and the Korean advanced variant
with barrels and points. Everything that a rulebook leaves open or that was reconstructed is a
parameter here, so a verified fact can replace it without touching the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.errors import RulesError
from referee.games.piranha.board import Board, board_from_json, default_board

ORIGINAL = "original"
KOREAN = "ko"

#: RECONSTRUCTION: the 27 barrel tokens' kinds are unknown. Every barrel gives one log by default.
#: An effect is ``{"effect": "logs", "amount": n}`` (take n logs from the supply at once, as many as
#: it holds) or ``{"effect": "keep"}`` (the barrel stays in front of the player and scores like an
#: unused log at the round end).
DEFAULT_BARRELS: tuple[Mapping[str, Any], ...] = tuple({"effect": "logs", "amount": 1} for _ in range(27))

#: Safety cap: two bots could walk Pedro to and fro on laid stones for ever. After this many move
#: rounds the match ends (basic: everyone shares the win; advanced: ranked by points). Arena rule.
DEFAULT_MAX_MOVE_ROUNDS = 1000


@dataclass(frozen=True)
class Rules:
    """Everything the engine needs to know about one match's edition and parameters."""

    edition: str
    advanced: bool
    num_players: int
    board: Board
    loss_threshold: int
    start_stones: int
    supply_total: int | None  # None = unlimited
    random_piranhas: bool
    moving_piranhas: bool
    commit_counts: tuple[int, ...]  # per seat offset from the sombrero: (sombrero, next, ...)
    reveal_pattern: tuple[tuple[int, int], ...]  # (seat offset from sombrero, commitment index)
    barrels: tuple[Mapping[str, Any], ...]
    score_final_round: bool
    max_move_rounds: int


def default_threshold(edition: str, num_players: int) -> int:
    """Original: 2nd piranha loses (3rd with two players). Korean: 3 with 2-3 players, 2 with 4-6."""
    if edition == ORIGINAL:
        return 3 if num_players == 2 else 2
    return 3 if num_players <= 3 else 2


def _two_player_shape(edition: str) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]]:
    if edition == ORIGINAL:
        # The sombrero lays out 2 cards, the other 1: reveal A1, B, A2.
        return (2, 1), ((0, 0), (1, 0), (0, 1))
    # Korean: both lay out 2 cards: reveal A1, B1, A2, B2.
    return (2, 2), ((0, 0), (1, 0), (0, 1), (1, 1))


PARAM_NAMES = frozenset(
    {"supply", "loss_threshold", "start_stones", "max_move_rounds", "barrels", "board", "score_final_round"}
)


def build_rules(edition: str, advanced: bool, num_players: int, params: Mapping[str, Any] | None) -> Rules:
    """Validate ``params`` and combine them with the edition's defaults."""
    params = dict(params or {})
    unknown = sorted(set(params) - PARAM_NAMES)
    if unknown:
        raise RulesError(f"unknown parameter(s) {unknown}; known: {sorted(PARAM_NAMES)}")
    board = board_from_json(params["board"]) if "board" in params else default_board()

    supply = params.get("supply", 100 if edition == ORIGINAL else 90)
    if supply == "unlimited" or supply is None:
        supply_total = None
    elif isinstance(supply, int) and not isinstance(supply, bool) and supply >= 0:
        supply_total = supply
    else:
        raise RulesError(f"supply must be a non-negative integer or 'unlimited', got {supply!r}")

    threshold = _positive_int(params, "loss_threshold", default_threshold(edition, num_players))
    start_stones = _positive_int(params, "start_stones", 6 if advanced else 4, allow_zero=True)
    if supply_total is not None and start_stones * num_players > supply_total:
        raise RulesError(f"a supply of {supply_total} cannot give {num_players} players {start_stones} each")
    max_rounds = _positive_int(params, "max_move_rounds", DEFAULT_MAX_MOVE_ROUNDS)
    barrels = _barrels(params.get("barrels", DEFAULT_BARRELS)) if advanced else ()
    if "barrels" in params and not advanced:
        raise RulesError("barrels exist only in the advanced variant")
    score_final = params.get("score_final_round", True)
    if not isinstance(score_final, bool):
        raise RulesError("score_final_round must be true or false")
    if len(board.piranha_squares) > len(board.fish_squares):
        raise RulesError("the board has fewer fish squares than piranhas")
    needed = num_players * (threshold - 1) + 1  # DECISIONS 1: every seat one short of the threshold, then one more
    if needed > len(board.piranha_squares):
        raise RulesError(f"a loss threshold of {threshold} needs up to {needed} piranhas with {num_players} players "
                         f"(each one short of it, then one more); the board has {len(board.piranha_squares)}")

    if num_players == 2:
        commit_counts, reveal = _two_player_shape(edition)
    else:
        commit_counts = (1,) * num_players
        reveal = tuple((offset, 0) for offset in range(num_players))
    return Rules(
        edition=edition,
        advanced=advanced,
        num_players=num_players,
        board=board,
        loss_threshold=threshold,
        start_stones=start_stones,
        supply_total=supply_total,
        random_piranhas=edition == KOREAN,
        moving_piranhas=edition == KOREAN,
        commit_counts=commit_counts,
        reveal_pattern=reveal,
        barrels=barrels,
        score_final_round=score_final,
        max_move_rounds=max_rounds,
    )


def _positive_int(params: Mapping[str, Any], name: str, default: int, allow_zero: bool = False) -> int:
    value = params.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < (0 if allow_zero else 1):
        raise RulesError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer")
    return value


def _barrels(specs: Any) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(specs, list | tuple):
        raise RulesError(f"barrels must be a list of barrel effects, got {specs!r}")
    return tuple(_barrel(b) for b in specs)


def _barrel(spec: Any) -> Mapping[str, Any]:
    if isinstance(spec, Mapping) and spec.get("effect") == "keep":
        return {"effect": "keep"}
    if isinstance(spec, Mapping) and spec.get("effect") == "logs":
        amount = spec.get("amount", 1)
        if isinstance(amount, int) and not isinstance(amount, bool) and amount >= 0:
            return {"effect": "logs", "amount": amount}
    raise RulesError(f"unknown barrel effect {spec!r}; use {{'effect': 'logs', 'amount': n}} or 'keep'")
