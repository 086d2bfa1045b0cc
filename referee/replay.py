"""Replays: one JSON document per match, and their independent verification.

Verification re-runs the pure engine from the recorded game, params and seed, and checks every step:
who acted, the decision kind, the view each seat was sent, that every action was legal (or was the
seeded default a faulty seat plays), every commitment against the published salt, and the result.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from referee import commitments
from referee.errors import RulesError
from referee.games import get_game
from referee.results import final_result

REPLAY_FORMAT = "arena-replay/1"


def default_action(seed: int, turn: int, seat: int, legal: list[Any]) -> Any:
    """The seeded random legal action a faulty or forfeited seat plays; replays recompute it."""
    return random.Random(f"{seed}:{turn}:{seat}").choice(legal)


@dataclass
class ReplayReport:
    """What the verification found."""

    steps: int = 0
    decisions: int = 0
    commitments: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        head = (f"{self.steps} steps, {self.decisions} decisions, {self.commitments} commitments checked: "
                f"{'OK' if self.ok else f'{len(self.problems)} problem(s)'}")
        return "\n".join([head, *(f"  - {p}" for p in self.problems[:50])])


def _canon(value: Any) -> str:
    return commitments.canonical_json(json.loads(json.dumps(value)))


def verify_replay(doc: dict[str, Any]) -> ReplayReport:
    """Check a replay document against the engine; never raises for a bad document."""
    report = ReplayReport()
    try:
        _verify(doc, report)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        report.problems.append(f"malformed replay: {exc!r}")
    return report


def _verify(doc: dict[str, Any], report: ReplayReport) -> None:
    problems = report.problems
    if doc.get("format") != REPLAY_FORMAT:
        problems.append(f"unknown format {doc.get('format')!r}; expected {REPLAY_FORMAT}")
        return
    try:
        game = get_game(doc["game"])
        state = game.initial_state(len(doc["players"]), doc["seed"], doc["params"])
    except RulesError as exc:
        problems.append(f"cannot set the match up: {exc}")
        return
    if doc.get("engine_version") != game.spec.engine_version:
        problems.append(f"recorded with engine {doc.get('engine_version')!r}, this is {game.spec.engine_version!r}")
    salt, seed = doc["salt"], doc["seed"]
    for expected_turn, step in enumerate(doc["steps"], start=1):
        turn = step["turn"]
        where = f"turn {turn}"
        if turn != expected_turn:
            problems.append(f"{where}: expected turn {expected_turn}")
        if game.is_terminal(state):
            problems.append(f"{where}: the match was already over")
            return
        acting = sorted(game.to_act(state))
        recorded_seats = [d["seat"] for d in step["decisions"]]
        if recorded_seats != acting:
            problems.append(f"{where}: seats {recorded_seats} acted, the engine asks {acting}")
            return
        actions = {}
        for record in step["decisions"]:
            seat = record["seat"]
            actions[seat] = _check_decision(game, state, seed, salt, turn, record, problems)
            report.decisions += 1
            report.commitments += 1
        try:
            state = game.apply(state, actions)
        except RulesError as exc:
            problems.append(f"{where}: the engine refuses the recorded actions: {exc}")
            return
        report.steps += 1
    if not game.is_terminal(state):
        problems.append("the recorded steps end before the match is over")
        return
    expected = final_result(game.result(state), doc["result"].get("forfeited", []))
    if _canon(expected) != _canon(doc["result"]):
        problems.append(f"result mismatch: recorded {doc['result']}, engine gives {expected}")
    if _canon(game.public_view(state)) != _canon(doc.get("final_view")):
        problems.append("the final public view differs from the engine's")


def _check_decision(game: Any, state: Any, seed: int, salt: str, turn: int, record: dict[str, Any],
                    problems: list[str]) -> Any:
    seat = record["seat"]
    where = f"turn {turn} seat {seat}"
    if record["decision"] != game.decision(state, seat):
        problems.append(f"{where}: decision {record['decision']!r}, engine says {game.decision(state, seat)!r}")
    if _canon(record["view"]) != _canon(game.view(state, seat)):
        problems.append(f"{where}: the view sent differs from the engine's view")
    legal = game.legal_actions(state, seat)
    action = record["action"]
    if record.get("default"):
        expected = default_action(seed, turn, seat, legal)
        if _canon(action) != _canon(expected):
            problems.append(f"{where}: default action {action!r} is not the seeded one {expected!r}")
            action = expected
    else:
        try:
            action = game.canonical_action(state, seat, action)
        except RulesError as exc:
            problems.append(f"{where}: recorded action is illegal: {exc}")
            action = default_action(seed, turn, seat, legal)
    if not commitments.verify(salt, turn, seat, record["action"], record["commitment"]):
        problems.append(f"{where}: commitment does not match the action and the published salt")
    return action
