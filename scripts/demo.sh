#!/usr/bin/env bash
# Install the arena into .venv (first run only) and run `arena demo`: an embedded Redis, SQLite, three
# workers, sample bots placed by the ladder (live), the leaderboards, then the pages at
# http://127.0.0.1:8000/ until Ctrl-C. Extra arguments go to `arena demo` (e.g. --port 8080, --exit).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_python
ensure_venv
exec .venv/bin/arena demo "$@"
