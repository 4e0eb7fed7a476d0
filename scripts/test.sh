#!/usr/bin/env bash
# The README's test command: bootstraps .venv/ if needed, then runs the default (fast, offline) test suite.
# Extra arguments go to pytest, e.g. `scripts/test.sh -m slow` for the opt-in real-data tests. The suite runs on
# MEMPLUGINS_TEST_WORKERS pytest-xdist workers (default 2, CI's cores; each test file stays on one worker, so its
# module fixtures are built once); `scripts/test.sh -n 0` runs it in this process.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
exec python -m pytest -n "${MEMPLUGINS_TEST_WORKERS:-2}" --dist loadfile "$@"
