"""research/windowed_lstmn.py: a window as long as the input is the `lstmn`, a window of one slot is torch's
LSTM, a window between is neither; its gradients, padding, start and refusals; lstmn_attention_use on a model
trained with a window."""
import json
import re
import sys
from typing import Callable, Tuple

import _jsonnet
import pytest
import torch

from tests.encoders.lstmn_test import lstm_with_eq7_weights
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.compat import CONFIG_DEFAULTS
from memplugins.encoders.lstmn import LstmnEncoder
from memplugins.modules.lstmn import LstmnLayer
from research.tests.saved_models import save_with_random_weights
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import lstmn_attention_use  # noqa: E402
from windowed_lstmn import WindowedLstmnEncoder, layer_steps  # noqa: E402


def lstmn_and(make_instrument: Callable[[int], LstmnEncoder], num_layers: int = 2, seed: int = 0):
    """The `lstmn` (5 to 6, float64) and the instrument MAKE_INSTRUMENT(num_layers) builds, each after seeding SEED."""
    torch.manual_seed(seed)
    lstmn = LstmnEncoder(5, 6, num_layers=num_layers).double()
    torch.manual_seed(seed)
    return lstmn, make_instrument(num_layers).double()


def assert_it_starts_as_the_lstmn(make_instrument: Callable[[int], LstmnEncoder]) -> Tuple[dict, dict]:
    """The instrument's copies of the `lstmn`'s parameters equal it, and its building leaves the generator where the
    `lstmn`'s does; returns both state dicts."""
    lstmn, instrument = lstmn_and(make_instrument)
    after_lstmn = torch.rand(4)
    torch.manual_seed(0)
    make_instrument(2)
    assert torch.equal(torch.rand(4), after_lstmn)  # the copies' draws leave the generator as the lstmn does
    own, copied = lstmn.state_dict(), instrument.state_dict()
    assert own.keys() <= copied.keys()
    for name in own:
        assert torch.equal(own[name], copied[name]), name
    return own, copied


def assert_a_padded_batch_gives_each_sequence_alone(encoder: LstmnEncoder) -> None:
    encoder.eval()
    lengths = [7, 3, 5]
    inputs = torch.randn(3, 7, 5, dtype=torch.float64)
    mask = torch.arange(7).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    together = encoder(inputs * mask.unsqueeze(-1), mask)
    for b, length in enumerate(lengths):
        alone = encoder(inputs[b:b + 1, :length], mask[b:b + 1, :length])
        torch.testing.assert_close(together[b:b + 1, :length], alone)
        assert (together[b, length:] == 0).all()


def _pair(window: int, num_layers: int = 2):
    return lstmn_and(lambda layers: WindowedLstmnEncoder(5, 6, window=window, num_layers=layers), num_layers)


def test_it_is_registered_and_starts_as_the_lstmn_with_the_same_draws_after_it():
    assert Seq2SeqEncoder.by_name("windowed_lstmn") is WindowedLstmnEncoder
    own, copied = assert_it_starts_as_the_lstmn(lambda layers: WindowedLstmnEncoder(5, 6, window=3, num_layers=layers))
    assert own.keys() == copied.keys()


def test_a_window_as_long_as_the_input_is_the_lstmn_outputs_attention_and_gradients():
    lstmn, windowed = _pair(window=9)
    inputs = torch.randn(3, 9, 5, dtype=torch.float64)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False
    mask[2, 2:] = False
    outputs = [encoder(inputs, mask) for encoder in (lstmn, windowed)]
    torch.testing.assert_close(outputs[1], outputs[0])
    torch.testing.assert_close(windowed.last_attention, lstmn.last_attention)
    torch.testing.assert_close(windowed.last_memory, lstmn.last_memory)
    target = torch.randn_like(outputs[0])
    for output in outputs:
        (output * target).sum().backward()
    for (name, own), (_, copied) in zip(lstmn.named_parameters(), windowed.named_parameters()):
        assert own.grad.abs().sum() > 0, name
        torch.testing.assert_close(copied.grad, own.grad, msg=name)


