"""The worker's heap, kept out of the garbage collector's way while matches play.

A full collection stops every thread of the process, the referee's included, for as long as it takes to
scan every object alive: 169 ms in a worker holding 128,000 objects (``bench.worker_loop``). A bot's
answer that arrived meanwhile is read after the pause and may be judged late, a strike it did not
earn. Nearly all of those objects live as long as the worker (modules, the app, SQLAlchemy's caches),
so after a match, when no bot is waiting, the worker collects once and freezes what survived
(``gc.freeze``): later collections scan only what came after. Freezing again at the 10th, 100th, ...
match takes in what the first matches warmed up (other games, caches); a frozen object that later
becomes cyclic garbage is never freed, which the few freezes bound to a few heaps' worth.
"""

from __future__ import annotations

import gc

FREEZE_AFTER = (1, 10, 100, 1_000, 10_000)  # matches played by this process


class HeapSettler:
    def __init__(self, after: tuple[int, ...] = FREEZE_AFTER) -> None:
        self.after = frozenset(after)
        self.matches = 0

    def match_done(self) -> bool:
        """Count a match played; collect and freeze when it is one of ``after``. True when it did."""
        self.matches += 1
        if self.matches not in self.after:
            return False
        gc.collect()
        gc.freeze()
        return True


SETTLER = HeapSettler()  # the worker process's: one count of its matches
