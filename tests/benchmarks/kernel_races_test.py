"""benchmarks/speed/kernel_races.py (run on a GPU by `scripts/gpu_run_all.sh races`): its cases run, here at small sizes
under Triton's interpreter (in a fresh process: Triton reads TRITON_INTERPRET when a kernel is defined), and the
table says each is repeatable, finite and close to the torch path. The GPU regression test for the races themselves
is `test_triton_kernels_are_repeatable_at_training_sizes` in tests/gpu_test.py."""
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

pytest.importorskip("triton")


def test_the_cases_run_repeatably_and_match_the_torch_path():
    environment = {**os.environ, "TRITON_INTERPRET": "1", "MEMPLUGINS_TRITON": "1"}
    result = subprocess.run([sys.executable, "benchmarks/speed/kernel_races.py", "--device", "cpu", "--small",
                             "--runs", "2"], cwd=REPO_ROOT, env=environment, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines() if line.startswith("| ") and "case" not in line]
    assert [row[0].split(" (")[0].strip() for row in rows] == ["tape read forward", "lstmn layer forward + backward",
                                                              "recency lstmn layer forward + backward",
                                                              "mma-nse encoder forward + backward",
                                                              "tree lstm forward + backward"]
    for name, runs, differing, nonfinite, largest, against_torch, _ in rows:
        assert (int(runs), int(differing), int(nonfinite), float(largest)) == (2, 0, 0, 0.0), name
        assert 0 < float(against_torch) < 1e-5, name  # the kernels ran (their rounding differs) and agree
