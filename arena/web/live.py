"""``/live/<topic>``: server-sent events for a page that follows a match, a tournament or a leaderboard;
``/live/<topic>/last``: the same topic's latest event as JSON, for browsers that poll instead.

Everything a topic carries was made public by the worker that published it (``services.live_feed``), so
these views only relay: they read Redis, never the database. A stream holds a connection for up to
``ARENA_LIVE_STREAM_S`` (then the browser opens the next one): serve it from a process that holds idle
connections cheaply (gunicorn's gevent worker, ``deploy/gunicorn_live.conf.py``; the threaded server of
``arena up`` for a small arena). ``ARENA_LIVE_STREAMS`` caps the streams per process; past it, and
without Redis, ``/live/<topic>`` answers 503 and the page polls ``/live/<topic>/last``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from flask import Blueprint, Response, g

from arena.web.context import context

live = Blueprint("live", __name__)
TOPIC = re.compile(r"^(match-\d{1,18}|tournament-\d{1,18}|ladder-\d{1,18}|leaderboard-[a-z0-9-]{1,64}-\d{1,2})$")
PING_S = 15.0  # a comment line this often: proxies keep the connection, a gone browser is noticed
RETRY_MS = 3000
STREAM_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}  # nginx: pass each event at once


def _hub():  # type: ignore[no-untyped-def]
    bus = context().live
    return None if bus is None else bus.hub


def live_seq(topic: str) -> int | None:
    """The topic's event counter, read once per request. A page that follows a topic calls it before it
    reads the database, and carries it (``data-live-seq``): a later event, even one the stream only
    replays as the topic's kept event when it connects a moment after the page loaded, is then newer
    than the page, and the page refreshes. Regression: the tournament page ignored the kept event as
    older than the page, so a tournament that ended between render and connect never showed as ended."""
    known = g.setdefault("live_seqs", {})
    if topic not in known:
        hub = _hub()
        known[topic] = None if hub is None else hub.seq(topic)
    return known[topic]


def _unavailable(reason: str) -> Response:
    return Response(reason + "\n", status=503, mimetype="text/plain",
                    headers={"Retry-After": "30", "Cache-Control": "no-store"})


@live.get("/live/<topic>")
def stream(topic: str) -> Response:
    if not TOPIC.match(topic):
        return Response("no such topic\n", status=404, mimetype="text/plain")
    hub = _hub()
    if hub is None:
        return _unavailable("live events need Redis; poll /live/<topic>/last")
    listener = hub.open(topic)
    if listener is None:
        return _unavailable("this process follows as many spectators as it may; poll /live/<topic>/last")
    lifetime = context().settings.live_stream_s

    def events() -> Iterator[bytes]:
        try:
            yield f"retry: {RETRY_MS}\n\n".encode()
            kept = hub.kept_frame(topic)
            if kept is not None:
                yield kept
            ends = time.monotonic() + lifetime
            while time.monotonic() < ends:
                taken = listener.take(min(PING_S, max(0.0, ends - time.monotonic())))
                if listener.lagged:  # it fell behind: what it missed is in the kept event
                    listener.lagged = False
                    kept = hub.kept_frame(topic)
                    if kept is not None:
                        yield kept
                    continue
                if not taken:
                    yield b": ping\n\n"
                    continue
                yield taken[0] if len(taken) == 1 else b"".join(taken)  # frames, made once for every spectator
        finally:
            hub.close(listener)

    return Response(events(), mimetype="text/event-stream", headers=STREAM_HEADERS, direct_passthrough=True)


@live.get("/live/<topic>/last")
def last(topic: str) -> Response:
    if not TOPIC.match(topic):
        return Response("no such topic\n", status=404, mimetype="text/plain")
    hub = _hub()
    if hub is None:
        return _unavailable("live events need Redis")
    kept = hub.last(topic, recent=False)
    if kept is None:
        return Response(status=204, headers={"Cache-Control": "no-store"})
    kind, _, body = kept.partition(b"\n")
    return Response(b'{"kind":"' + kind + b'","data":' + body + b"}", mimetype="application/json",
                    headers={"Cache-Control": "no-store"})
