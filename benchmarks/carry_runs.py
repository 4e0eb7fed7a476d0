"""
Carries unfinished `benchmarks/replicate.py` runs from a machine that will be taken back (a lent GPU) to one that
continues them (`replicate.py` there resumes each run with `--recover`; `Replication.relocate` points its config at
that machine's device and data).

    .venv/bin/python benchmarks/carry_runs.py pack RUNS OUT [--first ROW ...] [--max-mib 60] [--part-mib 15.5]
    .venv/bin/python benchmarks/carry_runs.py unpack PARTS_DIR --runs RUNS

`pack` writes one gzipped tar, cut into parts of `--part-mib` (a lent machine returns files of at most 16 MiB):
`runs.tar.gz.000`, `.001`, ... Every run directory under RUNS contributes its record (`run.json`, `train.log`, the
resolved `config.json`, the vocabulary, the per-epoch metrics, AllenNLP's `out.log`, test metrics). An unfinished run
also contributes the checkpoint of its last *completed* epoch (`model_state_eK_b0.th`, `training_state_eK_b0.th`):
`--recover` resumes from it at the start of the next epoch. A checkpoint the deadline saved in the middle of an
epoch is left behind (up to one epoch's work is repeated), and so is `best.th` when the last completed epoch is the
best so far: it holds that epoch's weights, and `unpack` copies it from the model state. A finished run contributes
its `model.tar.gz`, so that its test figure can be taken here too. Checkpoints and archives go in run by run
(`--first` names the rows that go first, then the rest by name) while the parts together stay under `--max-mib`; a
run whose checkpoint or archive does not fit is carried without it (the manifest says so). The budget is on the
packed (gzipped) bytes, which is what the lent machine returns: float32 weights pack to about 93 % of their size, so
a run is planned in while its raw bytes fit `RAW_ALLOWANCE` times the budget, the tar is built, and while it is over
the budget the lowest-priority run that carries weights is left without them and the tar built again. (The
default 60 MiB in parts of 15.5 leaves 4 MiB and 4 of the 8 returned files to the phase's tables. A 3-layer LSTMN's
checkpoint whose best epoch is not its last, 58.9 MiB raw with its `best.th`, stayed behind under the old budget
on the raw bytes, 58 MiB.)

`unpack` treats the parts as untrusted: it reads `MANIFEST.json` first, takes only regular files whose paths it
lists (relative, no `..`, under a run directory named like replicate.py's), checks each file's size and SHA-256
against it, refuses to replace a run directory that already exists, and only then moves each run into RUNS.
"""
import argparse
import hashlib
import io
import json
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

MANIFEST = "MANIFEST.json"
PART_PREFIX = "runs.tar.gz."
RUN_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
RAW_ALLOWANCE = 1.1  # raw bytes planned in per packed byte of budget; the built tar is then checked against it
RECORD_PATTERNS = ["run.json", "train.log", "test_metrics.json", "train/config.json", "train/vocabulary/*",
                   "train/metrics_epoch_*.json", "train/metrics.json", "train/out.log"]
CHECKPOINT = re.compile(r"^model_state_e(\d+)_b0\.th$")
MIB = 1024 * 1024


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def last_completed_epoch(serialization: Path) -> Optional[int]:
    """K of the newest end-of-epoch checkpoint (`model_state_eK_b0.th` with its training state), or None."""
    epochs = [int(match.group(1)) for path in serialization.glob("model_state_e*_b0.th")
              if (match := CHECKPOINT.match(path.name)) and (serialization / f"training_state_e{match.group(1)}_b0.th").exists()]
    return max(epochs, default=None)


def best_is_epoch(serialization: Path, epochs_completed: int) -> bool:
    """Whether `best.th` holds the weights of the last completed epoch (AllenNLP numbers epochs from 0)."""
    metrics = serialization / f"metrics_epoch_{epochs_completed - 1}.json"
    return metrics.exists() and json.loads(metrics.read_text()).get("best_epoch") == epochs_completed - 1


