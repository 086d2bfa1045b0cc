"""Read-only queries the web pages need beyond what the other services offer.

Every list is limited and served by an index; names are fetched in one batch per page (never one
query per row); nothing here fits a rating: pages read the stored tables only.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session, aliased

from arena.services import latency
from arena.services.errors import NotFound
from arena.services.publication import PUBLIC, is_public
from arena.storage.models import (
    Account,
    Bot,
    BotStatus,
    Fault,
    LeaderboardFit,
    LiveRating,
    Match,
    MatchSeat,
    MatchStatus,
    Rating,
    Tournament,
)
from arena.storage.replays import decompress

LATENCY_WINDOW = 5000  # a bot's latency percentiles cover its newest this many seats


def busiest_board(session: Session, game: str) -> int | None:
    """The player count of the game's leaderboard with the most fitted matches (the home page shows it)."""
    row = session.execute(
        select(LeaderboardFit.players).where(LeaderboardFit.game == game)
        .order_by(LeaderboardFit.matches.desc(), LeaderboardFit.players).limit(1)
    ).first()
    return row[0] if row else None


def top_entries(session: Session, game: str, players: int, limit: int = 5) -> list[dict[str, Any]]:
    """The first rows of one stored leaderboard, without the fault-rate scan of the full table."""
    rows = session.execute(
        select(Rating.rank, Rating.rank_low, Rating.rank_high, Rating.bot_id, Rating.elo, Rating.elo_low,
               Rating.elo_high, Rating.games, Bot.name, Account.name.label("owner"))
        .join(Bot, Bot.id == Rating.bot_id).join(Account, Account.id == Bot.owner_id)
        .where(Rating.game == game, Rating.players == players).order_by(Rating.rank, Rating.bot_id).limit(limit)
    ).all()
    return [dict(row._mapping) for row in rows]


def progress_many(session: Session, tournament_ids: list[int]) -> dict[int, dict[str, int]]:
    """Done and total matches of several tournaments in one query."""
    out: dict[int, dict[str, int]] = {t: {"done": 0, "total": 0, "running": 0} for t in tournament_ids}
    if not tournament_ids:
        return out
    rows = session.execute(
        select(Match.tournament_id, Match.status, func.count())
        .where(Match.tournament_id.in_(tournament_ids)).group_by(Match.tournament_id, Match.status)
    ).all()
    for tournament_id, status, count in rows:
        entry = out[tournament_id]
        entry["total"] += count
        if status in (MatchStatus.FINISHED, MatchStatus.ERROR, MatchStatus.VOID, MatchStatus.SEALED):
            entry["done"] += count
        elif status == MatchStatus.RUNNING:
            entry["running"] += count
    return out


def recent_tournaments(session: Session, status: str, limit: int = 10) -> list[Tournament]:
    query = select(Tournament).where(Tournament.status == status).order_by(Tournament.id.desc()).limit(limit)
    return list(session.scalars(query))


def bot_ratings(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """The bot's row on every leaderboard it is on, with its live Elo."""
    rows = session.execute(
        select(Rating).where(Rating.bot_id == bot_id).order_by(Rating.game, Rating.players)
    ).scalars().all()
    live = {(r.game, r.players): r for r in session.scalars(select(LiveRating).where(LiveRating.bot_id == bot_id))}
    out = []
    for r in rows:
        lr = live.get((r.game, r.players))
        out.append({"game": r.game, "players": r.players, "elo": r.elo, "elo_low": r.elo_low, "elo_high": r.elo_high,
                    "rank": r.rank, "rank_low": r.rank_low, "rank_high": r.rank_high, "games": r.games,
                    "live_elo": lr.elo if lr else None})
    for key, lr in live.items():
        if not any((r["game"], r["players"]) == key for r in out):
            out.append({"game": lr.game, "players": lr.players, "elo": None, "elo_low": None, "elo_high": None,
                        "rank": None, "rank_low": None, "rank_high": None, "games": lr.games, "live_elo": lr.elo})
    return out


def results_by_seat(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """Per table size and seat: matches, wins, mean rank and score, forfeits, faults. Only the bot's own seat
    rows are read (a seat has a rank once its match is recorded); the table size is counted from the
    match's seats, so no planner is tempted to scan every match."""
    others = aliased(MatchSeat)
    players = (select(func.count()).where(others.match_id == MatchSeat.match_id).correlate(MatchSeat)
               .scalar_subquery().label("players"))
    wins = func.sum(case((MatchSeat.rank == 1, 1), else_=0))
    forfeits = func.sum(case((MatchSeat.forfeited, 1), else_=0))
    rows = session.execute(
        select(players, MatchSeat.seat, func.count(), wins, func.avg(MatchSeat.rank), func.avg(MatchSeat.score),
               forfeits, func.sum(MatchSeat.faults))
        .where(MatchSeat.bot_id == bot_id, MatchSeat.rank.is_not(None))
        .group_by(players, MatchSeat.seat).order_by(players, MatchSeat.seat)
    ).all()
    return [{"players": p, "seat": s, "matches": n, "wins": int(w or 0), "mean_rank": float(r or 0),
             "mean_score": float(sc or 0), "forfeits": int(f or 0), "faults": int(fa or 0)}
            for p, s, n, w, r, sc, f, fa in rows]


def latency_summary(session: Session, bot_id: int) -> dict[str, Any]:
    """Percentiles of the summed per-match latency histograms over the bot's newest seats."""
    rows = session.execute(
        select(MatchSeat.latency_hist, MatchSeat.latency_max_ms).where(MatchSeat.bot_id == bot_id)
        .order_by(MatchSeat.match_id.desc()).limit(LATENCY_WINDOW)
    ).all()
    hists = [hist for hist, _most in rows if hist]
    counts = [sum(bucket) for bucket in zip(*hists, strict=True)] if hists else []
    worst = max((most or 0.0 for _hist, most in rows), default=0.0)
    return {"samples": sum(counts), "matches": len(rows), "max_ms": worst,
            "percentiles": [(q, latency.percentile(counts, q)) for q in (50, 90, 99)] if sum(counts) else []}


def fault_counts(session: Session, bot_id: int) -> list[tuple[str, int]]:
    rows = session.execute(
        select(Fault.kind, func.count()).where(Fault.bot_id == bot_id).group_by(Fault.kind)
        .order_by(func.count().desc(), Fault.kind)
    ).all()
    return [(kind, count) for kind, count in rows]


def last_faults(session: Session, bot_id: int, limit: int = 10) -> list[Fault]:
    """The newest faults with their excerpts: for the bot's owner only (the caller checks)."""
    return list(session.scalars(select(Fault).where(Fault.bot_id == bot_id).order_by(Fault.id.desc()).limit(limit)))


def bot_names(session: Session, bot_ids: set[int] | list[int]) -> dict[int, str]:
    if not bot_ids:
        return {}
    return dict(session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(set(bot_ids)))).all())


