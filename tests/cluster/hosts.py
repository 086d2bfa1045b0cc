"""The processes of each host, started inside that host's namespace (with its own hostname, so a
worker's name says which host it runs on): PostgreSQL and Redis on ``db``, gunicorn on ``web``, ``arena
worker`` processes on ``w1``-``w3``, the logged sample bots (and, for a slow link, a delaying proxy).
Every process runs in its own session so that a host can be SIGKILLed whole."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.cluster.topology import ARENA_NETWORK, BOTS_ALIAS, BOTS_NETWORK, Cluster

ROOT = Path(__file__).resolve().parents[2]
BOT_PORTS = [9001, 9002, 9003, 9004]  # the scenarios' bots (a match lasts a couple of seconds)
FAST_BOT_PORTS = [9005, 9006, 9007, 9008]  # the throughput run's bots (the ladder's too, while they idle)
TRIAL_PORTS = [9009, 9010]  # never given a secret: where scenario 2's users submit bots to try the API
NEWCOMER_PORTS = [9011, 9012, 9013, 9014, 9015, 9016]  # one user's new bot per scenario, given its secret
ALL_BOT_PORTS = BOT_PORTS + FAST_BOT_PORTS + TRIAL_PORTS + NEWCOMER_PORTS
DB_PORT, REDIS_PORT, WEB_PORT = 5432, 6379, 8000


def postgres_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return found[-1]


def wait_port(host: str, port: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {host}:{port} after {timeout_s} s")


class Hosts:
    """Starts, kills and restarts the processes of the cluster's hosts; logs go to ``run_dir``."""

    def __init__(self, cluster: Cluster, run_dir: Path, lease_s: int = 4, decision_ms: int = 1000,
                 scenario_delay_ms: float = 100, throughput_delay_ms: float = 50) -> None:
        self.cluster, self.run_dir = cluster, run_dir
        self.scenario_delay_ms, self.throughput_delay_ms = scenario_delay_ms, throughput_delay_ms
        self.procs: dict[str, list[subprocess.Popen]] = {}
        self.starts = 0
        (run_dir / "home").mkdir(exist_ok=True)
        self.db_address = cluster.address("db")
        self.database_url = f"postgresql+psycopg://postgres@{self.db_address}:{DB_PORT}/arena"
        self.env = {
            # HOME of the run's own: gunicorn keeps a control socket there, which another gunicorn on the
            # machine must not share
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(run_dir / "home"), "PYTHONPATH": str(ROOT),
            "ARENA_ENV": "production", "ARENA_SECRET_KEY": "cluster-test-secret",
            "ARENA_DATABASE_URL": self.database_url,
            "ARENA_REDIS_URL": f"redis://{self.db_address}:{REDIS_PORT}/0",
            "ARENA_DATA_DIR": str(run_dir / "data"),
            "ARENA_ALLOW_BOT_NETWORKS": BOTS_NETWORK, "ARENA_DENY_BOT_ADDRESSES": ARENA_NETWORK,
            "ARENA_MATCH_LEASE_S": str(lease_s), "ARENA_RECONCILE_INTERVAL_S": "1",
            "ARENA_DECISION_MS": str(decision_ms), "ARENA_REFIT_DELAY_S": "1",
            "ARENA_BIND": f"{cluster.address('web')}:{WEB_PORT}", "WEB_CONCURRENCY": "2",
            # the ladder: two-player tables (two rotations each, so little is owed when a scenario ends),
            # at most two matches in flight (the tournament keeps the other worker busy)
            "ARENA_LADDER_PLAYERS": "2", "ARENA_LADDER_IN_FLIGHT": "2",
        }
        self.newcomers_given = 0

    @property
    def web_url(self) -> str:
        return f"http://{self.cluster.address('web')}:{WEB_PORT}"

    def bot_url(self, port: int) -> str:
        return f"http://{self.cluster.address('bots')}:{port}"

    def spawn(self, host: str, name: str, argv: list[str], user: str | None = None) -> subprocess.Popen:
        """Run ``argv`` on ``host`` under the hostname ``host``."""
        self.starts += 1
        inner = ["runuser", "-u", user, "--", *argv] if user else argv
        cmd = ["ip", "netns", "exec", self.cluster.ns(host), "unshare", "--uts", "sh", "-c",
               f'hostname {host} && exec "$@"', "sh", *inner]
        log = open(self.run_dir / f"{host}-{name}-{self.starts}.log", "wb")  # noqa: SIM115 - the child keeps it
        proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        log.close()
        self.procs.setdefault(host, []).append(proc)
        return proc

    # -- db
    def start_db(self) -> None:
        pg = self.run_dir / "pg"
        pg.mkdir(mode=0o700)
        os.chown(pg, _uid("postgres"), _gid("postgres"))
        subprocess.run(["runuser", "-u", "postgres", "--", postgres_bin("initdb"), "-D", str(pg / "data"),
                        "--auth=trust", "-U", "postgres", "--no-sync"], check=True, capture_output=True,
                       timeout=120)
        with open(pg / "data" / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {self.cluster.address('db')[:-1]}0/24 trust\n")
        self.spawn("db", "postgres", [postgres_bin("postgres"), "-D", str(pg / "data"), "-k", str(pg),
                                      "-h", self.db_address, "-p", str(DB_PORT), "-c", "fsync=off",
                                      "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                                      "-c", "max_connections=200"], user="postgres")
        self.spawn("db", "redis", ["redis-server", "--bind", self.db_address, "--port", str(REDIS_PORT),
                                   "--save", "", "--appendonly", "no", "--protected-mode", "no",
                                   "--dir", str(self.run_dir)])
        wait_port(self.db_address, DB_PORT)
        wait_port(self.db_address, REDIS_PORT)
        deadline = time.monotonic() + 30
        while subprocess.run(["ip", "netns", "exec", self.cluster.ns("db"), "runuser", "-u", "postgres", "--",
                              postgres_bin("createdb"), "-h", self.db_address, "arena"],
                             capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("could not create the database")
            time.sleep(0.3)

    # -- web, workers, bots
    def start_web(self) -> None:
        self.spawn("web", "gunicorn", [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
                                       "arena.web.wsgi:app"])

    def wait_web(self) -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # every gunicorn worker up and talking to db
            try:
                if all(requests.get(self.web_url + "/healthz", timeout=5).status_code == 200 for _ in range(4)):
                    return
            except requests.RequestException:
                pass
            time.sleep(0.3)
        raise RuntimeError("the web host did not come up")

    def start_workers(self, host: str, count: int) -> None:
        for i in range(count):
            self.spawn(host, f"worker{i}", [sys.executable, "-m", "arena.cli", "worker"])

    def start_ladder(self, host: str) -> None:
        self.spawn(host, "ladder", [sys.executable, "-m", "arena.cli", "ladder", "run"])

    def start_bots(self) -> None:
        delays = [self.scenario_delay_ms] * len(BOT_PORTS) + [self.throughput_delay_ms] * (
            len(ALL_BOT_PORTS) - len(BOT_PORTS))
        self.spawn("bots", "bots", [sys.executable, "-m", "tests.cluster.bots_host", "--ports",
                                    *map(str, ALL_BOT_PORTS), "--delays-ms", *map(str, delays),
                                    "--log", str(self.bot_log), "--secrets", str(self.secrets_file)])

    def wait_bots(self) -> None:
        for port in ALL_BOT_PORTS:
            wait_port(self.cluster.address("bots"), port)

    @property
    def secrets_file(self) -> Path:
        return self.run_dir / "bot-secrets.json"

    def give_secrets(self, secrets: dict[int, str]) -> None:
        """What a bot's owner does with the secret the arena showed: start the bot with it. Here the bots
        host reads them again on SIGHUP; returns once every one of these ports refuses unsigned requests."""
        known = json.loads(self.secrets_file.read_text()) if self.secrets_file.exists() else {}
        known.update({str(port): secret for port, secret in secrets.items()})
        self.secrets_file.write_text(json.dumps(known))
        os.kill(self.procs["bots"][0].pid, signal.SIGHUP)
        deadline = time.monotonic() + 20
        for port in secrets:
            while requests.post(self.bot_url(port) + "/start", json={}, timeout=5).status_code != 401:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the bot on :{port} did not take its secret")
                time.sleep(0.1)

    def next_newcomer_port(self) -> int:
        self.newcomers_given += 1
        return NEWCOMER_PORTS[self.newcomers_given - 1]

    @property
    def bot_log(self) -> Path:
        return self.run_dir / "bots.jsonl"

    def slow_link(self, host: str) -> subprocess.Popen:
        """Send ``host``'s traffic to the bots through a delaying proxy on that host: the bots' address is
        made local there, and the proxy forwards to the bots' second address."""
        bots = self.cluster.address("bots")
        subprocess.run(["ip", "-n", self.cluster.ns(host), "addr", "add", f"{bots}/32", "dev", "lo"], check=True)
        proxy = self.spawn(host, "delay-proxy", [sys.executable, "-m", "tests.cluster.delay_proxy", "--listen",
                                                 bots, "--target", BOTS_ALIAS, "--ports",
                                                 *map(str, ALL_BOT_PORTS)])
        time.sleep(1.5)
        return proxy

    def fast_link(self, host: str, proxy: subprocess.Popen) -> None:
        os.killpg(proxy.pid, signal.SIGKILL)
        proxy.wait(timeout=10)
        bots = self.cluster.address("bots")
        subprocess.run(["ip", "-n", self.cluster.ns(host), "addr", "del", f"{bots}/32", "dev", "lo"], check=True)

    # -- chaos
    def signal_host(self, host: str, signum: int) -> None:
        """Send every process of the host ``signum`` (SIGSTOP: the host frozen, still holding its work)."""
        for pid in self.cluster.pids(host):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def kill_host(self, host: str) -> int:
        """SIGKILL every process of the host at once (the machine lost power); returns how many died."""
        pids = self.cluster.pids(host)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for proc in self.procs.get(host, []):
            proc.wait(timeout=20)
        self.procs[host] = []
        return len(pids)

    def stop_all(self) -> None:
        for host in list(self.procs):
            for proc in self.procs[host]:
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
            for proc in self.procs[host]:
                proc.wait(timeout=20)

    def logs(self, pattern: str = "*.log", tail: int = 2500) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-tail:]}"
                         for p in sorted(self.run_dir.glob(pattern)))


def _uid(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_uid


def _gid(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_gid
