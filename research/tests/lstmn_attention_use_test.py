"""research/lstmn_attention_use.py on a stacked LSTMN language model (two layers, skip connections): the figure as
trained is the model's own, every ablation row and every layer's attention statistics are there, and replacing the
attention changes the figure."""
import json
import math
import re
import sys

import _jsonnet
import pytest
import torch
from allennlp.data import Batch

import allennlp_models.lm  # noqa: F401
from memplugins.compat import CONFIG_DEFAULTS
from memplugins.modules.lstmn import LstmnLayer
from research.tests.saved_models import SNLI_SAMPLE, save_shrunk_pair_model, save_with_random_weights
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import lstmn_attention_use  # noqa: E402

DATA = REPO_ROOT / "fixtures" / "ptb_format" / "valid.txt"


def saved_stack(tmp_path):
    config = json.loads(_jsonnet.evaluate_file(str(REPO_ROOT / "training_config" / "ptb_lstmn_lm.jsonnet"),
                                               ext_vars={**CONFIG_DEFAULTS, "LSTMN_LAYERS": "2"}))
    config["model"]["contextualizer"].update(skip_connections=True, hidden_size=12)
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["embedding_dim"] = 8
    config["model"]["contextualizer"]["input_size"] = 8
    return save_with_random_weights(tmp_path, config, str(DATA))


def test_a_stack_gets_its_own_figure_every_ablation_and_per_layer_statistics(tmp_path, capsys):
    model, instances = saved_stack(tmp_path)
    lstmn_attention_use.main([str(tmp_path), str(DATA), "--batches", "2", "--batch-size", "8"])
    printed = capsys.readouterr().out
    figures = dict(re.findall(r"^\| ([a-z].*?) \| ([0-9.]+) \|$", printed, re.M))
    assert list(figures) == ["nothing (as trained)", "most recent slot (every layer)", "uniform (every layer)",
                             "most recent slot, layer 1 only", "most recent slot, layer 2 only"]

    summed, tokens = 0.0, 0.0  # the model's own token-weighted perplexity on the same batches
    with torch.no_grad():
        for start in (0, 8):
            batch = Batch(instances[start:start + 8])
            batch.index_instances(model.vocab)
            output = model(**batch.as_tensor_dict())
            summed += float(output["forward_loss"]) * float(output["batch_weight"])
            tokens += float(output["batch_weight"])
    assert abs(float(figures["nothing (as trained)"]) - math.exp(summed / tokens)) < 0.051
    assert len({figures[label] for label in figures}) > 1  # replacing the attention changes the figure

    layers = re.findall(r"^\| ([12]) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|$",
                        printed, re.M)
    assert [layer[0] for layer in layers] == ["1", "2"]
    for _, steps, recent, near, far, _, _ in layers:
        assert int(steps) > 0 and abs(float(recent) + float(near) + float(far) - 1) < 0.003


SNLI = REPO_ROOT / SNLI_SAMPLE


def test_a_pair_model_gets_its_own_accuracy_and_both_sentences_statistics(tmp_path, capsys):
    model, instances = save_shrunk_pair_model(tmp_path)
    lstmn_attention_use.main([str(tmp_path), str(SNLI), "--batch-size", "8"])
    printed = capsys.readouterr().out
    figures = dict(re.findall(r"^\| ([a-z].*?) \| ([0-9.]+) \|$", printed, re.M))
    assert list(figures) == ["nothing (as trained)", "most recent slot", "uniform"]

    correct, steps = 0, 0  # the model's own accuracy, and the steps with two or more slots of both sentences
    with torch.no_grad():
        for start in range(0, len(instances), 8):
            batch = Batch(instances[start:start + 8])
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            output = model(**tensors)
            correct += int((output["label_logits"].argmax(-1) == tensors["label"]).sum())
            for sentence in ("premise", "hypothesis"):
                lengths = (tensors[sentence]["tokens"]["tokens"] != 0).sum(-1)
                steps += int((lengths - 2).clamp(min=0).sum())
    assert abs(float(figures["nothing (as trained)"]) - correct / len(instances)) < 0.0006
    layer = re.findall(r"^\| 1 \| (\d+) \|", printed, re.M)
    assert layer == [str(steps)]  # the premise's and the hypothesis's steps, not one sentence's


def test_the_attention_over_the_last_k_slots_is_the_one_hot_at_1_the_model_at_the_full_length_and_neither_between():
    torch.manual_seed(0)
    layer = LstmnLayer(5, 6)
    inputs = torch.randn(3, 9, 5)
    by_mode = {mode: lstmn_attention_use.layer_steps(layer, inputs, mode)[0]
               for mode in ("model", "most recent slot", "last 1", "last 3", "last 8", "last 50")}
    torch.testing.assert_close(by_mode["last 1"], by_mode["most recent slot"])
    for window in ("last 8", "last 50"):  # at step t < 9 at most 8 slots are there to read
        torch.testing.assert_close(by_mode[window], by_mode["model"])
    hidden, _, _ = layer(inputs, torch.ones(3, 9, dtype=torch.bool))
    torch.testing.assert_close(by_mode["model"], hidden, atol=1e-5, rtol=1e-5)
    # the first four steps read at most 3 slots, so they are the model's; later steps read fewer than it does
    torch.testing.assert_close(by_mode["last 3"][:, :4], by_mode["model"][:, :4])
    assert not torch.allclose(by_mode["last 3"][:, 4:], by_mode["model"][:, 4:])
    assert not torch.allclose(by_mode["last 3"][:, 4:], by_mode["most recent slot"][:, 4:])


def test_windows_add_their_rows_and_a_window_of_the_longest_input_is_the_model(tmp_path, capsys):
    saved_stack(tmp_path)
    lstmn_attention_use.main([str(tmp_path), str(DATA), "--batches", "2", "--batch-size", "8", "--window", "1",
                              "2", "1000"])
    figures = dict(re.findall(r"^\| ([a-z].*?) \| ([0-9.]+) \|$", capsys.readouterr().out, re.M))
    assert figures["its own attention over the last 1000 slots (every layer)"] == figures["nothing (as trained)"]
    assert figures["its own attention over the last 1 slots (every layer)"] == figures["most recent slot (every layer)"]
    assert "its own attention over the last 2 slots (every layer)" in figures
    with pytest.raises(SystemExit, match="at least one slot"):
        lstmn_attention_use.main([str(tmp_path), str(DATA), "--window", "0"])
