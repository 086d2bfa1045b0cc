"""Each recorder of a published match, run alone (after the seat results it reads), writes its own table
and nothing else (the live ratings stage nothing at all), and the stages after the one that reads run in
one pipeline on PostgreSQL (arena.services.recorders)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from arena.services import recorders
from arena.storage.history_models import LivePoint
from arena.storage.models import BoardOutcome, Fault, LiveRating, Match, MatchSeat, MetricCounter, TournamentScore
from referee.runner import BotSpec, play_match
from tests.arena import service_harness as h

TABLES = {
    "seat results": select(func.count()).select_from(MatchSeat).where(MatchSeat.rank.is_not(None)),
    "live Elo": select(func.count()).select_from(LiveRating),
    "live points": select(func.count()).select_from(LivePoint),
    "outcome store": select(func.count()).select_from(BoardOutcome),
    "tournament standings": select(func.count()).select_from(TournamentScore),
    "metrics": select(func.count()).select_from(MetricCounter),
    "faults": select(func.count()).select_from(Fault),
}


def _counts(session) -> dict[str, int]:
    return {name: session.scalar(query) for name, query in TABLES.items()}


def _played_match(context) -> tuple[Match, dict]:  # type: ignore[no-untyped-def]
    """A two-player tournament's first match, played (not recorded): the recorders get its replay."""
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, "piranha-pedro")
        tournament_id = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2})
        with context.db.session() as session:
            match = session.scalars(select(Match).where(Match.tournament_id == tournament_id)).first()
            by_bot = dict(zip(bots, servers, strict=True))
            seats = session.scalars(select(MatchSeat.bot_id).where(MatchSeat.match_id == match.id)
                                    .order_by(MatchSeat.seat)).all()
            replay = play_match("piranha-pedro", [BotSpec(by_bot[b].url, by_bot[b].bot.secret, bot_id=b)
                                                  for b in seats], match.seed)
    return match, replay


@pytest.mark.parametrize("name", [name for name, _ in recorders.RATED])
def test_each_recorder_writes_only_its_own_table(context, name: str) -> None:
    recorder = dict(recorders.RATED)[name]
    match, replay = _played_match(context)
    replay["faults"].append({"seat": 0, "turn": 1, "path": "/act", "kind": "timeout", "message": "late",
                             "excerpt": "", "latency_ms": 1000.0})  # so the fault recorder has one to write
    with context.db.session() as session:
        published = recorders.Published.load(session, match.id, replay)
        if name != "seat results":  # the stages after it read the seat rows it writes
            recorders.seat_results(session, [published])
            session.flush()
        if name == "live points":  # the chart's points read the live Elo the stage before writes
            recorders.live_elo(session, [published])
            session.flush()
        before = _counts(session)
        recorder(session, [published])
        session.flush()
        after = _counts(session)
    changed = {table for table in TABLES if after[table] != before[table]}
    assert changed == ({name} if name in TABLES else set())
    assert name in TABLES or name == "live ratings"  # (the one stage that only reads)


def test_regression_a_nul_in_a_fault_sealed_earlier_made_its_deal_unpublishable(context) -> None:
    """A replay sealed before the referee made fault messages printable may quote a bot's status line
    with a NUL in it; PostgreSQL text refuses NUL, so publishing it (and recording whichever twin closed
    its deal) failed for ever. The faults recorder stores it as U+FFFD."""
    match, replay = _played_match(context)
    replay["faults"].append({"seat": 0, "turn": 1, "path": "/act", "kind": "connection_error",
                             "message": "BadStatusLine: HTTP/1.1 2\x0000 OK", "excerpt": "a\x00b", "latency_ms": 3.0})
    with context.db.session() as session:
        recorders.fault_rows(session, [recorders.Published.load(session, match.id, replay)])
    with context.db.session(readonly=True) as session:
        stored = session.execute(select(Fault.message, Fault.excerpt).where(Fault.match_id == match.id)).one()
    assert tuple(stored) == ("BadStatusLine: HTTP/1.1 2\ufffd00 OK", "a\ufffdb")


