"""
The `memplugins` console command's launcher: runs `memplugins/cli.py` as a standalone module, without importing the
memplugins package first (importing the package loads AllenNLP, torch and transformers, about 10 s), so that
`memplugins --help`, `--version` and `configs` answer at once. Every other command imports the package from there.
"""
import importlib.util
import os
import sys


def main() -> int:
    package = importlib.util.find_spec("memplugins")  # finds the package without importing it
    path = os.path.join(package.submodule_search_locations[0], "cli.py")
    spec = importlib.util.spec_from_file_location("memplugins_standalone_cli", path)
    cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli)
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
