"""research/snli_alignment_intervention.py on small decomposable-attention models with an `lstmn` before the
attention: every condition's counts are those of decomposable attention's equations (Parikh et al. eq. 1-5) worked
pair by pair from the model's parts (a batch of one, without the script's hooks or its replayed encoder), with
e_ij changed as the condition says; the tables' cells are the seeds' figures."""
import json
import re
import statistics
import sys

import pytest
import torch
from allennlp.data import Batch

from research.tests.saved_models import SNLI_SAMPLE, save_shrunk_pair_model
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import snli_alignment_intervention as intervention  # noqa: E402
from compare_seeds import compare  # noqa: E402

SNLI = REPO_ROOT / SNLI_SAMPLE


def encoded(model, tensors):
    """(a, b, e) of one pair: the premise's and hypothesis's encoded words and e_ij = F(a_i)^T F(b_j) (eq. 1)."""
    vectors = []
    for sentence in ("premise", "hypothesis"):
        words = model._text_field_embedder(tensors[sentence])[0]
        if model._premise_encoder is not None:
            words = model._premise_encoder(words[None], torch.ones(1, len(words), dtype=torch.bool))[0]
        vectors.append(words)
    a, b = vectors
    return a, b, model._attend_feedforward(a[None])[0] @ model._attend_feedforward(b[None])[0].T


def decide(model, a, b, e):
    """(predicted label index, h2p weights (hypothesis words, premise words)) from eq. 2-5 with the given e."""
    beta = torch.softmax(e, dim=0).T @ a  # eq. 2: each hypothesis word's read of the premise
    alpha = torch.softmax(e, dim=1) @ b
    v1 = model._compare_feedforward(torch.cat([a, alpha], dim=-1)[None])[0].sum(0)  # eq. 3-4 (its layers take a
    v2 = model._compare_feedforward(torch.cat([b, beta], dim=-1)[None])[0].sum(0)  # batch dimension)
    return int(model._aggregate_feedforward(torch.cat([v1, v2])[None]).argmax()), torch.softmax(e, dim=0).T


def expected_tallies(models, instances, bonuses):
    """{run index: {condition: {"correct": {field: n}, "same word": [sum, count]}}} by the equations, pair by pair."""
    labels = models[0].vocab.get_index_to_token_vocabulary("labels")
    results = [{} for _ in models]
    for instance in instances:
        batch = Batch([instance])
        batch.index_instances(models[0].vocab)
        tensors = batch.as_tensor_dict()
        gold = int(tensors["label"])
        premise = [token.text.lower() for token in instance["premise"].tokens]
        hypothesis = [token.text.lower() for token in instance["hypothesis"].tokens]
        same = torch.tensor([[p == h for h in hypothesis] for p in premise], dtype=torch.float)
        with torch.no_grad():
            parts = [encoded(model, tensors) for model in models]
            for k, (model, (a, b, e)) in enumerate(zip(models, parts)):
                conditions = {intervention.AS_TRAINED: e,
                              **{f"literal match +{bonus:g}": e + bonus * same for bonus in bonuses}}
                if len(models) == 2:
                    conditions[f"aligned as row{2 - k}"] = parts[1 - k][2]
                for condition, scores in conditions.items():
                    guess, weights = decide(model, a, b, scores)
                    kept = results[k].setdefault(condition, {"correct": {}, "same word": [0.0, 0], "predicted": {
                        name: 0 for name in labels.values()}})
                    kept["predicted"][labels[guess]] += 1
                    label = labels[gold]
                    fields = ["all", f"gold {label}"]
                    if label.startswith("entail") and len(hypothesis) >= 11:
                        fields.append("gold entailment, 11+")
                    for field in fields:
                        kept["correct"].setdefault(field, [0, 0])
                        kept["correct"][field][0] += int(guess == gold)
                        kept["correct"][field][1] += 1
                    for j, word in enumerate(hypothesis):
                        if word in premise:
                            kept["same word"][0] += float(weights[j][same[:, j].bool()].sum())
                            kept["same word"][1] += 1
    return results


def check(result, expected):
    assert set(result) == set(expected)
    for condition, tallies in expected.items():
        counts = result[condition]["counts"]
        for field, cell in tallies["correct"].items():
            if field == "all":
                assert counts["premise"]["all"] == cell
            elif field == "gold entailment, 11+":
                assert counts["hypothesis, gold entailment"]["11+"] == cell
            else:
                assert counts[f"hypothesis, {field}"]["all"] == cell
        assert result[condition]["predicted"] == tallies["predicted"]
        total, count = result[condition]["same word"]
        assert count == tallies["same word"][1] and count > 0
        assert total == pytest.approx(tallies["same word"][0], abs=1e-4)


