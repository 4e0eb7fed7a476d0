"""
Carries unfinished `benchmarks/replication/replicate.py` runs from a machine that will be taken back (a lent GPU) to one that
continues them (`replicate.py` there resumes each run with `--recover`; `Replication.relocate` points its config at
that machine's device and data).

    .venv/bin/python benchmarks/replication/carry_runs.py pack RUNS OUT [--first ROW ...] [--max-mib 60] [--part-mib 15.5]
    .venv/bin/python benchmarks/replication/carry_runs.py unpack PARTS_DIR --runs RUNS

`pack` writes one gzipped tar, cut into parts of `--part-mib` (a lent machine returns files of at most 16 MiB):
`runs.tar.gz.000`, `.001`, ... Every run directory under RUNS contributes its record (`run.json`, `train.log`, the
resolved `config.json`, the vocabulary, the per-epoch metrics, AllenNLP's `out.log`, test metrics). An unfinished run
also contributes the checkpoint of its last *completed* epoch (`model_state_eK_b0.th`, `training_state_eK_b0.th`):
`--recover` resumes from it at the start of the next epoch. A checkpoint the deadline saved in the middle of an
epoch is left behind (up to one epoch's work is repeated), and so is `best.th` when the last completed epoch is the
best so far: it holds that epoch's weights, and `unpack` copies it from the model state. A finished run contributes
its `model.tar.gz`, so that its test figure can be taken here too. Checkpoints and archives go in run by run while
the parts together stay under `--max-mib`: first every unfinished run's checkpoint, the only way to go on with it,
then the finished runs' archives, whose results are already in the lane's replication.jsonl; within each group the
rows `--first` names go first, in its order, then the rest by name. A run whose checkpoint or archive does not fit
is carried without it (the manifest says so). The budget is on the packed (gzipped) bytes, which is what the lent
machine returns: float32 weights pack to about 93 % of their size, so a run is planned in while its raw bytes fit
`RAW_ALLOWANCE` times the budget, the tar is built, and while it is over the budget the lowest-priority run that
carries weights is left without them and the tar built again. (The default 60 MiB in parts of 15.5 leaves 4 MiB and
4 of the 8 returned files to the phase's tables. A 3-layer LSTMN's checkpoint whose best epoch is not its last, 58.9
MiB raw with its `best.th`, stayed behind under the old budget on the raw bytes, 58 MiB.)

`unpack` treats the parts as untrusted: it reads `MANIFEST.json` first, takes only regular files whose paths it
lists (relative, no `..`, under a run directory named like replicate.py's), checks each file's size and SHA-256
against it, and only then moves each run into RUNS. A run directory that already exists there (an earlier call's
parts unpacked, or the run resumed here) is replaced only by a carried run that is further along and can go on:
finished where this one is not, or more epochs completed, with weights (a checkpoint or archive) unless neither
has any; or as far along, with weights where this one has none. Otherwise this one stays, and so does one that a
replicate.py here is training (its lock held). A replaced directory is kept under RUNS/.replaced/, never deleted.
So the parts of a lease's later call, which hold the same runs, can be unpacked after its earlier call's.
"""
import argparse
import fcntl
import hashlib
import io
import itertools
import json
import re
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

MANIFEST = "MANIFEST.json"
PART_PREFIX = "runs.tar.gz."
RUN_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
RAW_ALLOWANCE = 1.1  # raw bytes planned in per packed byte of budget; the built tar is then checked against it
RECORD_PATTERNS = ["run.json", "train.log", "test_metrics.json", "train/config.json", "train/vocabulary/*",
                   "train/metrics_epoch_*.json", "train/metrics.json", "train/out.log"]
CHECKPOINT = re.compile(r"^model_state_e(\d+)_b0\.th$")
EPOCH_METRICS = re.compile(r"^metrics_epoch_(\d+)\.json$")
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


def epochs_recorded(file_names: Iterable[str]) -> int:
    """How many epochs a run's `metrics_epoch_K.json` files record (K + 1 for the highest K; 0 for none)."""
    return max((int(match.group(1)) + 1 for name in file_names if (match := EPOCH_METRICS.match(name))), default=0)


