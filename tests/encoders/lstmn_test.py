"""The `lstmn` encoder against the literal per-example form of eq. 4-10 of Cheng et al. (2016) (stacked layers of
`memplugins.modules.lstmn.reference`), and its behaviour as a `Seq2SeqEncoder`."""

import pytest
import torch

from memplugins.modules.lstmn import LstmnLayer
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder

from memplugins.encoders import LstmnEncoder
from memplugins.modules.lstmn.reference import lstmn_reference
from tests.helpers import padded, randomize


def reference_encoder(encoder, x):
    layer_input, attention = x, []
    for k, layer in enumerate(encoder.layers):
        if k > 0 and encoder._skip_connections:
            layer_input = torch.cat([layer_input, x], dim=-1)  # eq. 10 with skip connections
        layer_input, _, weights = lstmn_reference(layer_input, layer.weights())
        attention.append(weights)
    return layer_input, torch.stack(attention)


LENGTHS = [6, 3, 1, 5]


def padded_batch(input_size=5, seed=1):
    return padded(LENGTHS, input_size, seed, garbage=55.0)


@pytest.mark.parametrize("num_layers, skip, recency_start", [(1, False, None), (2, False, None), (3, True, None),
                                                              (2, False, 0.0)])
def test_equals_per_example_reference_of_eq_4_to_10(num_layers, skip, recency_start):
    # with recency_start, `randomize` draws β too, and the reference adds it to slot t-1's score
    encoder = LstmnEncoder(5, 4, num_layers=num_layers, skip_connections=skip, recency_start=recency_start)
    encoder = randomize(encoder).eval()
    x, mask = padded_batch()
    outputs = encoder(x, mask)
    for b, length in enumerate(LENGTHS):
        expected, expected_attention = reference_encoder(encoder, x[b, :length])
        torch.testing.assert_close(outputs[b, :length], expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(encoder.last_attention[b, :, :length, :length], expected_attention, atol=1e-5, rtol=0)
        assert (outputs[b, length:] == 0).all()
        assert (encoder.last_attention[b, :, length:] == 0).all()


@pytest.mark.parametrize("options", [{}, {"recency_start": 3.0, "bidirectional": True}], ids=["eq4", "recency"])
def test_padding_invariance(options):
    encoder = randomize(LstmnEncoder(5, 4, num_layers=2, **options)).eval()
    x, mask = padded_batch()
    batched = encoder(x, mask)
    for b, length in enumerate(LENGTHS):
        alone = encoder(x[b : b + 1, :length], mask[b : b + 1, :length])
        torch.testing.assert_close(batched[b : b + 1, :length], alone, atol=1e-6, rtol=0)


def test_causal():
    encoder = randomize(LstmnEncoder(5, 4, num_layers=2, skip_connections=True)).eval()
    x = torch.randn(2, 7, 5)
    mask = torch.ones(2, 7, dtype=torch.bool)
    before = encoder(x, mask)
    for t in range(7):
        changed = x.clone()
        changed[:, t + 1 :] = torch.randn_like(changed[:, t + 1 :])
        after = encoder(changed, mask)
        torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], atol=0, rtol=0)
        if t < 6:
            assert not torch.allclose(after[:, t + 1 :], before[:, t + 1 :])


def test_first_step_attends_to_nothing_and_rows_are_distributions():
    encoder = randomize(LstmnEncoder(5, 4)).eval()
    x, mask = padded_batch()
    encoder(x, mask)
    attention = encoder.last_attention[:, 0]
    assert (attention[:, 0] == 0).all()
    sums = attention.sum(-1)
    expected = (mask & (torch.arange(mask.size(1)) > 0)).float()
    torch.testing.assert_close(sums, expected)
    assert (attention.triu() == 0).all()  # step t attends to i < t only


@pytest.mark.parametrize("options", [{}, {"recency_start": 5.0, "bidirectional": True}], ids=["eq4", "recency"])
def test_gradients_reach_every_parameter(options):
    encoder = LstmnEncoder(5, 4, num_layers=2, skip_connections=True, **options)
    x, mask = padded_batch()
    encoder(x, mask).sum().backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_drop_in_for_lstm():
    encoder = Seq2SeqEncoder.from_params(Params({"type": "lstmn", "input_size": 5, "hidden_size": 3, "num_layers": 2}))
    lstm = Seq2SeqEncoder.from_params(Params({"type": "lstm", "input_size": 5, "hidden_size": 3, "num_layers": 2}))
    for method in ("get_input_dim", "get_output_dim", "is_bidirectional"):
        assert getattr(encoder, method)() == getattr(lstm, method)()
    x, mask = padded_batch()
    assert encoder(x, mask).shape == lstm(x, mask).shape


