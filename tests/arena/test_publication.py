"""A deal is published only when every match that plays it is over (arena.services.publication), one
channel at a time: the match API and list, the match page and replay download, tournament standings and
seed, ratings, faults and metrics."""

from __future__ import annotations

import re
import threading
import time

from sqlalchemy import func, select, update

from arena.services import tournaments as tournament_service
from arena.services.matches import GAVE_UP, MAX_ATTEMPTS, claim, record, run_match
from arena.services.publication import close_deal
from arena.services.reconcile import reconcile
from arena.storage.models import Account, Fault, LiveRating, Match, MatchSeat, MatchStatus, MetricCounter
from arena.storage.replays import compress
from sample_bots.sdk import Bot, start_in_thread
from tests.arena import service_harness as h

GAME = "piranha-pedro"


def _deal_of_two(context, servers) -> tuple[int, list[int]]:
    """A 2-seat tournament of two bots: one table, two rotations sharing one seed."""
    bots = h.register_bots(context, servers, GAME)
    for server, bot_id in zip(servers, bots, strict=True):
        server.bot_id = bot_id
    tournament_id = h.start_tournament(context, {"game": GAME, "bots": bots, "seats": 2, "seed": 1})
    with context.db.session() as session:
        ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id).order_by(Match.id)))
    return tournament_id, ids


def _counts(context) -> dict[str, int]:
    with context.db.session(readonly=True) as session:
        return {
            "ranked_seats": session.scalar(select(func.count()).select_from(MatchSeat)
                                           .where(MatchSeat.rank.is_not(None))),
            "live_games": session.scalar(select(func.coalesce(func.sum(LiveRating.games), 0))),
            "faults": session.scalar(select(func.count()).select_from(Fault)),
            "metric_rows": session.scalar(select(func.count()).select_from(MetricCounter)),
        }


def test_a_played_rotation_is_sealed_on_every_channel_until_its_twin_is_played(context, client) -> None:
    with h.slow_bots(2, 0) as servers:
        tournament_id, (first, twin) = _deal_of_two(context, servers)
        assert run_match(context.db, context.settings, first, "w") == "recorded"
        with context.db.session(readonly=True) as session:
            match = session.get(Match, first)
            seed, salt_blob = match.seed, match.replay_gz
        assert match.status == MatchStatus.SEALED and salt_blob
        api = client.get(f"/api/matches/{first}").get_json()
        assert api["status"] == "sealed"
        assert api["seed"] is None and api["result"] is None and api["replay"] is None and api["finished_at"] is None
        assert all(s["rank"] is None and s["score"] is None for s in api["seats"])
        listed = client.get(f"/api/matches?tournament={tournament_id}").get_json()
        assert all(m["seed"] is None and m["result"] is None for m in listed)
        page = client.get(f"/matches/{first}").get_data(as_text=True)
        assert str(seed) not in page and 'id="replay-data"' not in page and 'id="sealed-note"' in page
        assert client.get(f"/matches/{first}/replay.json").status_code == 404
        tournament = client.get(f"/api/tournaments/{tournament_id}").get_json()
        assert tournament["seed"] is None
        assert tournament["progress"]["done"] == 1 and tournament["progress"]["sealed"] == 1
        assert all(row["matches"] == 0 for row in tournament["standings"])
        assert str(seed) not in client.get(f"/tournaments/{tournament_id}").get_data(as_text=True)
        assert _counts(context) == {"ranked_seats": 0, "live_games": 0, "faults": 0, "metric_rows": 0}

        assert run_match(context.db, context.settings, twin, "w") == "recorded"
    with context.db.session(readonly=True) as session:
        statuses = set(session.scalars(select(Match.status).where(Match.tournament_id == tournament_id)))
    assert statuses == {MatchStatus.FINISHED}
    for match_id in (first, twin):
        api = client.get(f"/api/matches/{match_id}").get_json()
        assert api["seed"] == seed and api["result"] and api["replay"]["salt"]
        assert client.get(f"/matches/{match_id}/replay.json").status_code == 200
    tournament = client.get(f"/api/tournaments/{tournament_id}").get_json()
    assert tournament["status"] == "finished" and tournament["seed"] == 1
    assert sum(row["matches"] for row in tournament["standings"]) == 4  # two bots, two matches each
    counts = _counts(context)
    assert counts["ranked_seats"] == 4 and counts["live_games"] == 4 and counts["metric_rows"] > 0


