"""The pages' faster queries answer exactly what the services answer: standings and cross-tables, and
leaderboards whose fault rates are memoised per stored fit (and so follow every recorded match)."""

from __future__ import annotations

from sqlalchemy import select

from arena.services import leaderboards, page_queries
from arena.services.matches import run_match
from arena.services.standings import standings_and_cross_table
from arena.storage.models import Match, MatchStatus, Tournament, TournamentStatus


def test_standings_equal_the_services_for_ranked_and_one_loser_games(context, world) -> None:
    with context.db.session() as session:
        for tournament_id in (world.tournament, world.piranha_tournament):
            tournament = session.get(Tournament, tournament_id)
            assert page_queries.standings(session, tournament) == standings_and_cross_table(session, tournament)


def test_kept_standings_add_each_newly_finished_match_once(context, world) -> None:
    def both() -> tuple[dict, dict]:
        with context.db.session() as session:
            tournament = session.get(Tournament, world.tournament)
            return page_queries.standings(session, tournament), standings_and_cross_table(session, tournament)

    mine, theirs = both()
    assert mine == theirs and sum(s["matches"] for s in mine["standings"]) == 3 * 4
    for match_id in world.queued[:3]:
        run_match(context.db, context.settings, match_id, "test-worker")
        mine, theirs = both()
        assert mine == theirs
    assert both()[0] == theirs and sum(s["matches"] for s in theirs["standings"]) == 3 * 7


def test_a_finished_tournaments_standings_are_kept_and_still_equal_the_services(context, world) -> None:
    with context.db.session() as session:
        ids = session.scalars(select(Match.id).where(Match.tournament_id == world.piranha_tournament,
                                                     Match.status == MatchStatus.QUEUED)).all()
    for match_id in ids:
        run_match(context.db, context.settings, match_id, "test-worker")
    with context.db.session() as session:
        tournament = session.get(Tournament, world.piranha_tournament)
        assert tournament.status == TournamentStatus.FINISHED
        expected = standings_and_cross_table(session, tournament)
        first = page_queries.standings(session, tournament)
        first["standings"].clear()  # a caller's change never reaches the kept table
        assert page_queries.standings(session, tournament) == expected


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
