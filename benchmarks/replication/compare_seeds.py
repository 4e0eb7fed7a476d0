"""
Compares rows of `benchmarks/replication/results.jsonl` over their seeds: is the difference between two rows' means larger
than their seeds' spread?

    .venv/bin/python benchmarks/replication/compare_seeds.py sst2_nse sst2_lstm_in_nse_settings_fixed_embeddings \\
        sst2_lstm2_in_nse_settings_fixed_embeddings
    .venv/bin/python benchmarks/replication/compare_seeds.py snli_lstmn_deep_fusion snli_esim --vocabulary glove

For every row: its seeds, the mean and standard deviation (n - 1) of the test and dev figures, and the best-dev pick
(the README's "best-dev of N seeds", `replicate.choose`). For every row after the first, its mean's difference from
the first row's (this row minus the first), on test and on dev, with

* Welch's 95% interval of that difference (unequal variances; it needs two seeds a row), and
* the two-sided exact permutation p-value: of all ways to split the pooled seeds into groups of the two sizes, the
  share whose difference of means is at least as far from zero as the observed one (252 splits for 5 and 5 seeds,
  so p >= 2/252 = 0.008 even when every seed of one row beats every seed of the other). It assumes nothing about the
  figures' distribution, which a handful of seeds cannot show. Above `--max-splits` splits a fixed-seed sample of
  that many random splits stands in.

A row's results are those of one protocol (`replicate.protocol`: its vocabulary and unknown row; the README's rows
are "glove" / "zero"): by default the protocol of its most recent result, or the one `--vocabulary` and
`--unknown-row` name. Where a seed was recorded twice under one protocol, the later line counts. Perplexities are
printed as they are recorded, accuracies and MAP in points (x 100).
"""
import argparse
import itertools
import math
import random
import statistics
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from scipy import stats

from replicate import choose, protocol, read_results

ROOT = Path(__file__).resolve().parents[2]


class Difference(NamedTuple):
    mean: float  # mean(b) - mean(a)
    low: Optional[float]  # Welch's 95% interval, None with fewer than two values in either group
    high: Optional[float]
    p: float  # two-sided permutation p-value
    exact: bool  # every split enumerated (else a random sample of them)


def seeds_of(results: List[dict], row: str, vocabulary: Optional[str] = None,
             unknown_row: Optional[str] = None) -> List[dict]:
    """The results of `row` under one protocol (see the module's docstring), one per seed (the later line wins),
    ordered by seed."""
    mine = [result for result in results if result["row"] == row]
    if not mine:
        raise ValueError(f"no results for row {row!r}")
    if vocabulary is not None or unknown_row is not None:
        mine = [result for result in mine if (vocabulary is None or protocol(result)[1] == vocabulary)
                and (unknown_row is None or protocol(result)[2] == unknown_row)]
        if not mine:
            raise ValueError(f"no results for row {row!r} with vocabulary {vocabulary!r} and unknown row "
                             f"{unknown_row!r}")
    else:
        latest = protocol(mine[-1])
        mine = [result for result in mine if protocol(result) == latest]
    by_seed: Dict[int, dict] = {}
    for result in mine:
        by_seed[result["seed"]] = result
    return [by_seed[seed] for seed in sorted(by_seed)]


