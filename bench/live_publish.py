"""What a worker's live publisher costs to send a batch of events, against the least Redis can be asked.

    python -m bench.live_publish [--events 12] [--topics 1] [--sends 2000]

A Redis of its own; ``LivePublisher._send`` (one script call for the batch) of ``--events`` step events
of a Piranha Pedro public board's size (1.3 kB of JSON), spread over ``--topics`` topics, against a bare
``PING`` on the same client: the publishing thread's CPU per send and per event, and its ratio to the
ping's (the round trip it cannot avoid). Medians of ``--sends``, interleaved with the pings.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import orjson

from arena.runtime.live_bus import LivePublisher
from arena.runtime.queue import connect
from tests.arena.service_harness import RedisServer

BOARD = {"board": [[i, i * 2, "x" * 10] for i in range(60)], "turn": 3}  # about a public board's size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=12, help="events a send (a fast match's 5 ms: about 12)")
    parser.add_argument("--topics", type=int, default=1, help="topics they are spread over")
    parser.add_argument("--sends", type=int, default=2000)
    args = parser.parse_args(argv)
    server = RedisServer(Path(tempfile.mkdtemp(prefix="arena-bench-")))
    server.start()
    try:
        redis = connect(server.url)
        publisher = LivePublisher(redis, "bench")
        body = orjson.dumps(BOARD)
        events = [(f"match-{n % args.topics}", "step", body, True, True) for n in range(args.events)]
        sends, pings = [], []
        for n in range(args.sends + 100):
            began = time.thread_time()
            publisher._send(events)
            sent = time.thread_time()
            redis.ping()
            if n >= 100:  # (warm-up)
                sends.append(sent - began)
                pings.append(time.thread_time() - sent)
        send, ping = statistics.median(sends) * 1e6, statistics.median(pings) * 1e6
        print(f"send of {args.events} events ({len(body)} B each) over {args.topics} topic(s): {send:.0f} us of CPU, "
              f"{send / args.events:.1f} us an event; a bare PING {ping:.0f} us: ratio {send / ping:.2f}")
        redis.close()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
