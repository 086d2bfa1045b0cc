"""Tournaments: schedule a seat-balanced round robin, store its matches, queue them, report progress."""

from __future__ import annotations

import json
import secrets
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from arena.domain.schedules import design_tables, round_robin
from arena.runtime.queue import MatchQueue
from arena.services.errors import Forbidden, Invalid, NotFound, require_id
from arena.services.leaderboards import lock_board
from arena.services.publication import close_deal, tournament_open
from arena.services.standings import standings_and_cross_table
from arena.storage.db import core
from arena.storage.models import (
    Account,
    Bot,
    BotStatus,
    Deals,
    Match,
    MatchSeat,
    MatchStatus,
    Tournament,
    TournamentStatus,
    utcnow,
)
from referee.errors import RulesError
from referee.games import GAMES

# Every match is stored at creation, in one transaction: 20,000 take about 3 s on SQLite, whose other writers
# (workers, the ladder scheduler) wait meanwhile; 54,000 took 8 s in bulk (34 s one by one) and cost the ladder
# scheduler its lock. A larger plan is several tournaments.
MAX_MATCHES = 20_000
# What a tournament may ask for (inclusive ranges): the one home of these limits; the API schema and the
# form are built from them.
SEATS = (2, 6)  # within each game's own player range
CYCLES = (1, 1000)
TIME_LIMIT_MS = (10, 60_000)
DEFAULT_TIME_LIMIT_MS = 1000
SEED = (0, 2**31 - 1)
MAX_BOTS = 1000


def _int(value: Any, name: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise Invalid(f"{name} must be an integer from {low} to {high}")
    return value


def create_tournament(session: Session, organizer: Account, body: dict[str, Any], deal_key: bytes) -> Tournament:
    """Validate, schedule and store; the caller commits, then queues the matches. Match seeds come from the
    tournament's seed (drawn at random when none is given) and ``deal_key`` (``Settings.deal_key()``), so the
    public seed alone predicts no deal."""
    if not organizer.is_admin:
        raise Forbidden("only organizers may create tournaments")
    game_name = body.get("game")
    if game_name not in GAMES:
        raise Invalid(f"game must be one of {sorted(GAMES)}")
    spec = GAMES[game_name].spec
    seats = _int(body.get("seats", spec.min_players), "seats", spec.min_players, spec.max_players)
    cycles = _int(body.get("cycles", CYCLES[0]), "cycles", *CYCLES)
    time_limit = _int(body.get("time_limit_ms", DEFAULT_TIME_LIMIT_MS), "time_limit_ms", *TIME_LIMIT_MS)
    seed = _int(body["seed"], "seed", *SEED) if body.get("seed") is not None else secrets.randbelow(SEED[1] + 1)
    deals = body.get("deals", Deals.DUPLICATE)
    if deals not in tuple(Deals):
        raise Invalid(f"deals must be one of {[d.value for d in Deals]}")
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise Invalid("params must be an object")
    bot_ids = body.get("bots")
    if not isinstance(bot_ids, list) or not all(isinstance(b, int) and not isinstance(b, bool) for b in bot_ids):
        raise Invalid("bots must be a list of bot ids")
    if len(set(bot_ids)) != len(bot_ids):
        raise Invalid("bots must not repeat")
    if len(bot_ids) < seats:
        raise Invalid(f"a {seats}-seat tournament needs at least {seats} bots")
    bots = {bot.id: bot for bot in session.scalars(select(Bot).where(Bot.id.in_(bot_ids)))}
    missing = sorted(set(bot_ids) - set(bots))
    if missing:
        raise Invalid(f"unknown bot id(s) {missing}")
    wrong = sorted(b.id for b in bots.values() if b.game != game_name)
    if wrong:
        raise Invalid(f"bot(s) {wrong} do not play {game_name}")
    inactive = sorted(b.id for b in bots.values() if b.status != BotStatus.ACTIVE)
    if inactive:
        raise Invalid(f"bot(s) {inactive} are disabled")
    try:
        GAMES[game_name].initial_state(seats, 0, params)
    except RulesError as exc:
        raise Invalid(f"params: {exc}") from None
    # The deals follow from the key, the seed and what the tournament is: reusing a seed with other bots,
    # another game or other parameters gives other deals (a past tournament's public replays tell nothing).
    identity = json.dumps([game_name, seats, deals, sorted(bot_ids), params], sort_keys=True)
    per_cycle = len(design_tables(len(bot_ids), seats)) * seats  # sized before it is built: 3,000,000 matches
    if per_cycle * cycles > MAX_MATCHES:                          # took 23 s and 733 MB only to be refused
        raise Invalid(f"that schedule has {per_cycle * cycles} matches ({per_cycle} a cycle); the limit is "
                      f"{MAX_MATCHES:,}: ask for fewer cycles, or split it into several tournaments")
    schedule = round_robin(bot_ids, seats, cycles=cycles, seed=seed, key=deal_key, context=identity,
                           duplicate=deals == Deals.DUPLICATE)
    tournament = Tournament(game=game_name, seats=seats, cycles=cycles, time_limit_ms=time_limit, seed=seed,
                            deals=deals, params=params, bot_ids=list(bot_ids), status=TournamentStatus.RUNNING,
                            total=len(schedule), created_by=organizer.id)
    session.add(tournament)
    session.flush()
    # in bulk, not a flush per match: 54,000 matches took 34 s one by one, the database locked meanwhile (on
    # SQLite every other writer waited: the ladder scheduler lost its lock, the reconciler failed)
    rows = [{"tournament_id": tournament.id, "game": game_name, "num_players": seats, "seed": scheduled.seed,
             "params": params, "time_limit_ms": time_limit, "table_index": scheduled.table,
             "rotation": scheduled.rotation, "status": MatchStatus.QUEUED} for scheduled in schedule]
    if session.get_bind().dialect.name == "sqlite":  # RETURNING in parameter order is one INSERT a row there;
        session.execute(insert(Match), rows)          # the write lock held, the ids follow the rows' order
        ids = session.scalars(select(Match.id).where(Match.tournament_id == tournament.id).order_by(Match.id)).all()
    else:
        ids = session.scalars(insert(Match).returning(Match.id, sort_by_parameter_order=True), rows).all()
    session.execute(insert(MatchSeat), [{"match_id": match_id, "seat": seat, "bot_id": bot_id}
                                        for match_id, scheduled in zip(ids, schedule, strict=True)
                                        for seat, bot_id in enumerate(scheduled.bots)])
    return tournament


def queue_tournament(session: Session, queue: MatchQueue | None, tournament_id: int) -> int:
    """Enqueue every unfinished match of the tournament (after the commit that stored them)."""
    if queue is None:
        return 0
    ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id,
                                                      Match.status == MatchStatus.QUEUED).order_by(Match.id)))
    if ids:
        queue.enqueue_many(ids)
    return len(ids)


