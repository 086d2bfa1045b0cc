"""Piranha Pedro through the one game interface: three registered games share this engine.

``piranha-pedro`` (original rules), ``piranha-pedro-ko`` (Korean basic) and
``piranha-pedro-ko-advanced`` (Korean advanced variant) differ only in their ``Rules``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from itertools import permutations
from typing import Any

from referee.errors import RulesError
from referee.games.base import Game, GameSpec, competition_ranks
from referee.games.piranha import rounds, views
from referee.games.piranha.board import Cell
from referee.games.piranha.cards import FULL_HAND, FULL_SET, printed_logs_doubled, sorted_cards
from referee.games.piranha.editions import KOREAN, ORIGINAL, build_rules
from referee.games.piranha.state import CHOOSE_CARD, MOVE_PIRANHA, OVER, TAKE_PIRANHA, PiranhaState

#: Bumped whenever a rules change could alter a recorded match. piranha-2: the advanced game-ending
#: round sends the unused logs back to the supply (issue 22), so piranha-1 final views differ.
ENGINE_VERSION = "piranha-2"


class PiranhaPedro(Game):
    def __init__(self, name: str, title: str, edition: str, advanced: bool = False) -> None:
        self.edition = edition
        self.advanced = advanced
        self.spec = GameSpec(
            name=name,
            title=title,
            min_players=2,
            max_players=6,
            simultaneous=True,
            hidden_information=True,
            ranking="ranked" if advanced else "one_loser",
            description=_DESCRIPTIONS[(edition, advanced)],
            engine_version=ENGINE_VERSION,
        )

    # -- setup ---------------------------------------------------------------------------------
    def initial_state(self, num_players: int, seed: int, params: Mapping[str, Any] | None = None) -> PiranhaState:
        self.validate_players(num_players)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise RulesError(f"seed must be an integer, got {seed!r}")
        rules = build_rules(self.edition, self.advanced, num_players, params)
        rng = random.Random(seed)
        sombrero = rng.randrange(num_players)
        board = rules.board
        count = len(board.piranha_squares)
        if rules.random_piranhas:
            piranhas = tuple(sorted(rng.sample(board.fish_squares, count)))
        else:
            piranhas = tuple(sorted(board.piranha_squares))
        bag = list(range(len(rules.barrels)))
        rng.shuffle(bag)
        supply = None if rules.supply_total is None else rules.supply_total - rules.start_stones * num_players
        state = PiranhaState(
            rules=rules,
            seed=seed,
            params=dict(params or {}),
            phase=CHOOSE_CARD,
            sombrero=sombrero,
            move_round=1,
            pedro=board.palm,
            board_stones=frozenset(),
            piranhas=piranhas,
            stones=(rules.start_stones,) * num_players,
            supply=supply,
            taken=((),) * num_players,
            hands=(FULL_HAND,) * num_players,
            played=((),) * num_players,
            pending=((),) * num_players,
            fall=None,
            history=(),
            barrel_bag=tuple(bag),
            kept_barrels=(0,) * num_players,
            scores=(0,) * num_players,
            barrel_log=(),
        )
        return rounds.start_move_round(state)

    # -- whose decision --------------------------------------------------------------------------
    def to_act(self, state: PiranhaState) -> frozenset[int]:
        phase = state.phase
        if phase == CHOOSE_CARD:
            return frozenset(range(state.num_players))
        if phase == MOVE_PIRANHA:
            return frozenset((state.sombrero,))
        if phase == TAKE_PIRANHA:
            return frozenset((state.fall["seat"],))
        return frozenset()

    def decision(self, state: PiranhaState, seat: int) -> str:
        self._check_acting(state, seat)
        return state.phase

    def legal_actions(self, state: PiranhaState, seat: int) -> list[Any]:
        self._check_acting(state, seat)
        if state.phase == CHOOSE_CARD:
            hand = [c for c in FULL_SET if c in state.hands[seat]]
            if rounds.commit_count(state, seat) == 1:
                return hand
            return [[a, b] for a, b in permutations(hand, 2)]
        if state.phase == TAKE_PIRANHA:
            return [list(p) for p in state.piranhas]
        return [None, *([list(src), list(dst)] for src, dst in self._piranha_moves(state))]

    def _check_acting(self, state: PiranhaState, seat: int) -> None:
        if seat not in self.to_act(state):
            raise RulesError(f"seat {seat} has no decision to make now")

    @staticmethod
    def _piranha_moves(state: PiranhaState) -> list[tuple[Cell, Cell]]:
        occupied = set(state.piranhas) | state.board_stones | {state.pedro}
        free = [sq for sq in sorted(state.rules.board.fish_squares) if sq not in occupied]
        return [(src, dst) for src in state.piranhas for dst in free]

    # -- the step --------------------------------------------------------------------------------
    def apply(self, state: PiranhaState, actions: Mapping[int, Any]) -> PiranhaState:
        self.check_actions(state, actions)
        new = state.clone()
        if state.phase == CHOOSE_CARD:
            commitments = {seat: self._parse_commitment(state, seat, a) for seat, a in actions.items()}
            return rounds.commit_and_reveal(new, commitments)
        (action,) = actions.values()
        if state.phase == TAKE_PIRANHA:
            return rounds.take_piranha(new, self._parse_piranha(state, action))
        return rounds.move_piranha(new, self._parse_piranha_move(state, action))

    def _parse_commitment(self, state: PiranhaState, seat: int, action: Any) -> tuple[str, ...]:
        count = rounds.commit_count(state, seat)
        cards = (action,) if count == 1 else tuple(action) if isinstance(action, list | tuple) else None
        hand = state.hands[seat]
        if (
            cards is None
            or len(cards) != count
            or not all(isinstance(c, str) and c in hand for c in cards)
            or len(set(cards)) != count
        ):
            what = "one card" if count == 1 else f"a list of {count} different cards"
            raise RulesError(
                f"seat {seat} must commit {what} from its hand {sorted_cards(hand)}, got {action!r}"
            )
        return cards

    @staticmethod
    def _parse_piranha(state: PiranhaState, action: Any) -> Cell:
        cell = _as_cell(action)
        if cell is None or cell not in state.piranhas:
            raise RulesError(f"take a piranha on the board, one of {[list(p) for p in state.piranhas]}; "
                             f"got {action!r}")
        return cell

    def _parse_piranha_move(self, state: PiranhaState, action: Any) -> tuple[Cell, Cell] | None:
        if action is None:
            return None
        move = None
        if isinstance(action, list | tuple) and len(action) == 2:
            src, dst = _as_cell(action[0]), _as_cell(action[1])
            if src is not None and dst is not None:
                move = (src, dst)
        if move is None or move not in self._piranha_moves(state):
            raise RulesError(
                f"answer null (no move) or [[row, col], [row, col]]: a piranha and an empty fish square; "
                f"got {action!r}"
            )
        return move

    # -- the end ---------------------------------------------------------------------------------
    def is_terminal(self, state: PiranhaState) -> bool:
        return state.phase == OVER

    def result(self, state: PiranhaState) -> dict[str, list]:
        if state.phase != OVER:
            raise RulesError("the match is not over")
        n = state.num_players
        if self.advanced:
            keys = [(state.scores[s], printed_logs_doubled(state.hands[s])) for s in range(n)]
            return {"ranks": competition_ranks(keys), "scores": list(state.scores)}
        threshold = state.rules.loss_threshold
        scores = [0 if len(state.taken[s]) >= threshold else 1 for s in range(n)]
        return {"ranks": competition_ranks(scores), "scores": scores}

    def conservation(self, state: PiranhaState) -> dict[str, int]:
        counts = {"piranhas": len(state.piranhas) + sum(len(t) for t in state.taken)}
        if state.supply is not None:
            counts["stones"] = state.supply + sum(state.stones) + len(state.board_stones)
        if state.rules.advanced:
            counts["barrels"] = len(state.barrel_bag) + len(state.barrel_log)
        for seat in range(state.num_players):
            counts[f"cards_seat_{seat}"] = len(state.hands[seat]) + len(state.played[seat]) + len(
                state.pending[seat]
            )
        return counts

    # -- what each seat may see ------------------------------------------------------------------
    def view(self, state: PiranhaState, seat: int) -> dict[str, Any]:
        if not 0 <= seat < state.num_players:
            raise RulesError(f"no seat {seat} in a {state.num_players}-player match")
        return views.seat_view(self, state, seat)

    def views(self, state: PiranhaState, seats: list[int],
              public: dict[str, Any] | None = None) -> dict[int, dict[str, Any]]:
        """The public part (board, history, revealed cards: most of a view) built once for every seat
        of a simultaneous step, not once per seat (not at all when the spectators' was built already)."""
        for seat in seats:
            if not 0 <= seat < state.num_players:
                raise RulesError(f"no seat {seat} in a {state.num_players}-player match")
        public = views.public_view(self, state) if public is None else public
        return {seat: views.seat_view(self, state, seat, public) for seat in seats}

    def public_view(self, state: PiranhaState) -> dict[str, Any]:
        return views.public_view(self, state)


def _as_cell(value: Any) -> Cell | None:
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        return (value[0], value[1])
    return None


_DESCRIPTIONS = {
    (ORIGINAL, False): "Piranha Pedro (Goldsieber 2004): steer Pedro across the river with simultaneous "
    "card choices; the player who collects the 2nd piranha (3rd with two players) loses.",
    (KOREAN, False): "피라니아, the Korean edition: logs, random piranhas that the start player may move, "
    "both players commit two cards in a two-player game; 3 piranhas lose with 2-3 players, 2 with 4-6.",
    (KOREAN, True): "피라니아 advanced variant: 6 logs each, barrels after safe 3-arrow moves, unused logs "
    "score at each round end. Barrel kinds and exchange rate are a RECONSTRUCTION (1 log per barrel).",
}

PIRANHA_GAMES = (
    PiranhaPedro("piranha-pedro", "Piranha Pedro", ORIGINAL),
    PiranhaPedro("piranha-pedro-ko", "피라니아 (Korean edition)", KOREAN),
    PiranhaPedro("piranha-pedro-ko-advanced", "피라니아 advanced variant", KOREAN, advanced=True),
)
