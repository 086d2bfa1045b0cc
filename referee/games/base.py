"""The one interface every game implements.

A match is a sequence of pure steps: ``apply(state, {seat: action}) -> state``. Turn-based games are
simultaneous games in which one seat acts. All chance follows from the seed given to
``initial_state``; nothing here reads a clock, the network or a global random source.

The contract for hidden information (after OpenSpiel's observers): two states that differ only in
what a seat cannot see give that seat byte-identical ``view``s.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from referee.errors import RulesError

JSON = Any


@dataclass(frozen=True)
class GameSpec:
    """What a game is, independent of any match: the referee and the web pages read this."""

    name: str
    title: str
    min_players: int
    max_players: int
    simultaneous: bool
    hidden_information: bool
    ranking: str  # "one_loser" or "ranked": how results enter ratings
    description: str = ""
    engine_version: str = "1"  # bumped whenever a rules change could alter a recorded match

    def to_json(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "title": self.title,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "simultaneous": self.simultaneous,
            "hidden_information": self.hidden_information,
            "ranking": self.ranking,
            "description": self.description,
            "engine_version": self.engine_version,
        }


class Game(ABC):
    """A game's rules. Instances are stateless; every method is a pure function of its arguments."""

    spec: GameSpec

    @abstractmethod
    def initial_state(self, num_players: int, seed: int, params: Mapping[str, JSON] | None = None) -> Any:
        """The state at the start of a match; every chance outcome follows from ``seed``."""

    @abstractmethod
    def to_act(self, state: Any) -> frozenset[int]:
        """Seats that decide now; empty once the match is over."""

    @abstractmethod
    def decision(self, state: Any, seat: int) -> str:
        """The kind of decision ``seat`` faces now (e.g. ``"choose_card"``)."""

    @abstractmethod
    def legal_actions(self, state: Any, seat: int) -> list[JSON]:
        """Every legal action of ``seat`` as JSON values, in a stable order."""

    @abstractmethod
    def apply(self, state: Any, actions: Mapping[int, JSON]) -> Any:
        """The next state. Never mutates ``state``; raises ``RulesError`` on an illegal or missing action."""

    @abstractmethod
    def is_terminal(self, state: Any) -> bool:
        """True once the match is over."""

    @abstractmethod
    def result(self, state: Any) -> dict[str, list]:
        """``{"ranks": [...], "scores": [...]}`` per seat; rank 1 is best, equal ranks share a placing."""

    @abstractmethod
    def view(self, state: Any, seat: int) -> dict[str, JSON]:
        """JSON-safe view holding only what ``seat`` may know."""

    @abstractmethod
    def public_view(self, state: Any) -> dict[str, JSON]:
        """JSON-safe view holding only what a spectator may know."""

    def views(self, state: Any, seats: list[int], public: dict[str, JSON] | None = None) -> dict[int, dict[str, JSON]]:
        """``view(state, seat)`` for each of ``seats`` (the referee asks a step's acting seats at once).
        Games whose seat views are a common public part plus a private one override this to build the
        public part once per step; the views may then share that part's values, so they are read, never
        changed. ``public``: ``public_view(state)``, when the caller built it already (for the spectators):
        such a game may build on it instead of building it again."""
        return {seat: self.view(state, seat) for seat in seats}

    @abstractmethod
    def conservation(self, state: Any) -> dict[str, int]:
        """Counts that no step may change (pieces, cards, stones): the conformance test checks them."""

    def canonical_action(self, state: Any, seat: int, action: JSON, legal: list[JSON] | None = None) -> JSON:
        """The engine's own value of the legal action equal (as JSON) to ``action``; ``RulesError`` if
        there is none. Used to vet a bot's answer before ``apply``. Games whose actions contain lists
        in which order carries no meaning override this to canonicalise first. ``legal``: this seat's
        ``legal_actions`` in ``state`` when the caller has them already (the referee listed them for the
        request), so they are not worked out twice per decision."""
        if legal is None:
            legal = self.legal_actions(state, seat)
        for candidate in legal:
            if candidate == action and _same_json(candidate, action):
                return candidate
        raise RulesError(f"{_short(action)} is not a legal action for seat {seat} now")

    def validate_players(self, num_players: int, params: Mapping[str, JSON] | None = None) -> None:
        """Raise ``RulesError`` unless the game can be played by ``num_players``."""
        if not self.spec.min_players <= num_players <= self.spec.max_players:
            raise RulesError(
                f"{self.spec.name} needs {self.spec.min_players}-{self.spec.max_players} players, "
                f"got {num_players}"
            )

    def check_actions(self, state: Any, actions: Mapping[int, JSON]) -> None:
        """Raise ``RulesError`` unless ``actions`` holds exactly one legal action per acting seat."""
        acting = self.to_act(state)
        if not acting:
            raise RulesError("the match is over; no action is expected")
        missing = sorted(acting - set(actions))
        if missing:
            raise RulesError(f"missing action for seat(s) {missing}")
        extra = sorted(set(actions) - acting)
        if extra:
            raise RulesError(f"seat(s) {extra} may not act now; waiting for {sorted(acting)}")


_SORTED = json.JSONEncoder(sort_keys=True)  # what json.dumps(..., sort_keys=True) builds anew on every call


def _same_json(a: JSON, b: JSON) -> bool:
    """Equal as JSON text: 1 and 1.0 and true differ here although Python calls them equal. (Once per
    vetted answer: one encoder kept, not two built per call.)"""
    try:
        return _SORTED.encode(a) == _SORTED.encode(b)
    except (TypeError, ValueError):
        return False


def _short(value: JSON) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:120] + "…"


def competition_ranks(keys: list) -> list[int]:
    """Standard competition ranks (1 = best) from per-seat sort keys where larger is better."""
    return [1 + sum(1 for other in keys if other > mine) for mine in keys]
