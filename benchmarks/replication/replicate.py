"""
Replicate the papers' results on the data we have, in resumable pieces, beside the allennlp-models peer of each
family. Not part of CI: each protocol is hours of CPU.

    .venv/bin/python benchmarks/replication/replicate.py FAMILY [FAMILY ...] [--minutes N] [--until HH:MM] [--rows NAME ...]
        [--seeds 1 2 3]
    .venv/bin/python benchmarks/replication/replicate.py --list
    .venv/bin/python benchmarks/replication/replicate.py --table            # re-print every result, train nothing

For every row of a family (ours and the peer), it runs `allennlp train` on the paper's protocol as the config
header states it: the paper's data split (all SST phrases for training where the paper trains on them, sentences for
dev/test), its epochs, model selection on dev (AllenNLP's `validation_metric`; the archive holds the best epoch).
SNLI and IWSLT14, whose train splits are missing here, train on most of their dev split and select on the rest (line
ranges cut once into `--runs`/data, see `rows.py` and `rows/*.json`), and test on the official test split.
With `--minutes N` the invocation trains until N minutes have passed (`--until HH:MM`: until that clock time, for a
job that ends at a fixed hour; both: whichever comes first): the `deadline` trainer callback
(`memplugins/training/deadline.py`) saves a checkpoint after the batch in progress and stops. The next invocation
resumes that run with `allennlp train --recover` from the run's own resolved `config.json` (so a later edit of a
config or a row cannot break it; memplugins' exact resume gives the same weights and validation metrics as an
uninterrupted run) and goes on until the protocol is complete. Then it evaluates the best checkpoint on test and
appends one JSON line to the results file (family, row, config, data, epochs, seed, device, metric, the paper's
figure, any further test metrics the row names with theirs (`also`, WikiQA's MRR), the commits the pieces ran on). A
row with a result is never trained again; an invocation with nothing left to train only prints the tables. A run begun
before its config zeroed the @@UNKNOWN@@ row (training_config/zero_unknown_row.libsonnet) is not trained again either:
that row is never trained, so its archive, with the row zeroed, is the one training with the initializer gives; it is
evaluated so and recorded with `"unknown_row_zeroed_after_training": true`.

Runs live in `--runs` (default `$MEMPLUGINS_RUNS` or `~/.cache/memplugins/replicate`: outside the checkout, so a
fresh checkout resumes them); each run directory is locked while a process trains it, so two invocations (one per
core) can share the folder. `--device cuda:0` trains on a GPU (each piece's device is recorded, and a result names
every device its run trained on); chunks of 9 minutes fit a GPU command's 10-minute limit. A run begun on a machine
that is then taken back (a lent GPU) comes here with `benchmarks/replication/carry_runs.py` and resumes like any other: before
`--recover`, its config's device and data paths are pointed at this invocation's (`Replication.relocate`).
"""
import argparse
import datetime
import fcntl
import itertools
import json
import platform
import re
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from rows import FAMILIES, INSTRUMENTS, Row, load_family
from runs import ALLENNLP

ROOT = Path(__file__).resolve().parents[2]
# the token embedding table of every GloVe config (a row's `vectors_from` initializes it from another run)
EMBEDDING_TABLE = r"^_text_field_embedder\.token_embedder_tokens\.weight$"
DEADLINE_EXIT_CODE = 75  # memplugins.training.deadline.DEADLINE_EXIT_CODE (not imported: that pulls in torch)
DEFAULT_RUNS = Path(os.environ.get("MEMPLUGINS_RUNS", Path.home() / ".cache" / "memplugins" / "replicate"))


def commit() -> str:
    """The code a piece runs: `MEMPLUGINS_COMMIT` where the caller names it (a lent GPU machine gets a copy of the
    working tree whose git metadata need not match it), else the checkout's `git describe`, else "unknown"."""
    if os.environ.get("MEMPLUGINS_COMMIT"):
        return os.environ["MEMPLUGINS_COMMIT"]
    try:
        described = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True,
                                   text=True).stdout.strip()
    except OSError:
        described = ""
    return described or "unknown"


