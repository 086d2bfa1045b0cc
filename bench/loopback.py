"""A trivial local HTTP server and a timed ``requests`` round trip against it: the yardstick that
engine and referee costs are judged by."""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

ANSWER = json.dumps({"action": "N1"}).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one write: no Nagle / delayed-ACK stall
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def trivial_server() -> Iterator[str]:
    """Serve on a free loopback port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def round_trip_us(url: str, payload: bytes = b'{"ping": 1}', samples: int = 2000) -> dict[str, float]:
    """Median and p90 of a kept-alive ``requests`` POST round trip, in microseconds."""
    times = []
    with requests.Session() as session:
        for _ in range(50):
            session.post(url + "/act", data=payload, headers={"Content-Type": "application/json"})
        for _ in range(samples):
            t0 = time.perf_counter()
            session.post(url + "/act", data=payload, headers={"Content-Type": "application/json"})
            times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return {"median": statistics.median(times), "p90": times[int(len(times) * 0.9)]}
