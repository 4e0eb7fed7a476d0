#!/usr/bin/env bash
# The README's test command: bootstraps .venv/ if needed, then runs the default (fast, offline) test suite.
# Extra arguments go to pytest, e.g. `scripts/test.sh -m slow` for the opt-in real-data tests.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
exec python -m pytest "$@"
