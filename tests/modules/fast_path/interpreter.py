"""
Running a Triton kernel check on the CPU: Triton reads `TRITON_INTERPRET` when a kernel is defined, so each check is
a script run in a fresh interpreter (`run_under_interpreter`), which counts the kernels' launches with
`count_launches` and prints "kernels checked" at its end.
"""
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[3]


def run_under_interpreter(check: str, timeout: int) -> None:
    """Runs the script `check` from the repository root with the kernels on and Triton's interpreter; asserts that
    it finished and said so."""
    environment = {**os.environ, "TRITON_INTERPRET": "1", "MEMPLUGINS_TRITON": "1",
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env=environment, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "kernels checked" in result.stdout


def count_launches(entries: Sequence[Tuple[object, str, str]]) -> Dict[str, int]:
    """Wraps each (module, function name, key) so that a call adds 1 to the returned counts under key (the call
    sites import the function when they call it, so they get the wrapper)."""
    calls = {key: 0 for _, _, key in entries}
    for module, name, key in entries:
        def counted(*args, _original=getattr(module, name), _key=key, **kwargs):
            calls[_key] += 1
            return _original(*args, **kwargs)

        setattr(module, name, counted)
    return calls
