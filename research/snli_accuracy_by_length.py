"""
SNLI accuracy by premise and by hypothesis length (tokens) of trained pair classifiers, pooled over each row's
seeds: a diagnostic for gaps between rows, e.g. the LSTMN against the LSTM as the sentence encoder of
decomposable attention (docs/results.md "SNLI"). If a recurrent encoder's deficit lies in how it reads long
sentences (an intra-attention over a longer tape, a state carried further), it grows with the length; a deficit
the same at every length points elsewhere.

    OMP_NUM_THREADS=1 .venv/bin/python research/snli_accuracy_by_length.py PAIRS RUN [RUN ...]

Each RUN is a serialization directory with `config.json`, `vocabulary/` and `best.th` (a `benchmarks/replication/replicate.py`
run's `train/`, or the run folder holding it). Runs named `ROW-seedN...` are pooled per ROW: a cell is the accuracy
over every seed's predictions (their mean, the pairs being the same), with the lowest and highest seed's after it.
Each table's second part is every row's difference from the first row's, per bucket, with the two-sided
permutation p over the two rows' seeds (`compare_seeds.py`'s); its last column, each seed's accuracy on the longest
bucket less that on the shortest, compared the same way, says whether a difference grows with the length.
The same hypothesis-length table follows for each gold label's pairs alone, since the labels differ in length
(SNLI's neutral hypotheses run longer than its entailed ones): a difference that grows with the length in every
label is the length's, one that grows in one label only is that label's pairs'. `--json FILE` keeps every run's
counts. The instances are PAIRS read by each run's own validation reader, so pairs it skips (SNLI's '-' labels) are
skipped here too.
"""
import argparse
import collections
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import torch

import paths  # noqa: F401,E402  (benchmarks/replication on sys.path)
from compare_seeds import compare  # noqa: E402
from sst_accuracy_by_length import bucket, import_plugins, load_run, run_name, tensor_batches, validation_reader

# about the quartiles of SNLI test's premises (10, 14, 19 tokens) and hypotheses (6, 8, 10)
BUCKETS = {"premise": ((1, 10), (11, 14), (15, 19), (20, 10_000)),
           "hypothesis": ((1, 6), (7, 8), (9, 10), (11, 10_000))}


def length_field(field: str) -> str:
    """The sentence whose length a table's buckets are: `field` itself, or the one before ", gold ..."."""
    return field.split(", gold ")[0]


def keys(field: str) -> List[str]:
    buckets = BUCKETS[length_field(field)]
    return ["all"] + [bucket(first, buckets) for first, _ in buckets]


def run_folder(run: Path) -> Path:
    """The serialization directory: RUN itself, or its `train/` (a replicate.py run folder)."""
    return run if (run / "best.th").exists() or not (run / "train").is_dir() else run / "train"


def row_name(run: Path) -> str:
    """The row a run belongs to: its folder's name up to `-seedN` (the run's own name when it has none)."""
    return re.sub(r"-seed\d+.*$", "", run_name(run))


def label_fields(labels: Dict[int, str]) -> List[str]:
    """The fields counted: BUCKETS' and, for each gold label, "hypothesis, gold LABEL" over that label's pairs."""
    return [*BUCKETS, *(f"hypothesis, gold {label}" for label in sorted(labels.values()))]


def empty_counts(labels: Dict[int, str]) -> Dict[str, Dict[str, List[int]]]:
    return {field: collections.defaultdict(lambda: [0, 0]) for field in label_fields(labels)}


def tally(counts: Dict[str, Dict[str, List[int]]], chunk: list, predicted: List[int], gold: List[int],
          labels: Dict[int, str]) -> None:
    """Adds one batch's predictions to `counts` ({field: {bucket: [correct, total]}}, from `empty_counts`)."""
    for instance, guess, answer in zip(chunk, predicted, gold):
        for field in (*BUCKETS, f"hypothesis, gold {labels[answer]}"):
            sentence = length_field(field)
            for key in ("all", bucket(len(instance[sentence].tokens), BUCKETS[sentence])):
                counts[field][key][0] += int(guess == answer)
                counts[field][key][1] += 1


def correct_by_length(run: Path, pairs: str, batch_size: int = 64) -> Dict[str, Dict[str, List[int]]]:
    """{field: {bucket: [correct, total]}} of RUN's best weights on PAIRS; the fields are BUCKETS' and, for each gold
    label, "hypothesis, gold LABEL" over that label's pairs alone."""
    model = load_run(run)
    instances = list(validation_reader(run).read(pairs))
    if not instances:
        sys.exit(f"{pairs}: no labelled pairs read by {run}'s reader")
    labels = model.vocab.get_index_to_token_vocabulary("labels")
    counts = empty_counts(labels)
    with torch.no_grad():
        for chunk, tensors in tensor_batches(model, instances, batch_size):
            predicted = model(**tensors)["label_logits"].argmax(-1).tolist()
            tally(counts, chunk, predicted, tensors["label"].tolist(), labels)
    return counts


