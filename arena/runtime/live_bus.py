"""Live events through Redis pub/sub: workers publish, every web process fans them out to its spectators.

Keys, per queue (arenas may share a Redis), for a topic such as ``match-12`` or ``tournament-3``:

    arena:{queue}:live:{topic}        the channel
    arena:{queue}:live:{topic}:last   the last kept event: what a spectator who arrives now is sent first
    arena:{queue}:live:{topic}:seq    the topic's event counter

A message is ``kind`` and the event's JSON (which carries ``seq``) on two lines. Only public events are
ever published (``arena.services.live_feed`` decides what is public), so nothing here filters.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from typing import Any

import orjson
from redis import Redis
from redis.exceptions import RedisError

from arena.runtime.queue import impatient

log = logging.getLogger("arena.live")
PREFIX = "arena:{queue}:live:"
KEEP_S = 3600  # a kept event (and a topic's counter) outlives a quiet hour, no more
BACKLOG = 256  # events waiting for one slow spectator before it is sent the kept event instead
READERS = 16  # kept-event reads at once per process: a crowd arriving together must not drain the Redis pool
BATCH = 256  # events sent in one round trip at most
LINGER_S = 0.025  # a batch waits this long after its first event for more (a fast match's steps come ~0.5 ms apart)
READ_TIMEOUT_S = 1.0  # a page's read of a topic's counter or kept event gives up after this
KEPT_FRESH_S = 0.05  # a kept event read this recently is served again (a crowd on one topic costs one read)
QueuedEvent = tuple[str, str, bytes, bool, bool]  # an event as the publisher queues it: topic, kind, JSON, keep, send

# A batch of events in one call, in order: for each, count it, splice the count into its JSON, keep it
# and/or publish it. One call per batch, not one per event: redis-py's own work per command was most of
# the publishing thread's CPU (bench.worker_loop). And one argument per event (its flags, its topic's place
# among the keys, its kind, its JSON), each topic's three keys once: redis-py encodes every argument on its
# own, and eight an event (three keys, five arguments) cost it more than the call's round trip.
#   KEYS: per topic, its channel, counter and kept event      ARGV[1]: how long a kept event and counter live
#   ARGV[2..]: "<keep 0|1><send 0|1><topic's number, from 1> <kind>\n<the event's JSON object>"
_PUBLISH = """
local n = 0
for i = 2, #ARGV do
  local event = ARGV[i]
  local space = string.find(event, ' ', 3, true)
  local newline = string.find(event, '\\n', space, true)
  local k = tonumber(string.sub(event, 3, space - 1)) * 3
  n = redis.call('INCR', KEYS[k - 1])
  redis.call('EXPIRE', KEYS[k - 1], ARGV[1])
  local message = string.sub(event, space + 1, newline) .. '{"seq":' .. n .. ',' .. string.sub(event, newline + 2)
  if string.byte(event, 1) == 49 then redis.call('SET', KEYS[k], message, 'EX', ARGV[1]) end
  if string.byte(event, 2) == 49 then redis.call('PUBLISH', KEYS[k - 2], message) end
end
return n
"""


def sse_frame(message: bytes, kept: bool = False) -> bytes:
    """One published message (``kind`` and JSON on two lines) as a server-sent event; its id says whether
    it is the topic's kept event (``k``: what was true before this stream began) or a new one (``l``)."""
    kind, _, body = message.partition(b"\n")
    return b"id: " + (b"k" if kept else b"l") + b"\nevent: " + kind + b"\ndata: " + body + b"\n\n"


