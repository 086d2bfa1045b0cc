"""A tournament's standings and cross-table, kept as sums in the database.

A finished match never changes, so its part of the standings is added once, in the transaction that
records it (``add_match``, an upsert that adds in the database): a tournament page then reads one row per
bot and one per pair that met, whatever the number of matches (summing seat rows per view grew with the
tournament: docs/benchmarks.md). The cross-table counts every pair of seats of a match: the better place
wins and a shared place is a draw, in every game (two Piranha Pedro seats that both stay dry share first
place: a draw, not nothing; the ratings' one-loser rule, which skips such pairs, is for fitting, not for
telling who met whom). Bots with equal records share their place (``places``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from arena.ratings.outcomes import RANKED, rank_pairs
from arena.storage.models import (
    Bot,
    Match,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentPair,
    TournamentScore,
)
from arena.storage.upsert import upsert

SCORE_FIELDS = ("matches", "wins", "rank_sum", "score_sum", "forfeits", "faults")
PAIR_FIELDS = ("wins", "draws", "losses")
CHUNK = 2000  # match ids per IN list when summing from seat rows

Seat = tuple[int, int, float | None, bool, int]  # bot, rank, score, forfeited, faults
Scores = dict[int, list[Any]]  # bot: SCORE_FIELDS
Pairs = dict[tuple[int, int], list[int]]  # (bot, other): PAIR_FIELDS


def tally(seats: Sequence[Seat], scores: Scores, pairs: Pairs) -> None:
    """Add one finished match (its seats in seat order) to the sums. The cross-table reads places alone,
    whatever the game's ranking kind (shared places draw: see the module docstring)."""
    for bot, rank, score, forfeited, faults in seats:
        st = scores.setdefault(bot, [0, 0, 0, 0.0, 0, 0])
        st[0] += 1
        st[1] += rank == 1
        st[2] += rank
        st[3] += score or 0.0
        st[4] += bool(forfeited)
        st[5] += faults
    bots = [seat[0] for seat in seats]
    for a, b, result in rank_pairs([seat[1] for seat in seats], RANKED):
        slot = 0 if result == 1.0 else 1
        pairs.setdefault((bots[a], bots[b]), [0, 0, 0])[slot] += 1
        pairs.setdefault((bots[b], bots[a]), [0, 0, 0])[2 - slot] += 1


def add_matches(session: Session, tournament_id: int, matches: Sequence[Sequence[Any]]) -> None:
    """Add matches being recorded to their tournament's sums: one upsert per table for all of them, adding
    in the database (no read of the rows first). Each match: ``recorders.Seat``s (or seat rows) in seat order."""
    scores: Scores = {}
    pairs: Pairs = {}
    for seats in matches:
        tally([(s.bot_id, s.rank, s.score, s.forfeited, s.faults) for s in seats], scores, pairs)
    upsert(session, TournamentScore, [{"tournament_id": tournament_id, "bot_id": bot,
                                       **dict(zip(SCORE_FIELDS, add, strict=True))}
                                      for bot, add in sorted(scores.items())],
           ("tournament_id", "bot_id"), add=SCORE_FIELDS)
    upsert(session, TournamentPair, [{"tournament_id": tournament_id, "bot_id": bot, "other_id": other,
                                      **dict(zip(PAIR_FIELDS, add, strict=True))}
                                     for (bot, other), add in sorted(pairs.items())],
           ("tournament_id", "bot_id", "other_id"), add=PAIR_FIELDS)


