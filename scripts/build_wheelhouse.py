"""
An offline wheel directory of memplugins' pinned stack for another Python version and platform: for clusters
without a package registry, and for the lent GPU machine (Python 3.12, its own torch, no registry).

    python3 scripts/build_wheelhouse.py --python-version 3.12 --out wheelhouse/            # the whole stack
    python3 scripts/build_wheelhouse.py --python-version 3.12 --out .whl \\
        --skip-present scripts/gpu_machine_packages.txt --site-archive .gpusite/site.tar.xz  # what the GPU lacks

Every package of `requirements/constraints.lock` and `requirements/no-deps.txt` is downloaded as a wheel for the
target (`pip download --no-deps --only-binary=:all:`), at its pinned version, or, where that version has no wheel
for the target Python, at the newest version that has one (the manifest says which); a package published only as
a source distribution (word2number) is built here into a wheel, kept only if that wheel is pure Python. Packages in the
`--skip-present` file (one name per line: what the target machine already has, in a version that works) are left
out. memplugins itself is built as a wheel too. `OUT/manifest.txt` lists every wheel, its size, and what could not
be had. Install on the target with

    python3 -m pip install --no-index --no-deps --target SITE OUT/*.whl && export PYTHONPATH=SITE

`--site-archive FILE.tar.xz` does that install here instead (pip installs for the target's Python and platform
with `--target`), leaves out memplugins (the checkout beside it is the code under test), tests and byte code,
strips debug symbols from compiled modules (`strip --strip-debug`: the wheels of spaCy, blis and jsonnet carry
them; it halves the unpacked size) and packs the folder: the lent GPU machine takes 64 MiB of carried files, and
the wheels of what it lacks are about 100 MiB, the packed site about 40 MiB. `scripts/gpu_run_all.sh` unpacks it.
"""
import argparse
import shutil
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "manylinux_2_24_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64"]


def pins() -> Dict[str, str]:
    """name -> version specifier ("==1.2"): the lock file's and the no-deps list's pins, and the ranges of
    requirements.txt for what neither pins (setuptools: py-rouge needs a pkg_resources that setuptools 82 dropped)."""
    found = {}
    for path in (ROOT / "requirements" / "constraints.lock", ROOT / "requirements" / "no-deps.txt"):
        for line in path.read_text().splitlines():
            match = re.match(r"^([A-Za-z0-9_.\-]+)(==[^\s;#]+)", line.strip())
            if match:
                found[normalise(match.group(1))] = match.group(2)
    for line in (ROOT / "requirements" / "requirements.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)\s*([<>=!~][^\s;#]*)", line.strip())
        if match and normalise(match.group(1)) not in found:
            found[normalise(match.group(1))] = match.group(2)
    return found


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def target(python_version: str) -> List[str]:
    """pip's options that choose wheels for the target: its Python, CPython, x86-64 manylinux, binaries only."""
    platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
    return ["--python-version", python_version, "--implementation", "cp", "--only-binary=:all:", *platforms]


def download(name: str, version: Optional[str], out: Path, python_version: str) -> Tuple[bool, str]:
    spec = f"{name}{version or ''}"
    command = [sys.executable, "-m", "pip", "download", "--no-deps", *target(python_version), "-d", str(out),
               "--quiet", spec]
    result = subprocess.run(command, capture_output=True, text=True)
    return result.returncode == 0, result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""


def build_from_sdist(name: str, version: str, out: Path) -> Tuple[bool, str]:
    """A wheel built here from the source distribution; kept only if pure Python (then it fits any target)."""
    with tempfile.TemporaryDirectory() as build:
        result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", build,
                                 f"{name}{version}"], capture_output=True, text=True)
        built = list(Path(build).glob("*.whl"))
        if result.returncode != 0 or not built:
            return False, (result.stderr.strip().splitlines() or ["pip wheel failed"])[-1]
        if not built[0].name.endswith("-none-any.whl"):
            return False, f"its source builds {built[0].name}, a wheel for this machine's Python only"
        shutil.copy(built[0], out / built[0].name)
        return True, ""


def build_site_archive(wheels: List[Path], archive: Path, python_version: str) -> None:
    """Installs the wheels (all but memplugins) for the target into a folder, slims it, packs it as tar.xz."""
    with tempfile.TemporaryDirectory() as work:
        site = Path(work) / "site"
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target",
                   str(site), *target(python_version)]
        subprocess.run(command + [str(path) for path in wheels if not path.name.startswith("memplugins-")],
                       check=True)
        # nothing imports a package's own test suite at run time (spaCy's and thinc's are most of it)
        unused = [path for name in ("__pycache__", "tests") for path in site.rglob(name)] + [site / "nltk" / "test"]
        for folder in unused:
            if folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
        if shutil.which("strip"):
            for library in site.rglob("*.so*"):
                if library.is_file() and not library.is_symlink():
                    subprocess.run(["strip", "--strip-debug", str(library)], check=False)
        archive.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-C", str(site), "-cJf", str(archive.resolve()), "."], check=True,
                       env={"XZ_OPT": "-6 -T0", "PATH": "/usr/bin:/bin"})
    print(f"{archive}: {archive.stat().st_size / 2**20:.1f} MiB", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python-version", required=True, help="e.g. 3.12")
    parser.add_argument("--out", required=True)
    parser.add_argument("--skip-present", help="a file of package names the target already has")
    parser.add_argument("--site-archive", help="also install the wheels for the target into a folder, packed here "
                        "as .tar.xz (see above)")
    args = parser.parse_args()
    out = Path(args.out).resolve()  # pip wheel below runs in a temporary folder
    out.mkdir(parents=True, exist_ok=True)
    skip = set()
    if args.skip_present:
        skip = {normalise(line.split("#")[0].strip()) for line in Path(args.skip_present).read_text().splitlines()
                if line.split("#")[0].strip()}
    notes: List[str] = []
    for name, version in sorted(pins().items()):
        if name in skip:
            continue
        ok, error = download(name, version, out, args.python_version)
        if not ok:  # no wheel of the pinned version for this Python: the newest one that has one, or its sdist
            ok, error = download(name, None, out, args.python_version)
            how = "took the newest that has one"
            if not ok:
                ok, error = build_from_sdist(name, version, out)
                how = "built a pure-Python wheel from its source distribution"
            notes.append(f"{name}{version} has no wheel for Python {args.python_version}; "
                         + (how if ok else f"none found ({error})"))
        print(f"{name}: {'ok' if ok else 'MISSING'}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as build:
        # build isolation: the build needs setuptools' and wheel's own, not whatever this environment has
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), "--quiet", str(ROOT)],
                       check=True, cwd=build)
    wheels = sorted(out.glob("*.whl"))
    total = sum(path.stat().st_size for path in wheels)
    lines = [f"wheels for Python {args.python_version} (x86-64 manylinux), {len(wheels)} files, "
             f"{total / 2**20:.1f} MiB"] + [f"{path.name}\t{path.stat().st_size / 2**20:.2f} MiB" for path in wheels]
    lines += ["", "notes:"] + (notes or ["every pinned version had a wheel"])
    (out / "manifest.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:1] + lines[-len(notes or [1]) - 1 :]))
    if args.site_archive:
        build_site_archive(wheels, Path(args.site_archive), args.python_version)


if __name__ == "__main__":
    main()
