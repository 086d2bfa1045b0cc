#!/usr/bin/env bash
# Run the whole test suite on this machine, setting up whatever it lacks first:
# system packages (Python venv, Redis, PostgreSQL, Chromium), the services, a virtualenv with the
# project and its test extras. Exits with pytest's status and prints pytest's summary line.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh tests/games -x`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_python
ensure_test_services
ensure_venv test
export ARENA_TEST_REDIS_URL="${ARENA_TEST_REDIS_URL:-redis://127.0.0.1:6379/15}"
export ARENA_TEST_DATABASE_URL="${ARENA_TEST_DATABASE_URL:-postgresql+psycopg://postgres:postgres@127.0.0.1:5432/test}"
export ARENA_TEST_CHROMIUM="${ARENA_TEST_CHROMIUM:-/usr/bin/chromium}"
echo "== ruff"
.venv/bin/ruff check .
echo "== pytest"
# Parallel workers (pytest-xdist): most tests wait on bots, processes and sockets rather than the CPU.
# Each file runs in one worker, in order, sharing its module fixtures (--dist loadfile; loadgroup's marks
# are lost under pytest 9.2, which ignores the node-id suffix xdist 3.8 sets). The cluster test's runs are
# apart: each names its namespaces after its own pid. Then the tests marked ``serial`` (they judge deadlines
# and latencies: tests/conftest.py) run alone. ARENA_TEST_WORKERS=0 runs the first part in this process.
# Exit status: pytest's, failing if either part failed (5, nothing selected in a part, counts as passed).
status=0
.venv/bin/python -m pytest -n "${ARENA_TEST_WORKERS:-3}" --dist loadfile -m "not serial" "$@" || status=$?
[ "$status" -eq 5 ] && status=0
echo "== pytest, tests that judge time (alone)"
serial=0
.venv/bin/python -m pytest -p no:xdist -m serial "$@" || serial=$?
[ "$serial" -eq 5 ] && serial=0
[ "$status" -ne 0 ] && exit "$status"
exit "$serial"
