"""Live events end to end on a real Redis: a worker's publisher, a web process's hub, the ``/live/<topic>``
stream (server-sent events) and ``/live/<topic>/last`` that browsers without a stream poll."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace

import orjson
import pytest

from arena.composition import Context
from arena.runtime.live_bus import LiveBus
from arena.runtime.queue import MatchQueue, connect


@pytest.fixture
def live_context(database, settings, redis_url) -> Iterator[Context]:
    """A queue name of its own: Redis's channels are shared by all its databases, so with the default name
    this test's spectators also heard the workers of tests running beside it (another pytest-xdist worker
    announcing its own match 5 failed ``test_a_spectator_gets_the_kept_board_first_then_every_event_in_order``)."""
    settings = replace(settings, redis_url=redis_url, live_stream_s=2, live_streams=3,
                       queue_name=f"arena-live-{uuid.uuid4().hex[:8]}")
    redis = connect(redis_url)
    bus = LiveBus(redis, settings.queue_name, settings.live_streams)
    yield Context(settings=settings, db=database, queue=MatchQueue(redis, settings), live=bus)
    bus.close()
    redis.close()


@pytest.fixture
def live_client(live_context):
    from arena.web import create_app

    return create_app(context=live_context).test_client()


def read_events(response, until: float) -> list[tuple[str, str, dict]]:
    """``(id, event, data)`` of every event the stream sent before it ended."""
    text = b"".join(response.response).decode()
    events = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "event" in fields:
            events.append((fields["id"], fields["event"], json.loads(fields["data"])))
    assert time.monotonic() < until
    return events


def test_a_spectator_gets_the_kept_board_first_then_every_event_in_order(live_context, live_client) -> None:
    bus = live_context.live
    bus.publish("match-5", "board", {"match": 5, "turn": 3}, keep=True)
    assert bus.publisher.flush()
    response = live_client.get("/live/match-5", buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    assert response.headers["X-Accel-Buffering"] == "no" and response.headers["Cache-Control"] == "no-store"

    def later() -> None:
        time.sleep(0.3)
        for turn in (4, 5):
            bus.publish("match-5", "step", {"match": 5, "turn": turn})
        bus.publish("match-6", "step", {"match": 6, "turn": 1})  # another topic: not sent here

    threading.Thread(target=later).start()
    events = read_events(response, time.monotonic() + 10)
    assert [(i, e, d["turn"]) for i, e, d in events] == [("k", "board", 3), ("l", "step", 4), ("l", "step", 5)]
    seqs = [d["seq"] for _, _, d in events]
    assert seqs == sorted(seqs)
    assert bus.hub.open_streams == 0  # the stream ended (ARENA_LIVE_STREAM_S) and let its place go


def test_polling_reads_the_kept_event(live_context, live_client) -> None:
    assert live_client.get("/live/tournament-2/last").status_code == 204
    live_context.live.publish("tournament-2", "changed", {"tournament": 2}, keep=True)
    assert live_context.live.publisher.flush()
    body = live_client.get("/live/tournament-2/last").get_json()
    assert body["kind"] == "changed" and body["data"]["tournament"] == 2 and body["data"]["seq"] >= 1


def test_a_full_process_or_no_redis_sends_spectators_to_polling(live_context, live_client, client) -> None:
    hub = live_context.live.hub
    held = [hub.open("match-1") for _ in range(3)]
    try:
        full = live_client.get("/live/match-1")
        assert full.status_code == 503 and "poll" in full.get_data(as_text=True)
    finally:
        for listener in held:
            hub.close(listener)
    assert client.get("/live/match-1").status_code == 503  # the plain context: no Redis
    assert live_client.get("/live/nonsense").status_code == 404
    assert live_client.get("/live/match-1%0aevent:%20x/last").status_code == 404


def test_a_spectator_that_falls_behind_is_sent_the_kept_board_instead(live_context) -> None:
    from arena.runtime.live_bus import BACKLOG

    hub = live_context.live.hub
    listener = hub.open("match-8")
    try:
        for n in range(BACKLOG + 5):
            listener.put(f"id: l\nevent: step\ndata: {{\"seq\":{n}}}\n\n".encode())
        assert listener.lagged and len(listener.take(0.1)) <= 5
    finally:
        hub.close(listener)


def test_a_tournament_that_ended_between_render_and_connect_regression_never_showed_as_ended(
        live_context, live_client) -> None:
    """The tournament page took the kept event its stream replays on connecting (a second after the page
    loaded) for older than the page, so a tournament that ended in that second stayed "running" on screen.
    The page now carries the topic's counter as it was before the page read the database."""
    import re

    from sample_bots.random_bot import make_bot
    from sample_bots.sdk import start_in_thread
    from tests.arena import service_harness as h

    servers = [start_in_thread(make_bot(i)) for i in range(3)]
    try:
        bots = h.register_bots(live_context, servers, "piranha-pedro")
        tournament_id = h.start_tournament(live_context, {"game": "piranha-pedro", "bots": bots, "seats": 3})
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    bus = live_context.live
    bus.publish(f"tournament-{tournament_id}", "changed", {"tournament": tournament_id}, keep=True)
    assert bus.publisher.flush()
    html = live_client.get(f"/tournaments/{tournament_id}").get_data(as_text=True)
    seq = int(re.search(r'data-live-seq="(\d+)"', html).group(1))
    bus.publish(f"tournament-{tournament_id}", "changed", {"tournament": tournament_id}, keep=True)  # after render
    assert bus.publisher.flush()
    kept = live_client.get(f"/live/tournament-{tournament_id}/last").get_json()
    assert kept["data"]["seq"] > seq  # live.js refreshes on it instead of ignoring it


