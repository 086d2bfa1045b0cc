"""The five scenarios and the throughput run, each against a tournament running on the cluster.

A scenario is a function ``(run: Run) -> dict`` of facts (what was cut, for how long, what happened);
it raises AssertionError when something it watches goes wrong. The invariants of ``invariants`` are
checked by the driver after every one. The ladder runs through every scenario (``tests.cluster.ladder``):
its scheduler on every worker host, one of them active; scenarios 1 and 4 cut or kill the host holding it.
"""

from __future__ import annotations

import json
import signal
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import requests
from sqlalchemy import func, select

from arena.composition import Context
from arena.services import tournaments as tournament_service
from arena.storage.models import Match, MatchStatus
from arena.storage.replays import decompress
from tests.arena import service_harness as h
from tests.cluster import ladder
from tests.cluster.hosts import TRIAL_PORTS, Hosts
from tests.cluster.topology import Cluster

GAME = "piranha-pedro"
WORKER_HOSTS = ("w1", "w2", "w3")
# the victim may be a ladder match: sealed until its table's other rotation is played (the drain checks)
RECORDED = (MatchStatus.FINISHED, MatchStatus.SEALED)


@dataclass
class Run:
    """What a scenario works with: the network, the hosts' processes, the database and the bots."""

    cluster: Cluster
    hosts: Hosts
    context: Context
    bots: list[int]  # the scenarios' bots (slow: a match lasts a few seconds)
    fast_bots: list[int]  # the throughput run's bots
    workers_per_host: int
    tournaments: list[int] = field(default_factory=list)
    newcomers: list[int] = field(default_factory=list)  # bots users submitted (one per scenario)

    def tournament(self, cycles: int = 1, bots: list[int] | None = None) -> int:
        tournament_id = h.start_tournament(self.context, {"game": GAME, "bots": bots or self.bots, "seats": 2,
                                                          "cycles": cycles, "time_limit_ms": 1000})
        self.tournaments.append(tournament_id)
        return tournament_id

    def wait_done(self, tournament_id: int, timeout_s: float = 90) -> float:
        started = time.monotonic()
        h.wait_for(self.context, tournament_id, timeout_s)
        return time.monotonic() - started

    def running_on(self, host: str, timeout_s: float = 30) -> int:
        """A match in flight on one of ``host``'s workers (waiting for one)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.context.db.session(readonly=True) as session:
                found = session.scalar(select(Match.id).where(Match.status == MatchStatus.RUNNING,
                                                              Match.worker.like(f"{host}:%")).limit(1))
            if found is not None:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no match started on {host}")

    def in_flight_on(self, host: str) -> dict[str, int]:
        """Matches running on ``host``'s workers now, by kind (what a cut or a kill interrupts)."""
        with self.context.db.session(readonly=True) as session:
            rows = session.execute(select(Match.ladder_id).where(Match.status == MatchStatus.RUNNING,
                                                                 Match.worker.like(f"{host}:%"))).all()
        ladder_matches = sum(1 for (ladder_id,) in rows if ladder_id)
        return {"ladder": ladder_matches, "tournament": len(rows) - ladder_matches}

    def match(self, match_id: int) -> Match:
        with self.context.db.session(readonly=True) as session:
            return session.get(Match, match_id)

    def restart_workers(self, host: str) -> None:
        """The host's workers and its ladder scheduler (standing by until the lock is free)."""
        self.hosts.start_workers(host, self.workers_per_host)
        self.hosts.start_ladder(host)

    def wait_workers(self, hosts: tuple[str, ...], timeout_s: float = 90) -> None:
        """Until every worker of ``hosts`` has registered with RQ (imported, connected, listening)."""
        from rq import Worker

        deadline = time.monotonic() + timeout_s
        assert self.context.queue is not None
        while time.monotonic() < deadline:
            live = [w.name.split(":")[:2] for w in Worker.all(connection=self.context.queue.redis)]
            if all(sum(h == host and int(pid) in self.cluster.pids(host) for h, pid in live) >= self.workers_per_host
                   for host in hosts):  # a killed worker stays registered for a while: count the living
                return
            time.sleep(0.2)
        raise AssertionError(f"the workers of {hosts} did not start")


