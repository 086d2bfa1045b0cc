"""What a spectator may see of a match while it is played: one ``PublicStep`` after every step.

Built only from the game's ``public_view`` and the clocks, never from a seat's view, an action or the
seed, so two states that differ only in hidden information give byte-identical steps (tests/security/
test_live_redaction.py). A seat's clock (time it has used) is public as at a chess board; it says how
long a bot thought, nothing of what it holds. The match's result is left out even at the end: it
appears with the replay once the match's deal is published (``arena/services/publication.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games.base import Game

LEFT_OUT = ("result", "stalled")  # the end's outcome: published with the replay, never live


@dataclass(frozen=True)
class PublicStep:
    """The match after ``turn`` steps (0: before the first), as anyone may see it."""

    turn: int
    view: dict[str, Any]
    thinking: tuple[int, ...]  # the seats asked now (empty once the match is over)
    time_used_ms: tuple[int, ...]  # per seat, all its decisions so far
    forfeited: tuple[bool, ...]
    over: bool

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "view": self.view, "thinking": list(self.thinking),
                "time_used_ms": list(self.time_used_ms), "forfeited": list(self.forfeited), "over": self.over}


LiveHook = Callable[[PublicStep], None]


def public_step(game: Game, state: Any, turn: int, time_used_ms: Sequence[float],
                forfeited: Sequence[bool], public: dict[str, Any] | None = None) -> PublicStep:
    """The spectator's step from the engine's public view (``public``, when the caller built it) and the seats'
    clocks."""
    public = game.public_view(state) if public is None else public
    view = {key: value for key, value in public.items() if key not in LEFT_OUT}
    over = game.is_terminal(state)
    return PublicStep(turn=turn, view=view, thinking=() if over else tuple(sorted(game.to_act(state))),
                      time_used_ms=tuple(round(t) for t in time_used_ms), forfeited=tuple(bool(f) for f in forfeited),
                      over=over)


def view_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed from one view to the next: keys set anew, lists that only grew (their new tail), keys gone.
    The live board and the replay viewer's frames send this form; the browser applies it to the view it holds."""
    changes: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old is not _MISSING and old == value:
            continue
        if _grew(old, value):
            changes.setdefault("append", {})[key] = list(value[len(old):])
        else:
            changes.setdefault("set", {})[key] = value
    gone = [key for key in before if key not in after]
    if gone:
        changes["unset"] = gone
    return changes


_MISSING = object()


def _grew(old: Any, new: Any) -> bool:
    """``new`` is ``old`` plus items at the end (lists and tuples alike: views may hold either)."""
    return (isinstance(old, list | tuple) and isinstance(new, list | tuple) and len(new) > len(old)
            and list(new[:len(old)]) == list(old))