def test_cancelling_a_tournament_publishes_a_deal_whose_other_rotation_never_ran(context) -> None:
    with h.slow_bots(2, 0) as servers:
        tournament_id, (first, _twin) = _deal_of_two(context, servers)
        assert run_match(context.db, context.settings, first, "w") == "recorded"
    with context.db.session() as session:
        organizer = session.scalar(select(Account).where(Account.name == "organizer"))
        tournament_service.cancel_tournament(session, organizer, tournament_id, None)
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.FINISHED
    assert _counts(context)["ranked_seats"] == 2


def test_a_twin_that_cannot_be_set_up_closes_the_deal_too(context) -> None:
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, twin) = _deal_of_two(context, servers)
        assert run_match(context.db, context.settings, first, "w") == "recorded"
    with context.db.session() as session:  # as the worker does when the rules refuse the set-up
        session.execute(update(Match).where(Match.id == twin).values(status=MatchStatus.ERROR, error="bad params"))
        assert close_deal(session, twin) == [first]
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.FINISHED


def test_twins_recorded_at_the_same_moment_regression_neither_saw_the_other_done(context) -> None:
    """Write skew: each of two twins recorded at once saw the other still running (uncommitted) and left
    both sealed for ever. The deal is decided under the leaderboard's lock, so the second to take it sees
    the first sealed and publishes both. Here the first transaction holds the lock while the second
    records; the second must wait for it and then publish the deal."""
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, twin) = _deal_of_two(context, servers)
        replays = {match_id: h.play_alone(context, servers, match_id) for match_id in (first, twin)}
    second_done = threading.Event()
    with context.db.session() as session:
        session.execute(update(Match).where(Match.id == first).values(
            status=MatchStatus.SEALED, result=replays[first]["result"], replay_gz=compress(replays[first])))
        assert close_deal(session, first) == []  # the twin is still open: sealed, and the lock is held
        thread = threading.Thread(target=lambda: (record(context.db, twin, replays[twin]), second_done.set()))
        thread.start()
        assert not second_done.wait(0.5)  # it waits for our lock (PostgreSQL) or write lock (SQLite)
    thread.join(30)
    assert second_done.is_set()
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.FINISHED
        assert session.get(Match, twin).status == MatchStatus.FINISHED


def test_independent_deals_publish_each_match_as_soon_as_it_is_played(context) -> None:
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, GAME)
        tournament_id = h.start_tournament(context, {"game": GAME, "bots": bots, "seats": 2, "deals": "independent"})
        with context.db.session() as session:
            first, twin = session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)
                                          .order_by(Match.id)).all()
            assert session.get(Match, first).seed != session.get(Match, twin).seed
        assert run_match(context.db, context.settings, first, "w") == "recorded"
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.FINISHED


def test_a_tournament_without_a_seed_gets_a_random_one_shown_when_it_is_over(context, client) -> None:
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, GAME)
        ids = [h.start_tournament(context, {"game": GAME, "bots": bots, "seats": 2}) for _ in range(2)]
    assert all(client.get(f"/api/tournaments/{t}").get_json()["seed"] is None for t in ids)
    with context.db.session() as session:
        organizer = session.scalar(select(Account).where(Account.name == "organizer"))
        for tournament_id in ids:
            tournament_service.cancel_tournament(session, organizer, tournament_id, None)
    seeds = [client.get(f"/api/tournaments/{t}").get_json()["seed"] for t in ids]
    assert None not in seeds and seeds[0] != seeds[1]  # not the old default 0 for everyone


def test_a_cancelled_tournaments_abandoned_match_is_cancelled_so_its_deal_is_published(queued_context) -> None:
    """A worker died mid-match after the tournament was cancelled: nobody plays the match again, so the
    reconciler cancels it, and the twin it kept sealed is published."""
    context = queued_context
    with h.slow_bots(2, 0) as servers:
        tournament_id, (first, twin) = _deal_of_two(context, servers)
        assert run_match(context.db, context.settings, first, "w") == "recorded"
    with context.db.session() as session:
        assert claim(session, twin, "dead-worker", lease_s=-1)  # running, its lease already expired
        organizer = session.scalar(select(Account).where(Account.name == "organizer"))
        tournament_service.cancel_tournament(session, organizer, tournament_id, context.queue)
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.SEALED  # the running twin still holds it
    with context.db.session() as session:
        assert reconcile(session, context.queue)["abandoned_cancelled"] == 1
    with context.db.session(readonly=True) as session:
        assert session.get(Match, twin).status == MatchStatus.CANCELLED
        assert session.get(Match, first).status == MatchStatus.FINISHED