def test_events_sent_together_keep_their_order_also_after_redis_restarted(tmp_path) -> None:
    """The publisher sends what queued up meanwhile in one round trip (one call of its script, in order);
    a Redis that restarted has forgotten the script, and the batch is sent again once it is loaded."""
    from arena.runtime.live_bus import PREFIX, LivePublisher
    from tests.arena.service_harness import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    redis = connect(server.url)
    publisher = LivePublisher(redis, "q")
    channel = PREFIX.format(queue="q") + "match-9"
    try:
        for restart in (False, True):
            if restart:
                server.stop()
                server.start()
                redis.ping()  # the pool's connections reconnect
            pubsub = redis.pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(channel)
            pubsub.get_message(timeout=1)  # subscribed
            publisher._send([("match-9", "step", orjson.dumps({"turn": n}), n % 7 == 0, True) for n in range(50)])
            for n in range(50, 100):  # and through the thread, as they come
                publisher.publish("match-9", "step", {"turn": n})
            assert publisher.flush()
            turns: list[int] = []
            deadline = time.monotonic() + 5
            while len(turns) < 100 and time.monotonic() < deadline:
                message = pubsub.get_message(timeout=0.5)
                if message:
                    turns.append(json.loads(message["data"].split(b"\n", 1)[1])["turn"])
            pubsub.close()
            assert turns == list(range(100)) and publisher.dropped == 0
            assert int(redis.get(channel + ":seq")) == 100
    finally:
        publisher.close()
        redis.close()
        server.stop()


