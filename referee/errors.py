"""The arena's exception tree, in one place so callers catch exactly the family they need.

    ArenaError
     +-- RulesError          an action or setup the rules forbid (pure engine)
     +-- BotFault            a bot misbehaved (timeout, bad answer, ...); carries a FaultKind
     +-- ReplayMismatch      a replay does not match what the engine computes
     +-- UnsafeURL           a bot URL the guard refuses before any connection is attempted
"""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena raises on purpose."""


class RulesError(ArenaError, ValueError):
    """An action, a setup or a parameter that the game's rules do not allow."""


class BotFault(ArenaError):
    """A bot's answer could not be used. ``kind`` is a ``referee.faults.FaultKind`` value."""

    def __init__(self, kind: str, message: str, excerpt: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.excerpt = excerpt


class ReplayMismatch(ArenaError):
    """A recorded match differs from what the engine computes from the same seed and actions."""


class UnsafeURL(ArenaError, ValueError):
    """A bot URL that the guard refuses (scheme, or an address that must not be contacted)."""