def test_the_same_seed_regression_another_tournament_replayed_a_public_deal(context) -> None:
    """Bug: match seeds came from the key and the tournament seed alone, so a new tournament given an old
    one's seed (other bots, same game) was played on deals whose replays were already public. The deals
    now follow from what the tournament is too; only a true rerun (same bots and settings) repeats them."""
    with h.slow_bots(3, 0) as servers:
        bots = h.register_bots(context, servers, GAME)

        def seeds(body: dict) -> list[int]:
            tournament_id = h.start_tournament(context, {"game": GAME, "seats": 2, "seed": 7, **body})
            with context.db.session() as session:
                return list(session.scalars(select(Match.seed).where(Match.tournament_id == tournament_id)
                                            .order_by(Match.id)))

        first = seeds({"bots": bots[:2]})
        assert seeds({"bots": bots[:2]}) == first  # a rerun: the same deals
        assert set(seeds({"bots": bots[1:]})).isdisjoint(first)
        assert set(seeds({"bots": bots[:2], "params": {"supply": 40}})).isdisjoint(first)


def test_a_match_that_keeps_failing_is_given_up_so_its_deal_closes(context) -> None:
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, twin) = _deal_of_two(context, servers)
        assert run_match(context.db, context.settings, first, "w") == "recorded"
        with context.db.session() as session:  # as after MAX_ATTEMPTS plays that all crashed
            session.execute(update(Match).where(Match.id == twin).values(attempts=MAX_ATTEMPTS))
        assert run_match(context.db, context.settings, twin, "w") == "error"
    with context.db.session(readonly=True) as session:
        assert session.get(Match, twin).error == GAVE_UP
        assert session.get(Match, first).status == MatchStatus.FINISHED


def test_a_long_decision_regression_let_another_worker_replay_the_deal(context) -> None:
    """Bug: the lease was renewed only between steps, so a bot that thought for longer than the lease
    had the match claimed and started again by another worker, on the same deal, while it still played
    the first attempt. The lease is now renewed from a thread while the match plays."""
    slow_first = threading.Event()

    def act(request: dict) -> object:
        if re.fullmatch(r"m\d+a\d+", request["match_id"]) and not slow_first.is_set():  # a match, not a check
            slow_first.set()
            time.sleep(context.settings.match_lease_s * 1.5)  # longer than the lease, within the limit
        return request["legal_actions"][0]

    servers = [start_in_thread(Bot(name=f"b{i}", act=act, games=[GAME])) for i in range(2)]
    try:
        _tournament_id, (first, _twin) = _deal_of_two(context, servers)
        with context.db.session() as session:
            session.execute(update(Match).where(Match.id == first).values(time_limit_ms=10_000))
        played = threading.Thread(target=run_match, args=(context.db, context.settings, first, "w1"))
        played.start()
        assert slow_first.wait(10)
        time.sleep(context.settings.match_lease_s * 1.2)  # past the lease the first claim took
        with context.db.session() as session:
            assert not claim(session, first, "w2", context.settings.match_lease_s)
        played.join(60)
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).attempts == 1


def test_the_reconciler_publishes_a_deal_left_sealed_with_nothing_open(queued_context) -> None:
    """However a deal came to have sealed matches and none open (a crash between two transactions, a
    cancelled tournament's match put back in the queue by a failed play), the reconciler publishes it."""
    context = queued_context
    with h.slow_bots(2, 0) as servers:
        tournament_id, (first, twin) = _deal_of_two(context, servers)
        assert run_match(context.db, context.settings, first, "w") == "recorded"
    with context.db.session() as session:
        organizer = session.scalar(select(Account).where(Account.name == "organizer"))
        tournament_service.cancel_tournament(session, organizer, tournament_id, context.queue)
        session.execute(update(Match).where(Match.id == first).values(status=MatchStatus.SEALED))
        session.execute(update(Match).where(Match.id == twin).values(status=MatchStatus.QUEUED))  # re-queued
    with context.db.session() as session:
        assert reconcile(session, context.queue)["abandoned_cancelled"] == 1
    with context.db.session(readonly=True) as session:
        assert session.get(Match, twin).status == MatchStatus.CANCELLED
        assert session.get(Match, first).status == MatchStatus.FINISHED


