"""Ladders: one per game and configured player count, created on start; organizers pause, resume and tune
them; pages and the API read their state. What a ladder schedules is ``ladder_scheduler``'s.

A ladder's ``settings`` hold an organizer's overrides of the ``ARENA_LADDER_*`` defaults (``TUNABLE``);
``effective_settings`` is what the scheduler uses.
"""

from __future__ import annotations

from collections.abc import Hashable
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.config import Settings, ladder_player_counts
from arena.domain.ladder_planner import seating_owners
from arena.services.errors import Forbidden, Invalid, NotFound, require_id
from arena.storage.models import (
    Account,
    Bot,
    BotStatus,
    Ladder,
    LadderStatus,
    LeaderboardFit,
    Match,
    MatchStatus,
    Rating,
    utcnow,
)
from referee.games import GAMES

# What an organizer may tune per ladder (inclusive ranges): the one home of these limits; the API schema,
# the form and the CLI are built from them.
TUNABLE: dict[str, tuple[int, int]] = {
    "per_hour": (0, 100_000),  # matches this ladder may start per hour (0: none)
    "maintenance_per_hour": (0, 100_000),  # the same once its leaderboard has settled
    "in_flight": (1, 1000),  # its matches queued or running at once
    "weight": (1, 100),  # its share of the arena's budget against the other ladders
    "time_limit_ms": (10, 60_000),  # per decision, for the matches it schedules from now on
}
REASON_CHARS = 500


def ensure_ladders(session: Session, settings: Settings) -> list[Ladder]:
    """A ladder for every game and configured player count the game allows (``ARENA_LADDER_PLAYERS``);
    existing rows are kept as they are. Safe when several processes start at once (the unique board)."""
    existing = {(ladder.game, ladder.players) for ladder in session.scalars(select(Ladder))}
    for game_name in sorted(GAMES):
        spec = GAMES[game_name].spec
        for players in ladder_player_counts(settings):
            if (game_name, players) in existing or not spec.min_players <= players <= spec.max_players:
                continue
            try:
                with session.begin_nested():
                    session.add(Ladder(game=game_name, players=players, status=LadderStatus.RUNNING,
                                       time_limit_ms=settings.decision_ms, params={}, settings={}))
            except IntegrityError:  # another process made it first
                pass
    session.flush()
    return list_ladders(session)


def list_ladders(session: Session) -> list[Ladder]:
    return list(session.scalars(select(Ladder).order_by(Ladder.game, Ladder.players)))


def get_ladder(session: Session, ladder_id: int) -> Ladder:
    require_id(ladder_id, "ladder")
    ladder = session.get(Ladder, ladder_id)
    if ladder is None:
        raise NotFound(f"no ladder {ladder_id}")
    return ladder


def ladder_for_board(session: Session, game: str, players: int) -> Ladder | None:
    return session.scalar(select(Ladder).where(Ladder.game == game, Ladder.players == players))


def effective_settings(ladder: Ladder, settings: Settings) -> dict[str, int]:
    """The arena's ``ARENA_LADDER_*`` defaults with the organizer's overrides for this ladder."""
    values = {"per_hour": settings.ladder_per_hour, "maintenance_per_hour": settings.ladder_maintenance_per_hour,
              "in_flight": settings.ladder_in_flight, "weight": 1, "time_limit_ms": ladder.time_limit_ms}
    values.update({k: v for k, v in (ladder.settings or {}).items() if k in TUNABLE and k != "time_limit_ms"})
    return values


def _organizer(account: Account) -> None:
    if not account.is_admin:
        raise Forbidden("only organizers may pause, resume or tune ladders")


def pause_ladder(session: Session, organizer: Account, ladder_id: int, reason: Any = None) -> Ladder:
    """Schedule no new table; what is in flight, and the rotations owed for tables already started, are
    played (a table's deal stays sealed until all its rotations are)."""
    _organizer(organizer)
    if reason is not None and (not isinstance(reason, str) or len(reason) > REASON_CHARS):
        raise Invalid(f"reason must be a text of at most {REASON_CHARS} characters")
    ladder = get_ladder(session, ladder_id)
    ladder.status = LadderStatus.PAUSED
    ladder.paused_reason = reason or f"paused by {organizer.name}"
    session.flush()
    return ladder


def resume_ladder(session: Session, organizer: Account, ladder_id: int) -> Ladder:
    _organizer(organizer)
    ladder = get_ladder(session, ladder_id)
    ladder.status, ladder.paused_reason = LadderStatus.RUNNING, None
    session.flush()
    return ladder


def tune_ladder(session: Session, organizer: Account, ladder_id: int, changes: dict[str, Any]) -> Ladder:
    """Set (an integer) or clear (null: back to the arena's default) any of ``TUNABLE``."""
    _organizer(organizer)
    unknown = sorted(set(changes) - set(TUNABLE))
    if unknown:
        raise Invalid(f"unknown setting(s) {unknown}; a ladder has {sorted(TUNABLE)}")
    ladder = get_ladder(session, ladder_id)
    overrides = dict(ladder.settings or {})
    for name, value in changes.items():
        low, high = TUNABLE[name]
        if value is None and name != "time_limit_ms":
            overrides.pop(name, None)
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise Invalid(f"{name} must be an integer from {low} to {high}"
                          + ("" if name == "time_limit_ms" else " (or null for the arena's default)"))
        if name == "time_limit_ms":
            ladder.time_limit_ms = value
        else:
            overrides[name] = value
    ladder.settings = overrides
    session.flush()
    return ladder


