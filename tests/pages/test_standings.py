"""A tournament's kept sums (added to by every recorded match, summed again by ``rebuild``, or by the
migration that brought them in) equal a from-scratch computation through the ratings' outcome objects."""

from __future__ import annotations

from alembic import command
from sqlalchemy import delete, func, select

from arena.ratings.outcomes import RANKED, MatchOutcome, seat_pairs
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
from tests.pages.builders import tied_piranha_tournament


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
        # the cross-table counts every pair by places, shared places drawing, in every game
        outcome = MatchOutcome(tuple(s.bot_id for s in seats), tuple(s.rank for s in seats), RANKED)
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
    for entry in out:  # equal records share a place range
        key = (entry["pair_score"] or 0, entry["mean_rank"] or 99)
        level = [i for i, e in enumerate(out, start=1) if (e["pair_score"] or 0, e["mean_rank"] or 99) == key]
        entry["place"], entry["place_high"] = min(level), max(level)
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


def test_cross_table_shows_0_0_0_for_two_bots_that_tied_six_times(context, world) -> None:
    """Regression: shared first places of a one-loser game were left out of the cross-table."""
    tournament_id = tied_piranha_tournament(context, world, 6)
    mine, theirs = _both(context, tournament_id)
    a, b = str(world.bots["pp0"]), str(world.bots["pp1"])
    assert mine["cross_table"][a][b] == {"wins": 0, "draws": 6, "losses": 0}
    assert mine["cross_table"][b][a] == {"wins": 0, "draws": 6, "losses": 0}
    assert mine == theirs


def test_standings_show_1_and_2_for_identical_records(context, world) -> None:
    """Regression: two bots with equal records got places 1 and 2 while the leaderboard said 1-2 for both."""
    tournament_id = tied_piranha_tournament(context, world, 6)
    mine, _ = _both(context, tournament_id)
    assert [(s["place"], s["place_high"]) for s in mine["standings"]] == [(1, 2), (1, 2)]
    assert all(s["pair_score"] == 0.5 for s in mine["standings"])


def test_places_share_only_equal_records() -> None:
    entries = [{"bot_id": 1, "pair_score": 0.5, "mean_rank": 1.5}, {"bot_id": 2, "pair_score": 0.75, "mean_rank": 1.2},
               {"bot_id": 3, "pair_score": 0.5, "mean_rank": 1.5}, {"bot_id": 4, "pair_score": None, "mean_rank": None}]
    standings.places(entries)
    assert [(e["bot_id"], e["place"], e["place_high"]) for e in entries] == [(2, 1, 1), (1, 2, 3), (3, 2, 3), (4, 4, 4)]


def test_the_find_migration_sums_stored_cross_tables_again_with_shared_places(context, world) -> None:
    """Pairs stored by the old rule (shared first places left out) are summed again by revision 0008_find."""
    tournament_id = tied_piranha_tournament(context, world, 6)
    expected = {t: _both(context, t)[1] for t in (world.tournament, world.piranha_tournament, tournament_id)}
    config = alembic_config(context.db.url)
    with context.db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "0007")  # sums the pairs by the old rule again
    with context.db.session() as session:
        old = session.execute(select(TournamentPair.draws).where(TournamentPair.tournament_id == tournament_id)).all()
        assert old == [(0,), (0,)]  # the bug as it was stored: 0-0-0 both ways
    with context.db.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    for tid, theirs in expected.items():
        assert _both(context, tid) == (theirs, theirs)
