#!/usr/bin/env bash
# Creates (or refreshes) the virtualenv at $MEMPLUGINS_VENV (default .venv/ in the repository root).
# The interpreter is $PYTHON when set, else the newest supported one found: python3.13, python3.12, python3.11 on the
# PATH, then pyenv's installed 3.13 / 3.12 / 3.11 (pyenv's shims answer only for the global version);
# MEMPLUGINS_PYTHON_MINOR=3.11 restricts the search to that version (.ci/run's second environment).
# Re-installs only when the venv is missing, its Python differs, or a requirement file / setup.py changed since the
# last install, so a second run costs a hash of four small files. Sourced by scripts/train.sh and scripts/test.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MEMPLUGINS_VENV:-$ROOT/.venv}"
[[ "$VENV" = /* ]] || VENV="$ROOT/$VENV"
STAMP="$VENV/.memplugins-requirements.sha256"

supported() { "$1" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' >/dev/null 2>&1; }

if [[ -z "${PYTHON:-}" ]]; then
    candidates=(python3.13 python3.12 python3.11)
    if command -v pyenv >/dev/null 2>&1; then
        for minor in ${MEMPLUGINS_PYTHON_MINOR:-3.13 3.12 3.11}; do
            newest="$(pyenv versions --bare 2>/dev/null | grep -E "^${minor//./\\.}\.[0-9]+$" | sort -V | tail -1 || true)"
            [[ -n "$newest" ]] && candidates+=("$(pyenv root)/versions/$newest/bin/python3")
        done
    fi
    # newest minor first, whichever way it was found
    for minor in ${MEMPLUGINS_PYTHON_MINOR:-3.13 3.12 3.11}; do
        for candidate in "${candidates[@]}"; do
            if supported "$candidate" && [[ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" == "$minor" ]]; then
                PYTHON="$candidate"
                break 2
            fi
        done
    done
    [[ -n "${PYTHON:-}" ]] || { echo "[memplugins] no Python 3.11, 3.12 or 3.13 found (set PYTHON=...)" >&2; exit 1; }
elif ! supported "$PYTHON"; then
    echo "[memplugins] PYTHON=$PYTHON is not Python 3.11, 3.12 or 3.13" >&2
    exit 1
fi

version="$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
want="$(cd "$ROOT" && { echo "python $version"; cat requirements/requirements.txt requirements/constraints.lock \
        requirements/no-deps.txt setup.py; } | sha256sum | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"

if [[ ! -x "$VENV/bin/python" || "$want" != "$have" ]]; then
    echo "[memplugins] setting up $VENV with Python $version (first run or requirements changed; a few minutes)" >&2
    # pip on machines with a local wheel mirror warns once per package about mirror folders it skips
    quiet_pip() { "$VENV/bin/python" -m pip "$@" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; }
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    # 1. the explicit runtime stack, pinned exactly by the lock file that was tested (one lock for 3.11-3.13)
    quiet_pip install --quiet -r "$ROOT/requirements/requirements.txt" -c "$ROOT/requirements/constraints.lock"
    # 2. allennlp / allennlp-models without their (uninstallable) dependency pins
    quiet_pip install --quiet --no-deps -r "$ROOT/requirements/no-deps.txt"
    # 3. this package, editable, so the checkout is what runs
    quiet_pip install --quiet --no-deps --no-build-isolation -e "$ROOT"
    "$VENV/bin/python" -c "import memplugins" || { echo "[memplugins] $VENV: import memplugins failed" >&2; exit 1; }
    echo "$want" > "$STAMP"
    echo "[memplugins] $VENV ready (Python $version)" >&2
fi
export PATH="$VENV/bin:$PATH"
