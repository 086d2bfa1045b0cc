"""A tournament's standings and cross-table, from its finished matches' seat rows."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ratings.outcomes import MatchOutcome, seat_pairs
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus, Tournament
from referee.games import GAMES


def standings_and_cross_table(session: Session, tournament: Tournament) -> dict[str, Any]:
    kind = GAMES[tournament.game].spec.ranking
    rows = session.execute(
        select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_id, MatchSeat.rank, MatchSeat.score,
               MatchSeat.forfeited, MatchSeat.faults)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.tournament_id == tournament.id, Match.status == MatchStatus.FINISHED)
        .order_by(MatchSeat.match_id, MatchSeat.seat)
    ).all()
    by_match: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        by_match[row.match_id].append(row)
    stats: dict[int, dict[str, float]] = {b: defaultdict(float) for b in tournament.bot_ids}
    cross: dict[int, dict[int, list[float]]] = {a: {b: [0, 0, 0] for b in tournament.bot_ids if b != a}
                                               for a in tournament.bot_ids}
    for seats in by_match.values():
        bots = [s.bot_id for s in seats]
        ranks = [s.rank for s in seats]
        for s in seats:
            st = stats[s.bot_id]
            st["matches"] += 1
            st["rank_sum"] += s.rank
            st["wins"] += s.rank == 1
            st["score_sum"] += s.score or 0.0
            st["forfeits"] += s.forfeited
            st["faults"] += s.faults
        for i, j, outcome in seat_pairs(MatchOutcome(tuple(bots), tuple(ranks), kind)):
            a, b = bots[i], bots[j]
            slot = 0 if outcome == 1.0 else 1 if outcome == 0.5 else 2
            cross[a][b][slot] += 1
            cross[b][a][2 - slot] += 1
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(tournament.bot_ids))).all())
    standings = []
    for bot_id in tournament.bot_ids:
        st = stats[bot_id]
        won = sum(w + 0.5 * d for w, d, _ in cross[bot_id].values())
        pairs = sum(sum(v) for v in cross[bot_id].values())
        standings.append({
            "bot_id": bot_id,
            "name": names.get(bot_id, f"bot {bot_id}"),
            "matches": int(st["matches"]),
            "wins": int(st["wins"]),
            "mean_rank": round(st["rank_sum"] / st["matches"], 3) if st["matches"] else None,
            "mean_score": round(st["score_sum"] / st["matches"], 3) if st["matches"] else None,
            "pair_score": round(won / pairs, 4) if pairs else None,
            "forfeits": int(st["forfeits"]),
            "faults": int(st["faults"]),
        })
    standings.sort(key=lambda s: (-(s["pair_score"] or 0), s["mean_rank"] or 99, s["bot_id"]))
    for place, entry in enumerate(standings, start=1):
        entry["place"] = place
    table = {str(a): {str(b): {"wins": v[0], "draws": v[1], "losses": v[2]} for b, v in row.items()}
             for a, row in cross.items()}
    return {"standings": standings, "cross_table": table}
