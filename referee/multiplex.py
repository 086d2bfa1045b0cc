"""Calls on kept-alive connections, all carried by the caller's thread over non-blocking sockets.

A thread per seat costs two context switches per call, and the threads then contend for the interpreter
lock while they read; ``http.client`` parses every answer's headers with the ``email`` package. Here
every request is written at once, the answers are read as they come with one ``poll`` and parsed by
``referee.http_wire``. The threaded path's guarantees hold: the poll never waits past the earliest
deadline and a call past its own is cut (``timeout``); the body cap is checked after every read; a
fault closes the connection; a connection is kept only after a complete, well-framed answer with
nothing after it; fault kinds and messages are the same. New connections (URL guard, name resolution,
connect, TLS) stay on the threaded path, which also takes a kept connection the bot closed while idle.
"""

from __future__ import annotations

import select
import socket
import time

from referee.bot_client import (
    Call,
    Reply,
    complete_reply,
    declared_too_large,
    no_time_fault,
    status_fault,
    timeout_fault,
    too_large,
    unexpected_fault,
)
from referee.http_wire import ResponseParser

RECV = 65536
POLL_IN = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP
POLL_OUT = select.POLLOUT | select.POLLERR | select.POLLHUP
FD_SETSIZE = 1024  # select() takes descriptors below this only
EVIDENCE = 200  # body bytes kept as a fault's evidence (what the threaded path reads of a non-2xx answer)


class _Job:
    """One call in flight on a kept connection."""

    __slots__ = ("call", "deadline", "declared_checked", "headers_ms", "message", "parser", "sent", "sock", "t0")

    def __init__(self, call: Call, sock: socket.socket, message: bytes, t0: float, deadline: float) -> None:
        self.call, self.sock, self.message = call, sock, memoryview(message)
        self.t0, self.deadline = t0, deadline
        self.sent = 0
        self.parser = ResponseParser(call.method)
        self.headers_ms: float | None = None
        self.declared_checked = False


def claim(calls: dict[int, Call]) -> tuple[dict[int, tuple[Call, socket.socket]], dict[int, Call]]:
    """Split ``calls`` into those this module carries (an idle kept-alive plain connection, the seat's
    client held) and the rest. One ``poll`` tells which kept connections the bot closed (or spoke on)
    while idle: those are closed here and their calls left to the threaded path, which reconnects."""
    kept: dict[int, tuple[Call, socket.socket]] = {}
    rest: dict[int, Call] = {}
    for seat, call in calls.items():
        sock = call.client.session.kept_socket()
        if sock is not None and call.client.hold():
            kept[seat] = (call, sock)
        else:
            rest[seat] = call
    if not kept:
        return kept, rest
    poller = select.poll()
    by_fd: dict[int, int] = {}
    dropped: list[int] = []
    for seat, (_call, sock) in kept.items():
        try:
            fd = sock.fileno()
            poller.register(fd, POLL_IN)
            by_fd[fd] = seat
        except (OSError, ValueError):  # closed meanwhile
            dropped.append(seat)
    dropped += [by_fd[fd] for fd, _events in poller.poll(0)]
    for seat in dropped:
        call, _sock = kept.pop(seat)
        call.client.session.close()
        call.client.unhold()
        rest[seat] = call
    return kept, rest


def carry(kept: dict[int, tuple[Call, socket.socket]]) -> dict[int, Reply]:
    """Make the claimed calls, each returning by its own deadline whatever its bot does."""
    replies: dict[int, Reply] = {}
    try:
        _carry(kept, replies)
    except Exception as exc:  # the last line of defence, as on the threaded path: never a crash, no seat held
        for seat, (call, _sock) in kept.items():
            if seat not in replies:
                failure = unexpected_fault(exc, time.perf_counter())
                _finish(replies, seat, call, failure, keep=False, complete=False)
    return {seat: replies[seat] for seat in kept}


def release(kept: dict[int, tuple[Call, socket.socket]]) -> None:
    """Let go of claimed calls that will not be carried (an error before ``carry``)."""
    for call, _sock in kept.values():
        call.client.unhold()