def progress_here(directory: Path) -> Tuple[Tuple[bool, int], bool]:
    """((finished, epochs recorded), whether it holds weights to go on from) for a run directory in RUNS."""
    serialization = directory / "train"
    try:
        done = bool(json.loads((directory / "run.json").read_text()).get("done", False))
    except (OSError, ValueError, AttributeError):
        done = False
    epochs = epochs_recorded(path.name for path in serialization.glob("metrics_epoch_*.json"))
    weights = ((serialization / "model.tar.gz").exists() if done
               else serialization.is_dir() and last_completed_epoch(serialization) is not None)
    return (done, epochs), weights


def _describe(progress: Tuple[bool, int], weights: bool) -> str:
    return (f"{'finished' if progress[0] else 'unfinished'}, {progress[1]} epochs, "
            f"{'with' if weights else 'without'} weights")


def plan(runs: Path, first: List[str], max_bytes: int,
         left_behind: frozenset = frozenset()) -> Tuple[List[Tuple[Path, str]], Dict[str, dict]]:
    """The files to carry ((path, name in the tar)) and the manifest's per-run entries: each run's checkpoint or
    archive goes in while the raw total stays under `max_bytes`, except the runs named in `left_behind`."""
    present = runs.iterdir() if runs.is_dir() else []  # no run began: the record is the manifest alone
    directories = sorted((path for path in present if (path / "run.json").is_file()),
                         key=lambda path: (progress_here(path)[0][0],  # unfinished runs' checkpoints first
                                           next((i for i, row in enumerate(first) if path.name.startswith(row + "-seed")),
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
                if (not RUN_NAME.match(name) or name.startswith(".") or f"{name}/run.json" not in listed
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
        runs.mkdir(parents=True, exist_ok=True)
        taken = []
        for name, entry in manifest["runs"].items():
            checkpoint = entry.get("checkpoint")
            if (runs / name).exists() and not (runs / name).is_dir():
                print(f"{runs / name}: kept, not a directory (the carried run is not taken)", file=sys.stderr)
                continue
            if (runs / name).exists():
                carried = (bool(entry["done"]), epochs_recorded(Path(listed_name).name for listed_name in listed
                                                                if listed_name.startswith(f"{name}/train/")))
                carried_weights = bool(checkpoint or entry.get("archive"))
                here, here_weights = progress_here(runs / name)
                if not (carried > here and (carried_weights or carried[0] or not here_weights)
                        or carried == here and carried_weights and not here_weights):
                    why = ("as far along here or further" if not carried > here
                           else "the carried run is further along but has no weights to go on from")
                    print(f"{runs / name}: kept, {why} (here: {_describe(here, here_weights)}; "
                          f"carried: {_describe(carried, carried_weights)})", file=sys.stderr)
                    continue
                stamp = time.strftime('%Y%m%dT%H%M%S')
                aside = next(path for count in itertools.count() if not (
                    path := runs / ".replaced" / f"{name}.{stamp}{f'.{count}' if count else ''}").exists())
                aside.parent.mkdir(exist_ok=True)
                with open(runs / name / ".lock", "a") as lock:  # replicate.py's lock, held while it trains the run
                    try:
                        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        print(f"{runs / name}: kept, a replicate.py here is training it (stop it, then unpack again)",
                              file=sys.stderr)
                        continue
                    shutil.move(str(runs / name), str(aside))
                print(f"{runs / name}: replaced by the carried run ({_describe(carried, carried_weights)}; "
                      f"here: {_describe(here, here_weights)}, now {aside})", file=sys.stderr)
            if checkpoint and checkpoint["best_from_model_state"]:
                serialization = staging / name / "train"
                shutil.copyfile(serialization / f"model_state_e{checkpoint['epochs_completed']}_b0.th",
                                serialization / "best.th")
            shutil.move(str(staging / name), str(runs / name))
            print(f"{runs / name}: " + (f"resumable from epoch {checkpoint['epochs_completed']}" if checkpoint
                                        else "done, with its archive" if entry.get("archive")
                                        else entry.get("left_behind", "done" if entry["done"] else "record only")),
                  file=sys.stderr)
            taken.append(name)
        return taken


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
