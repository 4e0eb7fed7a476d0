"""research/snli_accuracy_by_length.py on small decomposable-attention models: runs of one row are pooled over
their seeds, every cell is the models' own accuracy on its bucket's pairs, the buckets partition the pairs, and the
difference rows are the differences of the rows above."""
import json
import re
import sys

import pytest
import torch
from allennlp.data import Batch

from research.tests.saved_models import SNLI_SAMPLE, save_shrunk_pair_model
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import snli_accuracy_by_length  # noqa: E402
from compare_seeds import compare  # noqa: E402

SNLI = REPO_ROOT / SNLI_SAMPLE


def correct(model, instances, field: str, first: int, last: int):
    right, total = 0, 0
    with torch.no_grad():
        for instance in instances:
            if first <= len(instance[field].tokens) <= last:
                batch = Batch([instance])
                batch.index_instances(model.vocab)
                tensors = batch.as_tensor_dict()
                right += int(model(**tensors)["label_logits"].argmax(-1) == tensors["label"])
                total += 1
    return right, total


def test_rows_are_pooled_over_seeds_and_each_bucket_is_the_models_own_accuracy(tmp_path, capsys):
    # a replicate.py run folder holds its serialization directory in train/; a plain one is read as it is
    models = {"first_row": [save_shrunk_pair_model(tmp_path / f"first_row-seed{seed}-glove" / "train", seed)
                            for seed in (1, 2)],
              "second_row": [save_shrunk_pair_model(tmp_path / f"second_row-seed{seed}-glove", seed)
                             for seed in (3, 4)],
              "third_row": [save_shrunk_pair_model(tmp_path / "third_row", 5)]}
    snli_accuracy_by_length.main([str(SNLI), str(tmp_path / "first_row-seed1-glove"),
                                  str(tmp_path / "first_row-seed2-glove" / "train"),
                                  *(str(tmp_path / f"second_row-seed{seed}-glove") for seed in (3, 4)),
                                  str(tmp_path / "third_row")])
    printed = capsys.readouterr().out
    for field, buckets in snli_accuracy_by_length.BUCKETS.items():
        table = printed.split(f"By {field} length")[1].split("By ")[0]
        header = re.search(r"^\| row \| seeds \| (.*) \|$", table, re.M).group(1).split(" | ")
        sizes = [int(re.search(r"\((\d+)\)", cell).group(1)) for cell in header[:-1]]
        assert sizes[0] == len(models["first_row"][0][1]) == sum(sizes[1:])  # the buckets partition the pairs
        assert header[-1] == f"{header[-2].split(' ')[0]} − {header[1].split(' ')[0]}"
        rows = {name: cells.split(" | ") for name, cells in re.findall(r"^\| (\w+) \| \d+ \| (.*) \|$", table, re.M)}
        assert list(rows) == list(models)
        per_seed = {}  # (row, column): each seed's accuracy
        for row, saved in models.items():
            for column, ((low, high), cell, size) in enumerate(zip(((1, 10_000), *buckets), rows[row], sizes)):
                seeds = [correct(model, instances, field, low, high) for model, instances in saved]
                assert all(total == size for _, total in seeds)
                per_seed[row, column] = [100 * right / size for right, _ in seeds]
                pooled = 100 * sum(right for right, _ in seeds) / (len(seeds) * size)
                lowest, highest = min(per_seed[row, column]), max(per_seed[row, column])
                assert cell == (f"{pooled:.1f} ({lowest:.1f}-{highest:.1f})" if len(seeds) > 1 else f"{pooled:.1f}")
            spread = [b - a for a, b in zip(per_seed[row, 1], per_seed[row, len(buckets)])]
            per_seed[row, "spread"] = spread
            assert rows[row][-1] == f"{sum(spread) / len(spread):+.1f}"
        for row in ("second_row", "third_row"):
            difference = re.search(rf"^\| {row} − first_row \| \| (.*) \|$", table, re.M).group(1).split(" | ")
            assert len(difference) == len(header)
            for cell, key, mine, theirs in zip(difference, [*range(len(sizes)), "spread"],
                                                rows["first_row"], rows[row]):
                value, _, p = cell.partition(", p ")
                assert abs(float(value) - (float(theirs.split(" ")[0]) - float(mine.split(" ")[0]))) < 0.11
                if row == "third_row":
                    assert p == ""  # one seed: no test
                else:  # compare_seeds.py's permutation over the two rows' seeds
                    assert p == f"{compare(per_seed['first_row', key], per_seed[row, key]).p:.3f}"


def test_a_bucket_without_pairs_is_a_dash(tmp_path, capsys, monkeypatch):
    save_shrunk_pair_model(tmp_path / "row-seed1", 1)
    monkeypatch.setitem(snli_accuracy_by_length.BUCKETS, "premise", ((1, 10), (11, 14), (15, 499), (500, 10_000)))
    snli_accuracy_by_length.main([str(SNLI), str(tmp_path / "row-seed1")])
    printed = capsys.readouterr().out
    assert re.search(r"^\| row \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| - \| - \|$", printed, re.M)


def test_each_gold_label_has_a_hypothesis_length_table_of_its_own_pairs(tmp_path, capsys):
    model, instances = save_shrunk_pair_model(tmp_path / "row-seed1", 1)
    snli_accuracy_by_length.main([str(SNLI), str(tmp_path / "row-seed1")])
    printed = capsys.readouterr().out
    labels = sorted({instance["label"].label for instance in instances})
    assert len(labels) == 3  # the fixture has every label
    buckets = ((1, 10_000), *snli_accuracy_by_length.BUCKETS["hypothesis"])
    pairs = 0
    for label in labels:
        table = printed.split(f"By hypothesis length, gold label {label} only")[1].split("By ")[0]
        header = re.search(r"^\| row \| seeds \| (.*) \|$", table, re.M).group(1).split(" | ")
        sizes = [int(re.search(r"\((\d+)\)", cell).group(1)) for cell in header[:-1]]
        cells = re.search(r"^\| row \| 1 \| (.*) \|$", table, re.M).group(1).split(" | ")
        own = [instance for instance in instances if instance["label"].label == label]
        for (low, high), cell, size in zip(buckets, cells, sizes):
            right, total = correct(model, own, "hypothesis", low, high)
            assert total == size
            assert cell == ("-" if total == 0 else f"{100 * right / total:.1f}")
        pairs += sizes[0]
    assert pairs == len(instances)
    assert printed.count("By hypothesis length") == 1 + len(labels)


def test_a_run_whose_config_names_an_import_path_is_refused_before_anything_is_built(tmp_path):
    # a run folder may come from someone else: its config is read as an untrusted archive's (load_run)
    from allennlp.common.checks import ConfigurationError

    save_shrunk_pair_model(tmp_path / "row-seed1", 1)
    config_file = tmp_path / "row-seed1" / "config.json"
    config = json.loads(config_file.read_text())
    config["model"]["type"] = "os.system"
    config_file.write_text(json.dumps(config))
    with pytest.raises(ConfigurationError, match="'os.system' is an import path"):
        snli_accuracy_by_length.main([str(SNLI), str(tmp_path / "row-seed1")])
