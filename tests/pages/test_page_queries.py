"""Kept, incremental standings equal a from-scratch computation; the pages' leaderboards, whose fault
rates are memoised per stored fit, equal the service's (and so follow every recorded match)."""

from __future__ import annotations

from sqlalchemy import select

from arena.ratings.outcomes import MatchOutcome, seat_pairs
from arena.services import leaderboards, page_queries
from arena.services.matches import run_match
from arena.services.standings import standings_and_cross_table
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus, Tournament, TournamentStatus
from referee.games import GAMES


def reference_standings(session, tournament) -> dict:
    """The standings computed from scratch, match by match, through the ratings' own outcome objects: the
    spec the kept, incremental sums must equal."""
    rows = session.execute(select(MatchSeat).join(Match).where(Match.tournament_id == tournament.id,
                                                               Match.status == MatchStatus.FINISHED)
                           .order_by(MatchSeat.match_id, MatchSeat.seat)).scalars().all()
    by_match: dict[int, list] = {}
    for row in rows:
        by_match.setdefault(row.match_id, []).append(row)
    bots = list(tournament.bot_ids)
    stats = {b: [0, 0, 0, 0.0, 0, 0] for b in bots}
    cross = {a: {b: [0, 0, 0] for b in bots if b != a} for a in bots}
    for seats in by_match.values():
        for s in seats:
            st = stats[s.bot_id]
            st[0] += 1
            st[1] += s.rank == 1
            st[2] += s.rank
            st[3] += s.score or 0.0
            st[4] += s.forfeited
            st[5] += s.faults
        outcome = MatchOutcome(tuple(s.bot_id for s in seats), tuple(s.rank for s in seats),
                               GAMES[tournament.game].spec.ranking)
        for i, j, score in seat_pairs(outcome):
            a, b = outcome.bots[i], outcome.bots[j]
            slot = 0 if score == 1.0 else 1
            cross[a][b][slot] += 1
            cross[b][a][2 - slot] += 1
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(bots))).all())
    out = []
    for bot in bots:
        n, wins, rank_sum, score_sum, forfeits, faults = stats[bot]
        won = sum(w + 0.5 * d for w, d, _ in cross[bot].values())
        pairs = sum(sum(v) for v in cross[bot].values())
        out.append({"bot_id": bot, "name": names[bot], "matches": n, "wins": wins,
                    "mean_rank": round(rank_sum / n, 3) if n else None,
                    "mean_score": round(score_sum / n, 3) if n else None,
                    "pair_score": round(won / pairs, 4) if pairs else None, "forfeits": forfeits, "faults": faults})
    out.sort(key=lambda s: (-(s["pair_score"] or 0), s["mean_rank"] or 99, s["bot_id"]))
    for place, entry in enumerate(out, start=1):
        entry["place"] = place
    return {"standings": out, "cross_table": {str(a): {str(b): {"wins": v[0], "draws": v[1], "losses": v[2]}
                                                       for b, v in row.items()} for a, row in cross.items()}}


def test_standings_equal_the_services_for_ranked_and_one_loser_games(context, world) -> None:
    with context.db.session() as session:
        for tournament_id in (world.tournament, world.piranha_tournament):
            tournament = session.get(Tournament, tournament_id)
            assert standings_and_cross_table(session, tournament) == reference_standings(session, tournament)


def test_kept_standings_add_each_newly_finished_match_once(context, world) -> None:
    def both() -> tuple[dict, dict]:
        with context.db.session() as session:
            tournament = session.get(Tournament, world.tournament)
            return standings_and_cross_table(session, tournament), reference_standings(session, tournament)

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
        expected = reference_standings(session, tournament)
        first = standings_and_cross_table(session, tournament)
        first["standings"].clear()  # a caller's change never reaches the kept table
        assert standings_and_cross_table(session, tournament) == expected


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