def get_tournament(session: Session, tournament_id: int) -> Tournament:
    require_id(tournament_id, "tournament")
    tournament = session.get(Tournament, tournament_id)
    if tournament is None:
        raise NotFound(f"no tournament {tournament_id}")
    return tournament


def progress(session: Session, tournament_id: int) -> dict[str, int]:
    counts = dict(session.execute(
        select(Match.status, func.count()).where(Match.tournament_id == tournament_id).group_by(Match.status)
    ).all())
    total = sum(counts.values())
    sealed = counts.get(MatchStatus.SEALED, 0)
    done = sum(counts.get(s, 0) for s in (MatchStatus.FINISHED, MatchStatus.ERROR, MatchStatus.VOID)) + sealed
    return {"done": done, "total": total, "running": counts.get(MatchStatus.RUNNING, 0), "sealed": sealed,
            "queued": counts.get(MatchStatus.QUEUED, 0), "cancelled": counts.get(MatchStatus.CANCELLED, 0),
            "errors": counts.get(MatchStatus.ERROR, 0)}


def tournament_json(session: Session, tournament: Tournament, detail: bool = True) -> dict[str, Any]:
    counts = progress(session, tournament.id)
    over = tournament.status != TournamentStatus.RUNNING and not counts["running"] + counts["queued"]
    data: dict[str, Any] = {
        "id": tournament.id,
        "game": tournament.game,
        "seats": tournament.seats,
        "cycles": tournament.cycles,
        "time_limit_ms": tournament.time_limit_ms,
        "seed": tournament.seed if over else None,  # shown once no match of it can still be played
        "deals": tournament.deals,
        "params": tournament.params,
        "bots": tournament.bot_ids,
        "status": tournament.status,
        "created_at": tournament.created_at.isoformat(),
        "finished_at": tournament.finished_at.isoformat() if tournament.finished_at else None,
        "progress": counts,
    }
    if detail:
        data.update(standings_and_cross_table(session, tournament))
    return data


def list_tournaments(session: Session, status: str | None = None, limit: int = 50) -> list[Tournament]:
    query = select(Tournament).order_by(Tournament.id.desc()).limit(limit)
    if status:
        query = query.where(Tournament.status == status)
    return list(session.scalars(query))


def cancel_tournament(session: Session, organizer: Account, tournament_id: int,
                      queue: MatchQueue | None) -> Tournament:
    if not organizer.is_admin:
        raise Forbidden("only organizers may cancel tournaments")
    tournament = get_tournament(session, tournament_id)
    if tournament.status != TournamentStatus.RUNNING:
        return tournament
    # The leaderboard's lock first, as recording a match takes it before the tournament's row: so cancel
    # and record never wait for each other in a circle, and the sealed rows read below are all committed.
    lock_board(session, tournament.game, tournament.seats)
    tournament.status = TournamentStatus.CANCELLED
    tournament.finished_at = utcnow()
    queued = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id,
                                                         Match.status == MatchStatus.QUEUED)))
    session.execute(update(Match).where(Match.tournament_id == tournament_id, Match.status == MatchStatus.QUEUED)
                    .values(status=MatchStatus.CANCELLED))
    session.flush()
    sealed_deals = session.execute(select(func.min(Match.id)).where(Match.tournament_id == tournament_id,
                                                                    Match.status == MatchStatus.SEALED)
                                   .group_by(Match.seed)).scalars().all()
    for match_id in sealed_deals:  # a deal whose open matches were all queued is over now
        close_deal(session, match_id)
    if queue is not None:
        for match_id in queued:
            queue.cancel(match_id)
    return tournament


_OPEN_MATCHES = tournament_open(Match.__table__, "tournament_id")


def finish_tournament_if_done(session: Session, tournament_id: int, open_matches: int | None = None) -> int:
    """Mark a running tournament finished once none of its matches is queued or running (1 if so).
    ``open_matches``: how many are, when the caller read it in this transaction under the board's lock
    (``publication.settle_deal``); else read here."""
    if open_matches is None:
        open_matches = core(session).scalar(_OPEN_MATCHES, {"tournament_id": tournament_id})  # Core: once per match
    if open_matches:
        return 0
    done = session.execute(update(Tournament).where(Tournament.id == tournament_id,
                                                    Tournament.status == TournamentStatus.RUNNING)
                           .values(status=TournamentStatus.FINISHED, finished_at=utcnow()))
    return done.rowcount
