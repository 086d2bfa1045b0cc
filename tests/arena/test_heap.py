"""The worker's heap settling: collect and freeze after chosen matches, never in between."""

from __future__ import annotations

import gc

from arena.runtime.heap import HeapSettler


def test_the_heap_is_frozen_after_the_chosen_matches_only() -> None:
    settler = HeapSettler(after=(1, 3))
    try:
        before = gc.get_freeze_count()
        assert settler.match_done()  # the first match: what the worker warmed up is frozen
        frozen = gc.get_freeze_count()
        assert frozen > before
        kept = [[] for _ in range(1000)]  # made after the freeze: still the collector's to scan
        assert not settler.match_done()
        assert gc.get_freeze_count() == frozen
        assert settler.match_done()  # the third: those are frozen too
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        gc.unfreeze()


def test_cyclic_garbage_made_after_a_freeze_is_still_collected() -> None:
    settler = HeapSettler(after=(1,))
    try:
        settler.match_done()

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle only the collector frees
        del a, b
        assert gc.collect() >= 2
    finally:
        gc.unfreeze()
