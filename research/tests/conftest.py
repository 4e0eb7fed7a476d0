"""The research instruments' tests: opt-in (`scripts/test.sh -m research research/tests`), not part of the default
suite; research/ is not a maintained part of the product."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for folder in (ROOT / "research", ROOT / "benchmarks" / "replication"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def pytest_collection_modifyitems(items):
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(Path(__file__).resolve().parent):
            item.add_marker(pytest.mark.research)
