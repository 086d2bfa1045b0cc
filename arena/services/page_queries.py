"""Read-only queries the web pages need beyond what the other services offer.

Every list is limited and served by an index; names are fetched in one batch per page (never one
query per row); nothing here fits a rating: pages read the stored tables only.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session, defer, selectinload

from arena.services import latency
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
    RatingPoint,
    Tournament,
)
from referee.commitments import canonical_json
from referee.errors import RulesError
from referee.games import get_game

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
        if status in (MatchStatus.FINISHED, MatchStatus.ERROR):
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


def rating_history(session: Session, bot_id: int, limit: int = 400) -> dict[int, list[tuple[int, float, float]]]:
    """The newest ``limit`` rating points per player count, oldest first: (match id, Elo, live Elo)."""
    boards = session.execute(
        select(RatingPoint.game, RatingPoint.players).where(RatingPoint.bot_id == bot_id).distinct()
    ).all()
    out: dict[int, list[tuple[int, float, float]]] = {}
    for game, players in boards:
        rows = session.execute(
            select(RatingPoint.match_id, RatingPoint.elo, RatingPoint.live_elo)
            .where(RatingPoint.bot_id == bot_id, RatingPoint.game == game, RatingPoint.players == players)
            .order_by(RatingPoint.id.desc()).limit(limit)
        ).all()
        out[players] = [(m or 0, e, le) for m, e, le in reversed(rows)]
    return out


def results_by_seat(session: Session, bot_id: int) -> list[dict[str, Any]]:
    """Per table size and seat: matches, wins, mean rank and score, forfeits, faults."""
    wins = func.sum(case((MatchSeat.rank == 1, 1), else_=0))
    forfeits = func.sum(case((MatchSeat.forfeited, 1), else_=0))
    rows = session.execute(
        select(Match.num_players, MatchSeat.seat, func.count(), wins, func.avg(MatchSeat.rank),
               func.avg(MatchSeat.score), forfeits, func.sum(MatchSeat.faults))
        .join(Match, Match.id == MatchSeat.match_id)
        .where(MatchSeat.bot_id == bot_id, Match.status == MatchStatus.FINISHED)
        .group_by(Match.num_players, MatchSeat.seat).order_by(Match.num_players, MatchSeat.seat)
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
    counts: list[int] = []
    worst = 0.0
    for hist, most in rows:
        if hist:
            counts = latency.add(counts, hist)
        worst = max(worst, most or 0.0)
    return {"samples": sum(counts), "matches": len(rows), "max_ms": worst,
            "percentiles": [(q, latency.percentile(counts, q)) for q in (50, 90, 99)] if counts else []}


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


def match_rows(session: Session, matches: list[Match]) -> list[dict[str, Any]]:
    """Matches with their seats and bot names, for lists (seats already loaded, names in one query)."""
    names = bot_names(session, {s.bot_id for m in matches for s in m.seats})
    return [{"id": m.id, "tournament_id": m.tournament_id, "game": m.game, "players": m.num_players,
             "status": m.status, "steps": m.steps, "finished_at": m.finished_at,
             "seats": [{"seat": s.seat, "bot_id": s.bot_id, "name": names.get(s.bot_id, f"bot {s.bot_id}"),
                        "rank": s.rank, "score": s.score, "faults": s.faults, "forfeited": s.forfeited}
                       for s in m.seats]}
            for m in matches]


def bot_matches(session: Session, bot_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """The bot's newest matches (walks the (bot_id, match_id) index backwards)."""
    ids = list(session.scalars(select(MatchSeat.match_id).where(MatchSeat.bot_id == bot_id)
                               .order_by(MatchSeat.match_id.desc()).limit(limit)))
    return match_rows(session, _matches_by_id(session, ids))


def tournament_matches(session: Session, tournament_id: int, limit: int = 100,
                       offset: int = 0) -> list[dict[str, Any]]:
    ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)
                               .order_by(Match.id).limit(limit).offset(offset)))
    return match_rows(session, _matches_by_id(session, ids))


def _matches_by_id(session: Session, ids: list[int]) -> list[Match]:
    if not ids:
        return []
    found = {m.id: m for m in session.scalars(select(Match).options(selectinload(Match.seats), defer(Match.replay_gz))
                                              .where(Match.id.in_(ids)))}
    return [found[i] for i in ids if i in found]


def match_count(session: Session, tournament_id: int) -> int:
    return session.scalar(select(func.count()).select_from(Match).where(Match.tournament_id == tournament_id)) or 0