def matches_per_hour(session: Session, ladder_id: int) -> int:
    """Ladder matches finished in the last hour: the rate the ladder runs at now."""
    since = utcnow() - timedelta(hours=1)
    return session.scalar(select(func.count()).select_from(Match).where(
        Match.ladder_id == ladder_id, Match.finished_at >= since,
        Match.status.in_([MatchStatus.SEALED, MatchStatus.FINISHED, MatchStatus.VOID]))) or 0


def bots_and_owners(session: Session, game: str) -> tuple[int, int]:
    """The game's bots on the ladder, and how many owners they have as a table counts them (``seating_owners``:
    bots at one address are one owner), the arena's own bots one by one. Two bots of one owner never share a
    table (``ladder_planner``): a table needs bots of ``players`` owners.
    One owner's four bots waited for ever, their ladder's page saying "full rate"."""
    on = list(session.scalars(select(Bot).where(Bot.game == game, Bot.status == BotStatus.ACTIVE,
                                                Bot.paused_by.is_(None), Bot.retired_at.is_(None))))
    owners = table_owners(session, on)
    return len(on), len({o for o in owners.values() if o is not None}) + sum(o is None for o in owners.values())


def table_owners(session: Session, bots: list[Bot]) -> dict[int, Hashable | None]:
    """The owner each bot counts as at a ladder table (``ladder_planner.seating_owners``): None for the arena's
    own bots (an organizer's), which may share tables; one owner, or one address, for the others."""
    house = set(session.scalars(select(Account.id).where(Account.is_admin))) if bots else set()
    return seating_owners([(b.id, None if b.owner_id in house else b.owner_id, b.url) for b in bots])


def no_table_yet(session: Session, bot: Bot) -> str | None:
    """Why no ladder of its game can seat a bot that has not played yet (its page and My bots say it), or None."""
    players = session.scalar(select(func.min(Ladder.players)).where(Ladder.game == bot.game,
                                                                    Ladder.status == LadderStatus.RUNNING))
    if players is None:
        return None
    _bots, owners = bots_and_owners(session, bot.game)
    if owners >= players:
        return None
    return (f"a table needs bots of {players} different owners, and the ladder has bots of {owners} "
            "(two bots of one owner never share a table)")


def ladder_state(session: Session, ladder: Ladder) -> dict[str, Any]:
    """What a leaderboard page shows of its ladder: running or paused, matches per hour now, how many of its
    bots are provisional, when the table was refitted, whether it has settled or still waits for bots."""
    provisional, rated = session.execute(
        select(func.count().filter(Rating.provisional.is_(True)), func.count())
        .where(Rating.game == ladder.game, Rating.players == ladder.players)).one()
    fit = session.get(LeaderboardFit, (ladder.game, ladder.players))
    bots, owners = bots_and_owners(session, ladder.game)
    return {
        "id": ladder.id, "game": ladder.game, "players": ladder.players, "status": ladder.status,
        "paused_reason": ladder.paused_reason, "tables": ladder.tables,
        "settled": ladder.settled_at is not None,
        "settled_at": ladder.settled_at.isoformat() if ladder.settled_at else None,
        "last_scheduled_at": ladder.last_scheduled_at.isoformat() if ladder.last_scheduled_at else None,
        "matches_per_hour": matches_per_hour(session, ladder.id),
        "rated": rated or 0, "provisional": provisional or 0, "bots": bots,
        "owners": owners,
        "waiting": owners < ladder.players,  # no table possible: nothing to place or settle yet
        "refitted_at": fit.updated_at.isoformat() if fit else None,
    }


def board_state(session: Session, game: str, players: int) -> dict[str, Any] | None:
    """The ladder of one leaderboard (``ladder_state``), or None when the board has none."""
    ladder = ladder_for_board(session, game, players)
    return ladder_state(session, ladder) if ladder is not None else None


def ladder_json(session: Session, ladder: Ladder, settings: Settings) -> dict[str, Any]:
    """A ladder for the API, the CLI and its page: its state, its settings and its matches by status."""
    counts = dict(session.execute(select(Match.status, func.count()).where(Match.ladder_id == ladder.id)
                                  .group_by(Match.status)).all())
    return {**ladder_state(session, ladder), "settings": effective_settings(ladder, settings),
            "overrides": dict(ladder.settings or {}),
            "matches": {status.value: counts.get(status, 0) for status in MatchStatus}}


def board_label(game: str, players: int) -> str:
    """A board (and its ladder) as the terminal names it: "game, N players", one name on every line."""
    return f"{game}, {players} players"


def ladder_names(session: Session) -> dict[int, str]:
    """Ladder id -> ``board_label``, for what the scheduler prints."""
    return {ladder.id: board_label(ladder.game, ladder.players) for ladder in list_ladders(session)}
