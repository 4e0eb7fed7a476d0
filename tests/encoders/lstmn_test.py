"""The `lstmn` encoder against the literal per-example form of eq. 4-10 of Cheng et al. (2016) (stacked layers of
`memplugins.modules.reference.lstmn`), and its behaviour as a `Seq2SeqEncoder`."""

import pytest
import torch
from allennlp.common import Params
from allennlp.modules import Seq2SeqEncoder

from memplugins.encoders import LstmnEncoder
from memplugins.modules.reference.lstmn import lstmn_layer_reference


def reference_encoder(encoder, x):
    layer_input, attention = x, []
    for k, layer in enumerate(encoder.layers):
        if k > 0 and encoder._skip_connections:
            layer_input = torch.cat([layer_input, x], dim=-1)  # eq. 10 with skip connections
        layer_input, _, weights = lstmn_layer_reference(layer, layer_input)
        attention.append(weights)
    return layer_input, torch.stack(attention)


def randomize(module, seed=0):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)
    return module


LENGTHS = [6, 3, 1, 5]


def padded_batch(input_size=5, seed=1):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(len(LENGTHS), max(LENGTHS), input_size, generator=generator)
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]
    x[~mask] = 55.0  # garbage in the padding must not leak
    return x, mask


@pytest.mark.parametrize("num_layers, skip", [(1, False), (2, False), (3, True)])
def test_equals_per_example_reference_of_eq_4_to_10(num_layers, skip):
    encoder = randomize(LstmnEncoder(5, 4, num_layers=num_layers, skip_connections=skip)).eval()
    x, mask = padded_batch()
    outputs = encoder(x, mask)
    for b, length in enumerate(LENGTHS):
        expected, expected_attention = reference_encoder(encoder, x[b, :length])
        torch.testing.assert_close(outputs[b, :length], expected, atol=1e-5, rtol=0)
        torch.testing.assert_close(encoder.last_attention[b, :, :length, :length], expected_attention, atol=1e-5, rtol=0)
        assert (outputs[b, length:] == 0).all()
        assert (encoder.last_attention[b, :, length:] == 0).all()


def test_padding_invariance():
    encoder = randomize(LstmnEncoder(5, 4, num_layers=2)).eval()
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


def test_gradients_reach_every_parameter():
    encoder = LstmnEncoder(5, 4, num_layers=2, skip_connections=True)
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