def welch_interval(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> Tuple[Optional[float],
                                                                                           Optional[float]]:
    """Welch's interval for mean(b) - mean(a); (None, None) unless both groups hold two values or more."""
    if len(a) < 2 or len(b) < 2:
        return None, None
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    difference = statistics.fmean(b) - statistics.fmean(a)
    if va + vb == 0:
        return difference, difference
    freedom = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = stats.t.ppf(0.5 + level / 2, freedom) * math.sqrt(va + vb)
    return difference - half, difference + half


def permutation_p(a: Sequence[float], b: Sequence[float], max_splits: int = 200_000, seed: int = 0) -> Tuple[float,
                                                                                                              bool]:
    """Two-sided p-value of mean(b) - mean(a) under random assignment of the pooled values to the two groups, and
    whether every split was enumerated. A split counts when its difference is at least the observed one in size,
    with a tolerance for the floating point of equal sums."""
    pooled = list(a) + list(b)
    total, n_a = sum(pooled), len(a)
    observed = abs(statistics.fmean(b) - statistics.fmean(a))
    tolerance = 1e-9 * max(1.0, max(abs(value) for value in pooled))

    def extreme(indices: Sequence[int]) -> bool:
        sum_a = sum(pooled[index] for index in indices)
        return abs((total - sum_a) / (len(pooled) - n_a) - sum_a / n_a) >= observed - tolerance

    if math.comb(len(pooled), n_a) <= max_splits:
        splits = list(itertools.combinations(range(len(pooled)), n_a))
        return sum(map(extreme, splits)) / len(splits), True
    generator = random.Random(seed)
    hits = sum(extreme(generator.sample(range(len(pooled)), n_a)) for _ in range(max_splits))
    return (hits + 1) / (max_splits + 1), False  # the observed split counts as one of the sample


def compare(a: Sequence[float], b: Sequence[float], max_splits: int = 200_000) -> Difference:
    low, high = welch_interval(a, b)
    p, exact = permutation_p(a, b, max_splits)
    return Difference(statistics.fmean(b) - statistics.fmean(a), low, high, p, exact)


def _points(result: dict, value: Optional[float]) -> Optional[float]:
    """Accuracies and MAP (fractions) in points; perplexities as they are."""
    if value is None:
        return None
    return value if "perplexity" in result["metric"] else 100 * value


def _spread(values: List[float]) -> str:
    if len(values) < 2:
        return f"{values[0]:.2f}" if values else ""
    return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"


def _difference(difference: Optional[Difference]) -> str:
    if difference is None:
        return ""
    interval = ("" if difference.low is None else f" [{difference.low:+.2f}, {difference.high:+.2f}]")
    return f"{difference.mean:+.2f}{interval}, p = {difference.p:.3f}{'' if difference.exact else ' (sampled)'}"


def report(results: List[dict], rows: List[str], vocabulary: Optional[str] = None,
           unknown_row: Optional[str] = None, max_splits: int = 200_000) -> str:
    chosen = {row: seeds_of(results, row, vocabulary, unknown_row) for row in rows}
    lines = ["| row | protocol | seeds | test | dev | best-dev pick (test / dev) | test: difference from the first "
             "row [95% interval], permutation p | dev: the same |",
             "|---|---|---|---:|---:|---:|---|---|"]
    first: Optional[Tuple[List[float], List[float]]] = None
    for row, runs in chosen.items():
        test = [_points(run, run["value"]) for run in runs]
        dev = [_points(run, run["dev"]) for run in runs if run["dev"] is not None]
        pick = choose(runs)
        test_difference = dev_difference = None
        if first is None:
            first = (test, dev)
        else:
            test_difference = compare(first[0], test, max_splits)
            if dev and first[1]:
                dev_difference = compare(first[1], dev, max_splits)
        vocabulary_name, unknown = protocol(runs[-1])[1:]
        pick_dev = _points(pick, pick["dev"])
        lines.append(f"| {row} | {vocabulary_name} / {unknown} | {', '.join(str(run['seed']) for run in runs)} | "
                     f"{_spread(test)} | {_spread(dev)} | {_points(pick, pick['value']):.2f} / "
                     f"{'' if pick_dev is None else f'{pick_dev:.2f}'} | {_difference(test_difference)} | "
                     f"{_difference(dev_difference)} |")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", nargs="+", help="row names (replicate.py --list); the first is the reference")
    parser.add_argument("--results", default=str(ROOT / "benchmarks" / "replication.jsonl"))
    parser.add_argument("--vocabulary", help='only results with this vocabulary ("glove", "train+dev")')
    parser.add_argument("--unknown-row", help='only results with this unknown row ("zero", "random")')
    parser.add_argument("--max-splits", type=int, default=200_000,
                        help="enumerate the permutation test's splits up to this many, else sample this many")
    args = parser.parse_args(argv)
    try:
        print(report(read_results(Path(args.results)), args.rows, args.vocabulary, args.unknown_row,
                     args.max_splits))
    except ValueError as error:
        print(f"compare_seeds: {error} in {args.results}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
