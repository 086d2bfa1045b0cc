"""``arena demo`` following its tournaments: it looks at the progress now and then, never in a busy loop."""

from __future__ import annotations

import time

from arena.cli import demo
from arena.services import tournaments as tournament_service
from tests.arena.service_harness import register_bots, slow_bots, start_tournament


def test_demo_progress_loop_spun_without_sleeping_and_starved_the_workers(queued_context, monkeypatch) -> None:
    """Regression: the pause between two looks at a tournament's progress sat outside the loop, so the demo
    read the database as fast as it could (a whole core, and on SQLite the write lock each time) while the
    workers it waited for had one core left: on two cores a demo sometimes never ended."""
    reads = []
    real_progress = tournament_service.progress

    def counted(session, tournament_id):  # type: ignore[no-untyped-def]
        reads.append(time.monotonic())
        return real_progress(session, tournament_id)

    monkeypatch.setattr(tournament_service, "progress", counted)
    with slow_bots(3, 0.0) as servers:
        bot_ids = register_bots(queued_context, servers, "pajarracos")
        tournament_id = start_tournament(queued_context, {"game": "pajarracos", "bots": bot_ids, "seats": 3})
        started = time.monotonic()  # no worker runs: the tournament never finishes, the wait times out
        finished = demo.follow_tournament(queued_context, "pajarracos", tournament_id, started + 1.0,
                                          lambda: False, poll_s=0.25)
    assert finished is False
    assert 3 <= len(reads) <= 8, f"{len(reads)} progress reads in about 1 s"
