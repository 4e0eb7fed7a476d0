"""
Dev (or test) accuracy by sentence length of trained SST classifiers: a diagnostic for gaps between models (e.g. the
NSE against the allennlp-models LSTM, docs/results.md "sst_nse"). Each RUN is a serialization directory with
`config.json`, `vocabulary/` and `best.th` (a `benchmarks/replicate.py` run's `train/`, finished or not).

    SST_GRANULARITY=2-class .venv/bin/python benchmarks/sst_accuracy_by_length.py TREES RUN [RUN ...]

Prints one row per run: accuracy overall and per length bucket (tokens), with the bucket sizes.
"""
import argparse
import collections
import sys
from pathlib import Path

import torch
from allennlp.common import Params
from allennlp.common.util import import_module_and_submodules
from allennlp.data import Batch, DatasetReader
from allennlp.models import Model

BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 10_000))


def bucket(length: int) -> str:
    first, last = next((first, last) for first, last in BUCKETS if first <= length <= last)
    return f"{first}+" if last == 10_000 else f"{first}-{last}"


def read_trees(run: Path, trees: str) -> list:
    """TREES read by RUN's validation reader (fresh instances: an Instance keeps the indices of its first
    indexing)."""
    params = Params.from_file(str(run / "config.json"))
    reader_params = params.get("validation_dataset_reader", params.get("dataset_reader")).duplicate()
    return list(DatasetReader.from_params(reader_params).read(trees))


def load_run(run: Path) -> Model:
    """RUN's best weights, in eval mode, on the CPU."""
    params = Params.from_file(str(run / "config.json"))
    return Model.load(params, str(run), weights_file=str(run / "best.th"), cuda_device=-1).eval()


def run_name(run: Path) -> str:
    return run.parent.name if run.name == "train" else run.name


def parse_runs(description: str, trees_example: str, json_option: bool = False) -> argparse.Namespace:
    """TREES and RUN ... from the command line, each RUN checked for `best.th`; the plugins imported."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", help=f"PTB-format SST trees, e.g. {trees_example}")
    parser.add_argument("runs", nargs="+", type=Path)
    if json_option:
        parser.add_argument("--json", action="store_true", help="one JSON line per run instead of the table")
    args = parser.parse_args()
    for run in args.runs:
        if not (run / "best.th").exists():
            sys.exit(f"{run}: no best.th (is it a serialization directory?)")
    import_module_and_submodules("allennlp_models")
    import_module_and_submodules("memplugins")
    return args


def accuracy_by_length(run: Path, trees: str) -> dict:
    model, instances = load_run(run), read_trees(run, trees)
    counts = collections.defaultdict(lambda: [0, 0])
    with torch.no_grad():
        for start in range(0, len(instances), 64):
            chunk = instances[start:start + 64]
            batch = Batch(chunk)
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            predicted = model(**tensors)["logits"].argmax(-1).tolist()
            for instance, guess, gold in zip(chunk, predicted, tensors["label"].tolist()):
                for key in ("all", bucket(len(instance["tokens"].tokens))):
                    counts[key][0] += int(guess == gold)
                    counts[key][1] += 1
    return counts


def main() -> None:
    args = parse_runs(__doc__, "../shared/data/sst/trees/dev.txt")
    keys = ["all"] + [bucket(first) for first, _ in BUCKETS]
    print("| run | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for run in args.runs:
        counts = accuracy_by_length(run, args.trees)
        cells = [f"{counts[k][0] / counts[k][1]:.3f} ({counts[k][1]})" if counts[k][1] else "-" for k in keys]
        print(f"| {run_name(run)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