def test_grafted_and_pushed_alignments_are_the_equations(tmp_path, capsys):
    saved = {(row, seed): save_shrunk_pair_model(tmp_path / f"row{row}-seed{seed}-glove" / "train", seed=10 * row + seed)
             for row in (1, 2) for seed in (1, 2)}
    folders = [tmp_path / f"row{row}-seed{seed}-glove" for row in (1, 2) for seed in (2, 1)]  # seeds paired by name
    intervention.main([str(SNLI), *map(str, folders), "--graft", "--bonus", "1,3", "--json", str(tmp_path / "k.json")])
    printed = capsys.readouterr().out
    kept = json.loads((tmp_path / "k.json").read_text())
    instances = saved[1, 1][1]
    assert any(len(i["hypothesis"].tokens) >= 11 and i["label"].label.startswith("entail") for i in instances)
    expected = {}
    for seed in (1, 2):
        models = [saved[1, seed][0], saved[2, seed][0]]
        for row, tallies in zip((1, 2), expected_tallies(models, instances, [1.0, 3.0])):
            expected[row, seed] = tallies
            check(kept[str(tmp_path / f"row{row}-seed{seed}-glove" / "train")], tallies)
    # the tables: a row's mean, a condition's change from the run as trained, the second row against the first
    def percent(row, seed, condition, field="all"):
        correct, total = expected[row, seed][condition]["correct"][field]
        return 100 * correct / total

    line = re.search(r"^\| row2 \| aligned as row1 \| 2 \| ([-\d.]+) \|", printed, re.M)
    assert float(line.group(1)) == pytest.approx(statistics.fmean(percent(2, s, "aligned as row1") for s in (1, 2)),
                                                 abs=0.051)
    changes = [percent(1, s, "literal match +3") - percent(1, s, intervention.AS_TRAINED) for s in (1, 2)]
    line = re.search(r"^\| row1 \| literal match \+3 \| ([-+\d.]+) \((\d)/2\) \|", printed, re.M)
    assert float(line.group(1)) == pytest.approx(statistics.fmean(changes), abs=0.051)
    assert int(line.group(2)) == sum(change > 0 for change in changes)
    first = [percent(1, s, intervention.AS_TRAINED) for s in (2, 1)]
    grafted = [percent(2, s, "aligned as row1") for s in (2, 1)]
    line = re.search(r"^\| row2 \| aligned as row1 \| ([-+\d.]+), p ([\d.]+) \|", printed, re.M)
    assert float(line.group(1)) == pytest.approx(statistics.fmean(grafted) - statistics.fmean(first), abs=0.051)
    assert line.group(2) == f"{compare(first, grafted).p:.3f}"


def test_without_graft_each_run_alone_and_the_same_counts(tmp_path, capsys):
    save_shrunk_pair_model(tmp_path / "solo-seed1", seed=5)
    model, instances = save_shrunk_pair_model(tmp_path / "plain-seed1", seed=6, encoder=False)
    intervention.main([str(SNLI), str(tmp_path / "solo-seed1"), str(tmp_path / "plain-seed1"), "--bonus", "2",
                       "--json", str(tmp_path / "k.json")])
    kept = json.loads((tmp_path / "k.json").read_text())
    assert set(kept[str(tmp_path / "solo-seed1")]) == {intervention.AS_TRAINED, "literal match +2"}
    check(kept[str(tmp_path / "plain-seed1")], expected_tallies([model], instances, [2.0])[0])
    assert "| plain | literal match +2 |" in capsys.readouterr().out


def test_graft_refuses_rows_without_the_same_seeds(tmp_path):
    for name in ("a-seed1", "a-seed2", "b-seed1", "b-seed3"):
        save_shrunk_pair_model(tmp_path / name)
    with pytest.raises(SystemExit, match="the same seeds"):
        intervention.main([str(SNLI), *(str(tmp_path / name) for name in ("a-seed1", "a-seed2", "b-seed1",
                                                                            "b-seed3")), "--graft"])
    with pytest.raises(SystemExit, match="runs of two rows, not 1"):
        intervention.main([str(SNLI), str(tmp_path / "a-seed1"), "--graft"])
    with pytest.raises(SystemExit, match="--bonus x: comma-separated numbers"):
        intervention.main([str(SNLI), str(tmp_path / "a-seed1"), "--bonus", "x"])


def test_a_model_that_is_not_decomposable_attention_is_refused(tmp_path):
    from research.tests.lstmn_attention_use_test import saved_stack  # a language model

    saved_stack(tmp_path)
    with pytest.raises(SystemExit, match=f"{tmp_path}: not a decomposable_attention model"):
        intervention.main([str(SNLI), str(tmp_path)])
