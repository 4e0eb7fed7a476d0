"""
Dev (or test) accuracy by sentence length of trained SST classifiers: a diagnostic for gaps between models (e.g. the
NSE against the allennlp-models LSTM, docs/results.md "sst_nse"). Each RUN is a serialization directory with
`config.json`, `vocabulary/` and `best.th` (a `benchmarks/replication/replicate.py` run's `train/`, finished or not).

    SST_GRANULARITY=2-class .venv/bin/python research/sst_accuracy_by_length.py TREES RUN [RUN ...]
        [--phrases] [--weights model_state_e10_b0.th]

Prints one row per run: accuracy overall and per length bucket (tokens), with the bucket sizes. A run may be a
sequence classifier (allennlp-models' `sst_tokens` reader, a `label` per instance) or our `tree_classifier` (the
`sst_trees` reader; its sentence label is its root's, as the model's `accuracy` reads it). `--phrases` scores
every labelled subtree of TREES (each phrase by its own length) instead of the sentences alone: with TREES the
training file it tells whether a model fits the long training spans, with dev whether the phrases it was trained
on carry over to longer ones. `--weights FILE` loads that file of each run in place of `best.th`, e.g. the last
epoch's `model_state_e10_b0.th` (AllenNLP keeps the last two epochs' states), to compare runs at the same epoch.
On a machine whose cores are busy training, run it with `OMP_NUM_THREADS=1`: torch's intra-op threads contend with
the training processes and make it ten times slower.
"""
import argparse
import collections
import sys
from pathlib import Path

import torch
from allennlp.common.util import import_module_and_submodules
from allennlp.data import Batch, DatasetReader
from allennlp.models import Model

BUCKETS = ((1, 10), (11, 20), (21, 30), (31, 10_000))


def bucket(length: int, buckets=BUCKETS) -> str:
    """The name of the (first, last) range of `buckets` that holds `length` ("31+" for the open last one)."""
    first, last = next((first, last) for first, last in buckets if first <= length <= last)
    return f"{first}+" if last == 10_000 else f"{first}-{last}"


def validation_reader(run: Path, **overrides) -> DatasetReader:
    """RUN's validation reader (its training reader where the config names none), as `allennlp evaluate` reads,
    with `overrides` set on its parameters. A run folder may come from someone else, so its `config.json` is read as
    an archive's is (`memplugins.untrusted_archives`: plain JSON, registered types only)."""
    from memplugins.untrusted_archives import import_paths

    reader_params = validation_reader_params(run)
    for key, value in overrides.items():
        reader_params[key] = value
    with import_paths(allowed=False):
        return DatasetReader.from_params(reader_params)


def read_trees(run: Path, trees: str, phrases: bool = False) -> list:
    """TREES read by RUN's validation reader (fresh instances: an Instance keeps the indices of its first
    indexing); with `phrases`, every labelled subtree (the SST readers' `use_subtrees`)."""
    if phrases and reader_type(run) == "sst_trees":
        raise ValueError(f"{run}: a tree run (sst_trees) reads whole trees; its phrases are its nodes, which "
                         "research/sst_composition.py scores")
    return list(validation_reader(run, **({"use_subtrees": True} if phrases else {})).read(trees))


def validation_reader_params(run: Path):
    """The parameters of RUN's validation reader (its training reader where the config names none), from its
    `config.json` read as an untrusted archive's (`memplugins.untrusted_archives`: plain JSON, registered types)."""
    from memplugins.untrusted_archives import read_archive_config

    params = read_archive_config(str(run / "config.json"))
    return params.get("validation_dataset_reader", params.get("dataset_reader")).duplicate()


def reader_type(run: Path) -> str:
    """The registered type of RUN's validation reader."""
    return validation_reader_params(run).get("type")


def load_run(run: Path, weights: str = "best.th") -> Model:
    """RUN's weights (`best.th`, or another state file of the run), in eval mode, on the CPU; the folder opened as
    an untrusted archive is (`memplugins.untrusted_archives.load_archive`: JSON config, registered types, weights
    without pickled code)."""
    from memplugins.untrusted_archives import load_archive

    return load_archive(str(run), weights_file=str(run / weights)).model.eval()