def test_a_deal_with_a_void_and_a_played_twin_publishes_each_its_own_way(context) -> None:
    """The twins of a deal are published together (``publish_many``), the played ones through the rated
    recorders and the void ones (every seat forfeited before playing) through the void ones, in one pass:
    each ends with its own status, seats, faults and counters, and only the played one is rated."""
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, second) = _deal_of_two(context, servers)
        played, void = h.play_alone(context, servers, first), h.play_alone(context, servers, second)
    void["result"]["forfeited"] = [0, 1]
    for step in void["steps"]:
        for decision in step["decisions"]:
            decision["default"] = True
    void["faults"] = [{"seat": seat, "turn": 0, "path": "/start", "kind": "connection_error", "message": "refused",
                       "excerpt": "", "latency_ms": 3.0} for seat in (0, 1)]
    assert record(context.db, first, played) and record(context.db, second, void)
    with context.db.session(readonly=True) as session:
        status = dict(session.execute(select(Match.id, Match.status).where(Match.id.in_([first, second]))).all())
        assert status == {first: MatchStatus.FINISHED, second: MatchStatus.VOID}
        seats = {(s.match_id, s.seat): s for s in session.scalars(select(MatchSeat).where(
            MatchSeat.match_id.in_([first, second])))}
        assert all(seats[(second, seat)].rank is None and seats[(second, seat)].forfeited for seat in (0, 1))
        assert all(seats[(first, seat)].rank is not None for seat in (0, 1))
        faults = session.execute(select(Fault.match_id, Fault.kind)).all()
        expected = [(second, "connection_error")] * 2 + [(first, f["kind"]) for f in played["faults"]]
        assert sorted(faults) == sorted(expected)
        assert session.scalar(select(func.sum(LiveRating.games))) == 2  # the played match alone: one game each
        counted = dict(session.execute(select(MetricCounter.name, func.sum(MetricCounter.value))
                                       .group_by(MetricCounter.name)).all())
        assert counted["matches_played"] == 1  # the void match is no match played, but its faults count
        assert counted["bot_faults"] == 2 + len(played["faults"])


def test_a_deal_closed_by_its_last_match_is_read_once_and_written_in_one_round_trip(context) -> None:
    """The last twin recorded: its seal (with the board's lock), one read of the deal (statuses, the sealed
    twin's replay and bots, the tournament's open matches and, on PostgreSQL, the bots' live ratings), then
    every write of the publication pipelined (one round trip on PostgreSQL), then the tournament's end. The
    live Elo it starts from is exact: both deals' ratings equal the same updates done in Python."""
    from arena.ratings.live import LiveElo
    from arena.ratings.outcomes import MatchOutcome
    from arena.services.leaderboards import ranking_kind
    with h.slow_bots(2, 0) as servers:
        bots = h.register_bots(context, servers, GAME)
        for server, bot_id in zip(servers, bots, strict=True):
            server.bot_id = bot_id
        tournament_id = h.start_tournament(context, {"game": GAME, "bots": bots, "seats": 2, "cycles": 2, "seed": 3})
        with context.db.session() as session:
            ids = list(session.scalars(select(Match.id).where(Match.tournament_id == tournament_id)
                                       .order_by(Match.id)))
        assert len(ids) == 4  # two deals of two rotations
        replays = {match_id: h.play_alone(context, servers, match_id) for match_id in ids}
    postgres = context.db.url.startswith("postgresql")
    for match_id in ids[:3]:
        assert record(context.db, match_id, replays[match_id])
    with h.statements_sent(context.db.engine) as sent:
        assert record(context.db, ids[3], replays[ids[3]])
    sent = sent[sent.index(("UPDATE matches", False)):]  # from the seal (before it: SQLite's BEGIN, the URLs)
    alone = [statement for statement, piped in sent if not piped]
    piped = [statement for statement, piped in sent if piped]
    if postgres:
        assert alone == ["UPDATE matches", "SELECT matches", "UPDATE tournaments"], sent
        assert sorted(piped) == ["INSERT board_outcomes", "INSERT live_points", "INSERT live_ratings",
                                 "INSERT metric_counters", "INSERT tournament_pairs", "INSERT tournament_scores",
                                 "UPDATE match_seats", "UPDATE matches"], sent
    else:  # (the live ratings read apart: SQLite's JSON would round them; no round trips to save there)
        assert alone == ["UPDATE matches", "SELECT matches", "UPDATE matches", "SELECT live_ratings",
                         "UPDATE match_seats", "INSERT live_ratings", "INSERT live_points", "INSERT board_outcomes",
                         "INSERT tournament_scores", "INSERT tournament_pairs", "INSERT metric_counters",
                         "UPDATE tournaments"], sent
    elo = LiveElo()
    for match_id in ids:
        with context.db.session(readonly=True) as session:
            seats = list(session.scalars(select(MatchSeat.bot_id).where(MatchSeat.match_id == match_id)
                                         .order_by(MatchSeat.seat)))
        elo.update(MatchOutcome.from_result(seats, replays[match_id]["result"], ranking_kind(GAME)))
    with context.db.session(readonly=True) as session:
        stored = dict(session.execute(select(LiveRating.bot_id, LiveRating.elo)).all())
        assert tournament_service.get_tournament(session, tournament_id).status == "finished"
    assert stored == {bot: elo.rating(bot) for bot in bots}


