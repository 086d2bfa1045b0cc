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

Strategy = Callable[[dict[str, Any], random.Random], Any]

STRATEGIES: dict[str, Strategy] = {
    "piranha-pedro": piranha_strategy.choose,
    "piranha-pedro-ko": piranha_strategy.choose,
    "piranha-pedro-ko-advanced": piranha_strategy.choose,
    "pajarracos": pajarracos_strategy.choose,
}


def make_bot(seed: int | None = None) -> Bot:
    rng = random.Random(seed)

    def act(request: dict[str, Any]) -> Any:
        return STRATEGIES[request["game"]](request, rng)

    return Bot(name="heuristic", author="arena", version="1", games=sorted(STRATEGIES), act=act)


if __name__ == "__main__":
    run(make_bot())
