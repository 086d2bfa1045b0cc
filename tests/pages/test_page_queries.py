"""The pages' leaderboards, whose fault rates are memoised per stored fit, equal the service's (and so
follow every recorded match)."""

from __future__ import annotations

from arena.services import leaderboards, page_queries
from arena.services.matches import run_match


def test_leaderboards_equal_the_services_before_and_after_another_match(context, world) -> None:
    def both() -> tuple[dict, dict]:
        with context.db.session() as session:
            return (page_queries.leaderboard(session, "pajarracos", 3),
                    leaderboards.leaderboard(session, "pajarracos", 3))

    mine, theirs = both()
    assert mine == theirs and any(e["fault_rate"] for e in mine["entries"])
    assert both()[0] == theirs  # from the memo this time
    for match_id in world.queued[:2]:
        run_match(context.db, context.settings, match_id, "test-worker")
    mine, theirs = both()
    assert mine == theirs and mine["matches"] == len(world.finished) - 1 + 2
    with context.db.session() as session:
        assert page_queries.leaderboard(session, "piranha-pedro") == leaderboards.leaderboard(session, "piranha-pedro")
        assert page_queries.leaderboard(session, "pajarracos", 5) == leaderboards.leaderboard(session, "pajarracos", 5)