def test_a_batch_of_many_topics_counts_keeps_and_sends_each_topics_events_apart(tmp_path) -> None:
    """One call carries events of many topics (each topic's keys once, each event one argument naming its
    topic's place among them): each topic counts its own events, keeps only what is kept and publishes
    only what is sent, kind and JSON intact; twelve topics, so a place takes two digits."""
    from arena.runtime.live_bus import PREFIX, LivePublisher
    from tests.arena.service_harness import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    redis = connect(server.url)
    publisher = LivePublisher(redis, "q")
    prefix = PREFIX.format(queue="q")
    topics = [f"match-{n}" for n in range(12)]
    try:
        pubsub = redis.pubsub(ignore_subscribe_messages=True)
        pubsub.psubscribe(prefix + "match-*")
        pubsub.get_message(timeout=1)  # subscribed
        events = [(topics[n % 12], "deal ended" if n % 5 == 0 else "step",
                   orjson.dumps({"n": n, "text": "a line\nand {braces}"}), n % 5 == 1, (n // 12) % 2 == 0 or n % 7 == 0)
                  for n in range(60)]  # (flags that differ between a topic's events)
        publisher._send(events)
        published: list[tuple[str, bytes]] = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(published) < sum(event[4] for event in events):
            message = pubsub.get_message(timeout=0.5)
            if message:
                published.append((message["channel"].decode()[len(prefix):], message["data"]))
        pubsub.close()
        expected, kept = [], {}
        for n, (topic, kind, _body, keep, send) in enumerate(events):
            seq = n // 12 + 1  # the topic's own count
            message = kind.encode() + b"\n" + orjson.dumps({"seq": seq, "n": n, "text": "a line\nand {braces}"})
            if send:
                expected.append((topic, message))
            if keep:
                kept[topic] = message  # its last kept event
        assert published == expected
        for topic in topics:
            assert int(redis.get(prefix + topic + ":seq")) == 5
            assert redis.get(prefix + topic + ":last") == kept.get(topic)
            assert topic not in kept or 0 < redis.ttl(prefix + topic + ":last") <= 3600
            assert 0 < redis.ttl(prefix + topic + ":seq") <= 3600
    finally:
        publisher.close()
        redis.close()
        server.stop()


def test_a_fast_matchs_events_go_out_in_batches_regression_a_round_trip_per_event(tmp_path) -> None:
    """Events a millisecond apart (a fast match's steps) were each sent alone: a Redis round trip per event,
    4 ms of the publisher's CPU per Pajarracos match, taken from the referee's GIL. A batch now waits
    ``LINGER_S`` after its first event, so batches start at least that far apart, whatever the load."""
    from arena.runtime.live_bus import LINGER_S, LivePublisher
    from tests.arena.service_harness import RedisServer

    server = RedisServer(tmp_path)
    server.start()
    redis = connect(server.url)
    publisher = LivePublisher(redis, "q")
    sends: list[int] = []
    send = publisher._send
    publisher._send = lambda events: (sends.append(len(events)), send(events))[1]  # type: ignore[method-assign]
    try:
        first = time.monotonic()
        for n in range(40):
            publisher.publish("match-9", "step", {"turn": n})
            time.sleep(0.001)
        span = time.monotonic() - first
        assert publisher.flush() and sum(sends) == 40 and publisher.dropped == 0
        assert len(sends) <= span / LINGER_S + 1, (sends, span)  # sent one by one, it was about 40
        assert int(redis.get("arena:q:live:match-9:seq")) == 40
    finally:
        publisher.close()
        redis.close()
        server.stop()


def test_silent_redis_regression_a_tournament_page_waited_out_the_cut() -> None:
    """Found by the cluster test (web host cut off from db, where Redis runs): a tournament page read its
    topic's event counter on the 30 s connection and answered 26.7 s later, after the heal. A page's reads
    of the counter and the kept event now give up after ``READ_TIMEOUT_S`` (the page then polls)."""
    import socket

    from redis import Redis

    from arena.runtime.live_bus import READ_TIMEOUT_S

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts (the kernel does) and never answers: a server whose answers are lost
    try:
        redis = Redis(host="127.0.0.1", port=silent.getsockname()[1], socket_timeout=30, socket_connect_timeout=10)
        bus = LiveBus(redis, "silent-test", max_streams=4)
        started = time.monotonic()
        assert bus.hub.seq("tournament-1") is None
        assert bus.hub.last("tournament-1") is None
        took = time.monotonic() - started
    finally:
        silent.close()
    assert took < 4 * READ_TIMEOUT_S + 1, f"the reads waited {took:.1f} s"


def test_a_board_only_kept_and_kept_again_later_in_the_batch_never_reaches_redis(tmp_path) -> None:
    """Each step of a watched match queues its change (sent) and its whole board (only kept, for newcomers);
    a batch carries many steps, and each kept board replaces the one before it as the batch runs. Those
    replaced in the same batch are no longer sent to Redis: spectators get every sent event in order, the
    kept event is the batch's last, and a board both sent and kept always goes."""
    from arena.runtime.live_bus import PREFIX, LivePublisher, superseded_keeps_dropped
    from tests.arena.service_harness import RedisServer

    def board(turn: int) -> bytes:
        return orjson.dumps({"turn": turn, "view": "whole"})

    events = [("match-1", "board", board(0), True, True)]  # sent and kept
    for turn in range(1, 21):
        events += [("match-1", "step", orjson.dumps({"turn": turn}), False, True),
                   ("match-1", "board", board(turn), True, False)]
        if turn == 10:
            events.append(("match-2", "board", board(99), True, False))  # another topic's, alone: kept
            events.append(("match-1", "board", board(turn), True, True))  # sent and kept: goes
    wanted = superseded_keeps_dropped(events)
    assert [e for e in events if e[4]] == [e for e in wanted if e[4]]  # every sent event, in order
    assert [e for e in wanted if not e[4]] == [events[-1], ("match-2", "board", board(99), True, False)][::-1]
    server = RedisServer(tmp_path)
    server.start()
    redis = connect(server.url)
    publisher = LivePublisher(redis, "q")
    prefix = PREFIX.format(queue="q")
    try:
        pubsub = redis.pubsub(ignore_subscribe_messages=True)
        pubsub.psubscribe(prefix + "match-*")
        pubsub.get_message(timeout=1)  # subscribed
        publisher._send(events)
        heard: list[dict] = []
        deadline = time.monotonic() + 5
        while len(heard) < 22 and time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.5)
            if message:
                heard.append(json.loads(message["data"].split(b"\n", 1)[1]))
        pubsub.close()
        assert [event.get("turn") for event in heard] == [0, *range(1, 11), 10, *range(11, 21)]
        assert [event["seq"] for event in heard] == sorted({event["seq"] for event in heard})
        last = orjson.loads(redis.get(prefix + "match-1:last").split(b"\n", 1)[1])
        assert last["turn"] == 20 and last["seq"] == heard[-1]["seq"] + 1  # the batch's last board, counted after
        assert int(redis.get(prefix + "match-1:seq")) == 23  # 22 sent and 1 kept: the 19 replaced never went
        assert orjson.loads(redis.get(prefix + "match-2:last").split(b"\n", 1)[1])["turn"] == 99
    finally:
        publisher.close()
        redis.close()
        server.stop()
