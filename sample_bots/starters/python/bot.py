"""A starter bot for the arena (protocol v1, docs/protocol.md) on the Python SDK in ``arena_sdk.py``.

    python bot.py --port 9007 --secret S      (or ARENA_BOT_SECRET in the environment)

It answers every game with a uniformly random legal action. Edit ``act`` to make it smarter.
"""

from __future__ import annotations

import random
from typing import Any

from arena_sdk import Bot, run

GAMES = ["piranha-pedro", "piranha-pedro-ko", "piranha-pedro-ko-advanced", "pajarracos"]


def act(request: dict[str, Any]) -> Any:
    """Your strategy: ``request["view"]`` is what your seat may see; answer one of ``legal_actions``."""
    return random.choice(request["legal_actions"])


if __name__ == "__main__":
    run(Bot(name="starter-python", author="you", games=GAMES, act=act))
