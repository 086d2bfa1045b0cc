"""A tournament's standings and cross-table, as sums over its finished matches.

A finished match never changes, so the sums are kept per tournament (per web process) and each request
adds only the matches that finished since: a 1,000-match tournament page does not re-read 1,000 matches.
Pairs follow the ratings' rule (``rank_pairs``): ranked games every pair, equal ranks draw; one-loser
games only a winner against a non-winner.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ratings.outcomes import rank_pairs
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus, Tournament
from referee.games import GAMES

CHUNK = 2000  # match ids per IN list (SQLite then walks the seats' primary key)
MAX_KEPT = 64  # tournaments whose sums a process keeps


@dataclass
class _Tally:
    """A tournament's sums so far and the finished matches they include."""

    bots: list[int]
    included: set[int] = field(default_factory=set)
    stats: dict[int, list[Any]] = field(default_factory=dict)  # matches, wins, rank sum, score sum, forfeits, faults
    cross: dict[int, dict[int, list[int]]] = field(default_factory=dict)  # a's wins, draws, losses against b

    def __post_init__(self) -> None:
        self.lock = threading.Lock()  # requests for one tournament add to it one at a time
        self.stats = {b: [0, 0, 0, 0.0, 0, 0] for b in self.bots}
        self.cross = {a: {b: [0, 0, 0] for b in self.bots if b != a} for a in self.bots}


_tallies: dict[tuple[str, int], _Tally] = {}
_tally_lock = threading.Lock()


def standings_and_cross_table(session: Session, tournament: Tournament) -> dict[str, Any]:
    """``{"standings": [...], "cross_table": {a: {b: {wins, draws, losses}}}}`` (fresh objects each call)."""
    ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament.id,
                                                      Match.status == MatchStatus.FINISHED).order_by(Match.id)))
    key = (str(session.get_bind().url), tournament.id)
    with _tally_lock:
        tally = _tallies.get(key)
        if tally is None or tally.bots != list(tournament.bot_ids):
            if len(_tallies) >= MAX_KEPT:
                _tallies.clear()
            tally = _tallies[key] = _Tally(list(tournament.bot_ids))
    with tally.lock:
        _add(session, tally, [i for i in ids if i not in tally.included], GAMES[tournament.game].spec.ranking)
        return _table(session, tally)


def forget_kept_sums() -> None:
    """Drop every kept sum (benchmarks measure the cold cost with it)."""
    with _tally_lock:
        _tallies.clear()


def _add(session: Session, tally: _Tally, ids: list[int], kind: str) -> None:
    for start in range(0, len(ids), CHUNK):
        rows = session.execute(
            select(MatchSeat.match_id, MatchSeat.bot_id, MatchSeat.rank, MatchSeat.score, MatchSeat.forfeited,
                   MatchSeat.faults).where(MatchSeat.match_id.in_(ids[start:start + CHUNK]))
            .order_by(MatchSeat.match_id, MatchSeat.seat)).all()
        table: list[tuple[int, int]] = []
        current = None
        for match_id, bot, rank, score, forfeited, faults in rows:
            if match_id != current:
                _settle(table, kind, tally.cross)
                table, current = [], match_id
            st = tally.stats[bot]
            st[0] += 1
            st[1] += rank == 1
            st[2] += rank
            st[3] += score or 0.0
            st[4] += forfeited
            st[5] += faults
            table.append((bot, rank))
        _settle(table, kind, tally.cross)
    tally.included.update(ids)


def _settle(table: list[tuple[int, int]], kind: str, cross: dict[int, dict[int, list[int]]]) -> None:
    """One match's pairs into the cross-table."""
    bots = [bot for bot, _rank in table]
    for a, b, score in rank_pairs([rank for _bot, rank in table], kind):
        slot = 0 if score == 1.0 else 1
        cross[bots[a]][bots[b]][slot] += 1
        cross[bots[b]][bots[a]][2 - slot] += 1


def _table(session: Session, tally: _Tally) -> dict[str, Any]:
    names = dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(tally.bots))).all())
    out = []
    for bot in tally.bots:
        n, wins, rank_sum, score_sum, forfeits, faults = tally.stats[bot]
        row = tally.cross[bot].values()
        won = sum(w + 0.5 * d for w, d, _ in row)
        pairs = sum(sum(v) for v in row)
        out.append({"bot_id": bot, "name": names.get(bot, f"bot {bot}"), "matches": n, "wins": wins,
                    "mean_rank": round(rank_sum / n, 3) if n else None,
                    "mean_score": round(score_sum / n, 3) if n else None,
                    "pair_score": round(won / pairs, 4) if pairs else None, "forfeits": forfeits, "faults": faults})
    out.sort(key=lambda s: (-(s["pair_score"] or 0), s["mean_rank"] or 99, s["bot_id"]))
    for place, entry in enumerate(out, start=1):
        entry["place"] = place
    return {"standings": out, "cross_table": {str(a): {str(b): {"wins": v[0], "draws": v[1], "losses": v[2]}
                                                       for b, v in row.items()} for a, row in tally.cross.items()}}
