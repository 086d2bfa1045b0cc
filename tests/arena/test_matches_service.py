"""Playing and recording one stored match (arena.services.matches), in process."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from arena.services import matches as matches_service
from arena.services.matches import MAX_ATTEMPTS, claim, claimed_deal, run_match, seat_specs
from arena.services.publication import deal_statuses
from arena.storage.models import Bot, Match, MatchSeat, MatchStatus
from arena.storage.replays import decompress
from sample_bots.random_bot import make_bot
from sample_bots.sdk import Bot as SdkBot
from sample_bots.sdk import start_in_thread
from tests import bot_zoo
from tests.arena import service_harness as h
from tests.pages.test_query_counts import counting


def _one_match(context, servers) -> int:
    bots = h.register_bots(context, servers, "piranha-pedro")
    h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
    with context.db.session() as session:
        return session.scalar(select(Match.id).order_by(Match.id).limit(1))


def test_replayed_match_regression_signing_bots_refused_the_second_attempt_as_stale(context) -> None:
    """Bug: a match played again after its worker died reused the bots' match id, so bots that check
    turns (the SDK with a secret does) refused every replayed turn as stale (HTTP 409), 12 faults in the
    chaos test. Every attempt is now a new match id to the bots."""
    servers = [start_in_thread(make_bot(i)) for i in range(2)]
    try:
        match_id = _one_match(context, servers)
        assert run_match(context.db, context.settings, match_id, "w1") == "recorded"
        with context.db.session() as session:  # as if that worker had died before recording
            session.execute(update(Match).where(Match.id == match_id).values(status=MatchStatus.QUEUED))
        assert run_match(context.db, context.settings, match_id, "w2") == "recorded"
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    with context.db.session(readonly=True) as session:
        match = session.get(Match, match_id)
        replay = decompress(match.replay_gz)
    assert match.attempts == 2 and replay["match_id"] == f"m{match_id}a2"
    assert replay["faults"] == []


def test_a_match_is_claimed_by_one_worker_only(context) -> None:
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        with context.db.session() as session:
            assert claim(session, match_id, "w1", lease_s=30)
        with context.db.session() as session:
            assert not claim(session, match_id, "w2", lease_s=30)  # the lease holds
        assert run_match(context.db, context.settings, match_id, "w3") == "skipped"


def test_an_expired_lease_lets_another_worker_take_the_match(context) -> None:
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        with context.db.session() as session:
            assert claim(session, match_id, "dead-worker", lease_s=-1)  # already expired
        assert run_match(context.db, context.settings, match_id, "w2") == "recorded"
        assert run_match(context.db, context.settings, match_id, "w3") == "skipped"


def _nul_status_line(req, sock) -> None:  # type: ignore[no-untyped-def]
    """Polite, except that its /act answers carry a NUL in the status line."""
    if req.path == "/act":
        sock.sendall(b"HTTP/1.1 2\x0000 OK\r\nContent-Length: 2\r\n\r\n{}")
    else:
        bot_zoo.polite(req, sock)


def test_regression_a_nul_in_a_bots_status_line_made_its_match_unrecordable(context) -> None:
    """The HTTP parser's BadStatusLine quotes the line the bot sent, NUL and all, and that message became
    the fault's: PostgreSQL text cannot hold NUL, so publishing the match failed (and with it the
    recording of whichever twin closed its deal): the match was played again on the same deal until
    it was given up. A bot could void a match it was losing, on PostgreSQL alone."""
    from arena.services.accounts import create_account
    from arena.storage.models import Bot, Fault

    random_bot = start_in_thread(make_bot(1))
    try:
        with bot_zoo.zoo_bot(_nul_status_line) as zoo:
            with context.db.session() as session:
                account, _token = create_account(session, "owner")
                ids = []
                for name, url in (("nul", zoo.url), ("random", random_bot.url)):
                    bot = Bot(owner_id=account.id, name=name, url=url, game="piranha-pedro", secret="",
                              info={"apiversion": "1", "name": name, "author": "t", "version": "1",
                                    "games": ["piranha-pedro"]})
                    session.add(bot)
                    session.flush()
                    ids.append(bot.id)
            h.start_tournament(context, {"game": "piranha-pedro", "bots": ids, "seats": 2, "deals": "independent"})
            with context.db.session() as session:
                match_id = session.scalar(select(Match.id).order_by(Match.id).limit(1))
            assert run_match(context.db, context.settings, match_id, "w1") == "recorded"
    finally:
        random_bot.shutdown()
        random_bot.server_close()
    with context.db.session(readonly=True) as session:
        assert session.get(Match, match_id).status == MatchStatus.FINISHED
        messages = list(session.scalars(select(Fault.message).where(Fault.match_id == match_id)))
    assert messages and all("BadStatusLine" in m and "\x00" not in m for m in messages), messages


class _Sink:
    def publish(self, topic: str, kind: str, data: dict, keep: bool = False) -> None:
        pass

    def keep(self, topic: str, kind: str, data: dict) -> None:
        pass


def test_the_worker_runs_a_bounded_number_of_statements_per_match(context) -> None:
    """The worker's own database work per match is its throughput (issue 19, docs/benchmarks.md): the two
    rotations of a deal, the first sealed and the second publishing both (and finishing the tournament),
    each within a statement budget (BEGIN left out: SQLite's is a statement, PostgreSQL's not), and on
    PostgreSQL the board's lock taken by the sealing UPDATE, not by a statement of its own. Claim: 1
    statement (its UPDATE hands back the seats' bots and the deal); store: 2 (the seal, then the deal's read,
    which also brings its matches' seats, its tournament's open matches and, on PostgreSQL, its bots' live
    ratings); publishing the deal: 9 however many matches it has (their status, one statement per recorder,
    on SQLite the live ratings' read); finishing the tournament: 1."""
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, "piranha-pedro")
        tournament = h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 2, "seed": 1})
        with context.db.session() as session:
            first, second = session.execute(select(Match.id, Match.seed).where(Match.tournament_id == tournament)
                                            .order_by(Match.id).limit(2)).all()
        assert first.seed == second.seed  # the two rotations of one deal
        counts = []
        for match_id in (first.id, second.id):
            with counting(context.db.engine) as statements:
                assert run_match(context.db, context.settings, match_id, "w1", request_refit=lambda _g, _p: None,
                                 live=_Sink()) == "recorded"
            assert not [s for s in statements if s.startswith("SELECT pg_advisory")]  # the seal takes the lock
            counts.append([s for s in statements if not s.startswith("BEGIN")])
    with context.db.session(readonly=True) as session:
        assert {session.get(Match, i).status for i in (first.id, second.id)} == {MatchStatus.FINISHED}
    assert len(counts[0]) <= 1 + 2, counts[0]
    assert len(counts[1]) <= 1 + 2 + 9 + 1, counts[1]


