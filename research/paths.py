"""Puts `benchmarks/replication/` (compare_seeds, rows, replicate) on `sys.path` for the research scripts, which
read that folder's results and runs."""
import sys
from pathlib import Path

REPLICATION = Path(__file__).resolve().parents[1] / "benchmarks" / "replication"
if str(REPLICATION) not in sys.path:
    sys.path.insert(0, str(REPLICATION))
