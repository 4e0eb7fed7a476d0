"""
Is a gap between two groups of trained SST runs (say, the seeds of the tree LSTM and of the allennlp-models peer) on
dev or test more than which sentences that split happens to hold? `compare_seeds.py` asks whether a gap is larger than
the seeds' spread on a fixed set of sentences; this asks the other half: how far the same runs' gap would move on
another draw of sentences of the same kind.

    OMP_NUM_THREADS=1 .venv/bin/python research/sst_sentence_gap.py \\
        ../shared/data/sst/trees/dev.txt ../shared/data/sst/trees/test.txt \\
        --first RUN [RUN ...] --second RUN [RUN ...] [--resamples 10000] [--seed 0]

Each RUN is a serialization directory (`config.json`, `vocabulary/`, `best.th`; a `replicate.py` run's `train/`), a
sequence classifier or our `tree_classifier` (`sst_accuracy_by_length.sentence_results`: each run reads the file with
its own reader and scores each sentence with its best weights). A sentence's score in a group is the share of the
group's runs that get it right, so a group's accuracy is the mean of its runs' accuracies. For each TREES file it
prints each group's accuracy, the gap (second minus first), a 95% percentile bootstrap interval of the gap over
sentences drawn with replacement (the runs held fixed), and on how many sentences the two groups' scores differ.
Given two files (dev, then test), it also prints the difference between their gaps (the second file's minus the
first's) with its interval from independent resamples of each file: whether dev and test disagree about the gap by
more than the sampling of their sentences explains.

Every run must read the same sentences in the same order (a tree run and a sequence run of one granularity do: both
drop the neutral sentences of the binary protocol, and words are compared as the tree reader unescapes them, -LRB- as
"("); a run that reads others is refused, naming it. Run it with `OMP_NUM_THREADS=1` beside training processes; about
a minute a run on test on one core. The resamples are seeded (`--seed`, the i-th file's draws from seed + i).
"""
import argparse
import sys
from pathlib import Path
from typing import List, NamedTuple, Sequence, Tuple

import numpy

from sst_accuracy_by_length import import_plugins, run_name, sentence_results


class Gap(NamedTuple):
    first: float  # the first group's accuracy (mean over its runs)
    second: float
    gap: float  # second - first
    low: float  # the 95% percentile bootstrap interval of the gap over sentences
    high: float
    differ: int  # sentences on which the groups' scores differ
    sentences: int
    draws: numpy.ndarray  # the resampled gaps


def group_scores(runs: Sequence[Path], trees: str) -> Tuple[numpy.ndarray, List[List[str]]]:
    """Per sentence of TREES, the share of RUNS that get it right, and the sentences' tokens; refuses runs that read
    different sentences."""
    from memplugins.readers.sst_trees import unescape_sst_word  # allennlp-models' reader keeps the escapes as written

    tokens, rights = None, []
    for run in runs:
        results = sentence_results(run, trees)
        read = [[unescape_sst_word(token) for token in sentence] for sentence, _ in results]
        if tokens is None:
            tokens, first_run = read, run
        elif read != tokens:
            raise ValueError(f"{run_name(run)} reads other sentences of {trees} than {run_name(first_run)} "
                             f"({len(read)} against {len(tokens)}): the groups must score the same sentences")
        rights.append([right for _, right in results])
    return numpy.asarray(rights, dtype=float).mean(axis=0), tokens


def sentence_gap(first: numpy.ndarray, second: numpy.ndarray, resamples: int, seed: int) -> Gap:
    """The gap SECOND - FIRST (per-sentence scores of the same sentences) and its percentile bootstrap interval."""
    if first.shape != second.shape:
        raise ValueError(f"the groups score {first.size} and {second.size} sentences: they must score the same ones")
    difference = second - first
    drawn = numpy.random.default_rng(seed).integers(0, difference.size, size=(resamples, difference.size))
    draws = difference[drawn].mean(axis=1)
    low, high = numpy.percentile(draws, [2.5, 97.5])
    return Gap(first.mean(), second.mean(), difference.mean(), low, high, int((difference != 0).sum()),
               difference.size, draws)


def compare(trees_files: List[str], first_runs: List[Path], second_runs: List[Path], resamples: int,
            seed: int) -> List[Gap]:
    """The gap of SECOND_RUNS over FIRST_RUNS on each of TREES_FILES; each file resampled from its own seed (seed + its
    index), so that two files' draws are independent."""
    gaps = []
    for index, trees in enumerate(trees_files):
        first, first_tokens = group_scores(first_runs, trees)
        second, second_tokens = group_scores(second_runs, trees)
        if first_tokens != second_tokens:
            raise ValueError(f"{trees}: the --second runs read other sentences than the --first runs")
        gaps.append(sentence_gap(first, second, resamples, seed + index))
    return gaps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", help="PTB-format SST trees, e.g. dev.txt test.txt")
    parser.add_argument("--first", nargs="+", type=Path, required=True)
    parser.add_argument("--second", nargs="+", type=Path, required=True)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for run in args.first + args.second:
        if not (run / "best.th").exists():
            sys.exit(f"{run}: no best.th (is it a serialization directory?)")
    import_plugins()
    gaps = compare(args.trees, args.first, args.second, args.resamples, args.seed)
    print(f"first: {', '.join(map(run_name, args.first))}\nsecond: {', '.join(map(run_name, args.second))}\n")
    print("| file | sentences | first | second | second − first [95% over sentences] "
          "| sentences the groups differ on |")
    print("|---|---:|---:|---:|---|---:|")
    for trees, gap in zip(args.trees, gaps):
        print(f"| {trees} | {gap.sentences} | {100 * gap.first:.2f} | {100 * gap.second:.2f} | "
              f"{100 * gap.gap:+.2f} [{100 * gap.low:+.2f}, {100 * gap.high:+.2f}] | {gap.differ} |")
    if len(gaps) == 2:
        between = gaps[1].draws - gaps[0].draws
        low, high = numpy.percentile(between, [2.5, 97.5])
        print(f"\nthe gap on {args.trees[1]} minus the gap on {args.trees[0]}: "
              f"{100 * (gaps[1].gap - gaps[0].gap):+.2f} [{100 * low:+.2f}, {100 * high:+.2f}] "
              "(independent resamples of each file)")


if __name__ == "__main__":
    main()
