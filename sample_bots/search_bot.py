"""A bot that searches: determinized Monte Carlo over sampled worlds in every game, using only its view.

    python -m sample_bots.search_bot --port 9003

Piranha Pedro (all three games): ``piranha_search``. Pajarracos: ``pajarracos_search``. Each decision
takes at most 50% of the request's ``deadline_ms`` less 80 ms (``search_core.budget_for``), less when
the choice is clear. The match parameters seen at ``/start`` (the advanced game's barrel table, for
one) are kept until ``/end`` so that sampled worlds follow them.
"""

from __future__ import annotations

import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from sample_bots import pajarracos_search, piranha_search
from sample_bots.sdk import Bot, run
from sample_bots.search_core import Budget, budget_for
from sample_bots.seeding import decision_rng

Search = Callable[[dict[str, Any], random.Random, Budget, Mapping[str, Any] | None], Any]

SEARCHES: dict[str, Search] = {
    "piranha-pedro": piranha_search.choose,
    "piranha-pedro-ko": piranha_search.choose,
    "piranha-pedro-ko-advanced": piranha_search.choose,
    "pajarracos": pajarracos_search.choose,
}
KEPT_MATCHES = 1000  # parameters of matches whose /end never came are forgotten, oldest first


def act_with(request: dict[str, Any], rng: random.Random, started: float | None = None,
             max_iterations: int | None = None, params: Mapping[str, Any] | None = None) -> Any:
    """The search's answer to one ``/act`` request (in process: tests and benchmarks call this)."""
    budget = budget_for(request, started, max_iterations=max_iterations)
    return SEARCHES[request["game"]](request, rng, budget, params)


def make_bot(seed: int | None = None, max_iterations: int | None = None) -> Bot:
    params: OrderedDict[str, Mapping[str, Any]] = OrderedDict()
    lock = threading.Lock()

    def on_start(request: dict[str, Any]) -> None:
        with lock:
            params[str(request.get("match_id"))] = dict(request.get("params") or {})
            while len(params) > KEPT_MATCHES:
                params.popitem(last=False)

    def on_end(request: dict[str, Any]) -> None:
        with lock:
            params.pop(str(request.get("match_id")), None)

    def act(request: dict[str, Any]) -> Any:
        started = time.perf_counter()
        with lock:
            known = params.get(str(request.get("match_id")))
        return act_with(request, decision_rng(seed, request), started, max_iterations, known)

    return Bot(name="search", author="arena", version="1", games=sorted(SEARCHES), act=act,
               on_start=on_start, on_end=on_end)


if __name__ == "__main__":
    run(make_bot())
