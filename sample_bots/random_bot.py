"""A bot that plays a uniformly random legal action in every game: the arena's floor.

    python -m sample_bots.random_bot --port 9001
"""

from __future__ import annotations

from typing import Any

from referee.games import GAMES
from sample_bots.sdk import Bot, run
from sample_bots.seeding import decision_rng


def make_bot(seed: int | None = None) -> Bot:
    """``seed``: each decision's choice follows from it and the request alone (``decision_rng``), so a
    seeded bot plays the same matches the same way however many it plays at once."""

    def act(request: dict[str, Any]) -> Any:
        return decision_rng(seed, request).choice(request["legal_actions"])

    return Bot(name="random", author="arena", version="1", games=sorted(GAMES), act=act)


if __name__ == "__main__":
    run(make_bot())
