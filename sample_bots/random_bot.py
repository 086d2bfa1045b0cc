"""A bot that plays a uniformly random legal action in every game: the arena's floor.

    python -m sample_bots.random_bot --port 9001
"""

from __future__ import annotations

import random
from typing import Any

from referee.games import GAMES
from sample_bots.sdk import Bot, run


def make_bot(seed: int | None = None) -> Bot:
    rng = random.Random(seed)

    def act(request: dict[str, Any]) -> Any:
        return rng.choice(request["legal_actions"])

    return Bot(name="random", author="arena", version="1", games=sorted(GAMES), act=act)


if __name__ == "__main__":
    run(make_bot())
