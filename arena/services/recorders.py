"""What publishing a match writes, as a list of named recorders run in order in one transaction (as a
Battlesnake ruleset is a list of named stages): each takes the session and the ``Published`` matches of
one deal, in id order, and each can be run and tested alone. ``RATED`` serves played matches, ``VOID``
matches in which every seat forfeited before playing (recorded for their owners, never rated:
``void_matches``). A recorder writes all of its matches in one statement per table: a deal's twins are
published together, and a statement is a round trip to PostgreSQL. What the writes need to read is read
first (the live ratings), so the writes that follow share one round trip (``WRITES_ONLY``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.orm import Session

from arena.services import latency, standings
from arena.services.leaderboards import read_live, update_live
from arena.services.metrics import FAULTS, count_matches, increment
from arena.services.outcome_store import store_outcomes
from arena.services.rating_history import add_live_points
from arena.storage.compiled_plans import write
from arena.storage.db import core, in_pipeline, pipelined
from arena.storage.models import Fault, Match, MatchSeat


@dataclass
class Seat:
    """A seat of a match being published: who sat there and, once ``seat_results`` ran, how it went (what
    the stage writes on the seat row and the later stages read)."""

    seat: int
    bot_id: int
    rank: int | None = None
    score: float | None = None
    forfeited: bool = False
    decisions: int = 0
    faults: int = 0


@dataclass
class Published:
    """A match being published: its replay, its seats in seat order and its decision latencies."""

    match_id: int
    tournament_id: int | None
    replay: dict[str, Any]
    seats: list[Seat]
    latencies: dict[int, list[float]] = field(default_factory=dict)
    live: dict[int, tuple[float, int]] | None = None  # each seat's live Elo and games after it (``live_elo``)
    live_before: dict[int, tuple[float, int]] | None = None  # its board's bots' before the deal (``live_ratings``)

    @property
    def game(self) -> str:
        return self.replay["game"]

    @property
    def result(self) -> dict[str, Any]:
        return self.replay["result"]

    @classmethod
    def load(cls, session: Session, match_id: int, replay: dict[str, Any],
             tournament_id: int | EllipsisType | None = ..., bots: list[int] | None = None) -> Published:
        """``tournament_id`` and ``bots`` (the seats' bot ids in seat order): the match's, when the caller
        read them already (``...`` and None: read them here)."""
        return cls.load_many(session, [(match_id, replay, bots)], tournament_id)[0]

    @classmethod
    def load_many(cls, session: Session, matches: list[tuple[int, dict[str, Any], list[int] | None]],
                  tournament_id: int | EllipsisType | None = ...) -> list[Published]:
        """Matches of one deal (id, replay, seats' bot ids or None), with the seats the caller did not
        have read in one statement."""
        unknown = [match_id for match_id, _replay, bots in matches if bots is None]
        read: dict[int, list[int]] = {}
        if unknown:
            for match_id, bot in core(session).execute(_SEAT_BOTS, {"ids": unknown}):
                read.setdefault(match_id, []).append(bot)
        if tournament_id is ...:
            tournament_id = session.scalar(select(Match.tournament_id).where(Match.id == matches[0][0]))
        loaded = []
        for match_id, replay, bots in matches:
            seats = [Seat(seat, bot) for seat, bot in enumerate(read.get(match_id, []) if bots is None else bots)]
            latencies: dict[int, list[float]] = {}
            for step in replay["steps"]:
                for decision in step["decisions"]:
                    if decision["latency_ms"] is not None:
                        latencies.setdefault(decision["seat"], []).append(decision["latency_ms"])
            loaded.append(cls(match_id, tournament_id, replay, seats, latencies))
        return loaded

    def faults_of(self, seat: int) -> int:
        return sum(1 for f in self.replay["faults"] if f["seat"] == seat)


Recorder = Callable[[Session, list[Published]], None]


def seat_results(session: Session, matches: list[Published]) -> None:
    """Rank, score, forfeit, decisions, faults and latency on each seat row (bot pages read these)."""
    rows = []
    for match in matches:
        result = match.result
        decisions = [0] * len(match.seats)
        for step in match.replay["steps"]:
            for decision in step["decisions"]:
                decisions[decision["seat"]] += 1
        for seat in match.seats:
            samples = match.latencies.get(seat.seat, [])
            seat.rank = result["ranks"][seat.seat]
            seat.score = float(result["scores"][seat.seat])
            seat.forfeited = seat.seat in result["forfeited"]
            seat.decisions = decisions[seat.seat]
            seat.faults = match.faults_of(seat.seat)
            rows.append({"m": match.match_id, "s": seat.seat, "rank": seat.rank, "score": seat.score,
                         "forfeited": seat.forfeited, "decisions": seat.decisions, "faults": seat.faults,
                         "latency_sum_ms": round(sum(samples), 3),
                         "latency_max_ms": round(max(samples, default=0.0), 3),
                         "latency_hist": latency.histogram(samples)})
    _update_seats(session, rows)


_SEATS = MatchSeat.__table__
_SEAT_BOTS = (select(_SEATS.c.match_id, _SEATS.c.bot_id).where(_SEATS.c.match_id.in_(bindparam("ids", expanding=True)))
              .order_by(_SEATS.c.match_id, _SEATS.c.seat))
_UPDATE_SEAT = update(_SEATS).where(_SEATS.c.match_id == bindparam("m"), _SEATS.c.seat == bindparam("s"))


def _update_seats(session: Session, rows: list[dict[str, Any]]) -> None:
    """The seat rows' new values (keys "m" and "s" pick the row, the others name its columns), in one
    Core statement run for every row (the ORM's unit of work cost several times more)."""
    write(core(session), _UPDATE_SEAT, rows)


def _boards(matches: list[Published]) -> dict[tuple[str, int], list[Published]]:
    """The matches by leaderboard (a deal's all share one), in their order."""
    boards: dict[tuple[str, int], list[Published]] = {}
    for match in matches:
        boards.setdefault((match.game, len(match.seats)), []).append(match)
    return boards


def live_ratings(session: Session, matches: list[Published]) -> None:
    """Reads, writes nothing: the live ratings the matches' bots have before them, one statement per board,
    under its lock (``live_elo`` starts from them; read first, the writes after share a round trip). Nothing
    to do when the caller read them already (``publication.settle_deal``, with the deal)."""
    for (game, players), board in _boards(matches).items():
        if _ratings_read(board):
            continue
        before = read_live(session, game, players, [row.bot_id for m in board for row in m.seats])
        for match in board:
            match.live_before = before


def live_elo(session: Session, matches: list[Published]) -> None:
    """Each match's live Elo update, in order, from the ratings ``live_ratings`` read (read here if it did
    not run before)."""
    for (game, _players), board in _boards(matches).items():
        after = update_live(session, game, [([row.bot_id for row in m.seats], m.result) for m in board],
                            before=board[0].live_before)
        for match, live in zip(board, after, strict=True):
            match.live = live


def live_points(session: Session, matches: list[Published]) -> None:
    """The rating chart's point for each match: each seat's live Elo after it (``rating_history``), as the
    stage before left it (read back when run alone)."""
    for (game, _players), board in _boards(matches).items():
        add_live_points(session, game, [(m.match_id, [row.bot_id for row in m.seats], m.live) for m in board])


def outcome_store(session: Session, matches: list[Published]) -> None:
    for (game, _players), board in _boards(matches).items():
        store_outcomes(session, game, [(m.match_id, m.seats) for m in board])


def tournament_standings(session: Session, matches: list[Published]) -> None:
    tournaments: dict[int, list[list[Seat]]] = {}
    for match in matches:
        if match.tournament_id is not None:
            tournaments.setdefault(match.tournament_id, []).append(match.seats)
    for tournament_id, seats in tournaments.items():
        standings.add_matches(session, tournament_id, seats)


def match_metrics(session: Session, matches: list[Published]) -> None:
    counted = []
    for match in matches:
        samples = [x for seat in match.latencies.values() for x in seat]
        counted.append((match.game, [f["kind"] for f in match.replay["faults"]], latency.histogram(samples),
                        sum(samples)))
    count_matches(session, counted)


def fault_rows(session: Session, matches: list[Published]) -> None:
    """One row per fault, for the bot's owner (message and excerpt) and the fault tables."""
    rows = []
    for match in matches:
        bot_of = {seat.seat: seat.bot_id for seat in match.seats}
        rows += [{"match_id": match.match_id, "bot_id": bot_of[fault["seat"]], "seat": fault["seat"],
                  "turn": fault["turn"], "path": fault["path"], "kind": fault["kind"],
                  "message": _no_nul(fault["message"][:2000]), "excerpt": _no_nul(fault["excerpt"][:1000]),
                  "latency_ms": fault["latency_ms"]} for fault in match.replay["faults"]]
    write(core(session), _INSERT_FAULT, rows)


_INSERT_FAULT = insert(Fault.__table__).inline()  # (inline: not reading a one-row INSERT's new id back)


def _no_nul(text: str) -> str:
    """PostgreSQL text holds no NUL; the referee makes messages printable, but a replay sealed before it
    did may still carry one (a bot's status line), and must not make its deal unpublishable."""
    return text.replace("\x00", "\ufffd")


def void_seats(session: Session, matches: list[Published]) -> None:
    """Every seat forfeited, with its fault count; no rank, score or decisions (nothing to rate)."""
    rows = []
    for match in matches:
        for seat in match.seats:
            seat.rank, seat.score, seat.forfeited, seat.decisions = None, None, True, 0
            seat.faults = match.faults_of(seat.seat)
            rows.append({"m": match.match_id, "s": seat.seat, "rank": None, "score": None, "forfeited": True,
                         "decisions": 0, "faults": seat.faults})
    _update_seats(session, rows)


def fault_metrics(session: Session, matches: list[Published]) -> None:
    """The fault-kind counters alone (a void match is no match played)."""
    kinds = Counter((FAULTS, f"kind={fault['kind']}") for match in matches for fault in match.replay["faults"])
    if kinds:
        increment(session, kinds)


# The seat results stage fills in the seats (rank, forfeit, faults) that the later ones read (live Elo, outcome
# store, standings); the live ratings stage only reads, first, so that everything after it only writes.
RATED: tuple[tuple[str, Recorder], ...] = (
    ("live ratings", live_ratings),
    ("seat results", seat_results),
    ("live Elo", live_elo),
    ("live points", live_points),
    ("outcome store", outcome_store),
    ("tournament standings", tournament_standings),
    ("metrics", match_metrics),
    ("faults", fault_rows),
)
VOID: tuple[tuple[str, Recorder], ...] = (
    ("void seats", void_seats),
    ("faults", fault_rows),
    ("fault metrics", fault_metrics),
)


def _always(_matches: list[Published]) -> bool:
    return True


def _ratings_read(matches: list[Published]) -> bool:
    """Whether the matches' bots' live ratings were read already (``live_ratings``, or the caller)."""
    return all(match.live_before is not None for match in matches)


# Stages whose statements only write and check nothing of what they wrote (not even a rowcount), when the
# matches are as the predicate says: next to each other they run in one pipeline (``db.pipelined``), asked
# just before each stage runs. Live Elo reads the live ratings itself unless ``live_ratings`` ran before
# it, and live points read them back unless live Elo ran before them; the live ratings stage only reads,
# unless the caller handed them over.
WRITES_ONLY: dict[str, Callable[[list[Published]], bool]] = {
    "live ratings": _ratings_read,  # (then it does nothing)
    "seat results": _always,
    "void seats": _always,
    "live Elo": _ratings_read,
    "live points": lambda matches: all(match.live is not None for match in matches),
    "outcome store": _always,
    "tournament standings": _always,
    "metrics": _always,
    "faults": _always,
    "fault metrics": _always,
}


def run(session: Session, recorders: tuple[tuple[str, Recorder], ...], matches: list[Published]) -> None:
    """The ``recorders`` in order; each run of write-only ones in one pipeline."""
    if not matches:
        return
    with ExitStack() as pipeline:
        piped = False
        for name, recorder in recorders:
            writes_only = WRITES_ONLY.get(name, _never)(matches)
            if writes_only and not piped:
                pipeline.enter_context(pipelined(session))
            elif piped and not writes_only:
                pipeline.close()  # its writes are sent and answered before this stage runs
            if not writes_only and in_pipeline(session.connection()):  # (the caller's: its reads would find nothing)
                raise RuntimeError(f"the {name} stage reads, inside a pipeline its caller opened")
            piped = writes_only
            recorder(session, matches)


def _never(_matches: list[Published]) -> bool:
    return False