def pooled(per_seed: List[Dict[str, List[int]]], key: str) -> Optional[Tuple[float, float, float]]:
    """(pooled accuracy, lowest seed's, highest seed's) of one bucket; None for a bucket without pairs."""
    if not per_seed[0][key][1]:
        return None
    accuracies = [counts[key][0] / counts[key][1] for counts in per_seed]
    correct = sum(counts[key][0] for counts in per_seed)
    total = sum(counts[key][1] for counts in per_seed)
    return correct / total, min(accuracies), max(accuracies)


def seed_accuracies(per_seed: List[Dict[str, List[int]]], key: str) -> List[float]:
    return [100 * counts[key][0] / counts[key][1] for counts in per_seed]


def tables(results: Dict[str, List[Dict[str, Dict[str, List[int]]]]]) -> str:
    """Per field, each row's accuracy per bucket, then each later row's difference from the first row (pooled), with
    the permutation p over the two rows' seeds where both have two or more; the last column, the longest bucket's
    accuracy less the shortest's per seed, is whether the difference changes with the length."""
    lines = []
    rows = list(results)
    for field in results[rows[0]][0]:
        columns = keys(field)
        sizes = [results[rows[0]][0][field][key][1] for key in columns]  # pairs a seed
        spread = f"{columns[-1]} − {columns[1]}"
        sentence, _, label = field.partition(", gold ")
        title = f"By {sentence} length" + (f", gold label {label} only" if label else "")
        lines += ["", f"{title} (tokens; pairs a seed in brackets):", "",
                  "| row | seeds | " + " | ".join(f"{key} ({size})" for key, size in zip(columns, sizes))
                  + f" | {spread} |", "|---|---:|" + "---:|" * (len(columns) + 1)]
        seeds = {row: [seed[field] for seed in results[row]] for row in rows}  # this field's counts, per seed
        figures = {row: [pooled(seeds[row], key) for key in columns] for row in rows}
        spreads = {row: [longest - shortest for longest, shortest in
                         zip(seed_accuracies(seeds[row], columns[-1]), seed_accuracies(seeds[row], columns[1]))]
                   if figures[row][-1] and figures[row][1] else None for row in rows}
        for row in rows:
            cells = ["-" if figure is None else f"{100 * figure[0]:.1f} ({100 * figure[1]:.1f}-{100 * figure[2]:.1f})"
                     if len(results[row]) > 1 else f"{100 * figure[0]:.1f}" for figure in figures[row]]
            cells.append("-" if spreads[row] is None else f"{statistics.fmean(spreads[row]):+.1f}")
            lines.append(f"| {row} | {len(results[row])} | " + " | ".join(cells) + " |")
        for row in rows[1:]:
            tested = len(results[row]) > 1 and len(results[rows[0]]) > 1
            cells = []
            for key, mine, first in zip(columns, figures[row], figures[rows[0]]):
                if mine is None or first is None:
                    cells.append("-")
                    continue
                cell = f"{100 * (mine[0] - first[0]):+.1f}"
                if tested:
                    difference = compare(seed_accuracies(seeds[rows[0]], key), seed_accuracies(seeds[row], key))
                    cell += f", p {difference.p:.3f}"
                cells.append(cell)
            if spreads[row] is None or spreads[rows[0]] is None:
                cells.append("-")
            else:
                difference = compare(spreads[rows[0]], spreads[row])
                cells.append(f"{difference.mean:+.1f}" + (f", p {difference.p:.3f}" if tested else ""))
            lines.append(f"| {row} − {rows[0]} | | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_pair_runs(description: str, argv: Optional[List[str]], kept: str,
                    options: Tuple[Tuple[tuple, dict], ...] = ()) -> Tuple[argparse.Namespace, List[Path]]:
    """PAIRS, RUN ..., --json FILE (keeping `kept`) and the caller's `options` ((names, add_argument's keywords)
    each) from the command line; each RUN's serialization directory, checked for its weights; the plugins imported."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", help="SNLI jsonl (or .jsonl.gz), e.g. ../shared/data/snli/snli_1.0_test.jsonl.gz")
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help=f"also write {kept} to this file")
    for names, keywords in options:
        parser.add_argument(*names, **keywords)
    args = parser.parse_args(argv)
    runs = [run_folder(run) for run in args.runs]
    for run in runs:
        if not (run / "best.th").exists():
            sys.exit(f"{run}: no best.th (is it a serialization directory?)")
    import_plugins()
    return args, runs


def main(argv=None) -> None:
    args, runs = parse_pair_runs(__doc__, argv, "every run's counts")
    results: Dict[str, list] = {}
    counts = {}
    for run in runs:
        counts[str(run)] = correct_by_length(run, args.pairs)
        results.setdefault(row_name(run), []).append(counts[str(run)])
    if args.json:
        args.json.write_text(json.dumps(counts, indent=1) + "\n")
    print(tables(results))


if __name__ == "__main__":
    main()
