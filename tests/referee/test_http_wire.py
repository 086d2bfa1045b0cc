"""The sans-io response parser frames answers as http.client does, in whatever pieces they arrive."""

from __future__ import annotations

import http.client
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.http_wire import MAX_HEADERS, MAX_LINE, ResponseParser

BODY = b'{"action": {"type": "discard", "cards": ["crow"]}}'
PLAIN = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
CHUNKED = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5;ext=1\r\n" + BODY[:5] + b"\r\n" + b"%x\r\n" % (len(BODY) - 5) + BODY[5:] + b"\r\n"
           b"0\r\nX-Trailer: yes\r\n\r\n")
CONTINUE = b"HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\n" + PLAIN
BARE_LF = b"HTTP/1.1 200 OK\nContent-Length: %d\nX-Folded: a\n b\n\n" % len(BODY) + BODY
UNTIL_CLOSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + BODY
HTTP10 = b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
CLOSING = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY
NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"
STATUS_404 = b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"
WELL_FORMED = [PLAIN, CHUNKED, CONTINUE, BARE_LF, UNTIL_CLOSE, HTTP10, CLOSING, NO_CONTENT, STATUS_404]


class _FakeSocket:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self.data))


def _stdlib(data: bytes) -> tuple[int, bytes, bool]:
    response = http.client.HTTPResponse(_FakeSocket(data), method="POST")  # type: ignore[arg-type]
    response.begin()
    return response.status, response.read(), response.will_close


def _ours(pieces: list[bytes]) -> ResponseParser:
    parser = ResponseParser("POST")
    for piece in pieces:
        parser.feed(piece)
    if not parser.done:
        parser.eof()
    return parser


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@pytest.mark.parametrize("data", WELL_FORMED, ids=range(len(WELL_FORMED)))
def test_whole_answers_read_as_http_client_reads_them(data: bytes) -> None:
    parser = _ours([data])
    assert (parser.status, bytes(parser.body), parser.will_close) == _stdlib(data)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(WELL_FORMED), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_any_split_of_an_answer_gives_the_same_answer(data: bytes, cuts: list[int]) -> None:
    whole, pieces = _ours([data]), _ours(_split(data, cuts))
    assert (pieces.status, bytes(pieces.body), pieces.will_close) == (whole.status, bytes(whole.body),
                                                                      whole.will_close)


def test_one_byte_at_a_time_completes_exactly_at_the_last_byte() -> None:
    parser = ResponseParser()
    for i in range(len(PLAIN)):
        assert not parser.done
        parser.feed(PLAIN[i:i + 1])
    assert parser.done and bytes(parser.body) == BODY and not parser.trailing


def test_bytes_after_the_answer_make_the_connection_unusable() -> None:
    parser = ResponseParser()
    parser.feed(PLAIN + b"HTTP/1.1 200 OK\r\n")
    assert parser.done and parser.trailing


@pytest.mark.parametrize(("data", "error"), [
    (b"", http.client.RemoteDisconnected),
    (b"\x00\x01garbage\r\n\r\n", http.client.BadStatusLine),
    (b"HTTP/1.1 abc OK\r\n\r\n", http.client.BadStatusLine),
    (b"HTTP/2.0 200 OK\r\n\r\n", http.client.UnknownProtocol),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345", http.client.IncompleteRead),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", http.client.IncompleteRead),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", http.client.IncompleteRead),
    (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_HEADERS + 1) + b"\r\n", http.client.HTTPException),
    (b"HTTP/1.1 200 OK\r\nX: " + b"y" * MAX_LINE + b"\r\n\r\n", http.client.LineTooLong),
    (b"x" * (MAX_LINE + 1), http.client.LineTooLong),
])
def test_bad_framing_raises_what_http_client_raises(data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        _ours([data])
    if data:
        with pytest.raises(error):
            _stdlib(data)


def test_an_endless_body_grows_with_each_feed_so_the_caller_can_cap_it() -> None:
    parser = ResponseParser()
    parser.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(4):
        parser.feed(b"8000\r\n" + b"1" * 0x8000 + b"\r\n")
    assert not parser.done and len(parser.body) == 4 * 0x8000