def active_bots(session: Session, limit: int = 1000) -> list[dict[str, Any]]:
    """Bots a tournament may include: active ones, by game, with their owners' names."""
    rows = session.execute(
        select(Bot.id, Bot.name, Bot.game, Account.name.label("owner")).join(Account, Account.id == Bot.owner_id)
        .where(Bot.status == BotStatus.ACTIVE).order_by(Bot.game, Bot.id).limit(limit)
    ).all()
    return [dict(row._mapping) for row in rows]


def owned_bots(session: Session, account_id: int) -> list[Bot]:
    return list(session.scalars(select(Bot).where(Bot.owner_id == account_id).order_by(Bot.id).limit(500)))




# --- replays: the public view after every step, for the viewer ---------------------------------------

PRIVATE_VIEW_KEYS = ("seat", "hand", "my_unrevealed", "decision", "must_commit")


def replay_frames(doc: dict[str, Any]) -> dict[str, Any]:
    """The public view after each step (frame 0: the start), as a first view plus per-step changes.

    The pure engine is re-run from the recorded game, params, seed and actions, so the board at every
    step is what a spectator could have seen. If the engine refuses (another engine version, a
    damaged document), the acting seats' recorded views minus private fields stand in.
    """
    try:
        views, source = _engine_views(doc), "engine"
    except (RulesError, KeyError, TypeError, ValueError, IndexError, AttributeError):
        views, source = _recorded_views(doc), "recorded views"
    final = doc.get("final_view")
    return {
        "source": source,
        "final_view_matches": final is not None and canonical_json(views[-1]) == canonical_json(final),
        "initial": views[0],
        "changes": [view_changes(a, b) for a, b in pairwise(views)],
    }


def _engine_views(doc: dict[str, Any]) -> list[dict[str, Any]]:
    game = get_game(doc["game"])
    if doc.get("engine_version") != game.spec.engine_version:
        raise RulesError(f"recorded with engine {doc.get('engine_version')!r}")
    state = game.initial_state(len(doc["players"]), doc["seed"], doc["params"])
    views = [game.public_view(state)]
    for step in doc["steps"]:
        actions = {d["seat"]: d["action"] for d in step["decisions"]}
        try:
            state = game.apply(state, actions)
        except RulesError:  # a JSON form the engine only takes once canonicalised (e.g. a multiset's order)
            state = game.apply(state, {seat: game.canonical_action(state, seat, a) for seat, a in actions.items()})
        views.append(game.public_view(state))
    return views


def _recorded_views(doc: dict[str, Any]) -> list[dict[str, Any]]:
    views = []
    for step in doc.get("steps", []):
        view = dict(step["decisions"][0]["view"])
        for key in PRIVATE_VIEW_KEYS:
            view.pop(key, None)
        views.append(view)
    views.append(doc.get("final_view") or (views[-1] if views else {}))
    return views


def view_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed from one view to the next: keys set anew, lists that only grew (their new tail), keys gone."""
    changes: dict[str, Any] = {}
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old is not _MISSING and old == value:
            continue
        if _grew(old, value):
            changes.setdefault("append", {})[key] = list(value[len(old):])
        else:
            changes.setdefault("set", {})[key] = value
    gone = [key for key in before if key not in after]
    if gone:
        changes["unset"] = gone
    return changes


_MISSING = object()


def _grew(old: Any, new: Any) -> bool:
    """``new`` is ``old`` plus items at the end (lists and tuples alike: views may hold either)."""
    return (isinstance(old, list | tuple) and isinstance(new, list | tuple) and len(new) > len(old)
            and list(new[:len(old)]) == list(old))


def replay_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every decision as the viewer lists it. A fault shows only its kind: its message and excerpt quote what
    the bot sent, which the bot's page shows to its owner alone."""
    steps = []
    for step in doc.get("steps", []):
        decisions = []
        for d in step["decisions"]:
            fault = d.get("fault")
            decisions.append({
                "seat": d["seat"], "decision": d["decision"], "action": d["action"], "default": d.get("default", False),
                "forfeited": d.get("forfeited", False), "latency_ms": d.get("latency_ms"),
                "fault": fault["kind"] if fault else None,
                "commitment": d["commitment"], "hand": (d.get("view") or {}).get("hand"),
            })
        steps.append({"turn": step["turn"], "decisions": decisions})
    return steps