def test_a_window_of_one_slot_is_torchs_lstm_with_eq7s_weights():
    _, windowed = _pair(window=1, num_layers=1)
    inputs = torch.randn(2, 7, 5, dtype=torch.float64)
    expected, _ = lstm_with_eq7_weights(windowed.layers[0])(inputs)
    torch.testing.assert_close(windowed(inputs, torch.ones(2, 7, dtype=torch.bool)), expected)


def test_a_window_between_reads_as_the_lstmn_until_the_tape_outgrows_it_and_then_as_neither():
    torch.manual_seed(0)
    layer = LstmnLayer(5, 6).double()
    inputs = torch.randn(3, 9, 5, dtype=torch.float64)
    model, _, model_attention = layer_steps(layer, inputs)
    three, _, attention = layer_steps(layer, inputs, "last 3")
    recent, _, _ = layer_steps(layer, inputs, "most recent slot")
    torch.testing.assert_close(three[:, :4], model[:, :4])  # steps 1-4 read at most 3 slots
    assert not torch.allclose(three[:, 4:], model[:, 4:])
    assert not torch.allclose(three[:, 4:], recent[:, 4:])
    steps = torch.arange(9)
    outside = steps.view(1, -1) < steps.view(-1, 1) - 3  # slot i more than 3 before step t
    assert (attention[:, outside] == 0).all() and (model_attention[:, outside] > 0).all()
    torch.testing.assert_close(attention.sum(-1)[:, 1:], torch.ones(3, 8, dtype=torch.float64))


def test_a_padded_batch_gives_each_sequence_alone():
    assert_a_padded_batch_gives_each_sequence_alone(_pair(window=2)[1])


def test_it_refuses_a_window_under_one_a_left_padded_batch_and_a_memory_addend():
    with pytest.raises(ConfigurationError, match="at least one slot"):
        WindowedLstmnEncoder(5, 6, window=0)
    _, windowed = _pair(window=2)
    inputs = torch.randn(2, 4, 5, dtype=torch.float64)
    left_padded = torch.tensor([[True] * 4, [False, True, True, True]])
    with pytest.raises(ValueError, match="right-padded"):
        windowed(inputs, left_padded)
    with pytest.raises(ConfigurationError, match="addend"):
        windowed.layers[0](inputs, torch.ones(2, 4, dtype=torch.bool), torch.zeros(2, 4, 6, dtype=torch.float64))


def test_the_attention_analysis_reads_a_windowed_model_at_its_own_window(tmp_path, capsys):
    data = REPO_ROOT / "fixtures" / "ptb_format" / "valid.txt"
    config = json.loads(_jsonnet.evaluate_file(str(REPO_ROOT / "training_config" / "ptb_lstmn_lm.jsonnet"),
                                               ext_vars={**CONFIG_DEFAULTS, "LSTMN_LAYERS": "1"}))
    config["model"]["contextualizer"] = {"type": "windowed_lstmn", "input_size": 8, "hidden_size": 12, "window": 2}
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["embedding_dim"] = 8
    save_with_random_weights(tmp_path, config, str(data))
    lstmn_attention_use.main([str(tmp_path), str(data), "--batches", "2", "--batch-size", "8", "--window", "2",
                              "1000"])
    printed = capsys.readouterr().out
    figures = dict(re.findall(r"^\| ([a-z].*?) \| ([0-9.]+) \|$", printed, re.M))
    assert figures["nothing (as trained)"] == figures["its own attention over the last 2 slots"]
    assert figures["nothing (as trained)"] != figures["its own attention over the last 1000 slots"]
    # no step reads further back than 2 slots
    (layer,) = re.findall(r"^\| 1 \| \d+ \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|", printed, re.M)
    assert float(layer[2]) == 0 and abs(float(layer[0]) + float(layer[1]) - 1) < 0.003