def test_regression_an_error_right_after_the_claim_left_the_match_claimed_for_a_lease(context, monkeypatch) -> None:
    """The claim commits on its own (no transaction around it and the reads after it): an error in those
    reads (a database blip) used to leave the match running under this worker until its lease ran out,
    one of its five attempts spent. The claim is now released at once."""
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)

        def blip(*_args: object) -> None:
            raise ConnectionError("the database went away")

        monkeypatch.setattr(matches_service, "seat_specs", blip)
        with pytest.raises(ConnectionError):
            run_match(context.db, context.settings, match_id, "w1")
        with context.db.session(readonly=True) as session:
            match = session.get(Match, match_id)
            assert (match.status, match.lease_until) == (MatchStatus.QUEUED, None)
        monkeypatch.undo()
        assert run_match(context.db, context.settings, match_id, "w2") == "recorded"  # at once, not after a lease


def test_a_match_given_up_is_ended_only_while_the_claim_that_gave_it_up_holds_it(context) -> None:
    """A match claimed for the sixth time is an error, written after the claim committed: by then another
    worker may hold it (the claim's lease ran out meanwhile), and that worker's claim is left alone."""
    with h.slow_bots(2, 0) as servers:
        match_id = _one_match(context, servers)
        with context.db.session() as session:
            session.execute(update(Match).where(Match.id == match_id).values(attempts=MAX_ATTEMPTS))
        assert run_match(context.db, context.settings, match_id, "w1") == "error"
        with context.db.session(readonly=True) as session:
            assert session.get(Match, match_id).status == MatchStatus.ERROR
        second = match_id + 1
        with context.db.session() as session:
            session.execute(update(Match).where(Match.id == second).values(attempts=MAX_ATTEMPTS))
            assert claim(session, second, "w-now", lease_s=30)
        assert matches_service._end_unplayed(context.db, second, "w-before", MAX_ATTEMPTS, given_up=True) == "skipped"
        with context.db.session(readonly=True) as session:
            match = session.get(Match, second)
            assert (match.status, match.worker) == (MatchStatus.RUNNING, "w-now")


