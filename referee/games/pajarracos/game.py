"""Pajarracos (Paco Yáñez, Zacatrus; Russian edition «Кыш!») through the one game interface."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from referee.errors import RulesError
from referee.games.base import Game, GameSpec, competition_ranks
from referee.games.pajarracos import actions, turns, views
from referee.games.pajarracos import orchards as orch
from referee.games.pajarracos.cards import CARD_ORDER, SCARECROW, sort_cards
from referee.games.pajarracos.rules import build_rules, check_player_count
from referee.games.pajarracos.state import OVER, TURN, PajarracosState

ENGINE_VERSION = "pajarracos-1"

_EMPTY: frozenset[int] = frozenset()


class Pajarracos(Game):
    spec = GameSpec(
        name="pajarracos",
        title="Pajarracos",
        min_players=3,
        max_players=6,
        simultaneous=False,
        hidden_information=True,
        ranking="ranked",
        description=(
            "Pajarracos (Paco Yáñez, Zacatrus): grow fruit trees, send crows to your rivals' trees, "
            "shoo them off with scarecrows. Score = all your fruit cards + your largest tree once more. "
            "Juicy cards per fruit are a RECONSTRUCTION (1 of 9 by default). 2 players only with "
            "the unofficial parameter allow_two_players."
        ),
        engine_version=ENGINE_VERSION,
    )

    def validate_players(self, num_players: int, params: Mapping[str, Any] | None = None) -> None:
        """3-6 players; 2 only with ``{"allow_two_players": true}``."""
        check_player_count(num_players, params)

    # -- setup ---------------------------------------------------------------------------------
    def initial_state(self, num_players: int, seed: int, params: Mapping[str, Any] | None = None) -> PajarracosState:
        """Shuffle the 65 cards, deal 5 each, the rest is the reserve; then draw the starting seat."""
        if not isinstance(num_players, int) or isinstance(num_players, bool):
            raise RulesError(f"num_players must be an integer, got {num_players!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise RulesError(f"seed must be an integer, got {seed!r}")
        self.validate_players(num_players, params)
        rules = build_rules(num_players, params)
        rng = random.Random(seed)
        deck = [card for card, count in rules.deck for _ in range(count)]
        rng.shuffle(deck)
        start = rng.randrange(num_players)
        hands = []
        for _ in range(num_players):
            hands.append(sort_cards(deck[-rules.hand_size :]))
            del deck[-rules.hand_size :]
        return PajarracosState(
            rules=rules,
            seed=seed,
            phase=TURN,
            active=start,
            turn=1,
            hands=tuple(hands),
            reserve=tuple(deck),
            discard=(),
            orchards=((),) * num_players,
            shooed_out=False,
            scarecrowed=(),
        )

    # -- whose decision --------------------------------------------------------------------------
    def to_act(self, state: PajarracosState) -> frozenset[int]:
        if state.phase == OVER:
            return _EMPTY
        return state.rules.seat_sets[state.active]

    def decision(self, state: PajarracosState, seat: int) -> str:
        """``turn``, ``extra_action``, ``more_crows`` or ``more_scarecrows``."""
        self._check_acting(state, seat)
        return state.phase

    def legal_actions(self, state: PajarracosState, seat: int) -> list[Any]:
        self._check_acting(state, seat)
        return actions.legal_actions(state, seat)

    def _check_acting(self, state: PajarracosState, seat: int) -> None:
        if state.phase == OVER or seat != state.active:
            raise RulesError(f"seat {seat} has no decision to make now")

    # -- the step --------------------------------------------------------------------------------
    def apply(self, state: PajarracosState, actions_by_seat: Mapping[int, Any]) -> PajarracosState:
        if state.phase == OVER:
            raise RulesError("the match is over; no action is expected")
        seat = state.active
        if len(actions_by_seat) != 1 or seat not in actions_by_seat:
            self.check_actions(state, actions_by_seat)
        move = actions.parse(state, seat, actions_by_seat[seat])
        return turns.apply_move(state.clone(), seat, move)

    def canonical_action(self, state: PajarracosState, seat: int, action: Any, legal: list | None = None) -> Any:
        """The listed action equal to ``action`` once its card lists are put in canonical order (parsed
        against the state, so a list of ``legal`` actions is not needed)."""
        self._check_acting(state, seat)
        return actions.to_json(actions.parse(state, seat, action))

    # -- the end ---------------------------------------------------------------------------------
    def is_terminal(self, state: PajarracosState) -> bool:
        return state.phase == OVER

    def result(self, state: PajarracosState) -> dict[str, list]:
        """Rank by points; a tie goes to more fruit kinds; still tied -> shared placing."""
        if state.phase != OVER:
            raise RulesError("the match is not over")
        scores = [orch.score(orchard) for orchard in state.orchards]
        keys = [(points, orch.tiebreak(orchard)) for points, orchard in zip(scores, state.orchards, strict=True)]
        return {"ranks": competition_ranks(keys), "scores": scores}

    def conservation(self, state: PajarracosState) -> dict[str, int]:
        """Each card name's count over hands, reserve, discard pile and orchards; and all 65."""
        counts = dict.fromkeys(CARD_ORDER, 0)
        for hand in state.hands:
            for card in hand:
                counts[card] += 1
        for card in (*state.reserve, *state.discard):
            counts[card] += 1
        for orchard in state.orchards:
            for tree in orchard:
                for card in tree.cards:
                    counts[card] += 1
                if tree.crow is not None:
                    counts[tree.crow] += 1
                if tree.scarecrow:
                    counts[SCARECROW] += 1
        counts["cards"] = sum(counts.values())
        return counts

    # -- what each seat may see ------------------------------------------------------------------
    def view(self, state: PajarracosState, seat: int) -> dict[str, Any]:
        if not isinstance(seat, int) or not 0 <= seat < state.num_players:
            raise RulesError(f"no seat {seat!r} in a {state.num_players}-player match")
        return views.seat_view(self, state, seat)

    def public_view(self, state: PajarracosState) -> dict[str, Any]:
        return views.public_view(self, state)


PAJARRACOS = Pajarracos()
