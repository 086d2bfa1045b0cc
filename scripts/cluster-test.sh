#!/usr/bin/env bash
# The cluster test by hand (as root): the arena on seven network namespaces of its own (db, web, w1-w3,
# bots and the driver's drv, on one bridge, no route out), five partition scenarios with a tournament and
# the ladder running, the invariants after each, and everything torn down afterwards (tests/cluster/,
# docs/reliability.md).
#   bash scripts/cluster-test.sh                  # the scenarios, as pytest runs them in CI
#   bash scripts/cluster-test.sh --throughput     # also matches per minute with 1, 2 and 3 worker hosts
#   bash scripts/cluster-test.sh --scenarios worker_partition db_partition
# Prints the driver's report (JSON); the run's logs stay in the folder it names (run_dir).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
if [ "$(id -u)" != "0" ]; then echo "the cluster test needs root (network namespaces)" >&2; exit 2; fi
ensure_python
ensure_cluster_tools
ensure_venv test
exec .venv/bin/python -m tests.cluster.run "$@"