def run_name(run: Path) -> str:
    return run.parent.name if run.name == "train" else run.name


def parse_runs(description: str, trees_example: str, json_option: bool = False,
               length_options: bool = False) -> argparse.Namespace:
    """TREES and RUN ... from the command line, each RUN checked for its weights file; the plugins imported."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", help=f"PTB-format SST trees, e.g. {trees_example}")
    parser.add_argument("runs", nargs="+", type=Path)
    if json_option:
        parser.add_argument("--json", action="store_true", help="one JSON line per run instead of the table")
    if length_options:
        parser.add_argument("--phrases", action="store_true", help="every labelled subtree, not the sentences alone")
        parser.add_argument("--weights", default="best.th", help="the state file of each run to load")
    args = parser.parse_args()
    weights = getattr(args, "weights", "best.th")
    if Path(weights).name != weights:
        sys.exit(f"--weights {weights}: a file name inside each run, not a path")
    for run in args.runs:
        if not (run / weights).exists():
            sys.exit(f"{run}: no {weights} (is it a serialization directory?)")
    import_plugins()
    return args


def import_plugins() -> None:
    """allennlp-models' and our registered classes, and the instruments replicate.py's rows train, for loading a
    run's config; nltk kept offline."""
    from memplugins.cli import keep_nltk_offline

    keep_nltk_offline()  # as the memplugins command: allennlp-models' NarrativeQA module asks nltk to download
    import_module_and_submodules("allennlp_models")
    import_module_and_submodules("memplugins")
    import_instruments()


def import_instruments() -> None:
    """The measuring instruments replicate.py's rows train (`rows.INSTRUMENTS` of benchmarks/replication), registered so that a
    run trained with one loads."""
    import paths  # noqa: F401  (benchmarks/replication on sys.path)
    from rows import INSTRUMENTS

    for instrument in INSTRUMENTS:
        import_module_and_submodules(instrument)


def tensor_batches(model: Model, instances: list, batch_size: int = 64):
    """(the instances, their tensors indexed with the model's vocabulary) for each batch of `batch_size`, in order."""
    for start in range(0, len(instances), batch_size):
        chunk = instances[start:start + batch_size]
        batch = Batch(chunk)
        batch.index_instances(model.vocab)
        yield chunk, batch.as_tensor_dict()


def gold_labels(tensors: dict) -> list:
    """Each instance's gold label index: a sequence classifier's `label`, or a tree's root label (the
    `BinaryTreeField`'s `labels` at `root`, -1 where that node is unlabelled)."""
    if "label" in tensors:
        return tensors["label"].tolist()
    tree = tensors["tree"]
    return tree["labels"][torch.arange(tree["root"].size(0)), tree["root"]].tolist()


def sentence_results(run: Path, trees: str, phrases: bool = False, weights: str = "best.th") -> list:
    """(tokens, right or not) for each instance of TREES as RUN's reader reads it (in the file's order), by RUN's
    WEIGHTS."""
    model, instances = load_run(run, weights), read_trees(run, trees, phrases)
    results = []
    with torch.no_grad():
        for chunk, tensors in tensor_batches(model, instances):
            predicted = model(**tensors)["logits"].argmax(-1).tolist()
            for instance, guess, gold in zip(chunk, predicted, gold_labels(tensors)):
                results.append(([token.text for token in instance["tokens"].tokens], guess == gold))
    return results


def accuracy_by_length(run: Path, trees: str, phrases: bool = False, weights: str = "best.th") -> dict:
    counts = collections.defaultdict(lambda: [0, 0])
    for tokens, right in sentence_results(run, trees, phrases, weights):
        for key in ("all", bucket(len(tokens))):
            counts[key][0] += int(right)
            counts[key][1] += 1
    return counts


def main() -> None:
    args = parse_runs(__doc__, "../shared/data/sst/trees/dev.txt", length_options=True)
    keys = ["all"] + [bucket(first) for first, _ in BUCKETS]
    print("| run | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for run in args.runs:
        counts = accuracy_by_length(run, args.trees, args.phrases, args.weights)
        cells = [f"{counts[k][0] / counts[k][1]:.3f} ({counts[k][1]})" if counts[k][1] else "-" for k in keys]
        print(f"| {run_name(run)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
