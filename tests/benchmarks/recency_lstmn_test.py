"""benchmarks/recency_lstmn.py: β = 0 is the `lstmn` (outputs, attention, every gradient), a large β torch's LSTM,
β between moves s^t toward the most recent slot and learns; its start, padding and refusals; lstmn_attention_use on
a model trained with it."""
import json
import re
import sys

import _jsonnet
import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.compat import CONFIG_DEFAULTS
from tests.benchmarks.saved_models import save_with_random_weights
from tests.benchmarks.windowed_lstmn_test import (assert_a_padded_batch_gives_each_sequence_alone,
                                                  assert_it_starts_as_the_lstmn, lstm_with_eq7_weights, lstmn_and)
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import lstmn_attention_use  # noqa: E402
from recency_lstmn import RecencyLstmnEncoder  # noqa: E402


def _building(recency_start: float):
    return lambda layers: RecencyLstmnEncoder(5, 6, recency_start=recency_start, num_layers=layers)


def _pair(recency_start: float, num_layers: int = 2):
    return lstmn_and(_building(recency_start), num_layers)


def _inputs_and_mask():
    torch.manual_seed(1)
    inputs = torch.randn(3, 9, 5, dtype=torch.float64)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False
    mask[2, 2:] = False
    return inputs * mask.unsqueeze(-1), mask


def test_it_is_registered_and_starts_as_the_lstmn_with_beta_at_its_start():
    assert Seq2SeqEncoder.by_name("recency_lstmn") is RecencyLstmnEncoder
    own, copied = assert_it_starts_as_the_lstmn(_building(5.0))
    assert copied.keys() - own.keys() == {"layers.0.recency_score", "layers.1.recency_score"}
    assert copied["layers.0.recency_score"].item() == copied["layers.1.recency_score"].item() == 5.0


def _assert_it_reads_as(expected: torch.nn.Module, encoder: torch.nn.Module) -> None:
    """ENCODER gives EXPECTED's outputs, attention and gradients (of the parameters both have) on a padded batch,
    and every parameter of ENCODER gets a gradient."""
    inputs, mask = _inputs_and_mask()
    outputs = [module(inputs, mask) for module in (expected, encoder)]
    torch.testing.assert_close(outputs[1], outputs[0])
    torch.testing.assert_close(encoder.last_attention, expected.last_attention)
    target = torch.randn_like(outputs[0])
    for output in outputs:
        (output * target).sum().backward()
    own = dict(expected.named_parameters())
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name
        if name in own:
            torch.testing.assert_close(parameter.grad, own[name].grad, msg=name)


def test_beta_zero_is_the_lstmn_outputs_attention_and_gradients_and_beta_learns():
    _assert_it_reads_as(*_pair(recency_start=0.0))


def test_a_large_beta_is_torchs_lstm_with_eq7s_weights():
    _, recency = _pair(recency_start=80.0, num_layers=1)  # e^-80: the other slots' weights vanish in float64
    inputs = torch.randn(2, 7, 5, dtype=torch.float64)
    expected, _ = lstm_with_eq7_weights(recency.layers[0])(inputs)
    torch.testing.assert_close(recency(inputs, torch.ones(2, 7, dtype=torch.bool)), expected)


def test_beta_between_moves_the_attention_to_the_most_recent_slot_by_e_to_the_beta():
    lstmn, recency = _pair(recency_start=2.0)
    inputs, mask = _inputs_and_mask()
    lstmn(inputs, mask)
    recency(inputs, mask)
    own, moved = lstmn.last_attention[:, 0], recency.last_attention[:, 0]
    # layer 1's third step reads the same two slots with the same query in both (the second step's s is 1 on the
    # first slot either way): its scores differ by β on slot t-1 alone, so slot 1's odds against it by e^-β
    odds, own_odds = moved[:2, 2, 0] / moved[:2, 2, 1], own[:2, 2, 0] / own[:2, 2, 1]
    torch.testing.assert_close(odds, own_odds * torch.exp(torch.tensor(-2.0, dtype=torch.float64)))
    # later the slots differ too; the most recent still holds more of each s^t
    steps = torch.arange(3, 9)
    assert (moved[0, steps, steps - 1] > own[0, steps, steps - 1]).all()
    assert not torch.allclose(recency(inputs, mask), lstmn(inputs, mask))


def test_the_shipped_lstmns_recency_score_is_this_instrument_outputs_attention_and_every_gradient():
    """The `lstmn`'s `recency_start` (fast path, hand-written backward) against this plain-autograd instrument."""
    from memplugins.encoders.lstmn import LstmnEncoder

    _, instrument = _pair(recency_start=2.0)
    shipped = LstmnEncoder(5, 6, num_layers=2, recency_start=0.0).double()
    shipped.load_state_dict(instrument.state_dict())
    assert dict(shipped.named_parameters()).keys() == dict(instrument.named_parameters()).keys()
    _assert_it_reads_as(instrument, shipped)


def test_a_padded_batch_gives_each_sequence_alone():
    assert_a_padded_batch_gives_each_sequence_alone(_pair(recency_start=3.0)[1])


def test_it_refuses_a_start_that_is_not_finite():
    for start in (float("inf"), float("nan")):
        with pytest.raises(ConfigurationError, match="finite"):
            RecencyLstmnEncoder(5, 6, recency_start=start)


def test_the_attention_analysis_reads_a_recency_model_with_its_learned_score(tmp_path, capsys):
    data = REPO_ROOT / "fixtures" / "ptb_format" / "valid.txt"
    config = json.loads(_jsonnet.evaluate_file(str(REPO_ROOT / "training_config" / "ptb_lstmn_lm.jsonnet"),
                                               ext_vars={**CONFIG_DEFAULTS, "LSTMN_LAYERS": "1"}))
    config["model"]["contextualizer"] = {"type": "recency_lstmn", "input_size": 8, "hidden_size": 12,
                                         "recency_start": 0.0}
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["embedding_dim"] = 8
    model, _ = save_with_random_weights(tmp_path, config, str(data))
    with torch.no_grad():  # β as a model might have learned it: s^t all but one-hot on slot t-1
        model._contextualizer.layers[0].recency_score.fill_(60.0)
    torch.save(model.state_dict(), tmp_path / "best.th")
    lstmn_attention_use.main([str(tmp_path), str(data), "--batches", "2", "--batch-size", "8"])
    printed = capsys.readouterr().out
    figures = dict(re.findall(r"^\| ([a-z].*?) \| ([0-9.]+) \|$", printed, re.M))
    assert figures["nothing (as trained)"] == figures["most recent slot"] != figures["uniform"]
    (layer,) = re.findall(r"^\| 1 \| \d+ \| ([0-9.]+) \|", printed, re.M)
    assert float(layer) == 1.0