def rebuild(session: Session, tournament_id: int) -> None:
    """Sum a tournament again from its finished matches' seat rows (for matches stored without
    ``matches.record``: bulk loads in benchmarks and tests)."""
    tournament = session.get(Tournament, tournament_id)
    assert tournament is not None, tournament_id
    ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id,
                                                      Match.status == MatchStatus.FINISHED).order_by(Match.id)))
    scores: Scores = {}
    pairs: Pairs = {}
    for start in range(0, len(ids), CHUNK):
        rows = session.execute(
            select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank, MatchSeat.score, MatchSeat.forfeited,
                   MatchSeat.faults).where(MatchSeat.match_id.in_(ids[start:start + CHUNK]))
            .order_by(MatchSeat.match_id, MatchSeat.seat)).all()
        table: list[Seat] = []
        current = None
        for match_id, *seat in rows:
            if match_id != current and table:
                tally(table, scores, pairs)
                table = []
            current = match_id
            table.append(tuple(seat))  # type: ignore[arg-type]
        if table:
            tally(table, scores, pairs)
    session.execute(delete(TournamentScore).where(TournamentScore.tournament_id == tournament_id))
    session.execute(delete(TournamentPair).where(TournamentPair.tournament_id == tournament_id))
    if scores:
        session.execute(insert(TournamentScore), [{"tournament_id": tournament_id, "bot_id": bot,
                                                   **dict(zip(SCORE_FIELDS, v, strict=True))}
                                                  for bot, v in scores.items()])
    if pairs:
        session.execute(insert(TournamentPair), [{"tournament_id": tournament_id, "bot_id": a, "other_id": b,
                                                  **dict(zip(PAIR_FIELDS, v, strict=True))}
                                                 for (a, b), v in pairs.items()])


def standings_and_cross_table(session: Session, tournament: Tournament) -> dict[str, Any]:
    """``{"standings": [...], "cross_table": {a: {b: {wins, draws, losses}}}}``, every bot of the
    tournament included (zeros before its first match)."""
    bots = list(tournament.bot_ids)
    scores = {row[0]: list(row[1:]) for row in session.execute(
        select(TournamentScore.bot_id, *(getattr(TournamentScore, f) for f in SCORE_FIELDS))
        .where(TournamentScore.tournament_id == tournament.id))}
    pairs = {(row[0], row[1]): list(row[2:]) for row in session.execute(
        select(TournamentPair.bot_id, TournamentPair.other_id, TournamentPair.wins, TournamentPair.draws,
               TournamentPair.losses).where(TournamentPair.tournament_id == tournament.id))}
    cross = {a: {b: pairs.get((a, b), [0, 0, 0]) for b in bots if b != a} for a in bots}
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(bots))).all())
    out = []
    for bot in bots:
        n, wins, rank_sum, score_sum, forfeits, faults = scores.get(bot, [0, 0, 0, 0.0, 0, 0])
        row = cross[bot].values()
        won = sum(w + 0.5 * d for w, d, _ in row)
        played = sum(sum(v) for v in row)
        out.append({"bot_id": bot, "name": names.get(bot, f"bot {bot}"), "matches": n, "wins": wins,
                    "mean_rank": round(rank_sum / n, 3) if n else None,
                    "mean_score": round(score_sum / n, 3) if n else None,
                    "pair_score": round(won / played, 4) if played else None, "forfeits": forfeits,
                    "faults": faults})
    places(out)
    return {"standings": out, "cross_table": {str(a): {str(b): {"wins": v[0], "draws": v[1], "losses": v[2]}
                                                       for b, v in row.items()} for a, row in cross.items()}}


def record_key(entry: dict[str, Any]) -> tuple[float, float]:
    """What orders the standings: pair score (higher first), then mean rank (lower first)."""
    return -(entry["pair_score"] or 0), entry["mean_rank"] or 99


def places(entries: list[dict[str, Any]]) -> None:
    """Sort the standings and give each bot its place: bots with equal records share them, as a
    leaderboard shows a rank range (``place`` to ``place_high``: 1 and 1-2 for two level leaders)."""
    entries.sort(key=lambda e: (record_key(e), e["bot_id"]))
    start = 0
    while start < len(entries):
        end = start
        while end + 1 < len(entries) and record_key(entries[end + 1]) == record_key(entries[start]):
            end += 1
        for entry in entries[start:end + 1]:
            entry["place"], entry["place_high"] = start + 1, end + 1
        start = end + 1
