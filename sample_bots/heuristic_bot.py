"""A bot that plays every game clearly better than random, using only its view.

    python -m sample_bots.heuristic_bot --port 9002

Piranha Pedro: avoids falls and keeps the cheap cards (``piranha_strategy``).
Pajarracos: grows one big tree, shoos or dodges crows, sends crows to the leaders' big trees
(``pajarracos_strategy``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from sample_bots import pajarracos_strategy, piranha_strategy
from sample_bots.sdk import Bot, run
from sample_bots.seeding import decision_rng

Strategy = Callable[[dict[str, Any], random.Random], Any]

STRATEGIES: dict[str, Strategy] = {
    "piranha-pedro": piranha_strategy.choose,
    "piranha-pedro-ko": piranha_strategy.choose,
    "piranha-pedro-ko-advanced": piranha_strategy.choose,
    "pajarracos": pajarracos_strategy.choose,
}


def make_bot(seed: int | None = None, blunders: float = 0.0) -> Bot:
    """``seed``: the strategies' tie-breaks follow from it and the request alone (``decision_rng``), so a
    seeded bot plays the same matches the same way however many it plays at once. ``blunders``: the share
    of decisions answered with a uniformly random legal action instead, for bots of graded strength between
    the heuristic and random (``arena demo``'s population, whose ranks must be told apart)."""
    if not 0.0 <= blunders <= 1.0:
        raise ValueError(f"blunders is a share of decisions, not {blunders}")

    def act(request: dict[str, Any]) -> Any:
        rng = decision_rng(seed, request)
        if blunders and rng.random() < blunders:
            return rng.choice(request["legal_actions"])
        return STRATEGIES[request["game"]](request, rng)

    return Bot(name="heuristic", author="arena", version="1", games=sorted(STRATEGIES), act=act)


if __name__ == "__main__":
    run(make_bot())