def test_regression_an_error_from_a_worker_that_lost_its_claim_unsealed_a_match(context) -> None:
    """A worker whose set-up failed (``RulesError``) after its lease ran out and another worker had played and
    sealed the match marked it an error anyway (no claim in its UPDATE); and the twin's publication, which
    updates every match it read sealed in one pipelined UPDATE, would then have rated a match left in error.
    Now the error is written only while the claim holds, and the sealed match is published with its twin."""
    from datetime import timedelta

    from arena.services.matches import _mark_error
    from arena.storage.models import utcnow
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, twin) = _deal_of_two(context, servers)
        replays = {match_id: h.play_alone(context, servers, match_id) for match_id in (first, twin)}
    with context.db.session(autocommit=True) as session:
        assert claim(session, first, "w1", 30).attempts == 1
    with context.db.session() as session:  # w1's lease runs out
        session.execute(update(Match).where(Match.id == first).values(lease_until=utcnow() - timedelta(seconds=1)))
    with context.db.session(autocommit=True) as session:
        assert claim(session, first, "w2", 30).attempts == 2
    assert record(context.db, first, replays[first], claim=("w2", 2))  # sealed: the twin is still queued
    assert not _mark_error(context.db, first, "the rules refused it", "w1", 1)
    assert record(context.db, twin, replays[twin])
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.FINISHED
        assert session.get(Match, first).error is None
        assert session.scalar(select(func.count()).select_from(MatchSeat)
                              .where(MatchSeat.match_id == first, MatchSeat.rank.is_not(None))) == 2


def test_a_twin_sealed_here_is_published_from_the_replay_held_not_decompressed(context, monkeypatch) -> None:
    """A worker that sealed a match and then plays its twin publishes the deal from the replay it still holds
    (``replays.recall``): what it stored is not decompressed again."""
    from arena.storage import replays
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, twin) = _deal_of_two(context, servers)
        played = {match_id: h.play_alone(context, servers, match_id) for match_id in (first, twin)}
    assert record(context.db, first, played[first])  # sealed, remembered
    monkeypatch.setattr(replays, "decompress", lambda blob: (_ for _ in ()).throw(AssertionError("decompressed")))
    assert record(context.db, twin, played[twin])
    with context.db.session(readonly=True) as session:
        assert session.get(Match, first).status == MatchStatus.FINISHED
    assert _counts(context)["ranked_seats"] == 4