def plan(runs: Path, first: List[str], max_bytes: int,
         left_behind: frozenset = frozenset()) -> Tuple[List[Tuple[Path, str]], Dict[str, dict]]:
    """The files to carry ((path, name in the tar)) and the manifest's per-run entries: each run's checkpoint or
    archive goes in while the raw total stays under `max_bytes`, except the runs named in `left_behind`."""
    present = runs.iterdir() if runs.is_dir() else []  # no run began: the record is the manifest alone
    directories = sorted((path for path in present if (path / "run.json").is_file()),
                         key=lambda path: (next((i for i, row in enumerate(first) if path.name.startswith(row + "-seed")),
                                                len(first)), path.name))
    files: List[Tuple[Path, str]] = []
    entries: Dict[str, dict] = {}
    total = 0
    for directory in directories:
        record = sorted({path for pattern in RECORD_PATTERNS for path in directory.glob(pattern) if path.is_file()})
        entry = {"done": json.loads((directory / "run.json").read_text()).get("done", False), "checkpoint": None}
        chosen = [(path, f"{directory.name}/{path.relative_to(directory)}") for path in record]
        total += sum(path.stat().st_size for path, _ in chosen)
        serialization = directory / "train"
        epoch = None if entry["done"] else last_completed_epoch(serialization)
        if entry["done"] and (serialization / "model.tar.gz").exists():
            # a finished run's archive, so that its test figure can be taken (again) here
            heavy, what = [serialization / "model.tar.gz"], "its archive"
        elif epoch is not None:
            heavy, what = [serialization / f"model_state_e{epoch}_b0.th",
                           serialization / f"training_state_e{epoch}_b0.th"], f"the checkpoint of epoch {epoch}"
            best_from_state = best_is_epoch(serialization, epoch)
            if not best_from_state and (serialization / "best.th").exists():
                heavy.append(serialization / "best.th")
        else:
            heavy = []
        if heavy:
            size = sum(path.stat().st_size for path in heavy)
            if total + size <= max_bytes and directory.name not in left_behind:
                total += size
                chosen += [(path, f"{directory.name}/train/{path.name}") for path in heavy]
                if epoch is not None:
                    entry["checkpoint"] = {"epochs_completed": epoch, "best_from_model_state": best_from_state}
                else:
                    entry["archive"] = True
            else:
                entry["left_behind"] = f"{what} ({size / MIB:.1f} MiB) did not fit"
        files += chosen
        entries[directory.name] = entry
    return files, entries


def build(files: List[Tuple[Path, str]], entries: Dict[str, dict]) -> bytes:
    """The gzipped tar: the manifest first, then the files."""
    manifest = {"runs": entries, "files": {name: {"bytes": path.stat().st_size, "sha256": sha256(path)}
                                           for path, name in files}}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        encoded = json.dumps(manifest, indent=1).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(encoded)
        archive.addfile(info, io.BytesIO(encoded))
        for path, name in files:
            archive.add(str(path), arcname=name, recursive=False)
    return buffer.getvalue()


def pack(runs: Path, out: Path, first: List[str], max_mib: float, part_mib: float) -> List[Path]:
    budget, left_behind = int(max_mib * MIB), frozenset()
    while True:
        files, entries = plan(runs, first, int(budget * RAW_ALLOWANCE), left_behind)
        data = build(files, entries)
        heavy = [name for name, entry in entries.items() if entry["checkpoint"] or entry.get("archive")]
        if len(data) <= budget or not heavy:
            if len(data) > budget:
                print(f"carry_runs: the records alone pack to {len(data) / MIB:.1f} MiB, over the {max_mib} MiB "
                      "budget", file=sys.stderr)
            break
        left_behind |= {heavy[-1]}  # the lowest-priority run that carries weights
    out.mkdir(parents=True, exist_ok=True)
    size = int(part_mib * MIB)
    parts = []
    for index, start in enumerate(range(0, len(data), size)):
        part = out / f"{PART_PREFIX}{index:03d}"
        part.write_bytes(data[start:start + size])
        parts.append(part)
    for name, entry in entries.items():
        carried = (f"checkpoint of epoch {entry['checkpoint']['epochs_completed']}" if entry["checkpoint"]
                   else "done, with its archive" if entry.get("archive")
                   else entry.get("left_behind", "done" if entry["done"] else "no completed epoch"))
        print(f"{name}: {carried}", file=sys.stderr)
    print(f"{len(files)} files, {len(data) / MIB:.1f} MiB in {len(parts)} parts", file=sys.stderr)
    return parts


