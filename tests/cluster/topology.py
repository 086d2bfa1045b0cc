"""The cluster's network: one namespace per host on one bridge, itself in a namespace of its own.

Nothing here touches the machine's own interfaces: the bridge and every veth pair are made inside
namespaces whose names start with this run's prefix (``ac<pid>-``), every address is in 10.77.0.0/24
and no namespace has a default route, so traffic can reach these hosts and nothing else. A link is
cut with ``ip link set ... down`` on the bridge side (netem and iptables are not available); one pair
of hosts is cut apart, the others still talking, by pointing each one's neighbour entry for the other
at a MAC address nobody owns (packets then vanish on the bridge, as in a real partition).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SUBNET = "10.77.0"
BRIDGE = "br0"
NOBODY_MAC = "02:00:00:00:77:99"  # locally administered, owned by no interface here
PREFIX_PATTERN = re.compile(r"^ac(\d+)-")
# name -> last octet; the bots' host is alone in the trusted /29 (10.77.0.128/29: .130 and the alias .131)
HOSTS = {"db": 2, "web": 3, "drv": 10, "w1": 11, "w2": 12, "w3": 13, "bots": 130}
BOTS_NETWORK = f"{SUBNET}.128/29"
ARENA_NETWORK = f"{SUBNET}.0/25"
BOTS_ALIAS = f"{SUBNET}.131"  # the bots' second address: where a delaying proxy forwards to


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=20)


def netns_available() -> str | None:
    """None when this machine can build the cluster, else why not."""
    if os.geteuid() != 0:
        return "the cluster test needs root (it creates network namespaces)"
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        return "the cluster test needs `ip` (iproute2) and `unshare` (util-linux)"
    probe = f"ac{os.getpid()}-probe"
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` does not work here: {made.stderr.strip()}"
    try:
        uts = subprocess.run(["ip", "netns", "exec", probe, "unshare", "--uts", "true"], capture_output=True,
                             text=True, timeout=20)
    finally:
        ip("netns", "del", probe, check=False)
    if uts.returncode != 0:
        return f"`unshare --uts` does not work inside a namespace here: {uts.stderr.strip()}"
    return None


@dataclass
class Cluster:
    """The namespaces of one run and what to do with their links."""

    prefix: str = field(default_factory=lambda: f"ac{os.getpid()}-")

    def ns(self, host: str) -> str:
        return self.prefix + host

    @property
    def switch(self) -> str:
        return self.prefix + "sw"

    @staticmethod
    def address(host: str) -> str:
        return f"{SUBNET}.{HOSTS[host]}"

    def create(self) -> None:
        remove_stale()
        ip("netns", "add", self.switch)
        ip("-n", self.switch, "link", "add", BRIDGE, "type", "bridge")
        ip("-n", self.switch, "link", "set", BRIDGE, "up")
        for host in HOSTS:
            ns = self.ns(host)
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")
            ip("-n", self.switch, "link", "add", f"h-{host}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("-n", self.switch, "link", "set", f"h-{host}", "master", BRIDGE, "up")
            ip("-n", ns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")
        ip("-n", self.ns("bots"), "addr", "add", f"{BOTS_ALIAS}/24", "dev", "eth0")
        self.check_isolated()

    def check_isolated(self) -> None:
        """Fail closed: no namespace of the run may have a default route or an address outside the subnet."""
        for host in [*HOSTS, "sw"]:
            ns = self.prefix + host
            routes = ip("-n", ns, "route", "show").stdout + ip("-n", ns, "-6", "route", "show").stdout
            assert "default" not in routes, f"{ns} has a default route: {routes}"
            for line in ip("-n", ns, "-4", "-o", "addr", "show").stdout.splitlines():
                addr = line.split()[3]
                assert addr.startswith(f"{SUBNET}.") or addr.startswith("127."), f"{ns} has {addr}"

    def cut(self, host: str) -> None:
        """Cut the host off from everyone (its cable pulled)."""
        ip("-n", self.switch, "link", "set", f"h-{host}", "down")

    def heal(self, host: str) -> None:
        ip("-n", self.switch, "link", "set", f"h-{host}", "up")

    def cut_pair(self, a: str, b: str) -> None:
        """Cut two hosts apart, each still reaching every other host."""
        for one, other in ((a, b), (b, a)):
            ip("-n", self.ns(one), "neigh", "replace", self.address(other), "lladdr", NOBODY_MAC,
               "dev", "eth0", "nud", "permanent")

    def heal_pair(self, a: str, b: str) -> None:
        for one, other in ((a, b), (b, a)):
            ip("-n", self.ns(one), "neigh", "del", self.address(other), "dev", "eth0", check=False)

    def pids(self, host: str) -> list[int]:
        out = ip("netns", "pids", self.ns(host), check=False).stdout
        return [int(p) for p in out.split()]

    def destroy(self) -> None:
        destroy_prefix(self.prefix)


def _namespaces() -> list[str]:
    return [line.split()[0] for line in ip("netns", "list", check=False).stdout.splitlines() if line.strip()]


def destroy_prefix(prefix: str) -> None:
    """Kill every process inside the run's namespaces (only ours live there), then delete them."""
    import signal
    import time

    names = [n for n in _namespaces() if n.startswith(prefix)]
    for sig in (signal.SIGKILL,):
        for name in names:
            for pid in ip("netns", "pids", name, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), sig)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(ip("netns", "pids", n, check=False).stdout.strip() for n in names):
        time.sleep(0.1)
    for name in names:
        ip("netns", "del", name, check=False)


def remove_stale() -> None:
    """Namespaces left by an earlier run whose process is gone (a SIGKILLed test run) are removed."""
    for name in _namespaces():
        found = PREFIX_PATTERN.match(name)
        if found and not Path(f"/proc/{found.group(1)}").exists():
            destroy_prefix(found.group(0))
