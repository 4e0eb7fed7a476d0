"""research/snli_alignment.py on small decomposable-attention models, with and without an `lstmn` before the
attention: every statistic is the one computed pair by pair (a batch of one, so padding cannot enter) from the
model's parts (its embedder, encoder and attend feedforward called directly, not through the script's hook), rows
are the means of their seeds' means, the differences and the correlation across runs are those of the figures."""
import collections
import json
import math
import re
import statistics
import sys

import numpy
import pytest
import torch
from allennlp.data import Batch
from allennlp.nn.util import get_text_field_mask

from research.tests.saved_models import SNLI_SAMPLE, save_shrunk_pair_model
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import snli_alignment  # noqa: E402
from compare_seeds import compare  # noqa: E402
from sst_accuracy_by_length import bucket  # noqa: E402

SNLI = REPO_ROOT / SNLI_SAMPLE


def reference(model, instances) -> dict:
    """{"accuracy": fraction, statistic: {bucket: [values]}}, one pair at a time."""
    values = {name: collections.defaultdict(list) for name in snli_alignment.STATISTICS}
    # per half: (vectors, position, GloVe vector) of premise words
    words = {name: ([], []) for name in snli_alignment.READOUTS}
    table = model._text_field_embedder.token_embedder_tokens.weight
    right = 0

    def put(name, position, value):
        for key in ("all", bucket(position, snli_alignment.POSITIONS)):
            values[name][key].append(float(value))

    for index, instance in enumerate(instances):
        batch = Batch([instance])
        batch.index_instances(model.vocab)
        tensors = batch.as_tensor_dict()
        with torch.no_grad():
            output = model(**tensors)
            features, encoded, aligned = {}, {}, {}
            for sentence in ("premise", "hypothesis"):
                embedded = model._text_field_embedder(tensors[sentence])
                vectors = embedded
                if model._premise_encoder is not None:
                    vectors = model._premise_encoder(embedded, get_text_field_mask(tensors[sentence]))
                encoded[sentence] = vectors[0]
                # what eq. 1 reads: the encoded words, or the word vectors in the word-aligned instrument
                aligned[sentence] = embedded if getattr(model, "_alignment_input", None) == "words" else vectors
                features[sentence] = model._attend_feedforward(aligned[sentence])[0]
                aligned[sentence] = aligned[sentence][0]
        right += int(output["label_logits"].argmax(-1) == tensors["label"])
        premise = [token.text.lower() for token in instance["premise"].tokens]
        hypothesis = [token.text.lower() for token in instance["hypothesis"].tokens]
        n = len(premise)
        ids = tensors["premise"]["tokens"]["tokens"][0]
        for i in range(n):
            put("‖F(a_i)‖", i + 1, torch.linalg.vector_norm(features["premise"][i]))
            for name, vectors in zip(snli_alignment.READOUTS,
                                     (encoded["premise"], aligned["premise"], features["premise"])):
                words[name][index % 2].append((vectors[i].double().numpy(), i + 1, table[ids[i]].double().numpy()))
        for j, word in enumerate(hypothesis):
            weights = output["h2p_attention"][0, j]
            assert weights.numel() == n and abs(float(weights.sum()) - 1) < 1e-5
            put("‖F(b_j)‖", j + 1, torch.linalg.vector_norm(features["hypothesis"][j]))
            if word in premise:
                put("same word", j + 1, weights[torch.tensor([other == word for other in premise])].sum())
            if n > 1:
                put("entropy", j + 1, torch.distributions.Categorical(probs=weights).entropy() / math.log(n))
                put("premise position read", j + 1, weights @ torch.linspace(0, 1, n))
    r2 = {"position R²": {}, "word R²": {}}
    for name, (fit, scored) in words.items():  # least squares on the even pairs' words, R² on the odd pairs'
        for target, column in (("position R²", 1), ("word R²", 2)):
            x = numpy.array([numpy.append(word[0], 1.0) for word in fit])
            y = numpy.array([word[column] for word in fit], dtype=float)
            w = numpy.linalg.lstsq(x, y, rcond=1e-5)[0]  # the script's cut-off, on x's singular values
            x = numpy.array([numpy.append(word[0], 1.0) for word in scored])
            y = numpy.array([word[column] for word in scored], dtype=float)
            r2[target][name] = 1 - ((y - x @ w) ** 2).sum() / ((y - y.mean(axis=0)) ** 2).sum()
    return {"accuracy": right / len(instances), **values, **r2}


