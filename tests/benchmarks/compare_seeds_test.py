"""benchmarks/replication/compare_seeds.py: the seeds' statistics, Welch's interval and the exact permutation test."""
import json
import statistics
import sys

import pytest
from scipy import stats

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
import compare_seeds  # noqa: E402


def _result(row, seed, value, dev, vocabulary="glove", unknown_row="zero", metric="accuracy"):
    return {"family": "f", "row": row, "seed": seed, "value": value, "dev": dev, "metric": metric,
            "dev_metric": metric, "vocabulary": vocabulary, "unknown_row": unknown_row}


def test_permutation_p_counts_the_splits_as_extreme_as_the_observed_one():
    # every value of b above every value of a: of the 252 splits of 5 + 5 only the observed one and its mirror
    # image are as far apart
    p, exact = compare_seeds.permutation_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert exact and p == pytest.approx(2 / 252)
    # the same values in both groups: every split is at least as extreme as a difference of 0
    assert compare_seeds.permutation_p([1, 2, 3], [1, 2, 3])[0] == 1.0
    # a brute-force count over the 35 splits of 3 + 4 unequal values
    a, b = [0.781, 0.802, 0.777], [0.807, 0.799, 0.786, 0.789]
    pooled, observed = a + b, abs(statistics.fmean(b) - statistics.fmean(a))
    count = 0
    for mask in range(2 ** 7):
        group = [value for index, value in enumerate(pooled) if mask >> index & 1]
        if len(group) == 3:
            rest = [value for index, value in enumerate(pooled) if not mask >> index & 1]
            count += abs(statistics.fmean(rest) - statistics.fmean(group)) >= observed - 1e-12
    assert compare_seeds.permutation_p(a, b)[0] == pytest.approx(count / 35)


def test_permutation_p_samples_when_the_splits_are_too_many():
    a, b = [float(value) for value in range(9)], [value + 1.5 for value in range(9)]  # 48,620 splits
    exact_p, exact = compare_seeds.permutation_p(a, b)
    sampled_p, sampled = compare_seeds.permutation_p(a, b, max_splits=20_000)
    assert exact and not sampled
    assert sampled_p == pytest.approx(exact_p, abs=0.02)


def test_welch_interval_agrees_with_scipys_welch_test():
    a, b = [78.5, 80.1, 77.9, 79.3], [81.0, 80.2, 82.4]
    low, high = compare_seeds.welch_interval(a, b)
    middle = statistics.fmean(b) - statistics.fmean(a)
    assert low < middle < high and middle - low == pytest.approx(high - middle)
    # the interval just excludes 0 at level 1 - p, where p is scipy's two-sided Welch p-value
    p = stats.ttest_ind(b, a, equal_var=False).pvalue
    edge_low, _ = compare_seeds.welch_interval(a, b, level=1 - p)
    assert edge_low == pytest.approx(0, abs=1e-9)
    assert compare_seeds.welch_interval([1.0], [2.0, 3.0]) == (None, None)


def test_seeds_of_takes_one_protocol_and_the_later_line_of_a_seed():
    results = [_result("r", 1, 0.70, 0.71, vocabulary="train+dev", unknown_row="random"),
               _result("r", 1, 0.80, 0.81), _result("r", 2, 0.82, 0.83), _result("r", 1, 0.79, 0.81)]
    latest = compare_seeds.seeds_of(results, "r")
    assert [(run["seed"], run["value"]) for run in latest] == [(1, 0.79), (2, 0.82)]
    earlier = compare_seeds.seeds_of(results, "r", vocabulary="train+dev")
    assert [run["value"] for run in earlier] == [0.70]
    with pytest.raises(ValueError, match="no results for row 'other'"):
        compare_seeds.seeds_of(results, "other")
    with pytest.raises(ValueError, match="vocabulary 'none'"):
        compare_seeds.seeds_of(results, "r", vocabulary="none")


def test_the_command_prints_each_rows_spread_and_its_difference_from_the_first(tmp_path, capsys):
    results = [_result("a", seed, value, dev) for seed, value, dev in [(1, 0.78, 0.80), (2, 0.79, 0.81),
                                                                          (3, 0.80, 0.79)]]
    results += [_result("b", seed, value, dev) for seed, value, dev in [(1, 0.81, 0.83), (2, 0.82, 0.82),
                                                                          (3, 0.83, 0.84)]]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(result) + "\n" for result in results))
    assert compare_seeds.main(["a", "b", "--results", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    row_a, row_b = lines[2].split(" | "), lines[3].split(" | ")
    assert row_a[3] == "79.00 ± 1.00" and row_a[5] == "79.00 / 81.00"  # the best-dev pick is seed 2
    assert row_b[3] == "82.00 ± 1.00" and row_b[6].startswith("+3.00 [")
    # 3 + 3 seeds, every b above every a on test: 2 of 20 splits
    assert row_b[6].endswith("p = 0.100")
    assert compare_seeds.main(["a", "missing", "--results", str(path)]) == 1
    assert "no results for row 'missing'" in capsys.readouterr().err


def test_perplexities_are_compared_as_recorded():
    results = [_result("lm", seed, value, value + 3, metric="token_perplexity") for seed, value in
               [(1, 101.2), (2, 101.7)]]
    table = compare_seeds.report(results, ["lm"])
    assert "101.45 ± 0.35" in table and "104.45 ± 0.35" in table  # not x 100
