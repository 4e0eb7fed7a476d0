"""research/nse_memory_use.py on a small NSE classifier built from training_config/sst2_nse.jsonnet: the figure as
trained is the model's own, every replacement and length bucket is printed, the key statistics add up, and the
"current slot" replacement is the LSTM over f_c(o_t, M_0[t]) that its docstring says it is."""
import json
import re
import sys

import _jsonnet
import torch
from allennlp.data import Batch

import allennlp_models.classification  # noqa: F401
from memplugins.compat import CONFIG_DEFAULTS
from memplugins.encoders.nse import NseEncoder
from memplugins.modules.masked_lstm import run_masked_lstm
from research.tests.saved_models import save_with_random_weights
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import nse_memory_use  # noqa: E402

DATA = REPO_ROOT / "fixtures" / "sst" / "dev_sample.txt"


def saved_classifier(tmp_path, **encoder_options):
    config = json.loads(_jsonnet.evaluate_file(str(REPO_ROOT / "training_config" / "sst2_nse.jsonnet"),
                                               ext_vars=CONFIG_DEFAULTS))
    config.pop("vocabulary")
    config["model"]["seq2seq_encoder"].update(hidden_size=12, **encoder_options)
    config["model"]["seq2vec_encoder"]["embedding_dim"] = 12
    config["model"]["feedforward"].update(input_dim=12, hidden_dims=8)
    return save_with_random_weights(tmp_path, config, str(DATA), "validation_dataset_reader")


def test_the_figures_as_trained_every_replacement_and_statistics_that_add_up(tmp_path, capsys):
    model, instances = saved_classifier(tmp_path)
    nse_memory_use.main([str(tmp_path), str(DATA), "--batch-size", "8"])
    printed = capsys.readouterr().out
    accuracies, keys = printed.split("read key z_t")
    rows = re.findall(r"^\| ([a-z].*?) \| ([0-9.]+) \| ([0-9.-]+) \| ([0-9.-]+) \| ([0-9.-]+) \| ([0-9.-]+) \|$",
                      accuracies, re.M)
    figures = {row[0]: float(row[1]) for row in rows}
    assert list(figures) == [nse_memory_use.LABELS[mode] for mode in nse_memory_use.MODES]

    correct = 0
    with torch.no_grad():
        for start in range(0, len(instances), 8):
            batch = Batch(instances[start:start + 8])
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            correct += int((model(**tensors)["logits"].argmax(-1) == tensors["label"]).sum())
    assert abs(figures["nothing (as trained)"] - correct / len(instances)) < 0.0006
    assert len(set(figures.values())) > 1  # replacing the memory changes the figure

    statistics = re.findall(r"^\| (all|\d+[-+]\d*) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| "
                            r"([0-9.]+) \| ([0-9.]+) \|$", keys, re.M)
    assert statistics and statistics[0][0] == "all"
    assert sum(int(row[1]) for row in statistics[1:]) == int(statistics[0][1])  # the buckets partition the steps
    for _, steps, current, earlier, later, distance, entropy, retained in statistics:
        assert abs(float(current) + float(earlier) + float(later) - 1) < 0.003
        assert 0 < float(entropy) <= 1 and 0 <= float(retained) <= 1


def test_the_current_slot_replacement_is_an_lstm_over_the_composed_word():
    torch.manual_seed(1)
    encoder = NseEncoder(input_size=5, hidden_size=6).eval()
    inputs = torch.randn(3, 7, 5)
    mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3, [True] * 2 + [False] * 5])
    with torch.no_grad():
        got = nse_memory_use.nse_steps(encoder, inputs, mask, "current slot")
        read, _ = run_masked_lstm(encoder.read_lstm, inputs, mask)
        words = encoder.initial_memory(inputs, mask)  # M_0[t]: slot t is unwritten when step t reads it
        for b in range(3):
            h, c = torch.zeros(1, 6), torch.zeros(1, 6)
            for t in range(int(mask[b].sum())):
                composed = torch.relu(encoder.compose(torch.cat([read[b, t], words[b, t]]).unsqueeze(0)))
                h, c = encoder.write_cells[0](composed, (h, c))
                assert torch.allclose(got[b, t], h[0], atol=1e-6)
            assert not got[b, int(mask[b].sum()):].any()  # padding is zero

        # and with the model's keys, the plain steps are the encoder's fast path
        assert torch.allclose(nse_memory_use.nse_steps(encoder, inputs, mask, "model"), encoder(inputs, mask),
                              atol=1e-5)


def test_an_encoder_trained_read_only_is_analysed_as_it_runs():
    """write_memory=False: "as trained" is the encoder's own output, equal to "never written", and the uniform
    replacement does not write either."""
    torch.manual_seed(2)
    encoder = NseEncoder(input_size=5, hidden_size=6, write_memory=False).eval()
    writing = NseEncoder(input_size=5, hidden_size=6).eval()
    writing.load_state_dict(encoder.state_dict())
    inputs = torch.randn(3, 7, 5)
    mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3, [True] * 2 + [False] * 5])
    with torch.no_grad():
        as_trained = nse_memory_use.nse_steps(encoder, inputs, mask, "model")
        assert torch.allclose(as_trained, encoder(inputs, mask), atol=1e-5)
        assert torch.allclose(as_trained, nse_memory_use.nse_steps(encoder, inputs, mask, "never written"))
        assert torch.allclose(nse_memory_use.nse_steps(writing, inputs, mask, "never written"), as_trained)
        assert not torch.allclose(nse_memory_use.nse_steps(writing, inputs, mask, "uniform"),
                                  nse_memory_use.nse_steps(encoder, inputs, mask, "uniform"), atol=1e-4)


def test_a_learned_key_strength_is_analysed_as_it_runs(tmp_path, capsys):
    """key_strength: the plain steps read with β_t o_t as the encoder does (main checks them against it before any
    figure), and the mean β_t printed is the one the encoder's w_β, b_β give."""
    model, instances = saved_classifier(tmp_path, key_strength=True)
    encoder = model._seq2seq_encoder
    with torch.no_grad():  # save_with_random_weights drew w_β and b_β too: β_t varies from step to step
        torch.manual_seed(3)
        inputs = torch.randn(3, 7, encoder.get_input_dim())
        mask = torch.tensor([[True] * 7, [True] * 4 + [False] * 3, [True] * 2 + [False] * 5])
        assert torch.allclose(nse_memory_use.nse_steps(encoder.eval(), inputs, mask, "model"), encoder(inputs, mask),
                              atol=1e-5)
    nse_memory_use.main([str(tmp_path), str(DATA), "--batch-size", "8"])
    printed = capsys.readouterr().out
    strengths = dict(re.findall(r"(all|\d+[-+]\d*) ([0-9.]+)", printed.split("key strength β_t")[1]))
    with torch.no_grad():
        total, steps = 0.0, 0
        for start in range(0, len(instances), 8):
            batch = Batch(instances[start:start + 8])
            batch.index_instances(model.vocab)
            tokens = batch.as_tensor_dict()["tokens"]
            mask = tokens["tokens"]["tokens"] != 0
            read, _ = run_masked_lstm(encoder.read_lstm, model._text_field_embedder(tokens), mask)
            total += float(torch.nn.functional.softplus(encoder.key_strength(read)).squeeze(-1)[mask].sum())
            steps += int(mask.sum())
    assert abs(float(strengths["all"]) - total / steps) < 0.0006
