"""The cluster's network on its own (seconds): isolated, cut and healed as the scenarios need, and gone
afterwards, also when an earlier run was killed before it could clean up."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.cluster.topology import Cluster, _namespaces, ip, netns_available, remove_stale

pytestmark = pytest.mark.cluster

PROBE = """
import socket, sys
s = socket.socket(); s.settimeout(1)
try:
    s.connect((sys.argv[1], 9))
except ConnectionRefusedError:
    print("reachable")
except OSError as exc:
    print("unreachable", exc.errno)
"""


@pytest.fixture(scope="module")
def cluster():
    why = netns_available()
    if why is not None:
        pytest.skip(why)
    made = Cluster()
    made.create()
    yield made
    made.destroy()


def _reach(cluster: Cluster, host: str, address: str) -> str:
    out = subprocess.run(["ip", "netns", "exec", cluster.ns(host), sys.executable, "-c", PROBE, address],
                         capture_output=True, text=True, timeout=20)
    return out.stdout.strip().split()[0]


def _heals(cluster: Cluster, host: str, address: str) -> bool:
    """Reachable again within a few seconds (the link comes up, the neighbour is resolved anew)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _reach(cluster, host, address) == "reachable":
            return True
    return False


def test_hosts_reach_each_other_and_nothing_else(cluster: Cluster) -> None:
    assert _reach(cluster, "w1", cluster.address("bots")) == "reachable"
    assert _reach(cluster, "drv", cluster.address("db")) == "reachable"
    for outside in ("192.0.2.1", "10.77.1.1"):  # no route: refused by the kernel before any packet leaves
        assert _reach(cluster, "w1", outside) == "unreachable"
    cluster.check_isolated()


def test_a_cut_host_reaches_nobody_until_healed(cluster: Cluster) -> None:
    cluster.cut("w2")
    try:
        assert _reach(cluster, "w2", cluster.address("db")) == "unreachable"
        assert _reach(cluster, "drv", cluster.address("w2")) == "unreachable"
    finally:
        cluster.heal("w2")
    assert _heals(cluster, "w2", cluster.address("db"))


def test_a_cut_pair_still_reaches_everyone_else(cluster: Cluster) -> None:
    cluster.cut_pair("web", "db")
    try:
        assert _reach(cluster, "web", cluster.address("db")) == "unreachable"
        assert _reach(cluster, "db", cluster.address("web")) == "unreachable"
        assert _reach(cluster, "web", cluster.address("bots")) == "reachable"
        assert _reach(cluster, "w1", cluster.address("db")) == "reachable"
    finally:
        cluster.heal_pair("web", "db")
    assert _heals(cluster, "web", cluster.address("db"))


def test_namespaces_of_a_killed_run_are_removed_by_the_next() -> None:
    why = netns_available()
    if why is not None:
        pytest.skip(why)
    with open("/proc/sys/kernel/pid_max") as f:
        dead = int(f.read()) + 1  # no process can have this id
    ip("netns", "add", f"ac{dead}-w1")
    remove_stale()
    assert not [n for n in _namespaces() if n.startswith(f"ac{dead}-")]
