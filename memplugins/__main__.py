"""`python -m memplugins ...`: the `memplugins` command (`memplugins.cli`)."""
import sys

from memplugins.cli import main

if __name__ == "__main__":
    sys.exit(main())