def match_rows(session: Session, ids: list[int]) -> list[dict[str, Any]]:
    """Matches with their seats and bot names, in the order of ``ids``: three light queries, no ORM objects
    (and never the replay blobs)."""
    if not ids:
        return []
    matches = {row.id: dict(row._mapping) | {"seats": []} for row in session.execute(
        select(Match.id, Match.tournament_id, Match.ladder_id, Match.game, Match.num_players.label("players"),
               Match.status, Match.steps, Match.finished_at).where(Match.id.in_(ids)))}
    seats = session.execute(select(MatchSeat.match_id, MatchSeat.seat, MatchSeat.bot_id, MatchSeat.rank,
                                   MatchSeat.score, MatchSeat.faults, MatchSeat.forfeited)
                            .where(MatchSeat.match_id.in_(ids)).order_by(MatchSeat.match_id, MatchSeat.seat)).all()
    names = bot_names(session, {s.bot_id for s in seats})
    for s in seats:
        matches[s.match_id]["seats"].append(dict(s._mapping) | {"name": names.get(s.bot_id, f"bot {s.bot_id}")})
    for row in matches.values():
        if not is_public(row["status"]):  # how long a sealed match ran says something of its deal
            row["steps"] = row["finished_at"] = None
    return [matches[i] for i in ids if i in matches]


def match_details(session: Session, match_id: int) -> dict[str, Any]:
    """What the match page shows beyond the list row, with the replay document: seed, result and replay
    only once the match's whole deal is over (``publication.is_public``)."""
    blob = case((Match.status.in_(PUBLIC), Match.replay_gz), else_=None)  # a sealed blob is not even read
    row = session.execute(select(Match.status, Match.seed, Match.params, Match.result, Match.error, Match.created_at,
                                 Match.time_limit_ms, blob.label("replay_gz")).where(Match.id == match_id)).first()
    if row is None:
        raise NotFound(f"no match {match_id}")
    details = dict(row._mapping)
    blob_bytes = details.pop("replay_gz")
    if not is_public(details.pop("status")):
        return details | {"seed": None, "result": None, "replay": None}
    return details | {"replay": decompress(blob_bytes) if blob_bytes else None}


def bot_matches(session: Session, bot_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """The bot's newest matches (walks the (bot_id, match_id) index backwards)."""
    return match_rows(session, list(session.scalars(select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)
                                                    .order_by(MatchSeat.match_id.desc()).limit(limit))))


def tournament_matches(session: Session, tournament_id: int, limit: int = 100,
                       offset: int = 0) -> list[dict[str, Any]]:
    return match_rows(session, list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)
                                                    .order_by(Match.id).limit(limit).offset(offset))))


def active_bots(session: Session, limit: int = 1000) -> list[dict[str, Any]]:
    """Bots a tournament may include: active ones, by game, with their owners' names."""
    rows = session.execute(
        select(Bot.id, Bot.name, Bot.game, Account.name.label("owner")).join(Account, Account.id == Bot.owner_id)
        .where(Bot.status == BotStatus.ACTIVE).order_by(Bot.game, Bot.id).limit(limit)
    ).all()
    return [dict(row._mapping) for row in rows]


def owned_bots(session: Session, account_id: int) -> list[Bot]:
    return list(session.scalars(select(Bot).where(Bot.owner_id == account_id).order_by(Bot.id).limit(500)))