def worker_partition(run: Run) -> dict[str, Any]:
    """1. A worker host, also running the active ladder scheduler, cut off mid-match for longer than its
    lease: until another worker has taken the match over, and back at once, while that worker still
    plays it (when a stale result could overwrite)."""
    tournament_id = run.tournament()
    assert ladder.holder(run) == "w1", f"the ladder scheduler is active on {ladder.holder(run)}, not w1"
    lease = int(run.hosts.env["ARENA_MATCH_LEASE_S"])
    victim, interrupted, cut_at = _cut_mid_match(run, "w1")
    replayed_by = scheduler_at = None
    while replayed_by is None or scheduler_at is None:
        match = run.match(victim)
        if replayed_by is None and match.attempts > 1 and match.worker and not match.worker.startswith("w1:"):
            replayed_by, taken_over_s = match.worker, time.monotonic() - cut_at
        if scheduler_at is None and ladder.holder(run) not in (None, "w1"):
            scheduler_at, scheduler_s = ladder.holder(run), time.monotonic() - cut_at
        assert time.monotonic() - cut_at < 60, f"match {victim} or the ladder was not taken over while w1 was cut off"
        time.sleep(0.05)
    run.cluster.heal("w1")
    cut_s = time.monotonic() - cut_at
    run.wait_done(tournament_id)
    match = run.match(victim)
    assert match.status in RECORDED and match.attempts >= 2, (match.status, match.attempts)
    return {"cut": "w1 from every host", "seconds": round(cut_s, 1), "lease_s": lease,
            "match": f"{victim} ({'ladder' if match.ladder_id else 'tournament'})",
            "replayed_by": replayed_by.split(":")[0], "match_taken_over_after_s": round(taken_over_s, 1),
            "attempts": match.attempts, "stale_worker_said": _stale_outcome(run, "w1", victim),
            "in_flight_on_w1_at_the_cut": interrupted,
            "ladder_scheduler_taken_over_by": scheduler_at, "ladder_taken_over_after_s": round(scheduler_s, 1)}


def _cut_mid_match(run: Run, host: str) -> tuple[int, dict[str, int], float]:
    """Cut ``host`` off while one of its matches is still unrecorded once the cut holds: the match seen
    running just before the cut may be recorded by the time the cable is pulled, and would then never be
    taken over (a 60 s wait for nothing, in one run). The victim, what was in flight, when it was cut."""
    for _ in range(5):
        victim = run.running_on(host)
        run.cluster.cut(host)
        cut_at = time.monotonic()
        time.sleep(0.1)  # a commit already on its way is applied by now
        if run.match(victim).status == MatchStatus.RUNNING:  # the host can no longer record it
            return victim, run.in_flight_on(host), cut_at
        run.cluster.heal(host)
    raise AssertionError(f"{host} finished each match it was playing before the cut held")


def web_db_partition(run: Run) -> dict[str, Any]:
    """2. The web host cut off from db (only) while users browse and submit bots."""
    tournament_id = run.tournament(cycles=2)
    users = [_user(run, f"user{len(run.tournaments)}-{i}") for i in range(3)]
    outcomes: list[dict[str, Any]] = []
    stop = threading.Event()
    phase = {"now": "before"}
    threads = [threading.Thread(target=_browse_and_submit, args=(run, token, tournament_id, i, outcomes, stop, phase))
               for i, token in enumerate(users)]
    for thread in threads:
        thread.start()
    time.sleep(3)
    cut_s = 15  # well over a request's worst case (a dead connection's write, then a connect: 2 x ARENA_DB_TIMEOUT_S)
    phase["now"] = "cut"
    run.cluster.cut_pair("web", "db")
    time.sleep(cut_s)
    run.cluster.heal_pair("web", "db")
    phase["now"] = "healed"
    time.sleep(6)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    run.wait_done(tournament_id)
    return {"cut": "web from db (each still reaching the others)", "seconds": cut_s,
            **_judge_web(run, outcomes)}


