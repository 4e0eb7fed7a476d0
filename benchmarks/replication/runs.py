"""Shared by the benchmark scripts: run `allennlp train` / `allennlp evaluate` as subprocesses and read results."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[2]
# the command: the environment's `allennlp` script, or the module where the stack was installed without scripts (the
# pinned stack unpacked on a lent GPU machine)
_SCRIPT = Path(sys.executable).parent / "allennlp"
ALLENNLP = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "allennlp"]


def train(config: str, out: Path, env: Dict[str, str], overrides: Optional[dict] = None, extra: Sequence[str] = ()) -> None:
    """Trains `config` into `out` unless `out` already holds an archive; the log goes to `{out}.train.log`."""
    if (out / "model.tar.gz").exists():
        return
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [*ALLENNLP, "train", config, "-s", str(out), "--include-package", "memplugins", *extra]
    if overrides:
        command += ["-o", json.dumps(overrides)]
    started = time.time()
    with open(f"{out}.train.log", "w") as log:
        # not check=True: a time-budget stop (the deadline callback) exits non-zero after archiving
        subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log)
    if not (out / "model.tar.gz").exists():
        raise RuntimeError(f"training {config} produced no archive; see {out}.train.log")
    print(f"{out.name}: trained in {time.time() - started:.0f} s", file=sys.stderr)


def evaluate(archive: Path, data_file: str, env: Dict[str, str]) -> dict:
    """`allennlp evaluate` metrics of `archive` on `data_file`, cached beside the archive."""
    output = archive.parent / f"eval_{Path(data_file).name}.json"
    if not output.exists():
        with open(f"{output}.log", "w") as log:
            subprocess.run(
                [*ALLENNLP, "evaluate", str(archive), data_file, "--output-file", str(output),
                 "--include-package", "memplugins"],
                cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=log,
            )
    return json.loads(output.read_text())


def epochs_and_seconds(out: Path) -> Tuple[int, float]:
    """Completed epochs of the run in `out` and its training seconds up to the last of them."""
    epochs = sorted(out.glob("metrics_epoch_*.json"), key=lambda p: int(p.stem.split("_")[-1]))
    if not epochs:
        return 0, 0.0
    h, m, s = json.loads(epochs[-1].read_text())["training_duration"].split(":")
    return len(epochs), int(h) * 3600 + int(m) * 60 + float(s)


def count_parameters(archive: Path, exclude: str = "") -> Tuple[int, int]:
    """(trainable parameters whose name lacks `exclude` if given, all parameters) of the archived model."""
    import memplugins  # noqa: F401
    from allennlp.models.archival import load_archive

    model = load_archive(str(archive)).model
    trainable = sum(p.numel() for n, p in model.named_parameters() if p.requires_grad and not (exclude and exclude in n))
    return trainable, sum(p.numel() for p in model.parameters())


def write_table(lines: Sequence[str], out: Path) -> None:
    """Prints a finished markdown table and writes it to `out/table.md`."""
    table = "\n".join(lines)
    print(table)
    (out / "table.md").write_text(table + "\n")


def run_tasks(runners: Dict[str, Callable[..., str]], args, out: Path) -> None:
    """Runs `runners[task](args, environment, out)` for each task in `args.only`, printing each table as it is
    made; writes them all to `out/tables.md`."""
    tables = []
    for task in args.only:
        table = runners[task](args, dict(os.environ), out)
        print(table + "\n", flush=True)
        tables.append(table)
    (out / "tables.md").write_text("\n\n".join(tables) + "\n")