def unpack(parts_dir: Path, runs: Path) -> List[str]:
    parts = sorted(parts_dir.glob(PART_PREFIX + "[0-9][0-9][0-9]"))
    if not parts:
        raise SystemExit(f"carry_runs: no {PART_PREFIX}NNN parts in {parts_dir}")
    stream = io.BytesIO(b"".join(part.read_bytes() for part in parts))
    with tempfile.TemporaryDirectory(dir=runs.parent if runs.parent.exists() else None) as staging_name:
        staging = Path(staging_name)
        with tarfile.open(fileobj=stream, mode="r:gz") as archive:
            members = archive.getmembers()
            if not members or members[0].name != MANIFEST or not members[0].isfile():
                raise SystemExit(f"carry_runs: {parts[0]} does not begin with {MANIFEST}")
            manifest = json.loads(archive.extractfile(members[0]).read())
            listed = manifest["files"]
            for name, entry in manifest["runs"].items():  # names that become paths here, and what unpack reads
                checkpoint = entry.get("checkpoint")
                if (not RUN_NAME.match(name) or name in (".", "..") or f"{name}/run.json" not in listed
                        or (checkpoint and not isinstance(checkpoint.get("epochs_completed"), int))):
                    raise SystemExit(f"carry_runs: refusing run {name!r} in {parts_dir}'s manifest (not a run "
                                     "directory's name, no run.json, or a malformed checkpoint entry)")
            for member in members[1:]:
                name = member.name
                parts_of_name = name.split("/")
                if (not member.isfile() or name not in listed or name.startswith("/") or ".." in parts_of_name
                        or not RUN_NAME.match(parts_of_name[0]) or parts_of_name[0] not in manifest["runs"]):
                    raise SystemExit(f"carry_runs: refusing {name!r} in {parts_dir} (not a listed regular file "
                                     "inside a run directory)")
                if member.size != listed[name]["bytes"]:
                    raise SystemExit(f"carry_runs: {name} is {member.size} bytes, the manifest says "
                                     f"{listed[name]['bytes']}")
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.extractfile(member) as source, open(target, "wb") as sink:
                    shutil.copyfileobj(source, sink)
                if sha256(target) != listed[name]["sha256"]:
                    raise SystemExit(f"carry_runs: {name} does not match its SHA-256 in the manifest")
            missing = set(listed) - {member.name for member in members}
            if missing:
                raise SystemExit(f"carry_runs: the parts lack {sorted(missing)[:3]} (a part missing?)")
        for name, entry in manifest["runs"].items():
            if (runs / name).exists():
                raise SystemExit(f"carry_runs: {runs / name} exists; move it away to take the carried run")
        runs.mkdir(parents=True, exist_ok=True)
        for name, entry in manifest["runs"].items():
            checkpoint = entry.get("checkpoint")
            if checkpoint and checkpoint["best_from_model_state"]:
                serialization = staging / name / "train"
                shutil.copyfile(serialization / f"model_state_e{checkpoint['epochs_completed']}_b0.th",
                                serialization / "best.th")
            shutil.move(str(staging / name), str(runs / name))
            print(f"{runs / name}: " + (f"resumable from epoch {checkpoint['epochs_completed']}" if checkpoint
                                        else entry.get("left_behind", "done" if entry["done"] else "record only")),
                  file=sys.stderr)
        return list(manifest["runs"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack")
    packing.add_argument("runs", type=Path)
    packing.add_argument("out", type=Path)
    packing.add_argument("--first", nargs="*", default=[], help="rows whose checkpoints go first")
    packing.add_argument("--max-mib", type=float, default=60, help="budget on the packed bytes (all parts)")
    packing.add_argument("--part-mib", type=float, default=15.5, help="a lent machine returns files of at most 16 MiB")
    unpacking = commands.add_parser("unpack")
    unpacking.add_argument("parts_dir", type=Path)
    unpacking.add_argument("--runs", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "pack":
        pack(args.runs, args.out, args.first, args.max_mib, args.part_mib)
    else:
        unpack(args.parts_dir, args.runs)


if __name__ == "__main__":
    main()
