"""The worker's heap settling: collect and freeze after chosen matches, never in between."""

from __future__ import annotations

import gc

from arena.runtime.heap import HeapSettler


def _scanned(obj: object) -> bool:
    """Whether the collector still scans ``obj``: frozen objects leave its generations."""
    return any(o is obj for o in gc.get_objects())


def test_the_heap_is_frozen_after_the_chosen_matches_only() -> None:
    """Regression (CI, the first version of this test): it compared ``gc.get_freeze_count()`` before and
    after a match that freezes nothing, and the count fell by 4: frozen objects that another thread (or
    pytest) let go of are freed by reference counting and leave the frozen set. So the test follows
    objects of its own instead of a process-wide count."""
    settler = HeapSettler(after=(1, 3))
    try:
        warm = [[]]  # alive before the first match: what the worker warmed up
        assert _scanned(warm)
        assert settler.match_done()  # the first match: what the worker warmed up is frozen
        assert not _scanned(warm)
        kept = [[]]  # made after the freeze: still the collector's to scan
        assert not settler.match_done()
        assert _scanned(kept)
        assert settler.match_done()  # the third: those are frozen too
        assert not _scanned(kept)
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
