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
exec .venv/bin/python -m pytest "$@"
