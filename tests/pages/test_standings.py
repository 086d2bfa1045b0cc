"""A tournament's kept sums (added to by every recorded match, summed again by ``rebuild``, or by the
migration that brought them in) equal a from-scratch computation through the ratings' outcome objects."""

from __future__ import annotations

from alembic import command
from sqlalchemy import delete, func, select

from arena.ratings.outcomes import MatchOutcome, seat_pairs
from arena.services import standings
from arena.services.matches import record, run_match
from arena.services.standings import standings_and_cross_table
from arena.storage.db import alembic_config
from arena.storage.models import (
    Bot,
    Match,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentPair,
    TournamentScore,
    TournamentStatus,
)
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


def _both(context, tournament_id: int) -> tuple[dict, dict]:
    with context.db.session() as session:
        tournament = session.get(Tournament, tournament_id)
        return standings_and_cross_table(session, tournament), reference_standings(session, tournament)


def test_standings_equal_the_reference_for_ranked_and_one_loser_games(context, world) -> None:
    for tournament_id in (world.tournament, world.piranha_tournament):
        mine, theirs = _both(context, tournament_id)
        assert mine == theirs and any(s["matches"] for s in mine["standings"])


def test_each_newly_recorded_match_is_added_once(context, world) -> None:
    mine, theirs = _both(context, world.tournament)
    assert mine == theirs and sum(s["matches"] for s in mine["standings"]) == 3 * 6  # the sealed 7th is not counted
    for match_id in world.queued[:3]:
        assert run_match(context.db, context.settings, match_id, "test-worker") == "recorded"
        mine, theirs = _both(context, world.tournament)
        assert mine == theirs
    assert sum(s["matches"] for s in theirs["standings"]) == 3 * 9  # the third deal is over: 7-9; 10 is sealed


def test_a_finished_tournaments_standings_equal_the_reference(context, world) -> None:
    with context.db.session() as session:
        ids = session.scalars(select(Match.id).where(Match.tournament_id == world.piranha_tournament,
                                                     Match.status == MatchStatus.QUEUED)).all()
    for match_id in ids:
        run_match(context.db, context.settings, match_id, "test-worker")
    with context.db.session() as session:
        assert session.get(Tournament, world.piranha_tournament).status == TournamentStatus.FINISHED
    mine, theirs = _both(context, world.piranha_tournament)
    assert mine == theirs


def test_a_match_recorded_again_is_not_added_again(context, world) -> None:
    before, _ = _both(context, world.tournament)
    with context.db.session() as session:
        match = session.get(Match, world.finished[0])
        replay = {"game": match.game, "steps": [], "faults": [], "result": match.result}
    assert not record(context.db, world.finished[0], replay)
    mine, theirs = _both(context, world.tournament)
    assert mine == before == theirs


def test_rebuild_from_the_seat_rows_gives_the_kept_sums(context, world) -> None:
    for tournament_id in (world.tournament, world.piranha_tournament):
        kept, _ = _both(context, tournament_id)
        with context.db.session() as session:
            session.execute(delete(TournamentScore).where(TournamentScore.tournament_id == tournament_id))
            session.execute(delete(TournamentPair).where(TournamentPair.tournament_id == tournament_id))
        emptied, theirs = _both(context, tournament_id)
        assert emptied != theirs and all(s["matches"] == 0 for s in emptied["standings"])
        with context.db.session() as session:
            standings.rebuild(session, tournament_id)
            standings.rebuild(session, tournament_id)  # twice: it replaces, never adds
        assert _both(context, tournament_id) == (kept, kept)


def test_the_migration_sums_the_tournaments_it_finds(context, world) -> None:
    """Tournaments older than the kept sums get them from revision 0004 (its SQL on this database)."""
    expected = {t: _both(context, t)[1] for t in (world.tournament, world.piranha_tournament)}
    config = alembic_config(context.db.url)
    with context.db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0003")
    with context.db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    with context.db.session() as session:
        assert session.scalar(select(func.count()).select_from(TournamentScore)) == 6  # 4 + 2 bots played
    for tournament_id, theirs in expected.items():
        assert _both(context, tournament_id) == (theirs, theirs)
