"""The ``bots`` host: the sample random bot on several ports, each answering after a fixed delay and
logging every request it receives (wall-clock time, match, path, turn) as JSON lines, so the cluster
test can tell whether any bot heard of a match after its result was recorded.

As a real bot's owner does, a port starts without a secret (a bot being submitted does not know its
secret yet) and is given the secret the arena showed for it once registered: the driver writes
``--secrets`` (JSON, port -> secret) and sends SIGHUP; from then on that port refuses requests not
signed with it (``sample_bots.sdk``).

    python -m tests.cluster.bots_host --ports 9001 9002 --delays-ms 150 50 --log bots.jsonl --secrets s.json
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time
from typing import Any

from sample_bots.random_bot import make_bot
from sample_bots.sdk import Bot, BotServer


class RequestLog:
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives as long as the host
        self._lock = threading.Lock()

    def write(self, port: int, path: str, request: dict[str, Any]) -> None:
        line = json.dumps({"t": time.time(), "port": port, "path": path, "match": request.get("match_id"),
                           "turn": request.get("turn")})
        with self._lock:
            self._file.write(line + "\n")


def logged_bot(port: int, delay_s: float, log: RequestLog) -> Bot:
    bot = make_bot(seed=port)
    choose = bot.act

    def act(request: dict[str, Any]) -> Any:
        log.write(port, "/act", request)
        time.sleep(delay_s)
        return choose(request)

    bot.act = act
    bot.on_start = lambda request: log.write(port, "/start", request)
    bot.on_end = lambda request: log.write(port, "/end", request)
    bot.name = f"random-{port}"
    return bot


def load_secrets(path: str, bots: dict[int, Bot]) -> int:
    """Give each port in the file its secret; returns how many ports now check signatures."""
    try:
        with open(path, encoding="utf-8") as file:
            secrets = {int(port): secret for port, secret in json.load(file).items()}
    except FileNotFoundError:
        secrets = {}
    for port, bot in bots.items():
        if port in secrets:
            bot.secret = secrets[port]
    return sum(1 for bot in bots.values() if bot.secret)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", type=int, nargs="+", required=True)
    parser.add_argument("--delays-ms", type=float, nargs="+", required=True, help="one per port")
    parser.add_argument("--log", required=True)
    parser.add_argument("--secrets", required=True, help="JSON port -> secret, read again on SIGHUP")
    args = parser.parse_args()
    log = RequestLog(args.log)
    bots = {port: logged_bot(port, delay / 1000, log) for port, delay in zip(args.ports, args.delays_ms, strict=True)}

    def reload(*_: object) -> None:
        print("signing secrets loaded: ports checking signatures:", load_secrets(args.secrets, bots), flush=True)

    reload()
    signal.signal(signal.SIGHUP, reload)
    servers = [BotServer(bot, "0.0.0.0", port) for port, bot in bots.items()]
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("bots listening on", args.ports, flush=True)
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