def test_statistics_rows_differences_and_correlation(tmp_path, capsys):
    models = {"lstmn_row": [save_shrunk_pair_model(tmp_path / f"lstmn_row-seed{seed}-glove" / "train", seed)
                            for seed in (1, 2)],
              "plain_row": [save_shrunk_pair_model(tmp_path / f"plain_row-seed{seed}", seed, encoder=False)
                            for seed in (3, 4)]}
    folders = [tmp_path / "lstmn_row-seed1-glove", tmp_path / "lstmn_row-seed2-glove" / "train",
               tmp_path / "plain_row-seed3", tmp_path / "plain_row-seed4"]
    snli_alignment.main([str(SNLI), *map(str, folders), "--json", str(tmp_path / "counts.json")])
    printed = capsys.readouterr().out
    kept = json.loads((tmp_path / "counts.json").read_text())
    expected = {row: [reference(model, instances) for model, instances in saved_models]
                for row, saved_models in models.items()}
    runs = [expected["lstmn_row"][0], expected["lstmn_row"][1], expected["plain_row"][0], expected["plain_row"][1]]
    for run, result in zip(runs, kept.values()):
        assert result["accuracy"] == run["accuracy"]
        for target in snli_alignment.TARGETS:
            for name in snli_alignment.READOUTS:
                assert result[target][name] == pytest.approx(run[target][name], abs=1e-6)
        for name in snli_alignment.STATISTICS:
            assert set(result[name]) == set(run[name])
            for key, values in run[name].items():
                total, count = result[name][key]
                assert count == len(values)
                assert total / count == pytest.approx(statistics.fmean(values), abs=1e-5)
    assert any(key != "all" and key != "1-2" for key in runs[0]["same word"])  # later words were reached
    for name, (sentence, form) in snli_alignment.STATISTICS.items():
        table = printed.split(f"{name}, by the {sentence} word's position:")[1].split(", by the ")[0].split(
            "Position R²")[0]
        cells = {row: cells.split(" | ") for row, cells in re.findall(r"^\| (\w+_row) \| 2 \| (.*) \|$", table, re.M)}
        assert list(cells) == ["lstmn_row", "plain_row"]
        means = {row: {key: [statistics.fmean(run[name][key]) for run in expected[row]] for key in snli_alignment.keys()
                       if all(run[name][key] for run in expected[row])} for row in expected}
        for row in expected:
            for key, cell in zip(snli_alignment.keys(), cells[row]):
                if key not in means[row]:
                    assert cell == "-"
                    continue
                seeds = means[row][key]
                assert cell == (f"{form.format(statistics.fmean(seeds))} "
                                f"({form.format(min(seeds))}-{form.format(max(seeds))})")
        difference = re.search(r"^\| plain_row − lstmn_row \| \| (.*) \|$", table, re.M).group(1).split(" | ")
        for key, cell in zip(snli_alignment.keys(), difference):
            if key not in means["plain_row"] or key not in means["lstmn_row"]:
                assert cell == "-"
                continue
            value, p = cell.split(", p ")
            mine, first = means["plain_row"][key], means["lstmn_row"][key]
            assert float(value) == pytest.approx(statistics.fmean(mine) - statistics.fmean(first), abs=0.006)
            assert p == f"{compare(first, mine).p:.3f}"
    for target, heading, after in (("position R²", "Position R²", "Word R²"), ("word R²", "Word R²", "Every run")):
        table = printed.split(heading)[1].split(after)[0]
        fits = {row: [[run[target][name] for run in expected[row]] for name in snli_alignment.READOUTS]
                for row in expected}
        for row in expected:
            cells = re.search(rf"^\| {row} \| 2 \| (.*) \|$", table, re.M).group(1).split(" | ")
            assert cells == [f"{statistics.fmean(v):.3f} ({min(v):.3f}-{max(v):.3f})" for v in fits[row]]
        cells = re.search(r"^\| plain_row − lstmn_row \| \| (.*) \|$", table, re.M).group(1).split(" | ")
        assert cells == [f"{statistics.fmean(mine) - statistics.fmean(first):+.3f}, p {compare(first, mine).p:.3f}"
                         for mine, first in zip(fits["plain_row"], fits["lstmn_row"])]
    across = re.search(r"^\| correlation with the accuracy, across runs \| \| (.*) \|$", printed, re.M)
    within = re.search(r"^\| the same within rows \(each run less its row's mean\) \| \| (.*) \|$", printed, re.M)
    accuracies = [run["accuracy"] for run in runs]
    centred_accuracies = [a - statistics.fmean(accuracies[:2]) for a in accuracies[:2]] + [
        a - statistics.fmean(accuracies[2:]) for a in accuracies[2:]]
    columns = {**{name: (lambda run, name=name: statistics.fmean(run[name]["all"]))
                  for name in snli_alignment.STATISTICS},
               **{f"{target}, {name}": (lambda run, target=target, name=name: run[target][name])
                  for target in snli_alignment.TARGETS for name in snli_alignment.READOUTS}}
    assert len(across.group(1).split(" | ")) == len(within.group(1).split(" | ")) == len(columns)
    for (name, value), across_cell, within_cell in zip(columns.items(), across.group(1).split(" | "),
                                                       within.group(1).split(" | ")):
        overall = [value(run) for run in runs]
        r = statistics.correlation(overall, accuracies) if len(set(accuracies)) > 1 else None
        assert across_cell == ("-" if r is None else f"{r:+.2f}")
        centred = [v - statistics.fmean(overall[:2]) for v in overall[:2]] + [
            v - statistics.fmean(overall[2:]) for v in overall[2:]]
        r = statistics.correlation(centred, centred_accuracies) if len(set(centred_accuracies)) > 1 else None
        assert within_cell == ("-" if r is None else f"{r:+.2f}")
    assert len(re.findall(r"^\| (lstmn|plain)_row-seed\d", printed, re.M)) == 4  # one line a run