def _played_deal(context) -> list[tuple[Match, dict]]:  # type: ignore[no-untyped-def]
    """Both rotations of a two-player tournament's first deal, played (not recorded)."""
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, "piranha-pedro")
        tournament_id = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "cycles": 2})
        by_bot = dict(zip(bots, servers, strict=True))
        played = []
        with context.db.session() as session:
            first = session.scalars(select(Match).where(Match.tournament_id == tournament_id)
                                    .order_by(Match.id)).first()
            for match in session.scalars(select(Match).where(Match.tournament_id == tournament_id,
                                                             Match.seed == first.seed).order_by(Match.id)):
                seats = session.scalars(select(MatchSeat.bot_id).where(MatchSeat.match_id == match.id)
                                        .order_by(MatchSeat.seat)).all()
                played.append((match, play_match("piranha-pedro", [BotSpec(by_bot[b].url, by_bot[b].bot.secret,
                                                                           bot_id=b) for b in seats], match.seed)))
    return played


def _written(session) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Every row the recorders write, without the tables' own ids (a fault's row id follows insert order)
    and the time a row was written."""
    from arena.storage.models import TournamentPair
    tables = [MatchSeat, LiveRating, LivePoint, BoardOutcome, TournamentScore, TournamentPair, MetricCounter, Fault]
    written = {}
    for model in tables:
        columns = [c for c in model.__table__.columns
                   if not (c.name == "id" and c.primary_key) and c.name != "created_at"]
        written[model.__tablename__] = sorted(repr(tuple(row)) for row in session.execute(select(*columns)))
    return written


def test_a_deal_published_together_writes_what_publishing_its_matches_one_by_one_writes(context) -> None:
    """``publish_many`` writes a deal's twins with one statement per table; live Elo is order-dependent
    and the counters and standings add up, so together must equal one after the other, row for row."""
    from arena.services.publication import publish, publish_many
    deal = _played_deal(context)
    assert len(deal) == 2
    deal[1][1]["faults"].append({"seat": 1, "turn": 2, "path": "/act", "kind": "timeout", "message": "late",
                                 "excerpt": "", "latency_ms": 1000.0})
    with context.db.session() as session:
        publish_many(session, [(match.id, replay) for match, replay in deal])
        together = _written(session)
        session.rollback()
    with context.db.session() as session:
        for match, replay in deal:
            publish(session, match.id, replay)
        apart = _written(session)
    assert together == apart
    assert len(together["live_points"]) == 4 and len(together["faults"]) == 1


def test_a_deals_publication_reads_first_and_sends_every_write_after_in_one_pipeline(context) -> None:
    """On PostgreSQL each statement costs a round trip unless pipelined: the live ratings are read, under the
    board's lock, before any write, and every statement after that runs with the driver in pipeline mode
    (its answers read once, at the end). On SQLite the same stages run as they come, writing the same rows
    (``test_a_deal_published_together_writes_what_publishing_its_matches_one_by_one_writes``)."""
    from arena.services.publication import publish_many
    deal = _played_deal(context)
    deal[1][1]["faults"].append({"seat": 1, "turn": 2, "path": "/act", "kind": "timeout", "message": "late",
                                 "excerpt": "", "latency_ms": 1000.0})
    postgres = context.db.url.startswith("postgresql")
    with context.db.session() as session, h.statements_sent(context.db.engine) as sent:
        publish_many(session, [(match.id, replay) for match, replay in deal])
    reads = [statement for statement, piped in sent if not piped]
    writes = [statement for statement, piped in sent if piped]
    if postgres:
        assert reads == [statement for statement, _ in sent[:len(reads)]]  # every read before every write
        assert all(statement.startswith("SELECT") for statement in reads), reads
        assert {s.split()[1] for s in writes} == {"match_seats", "live_ratings", "live_points", "board_outcomes",
                                                   "tournament_scores", "tournament_pairs", "metric_counters",
                                                   "faults"}
    else:
        assert writes == []
    assert sum(statement.startswith(("INSERT", "UPDATE")) for statement, _ in sent) == 8  # one per table


def test_a_stage_that_reads_inside_its_callers_pipeline_is_refused(context) -> None:
    """Inside a pipeline its caller opened (``publication.settle_deal`` opens one for the whole publication) a
    stage that reads would find nothing to read: on PostgreSQL it is refused, loudly, before it runs; on SQLite
    (no pipelines) the stages run as they come."""
    from arena.storage.db import pipelined
    match, replay = _played_match(context)
    postgres = context.db.url.startswith("postgresql")
    with context.db.session() as session:
        published = recorders.Published.load(session, match.id, replay)  # (its live ratings not handed over)
        with pipelined(session):
            if postgres:
                with pytest.raises(RuntimeError, match="the live ratings stage reads"):
                    recorders.run(session, recorders.RATED, [published])
            else:
                recorders.run(session, recorders.RATED, [published])
        if postgres:
            session.rollback()
