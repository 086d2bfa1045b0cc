"""Reproducible randomness for the sample bots, whatever order concurrent matches ask in."""

from __future__ import annotations

import random
from typing import Any


def decision_rng(seed: int | None, request: dict[str, Any]) -> random.Random:
    """One stream per decision: with a seed, the same request gets the same answer whatever else the
    bot is doing at the time (matches run concurrently); without one, fresh entropy."""
    if seed is None:
        return random.Random()
    return random.Random(f"{seed}:{request.get('match_id')}:{request.get('seat')}:{request.get('turn')}")