def test_a_replay_held_here_yields_to_the_one_another_attempt_stored(context) -> None:
    """The replay a worker remembers sealing is used only if the row still holds the bytes it stored: another
    worker's later attempt (this one's lease ran out) stored its own replay, and that one is published."""
    with h.slow_bots(2, 0) as servers:
        _tournament_id, (first, twin) = _deal_of_two(context, servers)
        played = {match_id: h.play_alone(context, servers, match_id) for match_id in (first, twin)}
    assert record(context.db, first, played[first])  # sealed, remembered
    ranks = [1, 2] if played[first]["result"]["ranks"] != [1, 2] else [2, 1]
    other = {**played[first], "result": {**played[first]["result"], "ranks": ranks}}
    with context.db.session() as session:  # the row as another attempt left it
        session.execute(update(Match).where(Match.id == first)
                        .values(result=other["result"], replay_gz=compress(other)))
    assert record(context.db, twin, played[twin])
    with context.db.session(readonly=True) as session:
        stored = session.scalars(select(MatchSeat.rank).where(MatchSeat.match_id == first).order_by(MatchSeat.seat))
        assert list(stored) == ranks != played[first]["result"]["ranks"]


def _vm_steps(session, read) -> int:  # type: ignore[no-untyped-def]
    """The SQLite virtual machine's steps that ``read`` takes (a count, not a clock: the same on any machine)."""
    from arena.storage.db import core

    driver = core(session).connection.dbapi_connection
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    driver.set_progress_handler(count, 1)
    try:
        read()
    finally:
        driver.set_progress_handler(None, 1)
    return steps[0]


def test_a_deals_read_does_not_grow_with_its_tournament_regression_every_record_read_the_whole_tournament(
        tmp_path) -> None:
    """The deal's statements asked for their rows in id order, and SQLite walked the tournament's index by id
    (which gives that order) through every match of the tournament to find the deal's two: a record of a
    tournament of 1,200 matches spent about 1 ms there (bench.worker_loop --cycles 100), and so did every match
    of a ladder, reading all it ever played. They now read the deal's index and are ordered after."""
    from sqlalchemy import insert

    from arena.composition import Context
    from arena.config import Settings
    from arena.services.publication import DEAL_COLUMNS, deal_query, deal_statuses
    from arena.storage.db import Database, core

    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    context = Context(settings=Settings(), db=db, queue=None, live=None)
    with h.slow_bots(2, 0) as servers:
        tournament_id, (first, twin) = _deal_of_two(context, servers)
    with db.session(readonly=True) as session:
        known = session.execute(select(*DEAL_COLUMNS).where(Match.id == first)).one()

    def steps() -> tuple[int, int]:
        with db.session(readonly=True) as session:
            statuses = _vm_steps(session, lambda: deal_statuses(session, first, tournament_id, None, known.seed))
            replays = _vm_steps(session, lambda: list(core(session).execute(*deal_query(False, first, known, {}))))
            assert [i for i, _ in deal_statuses(session, first, tournament_id, None, known.seed)] == [first, twin]
            return statuses, replays

    small = steps()
    with db.session() as session:  # 3,000 more matches of the tournament, other deals, played (the open ones
        # are counted, by design: ``publication.tournament_open``)
        row = {c.key: getattr(session.get(Match, first), c.key) for c in Match.__table__.columns if c.key != "id"}
        session.execute(insert(Match), [{**row, "seed": known.seed + 1 + n, "status": MatchStatus.FINISHED}
                                        for n in range(3000)])
    large = steps()
    assert all(after < before * 1.5 for before, after in zip(small, large, strict=True)), (small, large)


def test_every_kind_of_deal_is_found_by_its_seed_on_sqlite(tmp_path) -> None:
    """A ladder's deal as a tournament's (the test above): each deal statement searches the matches by owner and
    seed (the deal's index), never by owner alone (every match of the ladder or tournament)."""
    from sqlalchemy.dialects import sqlite

    from arena.services import publication
    from arena.storage.db import Database

    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    db.migrate()
    driver = db.engine.raw_connection()
    try:
        for statements in (publication._DEAL_STATUSES, publication._DEAL_REPLAYS):
            for kind in ("tournament", "ladder"):
                sql = re.sub(r"\(__\[POSTCOMPILE_\w+\]\)", "('queued', 'running')",
                             str(statements[kind].compile(dialect=sqlite.dialect())))
                plan = [row[3] for row in driver.execute("EXPLAIN QUERY PLAN " + sql, [1] * sql.count("?"))]
                assert f"{kind}_id=? AND seed=?" in plan[0], (kind, plan)
    finally:
        driver.close()
