#!/usr/bin/env bash
# Creates (or refreshes) the virtualenv at .venv/ in the repository root.
# Re-installs only when .venv is missing or when a requirement file / setup.py changed since the last install,
# so a second run costs a hash of four small files. Sourced by scripts/train.sh and scripts/test.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.memplugins-requirements.sha256"
PYTHON="${PYTHON:-python3.11}"

want="$(cd "$ROOT" && cat requirements/requirements.txt requirements/constraints.lock requirements/no-deps.txt setup.py \
        | sha256sum | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"

if [[ ! -x "$VENV/bin/python" || "$want" != "$have" ]]; then
    echo "[memplugins] setting up $VENV (first run or requirements changed; takes a few minutes)" >&2
    command -v "$PYTHON" >/dev/null || { echo "[memplugins] $PYTHON not found: Python 3.11 is required" >&2; exit 1; }
    # pip on machines with a local wheel mirror warns once per package about mirror folders it skips
    quiet_pip() { "$VENV/bin/python" -m pip "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; }
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    # 1. the explicit runtime stack, pinned exactly by the lock file that was tested
    quiet_pip install --quiet -r "$ROOT/requirements/requirements.txt" -c "$ROOT/requirements/constraints.lock"
    # 2. allennlp / allennlp-models without their (uninstallable) dependency pins
    quiet_pip install --quiet --no-deps -r "$ROOT/requirements/no-deps.txt"
    # 3. this package, editable, so the checkout is what runs
    quiet_pip install --quiet --no-deps --no-build-isolation -e "$ROOT"
    echo "$want" > "$STAMP"
    echo "[memplugins] $VENV ready" >&2
fi
export PATH="$VENV/bin:$PATH"