def db_partition(run: Run) -> dict[str, Any]:
    """3. db cut off from everyone for 10 s."""
    tournament_id = run.tournament()
    run.running_on("w2")
    workers_before = _worker_pids(run)
    run.cluster.cut("db")
    time.sleep(10)
    run.cluster.heal("db")
    healed = time.monotonic()
    run.wait_done(tournament_id, 120)
    assert _worker_pids(run) == workers_before, "a worker process died or was restarted"
    return {"cut": "db from every host", "seconds": 10, "recovered_in_s": round(time.monotonic() - healed, 1),
            "workers_survived": sum(len(p) for p in workers_before.values())}


def worker_host_killed(run: Run) -> dict[str, Any]:
    """4. Every process of the worker host running the active ladder scheduler SIGKILLed mid-match, then
    the host's workers and scheduler started again."""
    tournament_id = run.tournament()
    host = ladder.holder(run) or "w2"
    for _ in range(5):  # as for a cut (_cut_mid_match): the victim must still be unrecorded at the kill
        victim = run.running_on(host)
        run.hosts.signal_host(host, signal.SIGSTOP)
        time.sleep(0.1)
        if run.match(victim).status == MatchStatus.RUNNING:
            break
        run.hosts.signal_host(host, signal.SIGCONT)
    else:
        raise AssertionError(f"{host} finished each match it was playing before it was stopped")
    interrupted = run.in_flight_on(host)
    killed = run.hosts.kill_host(host)
    killed_at = time.monotonic()
    scheduler_at, scheduler_s = ladder.wait_holder(run, tuple(h for h in WORKER_HOSTS if h != host))
    time.sleep(max(0.0, 1 - (time.monotonic() - killed_at)))
    run.restart_workers(host)
    run.wait_workers((host,))
    run.wait_done(tournament_id)
    match = run.match(victim)
    assert match.status in RECORDED and match.attempts >= 2, (match.status, match.attempts)
    return {"killed": f"{host}: {killed} processes", "in_flight_at_the_kill": interrupted, "attempts": match.attempts,
            "match": f"{victim} ({'ladder' if match.ladder_id else 'tournament'})",
            "replayed_by": (match.worker or "").split(":")[0], "ladder_scheduler_taken_over_by": scheduler_at,
            "ladder_taken_over_after_s": round(scheduler_s, 1)}


def slow_link(run: Run) -> dict[str, Any]:
    """5. w3 reaches the bots through a proxy that delays each direction by 25-100 ms."""
    # the link is re-routed through the proxy while no ladder match is in flight: one on w3 would lose its
    # bots for the 1.5 s the proxy takes to start (both seats forfeited: void), the harness's doing
    ladder.drain(run)
    proxy = run.hosts.slow_link("w3")
    ladder.set_running(run, True)
    try:
        tournament_id = run.tournament()
        run.wait_done(tournament_id, 120)
        ladder.drain(run)  # the ladder's matches on w3 too end through the proxy, not cut by its removal
    finally:
        run.hosts.fast_link("w3", proxy)
    latency = _latencies_by_host(run, tournament_id)
    assert latency.get("w3"), f"w3 played no match: {latency}"
    slow = statistics.median(latency["w3"])
    fast = statistics.median([x for host, xs in latency.items() if host != "w3" for x in xs] or [0])
    bot_delay = run.hosts.scenario_delay_ms
    assert bot_delay + 50 <= slow <= bot_delay + 200 + 150, f"median decision {slow:.0f} ms through the proxy"
    return {"link": "w3 <-> bots through a 50-200 ms round-trip proxy",
            "median_decision_ms": {"w3": round(slow), "others": round(fast)},
            "matches_on_w3": len({m for m in _matches_by_host(run, tournament_id).get("w3", [])})}