@dataclass
class RunState:
    """What `run.json` in a run directory keeps between invocations."""

    row: str
    seed: int
    device: str
    threads: int
    commits: List[str] = field(default_factory=list)
    pieces: List[Dict] = field(default_factory=list)
    done: bool = False
    # the data root DATA/ resolved to when the run's config was written (absent in runs begun before it was kept)
    data: Optional[str] = None

    @classmethod
    def load(cls, path: Path) -> Optional["RunState"]:
        return cls(**json.loads(path.read_text())) if path.exists() else None

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1) + "\n")


class Replication:
    def __init__(self, args) -> None:
        self.data = Path(args.data).resolve()
        self.runs = Path(args.runs).expanduser().resolve()
        self.results = Path(args.results).resolve()
        self.device = args.device
        self.threads = args.threads
        self.deadline = deadline_of(args.minutes, args.until)
        self.pieces_run = 0
        self._protocols: Dict[tuple, tuple] = {}

    # ----- paths and environment
    def run_dir(self, row: Row, seed: int) -> Path:
        # a run of the GloVe vocabulary's protocol never resumes one of the same row trained before it
        return self.runs / (f"{row.name}-seed{seed}" + ("-glove" if self.vocabulary(row, seed) == "glove" else ""))

    def protocol(self, row: Row, seed: int) -> tuple:
        """What a result of this run must match (`protocol(result)`): the row, the config's vocabulary and its unknown
        row after the row's overrides; the config is evaluated once per run."""
        if (row.name, seed) not in self._protocols:
            from allennlp.common.params import with_overrides

            config = self.config(row, seed)
            self._protocols[row.name, seed] = (row.name, vocabulary_of(config),
                                               unknown_row_of(with_overrides(config, row.overrides)))
        return self._protocols[row.name, seed]

    def vocabulary(self, row: Row, seed: int) -> str:
        return self.protocol(row, seed)[1]

    def unknown_row(self, row: Row, seed: int) -> str:
        return self.protocol(row, seed)[2]

    def environment(self, row: Row, seed: int) -> Dict[str, str]:
        cuda = self.device.split(":")[1] if self.device.startswith("cuda") else "-1"
        variables = {name: self.resolve(value) for name, value in row.variables.items()}
        env = {**os.environ, **variables, "CUDA_DEVICE": cuda, "OMP_NUM_THREADS": str(self.threads),
               "MKL_NUM_THREADS": str(self.threads),
               # the caller's path stays behind ours (a lent GPU finds the pinned stack through it)
               "PYTHONPATH": ":".join([str(ROOT), str(ROOT / "benchmarks" / "replication"), str(ROOT / "research")]
                                      + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}
        if self.deadline is not None:
            env["MEMPLUGINS_TRAIN_DEADLINE"] = str(self.deadline)
        else:
            env.pop("MEMPLUGINS_TRAIN_DEADLINE", None)
        return env

    def resolve(self, value: str) -> str:
        """`DATA/x` is x under --data; `SLICE/x` is the slice x under --runs/data; anything else is itself."""
        if value.startswith("DATA/"):
            return str(self.data / value[len("DATA/"):])
        if value.startswith("SLICE/"):
            return str(self.runs / "data" / value[len("SLICE/"):])
        return value

    def write_slices(self, row: Row) -> None:
        """Writes each of the row's slices (lines [first, end) of a source) once, atomically; one already written is
        reused (a row does not change once started). A source shorter than the range is an error naming both."""
        for name, (source, first, end) in row.slices.items():
            target = Path(self.resolve(f"SLICE/{name}"))
            if target.exists():
                continue
            # the readers' own line reader: gzip or not by its bytes, a bad line named by file and number
            from memplugins.readers.errors import numbered_lines

            path = Path(self.resolve(source))
            kept = [line for _, line in itertools.islice(numbered_lines(str(path)), first, end)]
            if len(kept) != end - first:
                raise ValueError(f"{path} has {first + len(kept)} lines; row {row.name}'s slice {name} needs lines "
                                 f"{first + 1}-{end}")
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + f".{os.getpid()}.partial")
            partial.write_text("".join(kept), encoding="utf-8")
            partial.rename(target)  # atomic: a concurrent run never reads half a slice

    def overrides(self, row: Row, seed: int) -> dict:
        """AllenNLP's `-o` overrides (dotted keys replace what they name): the row's, its seeds, and the deadline
        callback added to the config's own callbacks. All of it is part of the config, so `--recover` finds it
        unchanged; the deadline itself travels in the environment."""
        config = self.config(row, seed)
        seeds = {"random_seed": 13370 + seed, "numpy_seed": 1337 + seed, "pytorch_seed": 133 + seed}
        callbacks = config.get("trainer", {}).get("callbacks", []) + [{"type": "deadline"}] + row.callbacks
        overrides = {**row.overrides, **seeds, "trainer.callbacks": callbacks}
        if row.vectors_from:  # first: the first regex that matches a parameter is the one applied
            from allennlp.common.params import with_overrides

            initializer = with_overrides(config, row.overrides)["model"].get("initializer")
            table = [EMBEDDING_TABLE, {"type": "pretrained", "parameter_name_overrides": {},
                                       "weights_file_path": str(self.vectors_source(row, seed) / "train" / "best.th")}]
            if initializer is None:  # a dotted key cannot reach into what the config lacks
                overrides["model.initializer"] = {"regexes": [table]}
            else:
                overrides["model.initializer.regexes"] = [table, *initializer.get("regexes", [])]
        return overrides

    def vectors_source(self, row: Row, seed: int) -> Path:
        """The run whose tuned table row ROW starts from (`Row.vectors_from`): the same seed's of that row."""
        (source,) = [other for rows in FAMILIES.values() for other in rows if other.name == row.vectors_from]
        return self.run_dir(source, seed)

    def check_vectors_source(self, row: Row, seed: int, out: Path) -> None:
        """Before the first piece: the source run is complete; after it (once `out` has a vocabulary): both runs
        built the same vocabulary, so that row i of the copied table is the same word's."""
        source = self.vectors_source(row, seed)
        state = RunState.load(source / "run.json")
        if state is None or not state.done or not (source / "train" / "best.th").exists():
            raise RuntimeError(f"{row.name} seed {seed} starts from the table of {source}, which is not a complete "
                               f"run: train it first (replicate.py with --rows {row.vectors_from} --seeds {seed}; a "
                               "run whose result is recorded but whose directory is gone trains again with a "
                               "--results file that lacks it)")
        tokens = out / "train" / "vocabulary" / "tokens.txt"
        if tokens.exists() and tokens.read_bytes() != (source / "train" / "vocabulary" / "tokens.txt").read_bytes():
            raise RuntimeError(f"{out.name} and {source.name} built different vocabularies: the copied table's rows "
                               "would be other words'")

    def config(self, row: Row, seed: int) -> dict:
        """The row's config as `allennlp train` evaluates it, before the overrides."""
        import _jsonnet
        from memplugins.compat import CONFIG_DEFAULTS

        env = self.environment(row, seed)
        return json.loads(_jsonnet.evaluate_file(str(ROOT / row.config), ext_vars={**CONFIG_DEFAULTS, **env}))

    # ----- one row
    def train(self, row: Row, seed: int) -> RunState:
        """Trains (or resumes) one run until its protocol ends or the deadline passes; returns its state. The caller
        holds the run directory's lock."""
        out = self.run_dir(row, seed)
        self.write_slices(row)
        state_path = out / "run.json"
        state = RunState.load(state_path) or RunState(row=row.name, seed=seed, device=self.device, threads=self.threads,
                                                      data=str(self.data))
        while not state.done:
            # the first piece of an invocation always runs (at least one batch), so every call makes progress
            if self.deadline is not None and time.time() >= self.deadline and self.pieces_run > 0:
                return state
            self.pieces_run += 1
            serialization = out / "train"
            recover = (serialization / "config.json").exists()
            if not recover and serialization.exists():
                subprocess.run(["rm", "-rf", str(serialization)], check=True)
            if row.vectors_from:
                self.check_vectors_source(row, seed, out)
            if recover:  # the run's own resolved config: a later edit of the config or the row cannot break it
                self.relocate(out, state)
                command = [*ALLENNLP, "train", str(serialization / "config.json"), "-s", str(serialization), "--recover"]
            else:
                command = [*ALLENNLP, "train", str(ROOT / row.config), "-s", str(serialization),
                           "-o", json.dumps(self.overrides(row, seed))]
            command += [*include_packages(row), "--file-friendly-logging"]
            # recorded before the piece runs: a piece killed with its session (which never reaches the lines after
            # it) still names the code it ran
            code_version = commit()
            if code_version not in state.commits:
                state.commits.append(code_version)
                state.save(state_path)
            started = time.time()
            with open(out / "train.log", "a") as log:
                log.write(f"\n===== {datetime.datetime.now().isoformat(timespec='seconds')} at {code_version}: "
                          f"{' '.join(command)}\n")
                log.flush()
                code = subprocess.run(command, cwd=ROOT, env=self.environment(row, seed), stdout=subprocess.DEVNULL,
                                      stderr=log).returncode
            state.pieces.append({"started": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
                                 "seconds": round(time.time() - started), "device": self.device, "exit": code,
                                 "epochs_done": epochs_done(serialization), "processor": processor()})
            if row.vectors_from:
                self.check_vectors_source(row, seed, out)
            if code == 0 and (serialization / "model.tar.gz").exists():
                state.done = True
            elif code != DEADLINE_EXIT_CODE:
                state.save(state_path)
                tail = (out / "train.log").read_text().splitlines()[-15:]
                raise RuntimeError(f"{out.name}: allennlp train exited {code}; end of {out / 'train.log'}:\n" +
                                   "\n".join(tail))
            state.save(state_path)
            print(f"{out.name}: {'protocol complete' if state.done else 'stopped at the deadline'} after "
                  f"{state.pieces[-1]['seconds']} s ({state.pieces[-1]['epochs_done']} epochs done)", file=sys.stderr)
        return state

    def relocate(self, out: Path, state: RunState) -> None:
        """Lets a run begun elsewhere resume here (e.g. its first epochs on a lent GPU, brought back by
        `benchmarks/replication/carry_runs.py`): in the run's resolved `config.json`, `trainer.cuda_device` becomes this
        invocation's device and every path under the data root the run began with moves to this `--data`. Nothing
        else changes, so `--recover`, which compares the config it is given with the one in the directory, accepts it
        and continues the same training; the change is logged in `train.log`. A run on the machine it began on is
        left untouched."""
        path = out / "train" / "config.json"
        config = json.loads(path.read_text())
        changes = []
        cuda_device = int(self.device.split(":")[1]) if self.device.startswith("cuda") else -1
        trainer = config.setdefault("trainer", {})
        if trainer.get("cuda_device", -1) != cuda_device:
            changes.append(f"trainer.cuda_device {trainer.get('cuda_device', -1)} -> {cuda_device}")
            trainer["cuda_device"] = cuda_device
        if state.data is not None and state.data != str(self.data):
            old, new = state.data.rstrip("/") + "/", str(self.data).rstrip("/") + "/"

            def moved(value):
                if isinstance(value, dict):
                    return {key: moved(item) for key, item in value.items()}
                if isinstance(value, list):
                    return [moved(item) for item in value]
                if isinstance(value, str) and value.startswith(old):
                    changes.append(f"{value} -> {new + value[len(old):]}")
                    return new + value[len(old):]
                return value

            config = moved(config)
            state.data = str(self.data)
        if not changes:
            return
        partial = path.with_name(f"config.json.{os.getpid()}.partial")
        partial.write_text(json.dumps(config, indent=4))
        partial.rename(path)
        state.save(out / "run.json")
        with open(out / "train.log", "a") as log:
            # not a "=====" line: those count the pieces (training_time)
            log.write(f"\n----- {datetime.datetime.now().isoformat(timespec='seconds')}: relocated to {self.device}: "
                      + "; ".join(changes) + "\n")

    def evaluate(self, row: Row, seed: int, state: RunState) -> dict:
        """The best checkpoint's test metric, appended to the results file once."""
        out = self.run_dir(row, seed)
        archive = out / "train" / "model.tar.gz"
        trained = json.loads((out / "train" / "config.json").read_text())
        unknown_row = unknown_row_of(trained)
        zeroed_after_training = unknown_row == "random" and self.unknown_row(row, seed) == "zero"
        if zeroed_after_training:
            # a run begun before its config zeroed the unknown row: training never reaches that row, so the run
            # equals one trained with the initializer in every other parameter (tests/initializers/
            # zero_unknown_row_test.py); its archive gets the row zeroed and the initializer, as training would
            from memplugins.initializers.zero_unknown_row import zero_unknown_row_in_archive

            zeroed = out / "train" / "model-zero-unknown-row.tar.gz"
            zero_unknown_row_in_archive(str(archive), str(zeroed))
            archive, unknown_row = zeroed, "zero"
        test_file = Path(self.resolve(row.test_file))
        env = self.environment(row, seed)
        also: Dict[str, float] = {}
        if row.metric == "token_perplexity":
            printed = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "replication" / "ptb_token_perplexity.py"),
                                      str(archive), str(test_file)], cwd=ROOT, env=env, capture_output=True,
                                     text=True, check=True).stdout
            value = float(printed.split()[-1])
        else:
            output = out / "test_metrics.json"
            subprocess.run([*ALLENNLP, "evaluate", str(archive), str(test_file), "--output-file", str(output),
                            *include_packages(row), "--cuda-device", env["CUDA_DEVICE"]],
                           cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            evaluated = json.loads(output.read_text())
            value = evaluated[row.metric]
            also = {name: evaluated[name] for name in row.also}
        metrics = json.loads((out / "train" / "metrics.json").read_text())
        processors = list(dict.fromkeys(piece["processor"] for piece in state.pieces if piece.get("processor")))
        return {
            "family": row.family, "row": row.name, "system": row.system, "label": row.label, "config": row.config,
            "data": row.data, "seed": seed, "epochs": metrics.get("epoch", -1) + 1, "best_epoch": metrics.get("best_epoch"),
            "dev": metrics.get(f"best_validation_{row.dev_metric}"), "dev_metric": row.dev_metric,
            "metric": row.metric, "value": value, "paper": row.paper,
            **({"vectors_from": self.vectors_source(row, seed).name} if row.vectors_from else {}),
            **({"also": also, "also_paper": row.also} if also else {}), "device": devices(state),
            "vocabulary": vocabulary_of(trained), "unknown_row": unknown_row,
            **({"unknown_row_zeroed_after_training": True} if zeroed_after_training else {}),
            "threads": state.threads, **training_time(out, state), "commits": state.commits,
            **({"processors": processors} if processors else {}), "date": datetime.date.today().isoformat(),
            # the row as it ran, so the line alone re-runs it (`--spec`): config, variables, resolved overrides
            "run": {"config": row.config, "variables": row.variables, "overrides": self.overrides(row, seed),
                    "test_file": row.test_file, "metric": row.metric, "dev_metric": row.dev_metric,
                    **({"slices": row.slices} if row.slices else {}),
                    **({"packages": row.packages} if row.packages else {})},
        }

    def done(self, row: Row, seed: int) -> bool:
        """Whether the results hold this run under the row's protocol; read afresh each time, so that two invocations
        sharing rows (one per core) never record a run twice. A result of an earlier protocol does not count."""
        wanted = self.protocol(row, seed)
        return any(result["seed"] == seed and protocol(result) == wanted for result in read_results(self.results))

    def run(self, rows: List[Row], seeds: List[int]) -> None:
        for row in rows:
            for seed in row.seeds or seeds:
                if self.done(row, seed):
                    continue
                out = self.run_dir(row, seed)
                out.mkdir(parents=True, exist_ok=True)
                # held through training and evaluation: another invocation skips the run and never records it twice
                with open(out / ".lock", "w") as lock:
                    try:
                        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        print(f"{out.name}: another process is training it; skipped", file=sys.stderr)
                        continue
                    state = self.train(row, seed)
                    if not state.done or self.done(row, seed):
                        continue
                    result = self.evaluate(row, seed, state)
                    self.results.parent.mkdir(parents=True, exist_ok=True)
                    with open(self.results, "a") as results:
                        results.write(json.dumps(result) + "\n")
                print(f"{row.name} seed {seed}: test {row.metric} {result['value']:.4f}", file=sys.stderr)


def include_packages(row: Row) -> List[str]:
    """`--include-package` for memplugins and each of the row's instruments (modules of research/, which is on the
    commands' PYTHONPATH)."""
    unknown = [package for package in row.packages if package not in INSTRUMENTS]
    if unknown:
        raise ValueError(f"row {row.name}: packages {unknown} are not among rows.INSTRUMENTS")
    return [argument for package in ["memplugins", *row.packages] for argument in ("--include-package", package)]


def vocabulary_of(config: dict) -> str:
    """"glove" where the vocabulary holds GloVe's first words (training_config/glove_vocabulary.libsonnet), so a
    test word GloVe knows keeps its vector; "train+dev" where it holds the training and validation words only."""
    return "glove" if "min_pretrained_embeddings" in config.get("vocabulary", {}) else "train+dev"


def unknown_row_of(config: dict) -> str:
    """"zero" where the model's initializer zeroes the token table's @@UNKNOWN@@ row (training_config/
    zero_unknown_row.libsonnet), "random" where it keeps AllenNLP's random draw."""
    regexes = (config.get("model", {}).get("initializer") or {}).get("regexes", [])
    return "zero" if any(settings.get("type") == "zero_unknown_row" for _, settings in regexes) else "random"


def protocol(result: dict) -> tuple:
    """What makes results seeds of one row: its name, its vocabulary (results before "vocabulary" was recorded are
    "train+dev") and its unknown row (before "unknown_row" was recorded: "random")."""
    return result["row"], result.get("vocabulary", "train+dev"), result.get("unknown_row", "random")


def protocol_label(result: dict) -> str:
    return (result["label"] + (", GloVe vocabulary" if result.get("vocabulary") == "glove" else "")
            + (", zero unknown row" if result.get("unknown_row") == "zero" else ""))


def devices(state: RunState) -> str:
    """Where a run trained: its first device, or each device its pieces ran on in order ("cuda:0 + cpu")."""
    seen = list(dict.fromkeys([state.device] + [piece["device"] for piece in state.pieces if "device" in piece]))
    return " + ".join(seen)


def processor() -> str:
    """The host's CPU model (/proc/cpuinfo's "model name", else `platform.processor()`): one-thread CPU runs of the
    same code and seed are bit-identical on one machine but may part on another (other kernels sum in another
    order), so a result names the machines its pieces trained on."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def epochs_done(serialization: Path) -> int:
    return len(list(serialization.glob("metrics_epoch_*.json")))


EPOCH_DURATION = re.compile(r"Epoch duration: (\d+):(\d+):(\d+(?:\.\d*)?)")


def training_time(out: Path, state: RunState) -> Dict[str, int]:
    """A run's training time and pieces. A piece whose process was killed (a session's end) never reaches
    `state.pieces`, so both come from the logs where they can: the sum of the epochs' durations in AllenNLP's
    `out.log` (appended to by every `--recover`; wall time, so it includes any pause of the process), and the
    invocations `train.log` records."""
    seconds = sum(piece["seconds"] for piece in state.pieces)
    log = out / "train" / "out.log"
    if log.exists():
        epochs = [3600 * int(h) + 60 * int(m) + float(s) for h, m, s in EPOCH_DURATION.findall(log.read_text())]
        seconds = max(seconds, round(sum(epochs)))
    invocations = (out / "train.log").read_text().count("\n===== ") if (out / "train.log").exists() else 0
    return {"train_seconds": seconds, "pieces": max(len(state.pieces), invocations)}


def read_results(path: Path) -> List[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def table(results: List[dict], families: Optional[List[str]] = None) -> str:
    """One markdown table per family: every (row, seed) result, then each row's best-dev seed. Results of one row
    trained with different vocabularies (`"vocabulary"`: "glove" since training_config/glove_vocabulary.libsonnet,
    "train+dev" before; absent in older results) or unknown rows (`"unknown_row"`: "zero" since
    training_config/zero_unknown_row.libsonnet) are kept apart, and labelled so."""
    blocks = []
    for family in dict.fromkeys(result["family"] for result in results):
        if families and family not in families:
            continue
        lines = [f"### {family}", "",
                 "| row | system | test | dev | paper | seeds | epochs | train time | device | commit |",
                 "|---|---|---:|---:|---:|---|---:|---:|---|---|"]
        by_row: Dict[tuple, List[dict]] = {}
        for result in results:
            if result["family"] == family:
                by_row.setdefault(protocol(result), []).append(result)
        for runs in by_row.values():
            best = choose(runs)
            # in seed order, whatever order the seeds finished in
            seeds = " / ".join(figure(run["value"]) for run in sorted(runs, key=lambda run: run["seed"]))
            value = figure(best["value"]) + alongside(best.get("also", {}))
            paper = f"{best['paper'] or ''}{alongside(best.get('also_paper', {}))}"
            dev = "" if best["dev"] is None else figure(best["dev"])
            hours = sum(run["train_seconds"] for run in runs) / 3600
            lines.append(f"| {protocol_label(best)} | {best['system']} | {value} | {dev} | {paper} | "
                         f"{seeds} | {best['epochs']} | {hours:.1f} h | {best['device']} ({best['threads']} thr.) | "
                         f"{best['commits'][-1]} |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def figure(value: float) -> str:
    """A test or dev figure as the tables and model cards print it: a perplexity to 0.1, an accuracy or MAP (a
    fraction) to four places."""
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.1f}"


def alongside(figures: Dict[str, Optional[float]]) -> str:
    """A result's further test metrics (a row's `also`), or their paper figures, as the tables print them after the
    main figure: " (MRR 0.7012)"; nothing for a metric without a figure."""
    shown = [f"{name} {figure(value)}" for name, value in figures.items() if value is not None]
    return f" ({', '.join(shown)})" if shown else ""


def choose(runs: List[dict]) -> dict:
    """The run with the best dev metric (the paper's best-of-seeds protocol); lower is better for perplexity."""
    sign = -1 if "perplexity" in runs[0]["dev_metric"] else 1
    return max(runs, key=lambda run: sign * (run["dev"] if run["dev"] is not None else -math.inf * sign))


def deadline_of(minutes: Optional[float], until: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """The Unix time at which training stops: `minutes` from now, or `until` (a local "HH:MM", its next occurrence,
    as `shutdown` reads it; or an ISO date-time such as "2026-11-27T06:00"), the earlier where both are given. A
    scheduler's job or a lent machine ends at a clock time, and a queue of pieces started one after another cannot
    know in advance how many minutes each has left."""
    now = time.time() if now is None else now
    deadlines = [now + 60 * minutes] if minutes is not None else []
    if until is not None:
        if re.fullmatch(r"\d{1,2}:\d{2}", until):
            hour, minute = map(int, until.split(":"))
            if hour > 23 or minute > 59:
                raise ValueError(f"--until {until}: not a time of day (HH:MM)")
            start = datetime.datetime.fromtimestamp(now)
            end = start.replace(hour=hour, minute=minute, second=0, microsecond=0)
            if end <= start:
                end += datetime.timedelta(days=1)
            deadlines.append(end.timestamp())
        else:
            try:
                end_time = datetime.datetime.fromisoformat(until).timestamp()  # naive: local time, as HH:MM
            except ValueError:
                raise ValueError(f"--until {until}: neither HH:MM nor an ISO date-time") from None
            if end_time <= now:
                raise ValueError(f"--until {until}: that time has passed")
            deadlines.append(end_time)
    return min(deadlines) if deadlines else None


def _stop(signum, frame) -> None:
    """SIGTERM and SIGHUP end this process through an exception, on which `subprocess.run` kills the running piece
    (`allennlp train`) and waits for it. Under the default handlers this process died at once and the piece went
    on, orphaned, writing into a run directory whose lock nobody held, beside the next invocation's trainer (it
    happened: a piece left running when its replicate.py was killed wrote its checkpoints and metrics over a
    restarted run's, 2026-11-26). The run resumes from the piece's last checkpoint (an epoch's end or a deadline's)."""
    raise SystemExit(128 + signum)


def main() -> None:
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("families", nargs="*", help=f"one or more of: {', '.join(FAMILIES)}")
    parser.add_argument("--rows", nargs="*", help="only these rows of the families (see --list)")
    parser.add_argument("--seeds", nargs="*", type=int, default=[1], help="seeds for rows that do not fix theirs")
    parser.add_argument("--minutes", type=float, help="stop training after this many minutes (resume next time)")
    parser.add_argument("--until", help="stop training at this local time, HH:MM (its next occurrence) or an ISO "
                                        "date-time; with --minutes, whichever comes first")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--runs", default=str(DEFAULT_RUNS))
    parser.add_argument("--results", default=str(ROOT / "benchmarks" / "replication" / "results.jsonl"))
    parser.add_argument("--device", default="cpu", help="cpu or cuda:N")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the training process")
    parser.add_argument("--spec", help="a JSON file {\"family\": NAME, \"rows\": [Row fields, ...]} adding a family (as "
                                       "rows/*.json are written)")
    parser.add_argument("--list", action="store_true", help="list the families' rows and exit")
    parser.add_argument("--table", action="store_true", help="print the results tables and exit")
    args = parser.parse_args()
    if args.spec:
        rows = load_family(Path(args.spec))
        FAMILIES[rows[0].family] = rows
    unknown = [family for family in args.families if family not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    if args.list:
        for family in args.families or FAMILIES:
            for row in FAMILIES[family]:
                print(f"{family:16} {row.name:32} {row.system:5} {row.config}  ({row.data})")
        return
    if not args.table:
        rows = [row for family in args.families for row in FAMILIES[family] if not args.rows or row.name in args.rows]
        if args.rows and len(rows) < len(args.rows):
            parser.error(f"unknown rows among {args.rows} (see --list)")
        try:
            replication = Replication(args)  # raises ValueError only for a bad --until, before anything trains
        except ValueError as error:
            parser.error(str(error))
        replication.run(rows, args.seeds)
    print(table(read_results(Path(args.results)), args.families or None))


if __name__ == "__main__":
    main()
