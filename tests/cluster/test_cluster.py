"""The arena across hosts under network partitions: seven network namespaces on one bridge (db, web,
w1-w3, bots, and drv for the driver), the production configuration on PostgreSQL, five scenarios each
with a tournament and the ladder running (its scheduler on every worker host, one active), and the
invariants after each (tests/cluster/invariants.py).

One run of the cluster serves every test here: it is built once (about three minutes in all) and each
scenario reports on its own. Skipped only when this machine cannot make network namespaces (not root,
no iproute2). ``scripts/cluster-test.sh`` runs it by hand, with ``--throughput`` for the figures of
docs/benchmarks.md.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.cluster.scenarios import SCENARIOS
from tests.cluster.topology import netns_available

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    why = netns_available()
    if why is not None:
        pytest.skip(why)
    from tests.cluster.hosts import postgres_bin

    try:
        postgres_bin("initdb")
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    from tests.cluster.run import run_cluster

    return run_cluster()


def test_the_cluster_came_up_and_went_away(report: dict[str, Any]) -> None:
    from tests.cluster.topology import _namespaces

    assert "error" not in report, report.get("error", "") + report.get("logs", "")[-6000:] + report["driver_log"]
    assert report["driver_exit"] == 0, report["driver_log"]
    assert [s["scenario"] for s in report["scenarios"]] == list(SCENARIOS)
    prefix = report["run_dir"].rsplit("/", 1)[-1].split("run-")[0]
    assert not [n for n in _namespaces() if n.startswith(prefix)]  # torn down


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_holds_every_invariant(report: dict[str, Any], name: str) -> None:
    found = [s for s in report.get("scenarios", []) if s["scenario"] == name]
    assert found, f"the scenario did not run: {report.get('error', '')}{report['driver_log']}"
    entry = found[0]
    summary = json.dumps({k: v for k, v in entry.items() if k not in ("logs", "traceback")}, indent=1)
    assert "error" not in entry, f"{summary}\n{entry.get('traceback', '')}\n{entry.get('logs', '')}"
    assert entry["invariants"] == [], f"{summary}\n{entry.get('logs', '')}"