def _carry(kept: dict[int, tuple[Call, socket.socket]], replies: dict[int, Reply]) -> None:
    jobs: dict[int, _Job] = {}
    seats: dict[int, int] = {}
    poller = select.poll()
    for seat, (call, sock) in kept.items():
        t0 = time.perf_counter()
        deadline = t0 + max(call.budget_s, 0.0)
        try:
            if call.budget_s <= 0:
                reply = no_time_fault(t0)
                _finish(replies, seat, call, reply, keep=True, complete=True)  # nothing was sent
                continue
            job = _Job(call, sock, call.client.session.message(call.method, call.path, call.body, call.headers),
                       t0, deadline)
            call.client.tracker.started(sock)
            if sock.gettimeout() != 0.0:  # left non-blocking by the connection's previous call here
                sock.setblocking(False)
            job.sent = _send(sock, job.message)
            fd = sock.fileno()
            poller.register(fd, POLL_IN if job.sent == len(job.message) else POLL_OUT)
        except Exception as exc:  # a closed socket, a header with a line break: the threaded path's faults
            _finish(replies, seat, call, call.client.network_fault(exc, t0, deadline), keep=False, complete=False)
            continue
        jobs[fd], seats[fd] = job, seat
    while jobs:
        now = time.perf_counter()
        for fd in [fd for fd, job in jobs.items() if job.deadline <= now]:
            job = jobs.pop(fd)
            poller.unregister(fd)
            reply = timeout_fault(job.t0)
            _finish(replies, seats[fd], job.call, reply.with_headers_ms(job.headers_ms), keep=False, complete=False)
        if not jobs:
            break
        for fd in _wait(poller, jobs, min(job.deadline for job in jobs.values()) - now):
            job = jobs[fd]
            outcome = _advance(job, poller, fd)
            if outcome is not None:
                del jobs[fd]
                poller.unregister(fd)
                reply, complete = outcome
                keep = complete and job.parser.done and not job.parser.will_close and not job.parser.trailing
                _finish(replies, seats[fd], job.call, reply.with_headers_ms(job.headers_ms), keep=keep,
                        complete=complete)


def _wait(poller: select.poll, jobs: dict[int, _Job], seconds: float) -> list[int]:
    """The descriptors ready within ``seconds``. ``poll`` counts whole milliseconds, rounded up, which
    would cut a call up to 1 ms late: it is asked for the whole milliseconds (rounded down) and the last
    one is waited for with ``select``'s microseconds (while every descriptor fits in its set)."""
    if seconds >= 0.001 or max(jobs) >= FD_SETSIZE:
        return [fd for fd, _events in poller.poll(max(int(seconds * 1000), 0))]
    reading = [fd for fd, job in jobs.items() if job.sent == len(job.message)]
    writing = [fd for fd, job in jobs.items() if job.sent < len(job.message)]
    readable, writable, _ = select.select(reading, writing, [], max(seconds, 0.0))
    return readable + writable


def _send(sock: socket.socket, data: memoryview) -> int:
    try:
        return sock.send(data)
    except BlockingIOError:
        return 0


def _advance(job: _Job, poller: select.poll, fd: int) -> tuple[Reply, bool] | None:
    """Write or read what the socket allows; once the call is over, the reply and whether the exchange
    completed (as ``BotConnection.release`` takes it: the connection is kept only then)."""
    client = job.call.client
    try:
        if job.sent < len(job.message):
            job.sent += _send(job.sock, job.message[job.sent:])
            if job.sent == len(job.message):
                poller.modify(fd, POLL_IN)
            return None
        try:
            data = job.sock.recv(RECV)
        except BlockingIOError:
            return None
        if data:
            job.parser.feed(data)
        else:
            cut = _status_cut_short(job)
            if cut is not None:
                return cut, False
            job.parser.eof()
        return _judge(job)
    except Exception as exc:  # OSError, http.client.HTTPException: what the threaded path reports
        return client.network_fault(exc, job.t0, job.deadline), False


def _status_cut_short(job: _Job) -> Reply | None:
    """A status other than 2xx whose body the bot cut short is that status's fault, with what came of the
    body, as the threaded path reads it (a few bytes of evidence), not a connection fault."""
    parser = job.parser
    if not parser.head_done or parser.done or 200 <= (parser.status or 0) < 300:
        return None
    return status_fault(parser.status or 0, parser.header_joined("Location"), job.t0, bytes(parser.body[:EVIDENCE]))


def _judge(job: _Job) -> tuple[Reply, bool] | None:
    """What the answer read so far decides, if anything, with the threaded path's rules."""
    parser = job.parser
    if not parser.head_done:
        return None
    if job.headers_ms is None:
        job.headers_ms = (time.perf_counter() - job.t0) * 1000
    status = parser.status or 0
    body = parser.body
    cap = job.call.client.max_response_bytes
    if not 200 <= status < 300:
        if 300 <= status < 400:  # a redirect: its body is not read at all
            return status_fault(status, parser.header_joined("Location"), job.t0, b""), True
        if parser.done or len(body) >= EVIDENCE:
            return status_fault(status, parser.header_joined("Location"), job.t0, bytes(body[:EVIDENCE])), True
        return None
    if not job.declared_checked:
        job.declared_checked = True
        declared = parser.header_joined("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > cap:
            return declared_too_large(declared, cap, job.t0, status), False
    if len(body) > cap:
        return too_large(cap, job.t0, bytes(body[:EVIDENCE]), status), False
    if not parser.done:
        return None
    return complete_reply(status, body, job.t0, job.deadline, job.call.empty_ok, job.headers_ms)


def _finish(replies: dict[int, Reply], seat: int, call: Call, reply: Reply, keep: bool, complete: bool) -> None:
    """``keep``: the connection serves the next call; else it is closed, and reset when the exchange did
    not complete (``BotConnection.close(abandon=True)``: nothing queued for the bot reaches it later)."""
    if not keep:
        call.client.session.close(abandon=not complete)
    call.client.tracker.finished()
    call.client.unhold()
    replies[seat] = reply