def test_the_first_two_steps_are_torch_lstm_steps():
    # An oracle outside our code: at t = 1 the tape is empty (h~_1 = c~_1 = 0, an LSTM step from a zero state) and
    # at t = 2 it holds one slot, so s^2 = (1) and [h~_2; c~_2] = [h_1; c_1] (eq. 5-6): an LSTM step from (h_1, c_1).
    # With torch.nn.LSTM's weights (gates i, f, g, o) copied into eq. 7's W (gates i, f, o, c^), the two agree
    # there, whatever the attention parameters; from t = 3 on the attention mixes the slots and they part.
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 4, batch_first=True)
    encoder = randomize(LstmnEncoder(5, 4)).eval()
    layer = encoder.layers[0]
    order = torch.cat([torch.arange(0, 8), torch.arange(12, 16), torch.arange(8, 12)])  # i, f, o, g
    with torch.no_grad():
        layer.weight_ih.copy_(lstm.weight_ih_l0[order])
        layer.weight_hh.copy_(lstm.weight_hh_l0[order])
        layer.bias_ih.copy_(lstm.bias_ih_l0[order])
        layer.bias_hh.copy_(lstm.bias_hh_l0[order])
    x, mask = padded_batch()
    expected, _ = lstm(x)
    outputs = encoder(x, mask)
    long_enough = torch.tensor(LENGTHS) >= 2
    torch.testing.assert_close(outputs[long_enough, :2], expected[long_enough, :2], atol=1e-6, rtol=0)
    assert not torch.allclose(outputs[long_enough, 2:3], expected[long_enough, 2:3], atol=1e-3)


def test_the_recency_score_is_opt_in_and_draws_nothing():
    torch.manual_seed(3)
    plain = LstmnEncoder(5, 4, num_layers=2, bidirectional=True)
    assert not any("recency" in name for name in plain.state_dict())  # the paper's eq. 4: archives unchanged
    torch.manual_seed(3)
    held = Seq2SeqEncoder.from_params(Params({"type": "lstmn", "input_size": 5, "hidden_size": 4, "num_layers": 2,
                                              "bidirectional": True, "recency_start": 5}))
    own, with_score = plain.state_dict(), held.state_dict()
    assert with_score.keys() - own.keys() == {f"{prefix}layers.{k}.recency_score"
                                              for prefix in ("", "backward_encoder.") for k in (0, 1)}
    for name, value in own.items():  # every other parameter drawn as without it
        torch.testing.assert_close(with_score[name], value, atol=0, rtol=0, msg=name)
    assert all(with_score[name].item() == 5.0 for name in with_score.keys() - own.keys())
    held.layers[0].recency_score.data.fill_(-1.0)
    held.layers[0].reset_parameters()
    assert held.layers[0].recency_score.item() == 5.0


def lstm_with_eq7_weights(layer: LstmnLayer) -> torch.nn.LSTM:
    """torch's one-layer LSTM (float64) with LAYER's eq. 7 weights and biases."""
    k = layer.hidden_size
    lstm = torch.nn.LSTM(layer.input_size, k, batch_first=True).double()
    # eq. 7's gates are [i; f; o; ĉ], torch's [i; f; ĉ (g); o]
    order = torch.cat([torch.arange(0, 2 * k), torch.arange(3 * k, 4 * k), torch.arange(2 * k, 3 * k)])
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(layer.weight_ih[order])
        lstm.weight_hh_l0.copy_(layer.weight_hh[order])
        lstm.bias_ih_l0.copy_(layer.bias_ih[order])
        lstm.bias_hh_l0.copy_(layer.bias_hh[order])
    return lstm


def test_beta_zero_is_eq_4_and_a_large_beta_is_torchs_lstm():
    torch.manual_seed(4)
    plain = randomize(LstmnEncoder(5, 4, num_layers=2)).double()
    zero = LstmnEncoder(5, 4, num_layers=2, recency_start=0.0).double()
    zero.load_state_dict({**plain.state_dict(), "layers.0.recency_score": torch.tensor(0.0),
                          "layers.1.recency_score": torch.tensor(0.0)})
    x, mask = padded_batch()
    x = x.double()
    torch.testing.assert_close(zero(x, mask), plain(x, mask), atol=0, rtol=0)
    torch.testing.assert_close(zero.last_attention, plain.last_attention, atol=0, rtol=0)
    large = randomize(LstmnEncoder(5, 4, recency_start=0.0)).double()
    large.layers[0].recency_score.data.fill_(80.0)  # e^-80: the other slots' weights vanish in float64
    expected, _ = lstm_with_eq7_weights(large.layers[0])(x)
    long_enough = torch.tensor(LENGTHS) == max(LENGTHS)
    torch.testing.assert_close(large(x, mask)[long_enough], expected[long_enough])


@pytest.mark.parametrize("start", [float("inf"), float("nan")])
def test_a_recency_start_that_is_not_finite_is_refused(start):
    with pytest.raises(ConfigurationError, match="recency_start"):
        LstmnEncoder(5, 4, recency_start=start)
