"""
The long fuzzing mode (opt-in): `MEMPLUGINS_FUZZ_MINUTES=30 scripts/test.sh -m fuzz tests/fuzz -n 0 -s`. Every
target of `tests/fuzz/targets.py` in turn gets 50 fresh random examples (a new seed each round) until the time is
up; a raw exception fails at once with Hypothesis's shrunk example. Prints, and writes to
`MEMPLUGINS_FUZZ_REPORT` (default: the test's tmp folder), how many examples each target ran.
"""
import os
import random
import time
from pathlib import Path

import pytest

from tests.fuzz.targets import COUNTS, TARGETS, fuzz


@pytest.mark.fuzz
def test_fuzz_for_minutes(tmp_path):
    minutes = float(os.environ.get("MEMPLUGINS_FUZZ_MINUTES", "30"))
    deadline = time.monotonic() + 60 * minutes
    rng = random.Random()
    rounds = 0
    COUNTS.clear()
    while time.monotonic() < deadline:
        for name in TARGETS:
            if time.monotonic() >= deadline:
                break
            fuzz(name, tmp_path, max_examples=50, random_seed=rng.getrandbits(64))
        rounds += 1
    report = "\n".join(f"{name}: {count} examples" for name, count in sorted(COUNTS.items()))
    report += f"\nall: {sum(COUNTS.values())} examples in {minutes:g} minutes, {rounds} rounds, no raw exception"
    print(report)
    Path(os.environ.get("MEMPLUGINS_FUZZ_REPORT", tmp_path / "fuzz_report.txt")).write_text(report + "\n")
