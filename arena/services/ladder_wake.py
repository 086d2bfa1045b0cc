"""Waking the ladder scheduler when a change it should act on at once has been committed: a new bot, a
new version, a bot back on the ladder. Without a wake it notices at its next tick (``ARENA_LADDER_TICK_MS``).

The waker is the process's (``composition.build_context`` sets it to the queue's ``wake_ladder``); a
context made without a queue (most tests) sets none, and waking is then a no-op. It fires after the
commit, never before: a scheduler woken earlier would not see the bot yet.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import event
from sqlalchemy.orm import Session

log = logging.getLogger("arena.ladder")
_waker: Callable[[], None] | None = None


def set_waker(waker: Callable[[], None] | None) -> None:
    global _waker
    _waker = waker


def wake_after_commit(session: Session) -> None:
    """Wake the scheduler once ``session``'s transaction has committed (nothing if it rolls back)."""
    if _waker is not None:
        event.listen(session, "after_commit", _fire, once=True)


def _fire(_session: Session) -> None:
    if _waker is None:
        return
    try:
        _waker()
    except Exception as exc:  # Redis away: the scheduler's next tick sees the change anyway
        log.warning("could not wake the ladder scheduler: %s", exc)
