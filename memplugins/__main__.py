"""`python -m memplugins ...`: the `memplugins` command (see `memplugins_cli`)."""
import sys

from memplugins_cli import main

if __name__ == "__main__":
    sys.exit(main())