def test_the_claim_hands_back_the_seats_and_the_deal_it_used_to_read_apart(context) -> None:
    """The claim's one UPDATE returns what two more statements used to read after it: the seats' bots in
    seat order (a rotation seats them in another order than their ids) and the deal's statuses with this
    match running, for a tournament's deal, a ladder's and a match that is a deal of its own."""
    with h.slow_bots(3, 0) as servers:
        bots = h.register_bots(context, servers, "piranha-pedro")
        h.start_tournament(context, {"game": "piranha-pedro", "bots": bots, "seats": 3, "cycles": 2, "seed": 1})
    with context.db.session() as session:
        first = session.scalar(select(Match.id).order_by(Match.id).limit(1))
        seed = session.scalar(select(Match.seed).where(Match.id == first))
        deal = list(session.scalars(select(Match.id).where(Match.seed == seed).order_by(Match.id)))
        lone = session.scalar(select(Match.id).where(Match.seed != seed).order_by(Match.id).limit(1))
        session.execute(update(Match).where(Match.id == lone).values(tournament_id=None))
    assert len(deal) == 3
    orders = []
    for owner, match_id in [("tournament", deal[1]), ("ladder", deal[2]), ("own", lone)]:
        with context.db.session() as session:
            if owner == "ladder":  # the deal moved to a ladder: found by the ladder and the seed
                session.execute(update(Match).where(Match.id.in_(deal)).values(tournament_id=None, ladder_id=7))
            claimed = claim(session, match_id, "w1", lease_s=30)
            seats = session.execute(select(Bot.url, Bot.secret, Bot.name, Bot.id)
                                    .join(MatchSeat, MatchSeat.bot_id == Bot.id)
                                    .where(MatchSeat.match_id == match_id).order_by(MatchSeat.seat)).all()
            statuses = deal_statuses(session, match_id, claimed.tournament_id, claimed.ladder_id, claimed.seed)
        specs = seat_specs(claimed)
        orders.append([spec.bot_id for spec in specs])
        assert [(s.url, s.secret, s.name, s.bot_id) for s in specs] == [tuple(row) for row in seats], owner
        found = claimed_deal(match_id, claimed)
        assert (found.match_id, found.tournament_id, found.ladder_id) == (match_id, claimed.tournament_id,
                                                                          claimed.ladder_id)
        assert found.statuses == statuses, owner
        assert dict(found.statuses)[match_id] == MatchStatus.RUNNING
    assert any(order != sorted(order) for order in orders)  # seat order is not id order somewhere


def test_a_worker_whose_connection_the_server_dropped_without_a_goodbye_records_its_match(settings) -> None:
    """The pool hands out a connection used a moment ago without a round trip (``db._alive_at_checkout``); one
    whose server went away without a goodbye (a crashed host, a failover) fails at its first statement. The
    worker's record then runs once more on a new connection: the match is recorded, not left to its lease."""
    from arena.composition import Context
    from tests.arena import silent_cut
    from tests.arena.conftest import postgres_database
    cut = silent_cut.to_postgres()
    dropped: list[bool] = []

    def act(request: dict) -> object:
        if request["match_id"].startswith("m") and not dropped:  # mid-match: the claim's connection is pooled
            dropped.append(True)
            cut.drop_silently()
        return request["legal_actions"][0]

    servers = [start_in_thread(SdkBot(name=f"b{i}", act=act, games=["piranha-pedro"])) for i in range(2)]
    try:
        with postgres_database() as database, silent_cut.through(cut, database) as relayed:
            context = Context(settings=settings, db=relayed, queue=None)
            match_id = _one_match(context, servers)
            assert run_match(relayed, settings, match_id, "w1") == "recorded"
            assert dropped == [True]
            with relayed.session(readonly=True) as session:
                assert session.get(Match, match_id).status == MatchStatus.SEALED  # (its twin is still queued)
    finally:
        cut.close()
        for server in servers:
            server.shutdown()
            server.server_close()