SCENARIOS: dict[str, Callable[[Run], dict[str, Any]]] = {
    "worker_partition": worker_partition,
    "web_db_partition": web_db_partition,
    "db_partition": db_partition,
    "worker_host_killed": worker_host_killed,
    "slow_link": slow_link,
}


def throughput(run: Run, hosts_counts: tuple[int, ...] = (1, 2, 3), cycles: int = 2) -> dict[str, Any]:
    """Matches per minute with 1, 2 and 3 worker hosts, the bots answering after a fixed delay (the
    ladders paused: their matches would share the workers)."""
    ladder.drain(run)
    for host in WORKER_HOSTS:
        run.hosts.kill_host(host)
    figures = {}
    for count in hosts_counts:
        for host in WORKER_HOSTS[:count]:
            run.restart_workers(host)
        run.wait_workers(WORKER_HOSTS[:count])  # the clock starts once they listen
        tournament_id = run.tournament(cycles, run.fast_bots)
        run.wait_done(tournament_id, 180)
        with run.context.db.session(readonly=True) as session:
            first, last, n = session.execute(
                select(func.min(Match.started_at), func.max(Match.finished_at), func.count())
                .where(Match.tournament_id == tournament_id)).one()
        figures[count] = round(n / ((last - first).total_seconds() / 60), 1)
        for host in WORKER_HOSTS[:count]:
            run.hosts.kill_host(host)
    for host in WORKER_HOSTS:
        run.restart_workers(host)
    run.wait_workers(WORKER_HOSTS)
    base = figures[hosts_counts[0]]
    return {"matches_per_minute": figures, "scaling": {k: round(v / base, 2) for k, v in figures.items()},
            "workers_per_host": run.workers_per_host, "bot_delay_ms": run.hosts.throughput_delay_ms,
            "matches_per_run": 12 * cycles}


# -- helpers


def _log_count(run: Run, name: str, text: str) -> int:
    return sum(p.read_text(errors="replace").count(text) for p in run.hosts.run_dir.glob(f"{name}*.log"))


def _stale_outcome(run: Run, host: str, match_id: int) -> list[str]:
    """What the cut-off host's workers logged about the match after starting it."""
    said = []
    for path in run.hosts.run_dir.glob(f"{host}-worker*.log"):
        for line in path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("match_id") == match_id and entry.get("message") != "match started":
                said.append(entry.get("message", "")[:120])
    return said


def _worker_pids(run: Run) -> dict[str, set[int]]:
    return {host: set(run.cluster.pids(host)) for host in WORKER_HOSTS}


def _user(run: Run, name: str) -> str:
    from arena.services.accounts import create_account

    with run.context.db.session() as session:
        _account, token = create_account(session, name)
    return token


def _browse_and_submit(run: Run, token: str, tournament_id: int, index: int, outcomes: list, stop: threading.Event,
                       phase: dict[str, str]) -> None:
    """One user: reads pages and the API, and now and then submits a bot (every answer is noted)."""
    base, auth = run.hosts.web_url, {"Authorization": f"Bearer {token}"}
    reads = ["/", f"/tournaments/{tournament_id}", f"/api/tournaments/{tournament_id}", f"/leaderboards/{GAME}",
             "/api/bots"]
    n = 0
    while not stop.is_set():
        n += 1
        if n % 4 == 0:
            name = f"sub-{index}-{n}"
            body = {"name": name, "url": run.hosts.bot_url(TRIAL_PORTS[n % len(TRIAL_PORTS)]), "game": GAME}
            outcomes.append(_timed(phase, "POST /api/bots", name,
                                   lambda b=body: requests.post(base + "/api/bots", json=b, headers=auth, timeout=40)))
        else:
            path = reads[n % len(reads)]
            outcomes.append(_timed(phase, "GET " + path, None,
                                   lambda p=path: requests.get(base + p, headers=auth, timeout=40)))
        time.sleep(0.2)