def test_the_linear_readout_scores_held_out_words_over_all_target_dimensions():
    generator = torch.Generator().manual_seed(0)
    vectors = torch.randn(400, 6, generator=generator)
    exact = vectors @ torch.randn(6, 3, generator=generator) + torch.tensor([1.0, -2.0, 0.5])
    noise = torch.randn(400, 3, generator=generator)
    readouts = {name: snli_alignment.LinearReadout() for name in ("exact", "noise", "half", "position")}
    # a target of which half the variance is linear in the vectors: one exact column, one noise column of equal size
    half = torch.stack([exact[:, 0] / exact[:, 0].std(), noise[:, 0] / noise[:, 0].std()], dim=1)
    for index in range(0, 400, 50):  # in pieces, alternating halves, as pairs arrive
        part = slice(index, index + 50)
        for name, target in (("exact", exact), ("noise", noise), ("half", half), ("position", exact[:, 1])):
            readouts[name].add((index // 50) % 2, vectors[part], target[part])
    assert readouts["exact"].r2() == pytest.approx(1.0, abs=1e-9)
    assert readouts["position"].r2() == pytest.approx(1.0, abs=1e-9)  # a single target, as the position
    assert -0.1 < readouts["noise"].r2() < 0.0  # fitted noise predicts held-out noise worse than its mean
    assert 0.4 < readouts["half"].r2() < 0.52  # the dimensions pooled: the explained share of the summed variance
    assert snli_alignment.LinearReadout().r2() is None


def test_a_direction_at_rounding_size_is_not_read():
    # a position projected out of the vectors leaves float32 rounding along its direction; the read-out must not
    # fit the target through it. Here that direction carries the target exactly, at 1e-6 of the vectors' spread
    generator = torch.Generator().manual_seed(0)
    vectors = torch.randn(400, 6, dtype=torch.double, generator=generator)
    position = torch.arange(400, dtype=torch.double) % 17
    u = torch.tensor([1.0, 0, 0, 0, 0, 0], dtype=torch.double)
    erased = vectors - (vectors @ u)[:, None] * u + 1e-6 * (position - position.mean())[:, None] * u / position.std()
    kept = erased + 1e-3 * (position - position.mean())[:, None] * u / position.std()  # well above it: read
    readouts = {name: snli_alignment.LinearReadout() for name in ("erased", "kept")}
    for index in range(0, 400, 50):
        for name, vectors in (("erased", erased), ("kept", kept)):
            readouts[name].add((index // 50) % 2, vectors[index:index + 50], position[index:index + 50])
    assert -0.1 < readouts["erased"].r2() < 0.02
    assert readouts["kept"].r2() == pytest.approx(1.0, abs=1e-6)


def test_fs_input_is_what_eq_1_reads(tmp_path):
    # the word-aligned instrument: F reads the word vectors, not the encoder's states, and the read-out follows
    sys.path.insert(0, str(REPO_ROOT / "research"))
    import word_aligned_decomposable_attention  # noqa: F401  (registers the model)
    from research.tests.saved_models import save_with_random_weights, shrunk_decomposable_attention_config

    config = shrunk_decomposable_attention_config()
    config["model"]["type"] = "decomposable_attention_aligned_on_words"
    model, instances = save_with_random_weights(tmp_path, config, str(SNLI), seed=5)
    result = snli_alignment.alignment(tmp_path, str(SNLI))
    expected = reference(model, instances)
    for target in snli_alignment.TARGETS:
        for name in snli_alignment.READOUTS:
            assert result[target][name] == pytest.approx(expected[target][name], abs=1e-6)
    # and it is not a_i's: the states (a random LSTMN's) and the projected word vectors read differently
    assert result["word R²"]["F's input"] > result["word R²"]["a_i"] + 0.05  # here 0.24 against 0.13


def test_a_model_that_is_not_decomposable_attention_is_refused(tmp_path):
    from research.tests.lstmn_attention_use_test import saved_stack  # a language model

    saved_stack(tmp_path)
    with pytest.raises(SystemExit, match=f"{tmp_path}: not a decomposable_attention model"):
        snli_alignment.main([str(SNLI), str(tmp_path)])


def test_a_model_without_an_embedding_table_is_refused_by_name(tmp_path):
    from types import SimpleNamespace

    model = SimpleNamespace(_text_field_embedder=SimpleNamespace())  # no `tokens` embedding to read the words from
    with pytest.raises(SystemExit, match=f"{tmp_path}: the word read-out needs a `tokens` embedding table"):
        snli_alignment.word_vectors(model, tmp_path)