class LivePublisher:
    """Publishing that never slows a match: events go through a bounded in-process queue to a thread that
    talks to Redis. With Redis slow or away, events are dropped (and counted), never waited for."""

    def __init__(self, redis: Redis, queue_name: str, capacity: int = 10_000) -> None:
        self.redis, self.prefix = redis, PREFIX.format(queue=queue_name)
        self._queue: queue.Queue[QueuedEvent | None] = queue.Queue(capacity)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._script = redis.register_script(_PUBLISH)
        self.dropped = 0

    def publish(self, topic: str, kind: str, data: dict[str, Any], keep: bool = False, send: bool = True) -> None:
        """Queue one event; ``data`` must be a non-empty JSON object (``seq`` is added to it). ``keep``: also
        the topic's kept event; ``send=False``: only that."""
        self._start()
        try:
            self._queue.put_nowait((topic, kind, orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS), keep, send))
        except queue.Full:
            self.dropped += 1

    def close(self) -> None:
        """Send what is queued, then end the thread."""
        if self._thread is not None:
            self.flush()
            self._queue.put(None)
            self._thread.join(timeout=5)

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Wait until every queued event went out (tests, benchmarks, a worker about to exit)."""
        deadline = time.monotonic() + timeout_s
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.002)
        return not self._queue.unfinished_tasks

    def _start(self) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="arena-live-publisher", daemon=True)
                    self._thread.start()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            # What comes within LINGER_S goes out with it: sent as they came, a fast match's events cost a
            # round trip each, 4 ms of this thread's CPU per Pajarracos match, taken from the referee's GIL.
            # Spectators see each event at most LINGER_S later: 25 ms, under a frame of a 30 Hz screen. At 5 ms a
            # Piranha Pedro match (about 10 ms here) took two or three round trips of this thread, each a wake-up
            # and 100-200 us of its CPU on a loaded 2-core host; at 25 ms a round trip serves two or three matches.
            # One sleep, then what came is taken without waiting: waiting for each event woke this thread once an
            # event, each wake-up taking the interpreter's lock from the referee (bench.worker_loop: with the
            # packing in _send, the CPU of the worker's other threads went from 1.33 to 1.09 ms a Piranha Pedro match).
            if batch[-1] is not None and self._queue.qsize() < BATCH - 1:  # (a full batch waiting goes at once)
                time.sleep(LINGER_S)
            while len(batch) < BATCH and batch[-1] is not None:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            events = [item for item in batch if item is not None]
            try:
                self._send(events)
            except (RedisError, OSError) as exc:
                self.dropped += len(events)
                log.debug("live events dropped: %s", exc)
            finally:
                for _ in batch:
                    self._queue.task_done()
            if len(events) < len(batch):
                return

    def _send(self, events: list[QueuedEvent]) -> None:
        """The events in order, in one round trip and one script call (a step's event and its kept board
        come together, and a worker's events cost Redis one round trip per batch, not each)."""
        if not events:  # (the thread told to end, nothing with it)
            return
        keys: list[str] = []
        places: dict[str, int] = {}
        args: list[Any] = [KEEP_S]
        for topic, kind, body, keep, send in superseded_keeps_dropped(events):
            place = places.get(topic)
            if place is None:
                place = places[topic] = len(places) + 1
                channel = self.prefix + topic
                keys += [channel, channel + ":seq", channel + ":last"]
            args.append(f"{'1' if keep else '0'}{'1' if send else '0'}{place} {kind}\n".encode() + body)
        self._script(keys=keys, args=args)  # (loads the script again into a restarted Redis that forgot it)


def superseded_keeps_dropped(events: list[QueuedEvent]) -> list[QueuedEvent]:
    """The events, less those only kept (not sent) whose topic keeps a later one in the same batch: a kept event
    replaces the one before it as the batch runs, so nobody could ever read those."""
    kept_later: set[str] = set()
    wanted = []
    for event in reversed(events):
        topic, _kind, _body, keep, send = event
        if keep:
            if not send and topic in kept_later:
                continue
            kept_later.add(topic)
        wanted.append(event)
    wanted.reverse()
    return wanted


class Listener:
    """One spectator's connection: the events for its topic as server-sent event frames (made once per
    event for every listener), in order, or a note that it fell behind."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.events: collections.deque[bytes] = collections.deque()
        self.lagged = False
        self.ready = threading.Event()

    def put(self, message: bytes) -> None:
        if len(self.events) >= BACKLOG:
            self.events.clear()
            self.lagged = True
        self.events.append(message)
        self.ready.set()

    def take(self, timeout_s: float) -> list[bytes]:
        """The events that arrived (waiting up to ``timeout_s`` for one); empty on a timeout."""
        if not self.events and not self.ready.wait(timeout_s):
            return []
        self.ready.clear()
        taken = []
        while self.events:
            taken.append(self.events.popleft())
        return taken


class LiveHub:
    """One Redis subscription per web process (a pattern over every topic of this arena) fanned out to the
    spectators connected to it: a thousand spectators cost one Redis connection and one thread (a greenlet
    under gevent), not a thousand. ``max_streams`` bounds the open streams; past it spectators poll."""

    def __init__(self, redis: Redis, queue_name: str, max_streams: int) -> None:
        self.redis, self.prefix, self.max_streams = redis, PREFIX.format(queue=queue_name), max_streams
        # A page's counter and kept event are hints (a page without them polls): read within READ_TIMEOUT_S.
        # On the subscription's connection (30 s) a tournament page begun as the web host lost Redis waited
        # through the whole cut and the server's retransmissions after it: 26.7 s (the cluster test).
        self._reads = impatient(redis, READ_TIMEOUT_S, READERS)
        self._listeners: dict[str, set[Listener]] = {}
        self._count = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._subscribed = threading.Event()
        self._stopping = threading.Event()
        self._readers = threading.BoundedSemaphore(READERS)
        self._kept: dict[str, tuple[float, bytes | None]] = {}

    def open(self, topic: str) -> Listener | None:
        """A listener for ``topic``, subscribed before it returns; None when this process is full."""
        with self._lock:
            if self._count >= self.max_streams:
                return None
            listener = Listener(topic)
            self._listeners.setdefault(topic, set()).add(listener)
            self._count += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="arena-live-hub", daemon=True)
                self._thread.start()
        self._subscribed.wait(5.0)
        return listener

    def close(self, listener: Listener) -> None:
        with self._lock:
            group = self._listeners.get(listener.topic)
            if group is not None and listener in group:
                group.discard(listener)
                self._count -= 1
                if not group:
                    del self._listeners[listener.topic]

    @property
    def open_streams(self) -> int:
        return self._count

    def kept_frame(self, topic: str) -> bytes | None:
        """The topic's kept event as a server-sent event (``id: k``)."""
        kept = self.last(topic)
        return None if kept is None else sse_frame(kept, kept=True)

    def seq(self, topic: str) -> int | None:
        """The topic's event counter now (0 before its first event); None when Redis cannot say."""
        try:
            value = self._reads.get(self.prefix + topic + ":seq")
        except (RedisError, OSError) as exc:
            log.warning("event counter of %s unread: %s", topic, exc)
            return None
        return int(value) if value is not None else 0

    def last(self, topic: str, recent: bool = True) -> bytes | None:
        """The topic's kept event, raw; None when there is none or Redis cannot say now. ``recent``: one read
        within ``KEPT_FRESH_S`` will do (streams opening together); polling asks Redis every time."""
        cached = self._kept.get(topic) if recent else None
        if cached is not None and time.monotonic() - cached[0] < KEPT_FRESH_S:
            return cached[1]
        with self._readers:
            cached = self._kept.get(topic) if recent else None  # another spectator may have read it meanwhile
            if cached is not None and time.monotonic() - cached[0] < KEPT_FRESH_S:
                return cached[1]
            try:
                value = self._reads.get(self.prefix + topic + ":last")
            except (RedisError, OSError) as exc:
                log.warning("kept event of %s unread: %s", topic, exc)
                return None
        kept = value if value is None or isinstance(value, bytes) else str(value).encode()
        if len(self._kept) > 10_000:
            self._kept.clear()
        self._kept[topic] = (time.monotonic(), kept)
        return kept

    def stop(self) -> None:
        """End the subscription (within a second); open streams get nothing more."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopping.is_set():
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.psubscribe(self.prefix + "*")
                pubsub.get_message(timeout=1.0)  # the subscription's confirmation
                self._subscribed.set()
                while not self._stopping.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message is not None and message["type"] == "pmessage":
                        self._deliver(message["channel"], message["data"])
            except (RedisError, OSError) as exc:
                log.warning("live subscription lost (%s); again in 1 s", exc)
                self._stopping.wait(1.0)
            finally:
                pubsub.close()

    def _deliver(self, channel: bytes | str, data: bytes | str) -> None:
        name = channel.decode() if isinstance(channel, bytes) else channel
        with self._lock:
            listeners = list(self._listeners.get(name[len(self.prefix):], ()))
        if listeners:
            frame = sse_frame(data if isinstance(data, bytes) else data.encode())
            for listener in listeners:
                listener.put(frame)


class LiveBus:
    """What the composition hands out: a publisher (workers) and a hub (web processes), each started on
    first use, so a process that only publishes never subscribes and the other way round."""

    def __init__(self, redis: Redis, queue_name: str, max_streams: int) -> None:
        self.publisher = LivePublisher(redis, queue_name)
        self.hub = LiveHub(redis, queue_name, max_streams)

    def publish(self, topic: str, kind: str, data: dict[str, Any], keep: bool = False) -> None:
        self.publisher.publish(topic, kind, data, keep)

    def keep(self, topic: str, kind: str, data: dict[str, Any]) -> None:
        self.publisher.publish(topic, kind, data, keep=True, send=False)

    def flush(self, timeout_s: float = 5.0) -> bool:
        """Send what is queued (a worker about to exit: its last events wait out ``LINGER_S`` otherwise, and a
        daemon thread dies with the process)."""
        return self.publisher.flush(timeout_s)

    def close(self) -> None:
        self.publisher.close()
        self.hub.stop()