def _timed(phases: dict[str, str], what: str, name: str | None,
           call: Callable[[], requests.Response]) -> dict[str, Any]:
    """One call, with the phase it started in and the phase it ended in: a request sent just before the cut
    waits on the dead connection and answers 503 during it."""
    phase, started = phases["now"], time.monotonic()
    try:
        response = call()
        status, body = response.status_code, response.text
        clear = status != 503 or ("cannot be reached" in body and response.headers.get("Retry-After") is not None)
    except requests.RequestException as exc:
        status, body, clear = None, type(exc).__name__, False
    return {"phase": phase, "ended_in": phases["now"], "what": what, "name": name, "status": status,
            "body": body[:200], "clear": clear, "seconds": round(time.monotonic() - started, 2)}


def _judge_web(run: Run, outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """Clear errors, no 5xx storm, nothing half-written."""
    from arena.storage.models import Bot

    by_phase: dict[str, dict[str, int]] = {}
    for o in outcomes:
        key = str(o["status"])
        by_phase.setdefault(o["phase"], {}).setdefault(key, 0)
        by_phase[o["phase"]][key] += 1
    bad = [o for o in outcomes if o["status"] is None or (o["status"] >= 500 and o["status"] != 503)]
    unclear = [o for o in outcomes if not o["clear"]]
    slow = [o for o in outcomes if o["seconds"] > 20]  # gunicorn would cut it at 30
    with run.context.db.session(readonly=True) as session:
        stored = {b.name: b for b in session.scalars(select(Bot).where(Bot.name.like("sub-%")))}
    accepted = [o["name"] for o in outcomes if o["what"].startswith("POST") and o["status"] == 201]
    refused = [o["name"] for o in outcomes if o["what"].startswith("POST") and o["status"] == 503]
    missing = [n for n in accepted if n not in stored]
    half = [n for n, b in stored.items() if not (b.url and b.secret and b.owner_id)]
    after = [o for o in outcomes if o["phase"] == "healed"]
    assert not bad, f"{len(bad)} answers were 5xx other than 503 or no answer: {bad[:5]}"
    assert not unclear, f"503 answers that do not say what is wrong: {unclear[:3]}"
    assert not slow, f"answers slower than 20 s: {slow[:5]}"
    assert not missing and not half, f"accepted but not stored: {missing}; half-written: {half}"
    assert after and after[-1]["status"] in (200, 201), f"not healed: {after[-3:]}"
    # noticed: a 503 sent or answered during the cut (one run's three users each sent a request just before
    # it, waited on the dead connection and had their 503 during the cut, labelled "before" by their start)
    noticed = [o for o in outcomes if o["status"] == 503 and "cut" in (o["phase"], o["ended_in"])]
    assert noticed, f"the cut was never noticed: {by_phase}"
    return {"answers": by_phase, "bots_accepted": len(accepted), "bots_refused_503": len(refused),
            "refused_but_stored": sorted(set(refused) & set(stored)),
            "slowest_answer_during_cut_s": max((o["seconds"] for o in outcomes if o["phase"] == "cut"), default=0)}


def _matches_by_host(run: Run, tournament_id: int) -> dict[str, list[int]]:
    with run.context.db.session(readonly=True) as session:
        rows = session.execute(select(Match.id, Match.worker).where(Match.tournament_id == tournament_id)).all()
    out: dict[str, list[int]] = {}
    for match_id, worker in rows:
        out.setdefault((worker or "?").split(":")[0], []).append(match_id)
    return out


def _latencies_by_host(run: Run, tournament_id: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    with run.context.db.session(readonly=True) as session:
        rows = session.execute(select(Match.worker, Match.replay_gz).where(Match.tournament_id == tournament_id,
                                                                           Match.status == MatchStatus.FINISHED)).all()
    for worker, blob in rows:
        host = (worker or "?").split(":")[0]
        for step in decompress(blob)["steps"]:
            for decision in step["decisions"]:
                if decision.get("latency_ms") is not None:
                    out.setdefault(host, []).append(decision["latency_ms"])
    return out


def progress(run: Run, tournament_id: int) -> dict[str, int]:
    with run.context.db.session(readonly=True) as session:
        return tournament_service.progress(session, tournament_id)
