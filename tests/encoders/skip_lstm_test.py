"""The `skip_lstm` encoder against a literal per-example, per-step LSTM with the input fed to every layer, and its
behaviour as a `Seq2SeqEncoder`: padding, gradients, its registration, its stack matching the `lstmn`'s."""

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder

from memplugins.encoders import LstmnEncoder, SkipLstmEncoder
from tests.helpers import padded

LENGTHS = [6, 3, 1, 5]


def padded_batch(input_size=5, seed=1):
    return padded(LENGTHS, input_size, seed, dtype=torch.float64, garbage=55.0)


def lstm_steps(lstm: torch.nn.LSTM, x: torch.Tensor) -> torch.Tensor:
    """One unpadded sequence (T, d) through one LSTM layer, step by step: i, f, g, o = split(W_ih x_t + b_ih +
    W_hh h_{t-1} + b_hh); c_t = f c_{t-1} + i g; h_t = o tanh(c_t) (torch's gate order)."""
    h = x.new_zeros(lstm.hidden_size)
    c = x.new_zeros(lstm.hidden_size)
    outputs = []
    for x_t in x:
        gates = lstm.weight_ih_l0 @ x_t + lstm.bias_ih_l0 + lstm.weight_hh_l0 @ h + lstm.bias_hh_l0
        i, f, g, o = gates.chunk(4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outputs.append(h)
    return torch.stack(outputs)


def reference(encoder: SkipLstmEncoder, x: torch.Tensor) -> torch.Tensor:
    layer_input = x
    for k, layer in enumerate(encoder.layers):
        if k > 0:
            layer_input = torch.cat([layer_input, x], dim=-1)  # layer k + 1 reads [h_t^k; x_t]
        layer_input = lstm_steps(layer._module, layer_input)
    return layer_input


@pytest.mark.parametrize("num_layers", [1, 3])
def test_skip_lstm_equals_the_literal_stack_per_example_and_zeroes_padding(num_layers):
    torch.manual_seed(0)
    encoder = SkipLstmEncoder(input_size=5, hidden_size=4, num_layers=num_layers).double()
    x, mask = padded_batch()
    output = encoder(x, mask)
    assert output.shape == (len(LENGTHS), max(LENGTHS), 4) and encoder.get_output_dim() == 4
    for b, length in enumerate(LENGTHS):
        torch.testing.assert_close(output[b, :length], reference(encoder, x[b, :length]), rtol=1e-10, atol=1e-12)
        # each item alone gives what it gets in the padded batch
        alone = encoder(x[b:b + 1, :length], mask[b:b + 1, :length])
        torch.testing.assert_close(alone[0], output[b, :length], rtol=1e-10, atol=1e-12)
    assert (output[~mask] == 0).all()


def test_skip_lstm_of_one_layer_is_allennlps_lstm():
    torch.manual_seed(0)
    encoder = SkipLstmEncoder(input_size=5, hidden_size=4).double()
    lstm = Seq2SeqEncoder.from_params(Params({"type": "lstm", "input_size": 5, "hidden_size": 4})).double()
    lstm._module.load_state_dict(encoder.layers[0]._module.state_dict())
    x, mask = padded_batch()
    torch.testing.assert_close(encoder(x, mask), lstm(x, mask), rtol=0, atol=0)


def test_dropout_falls_between_layers_before_the_input_is_joined():
    torch.manual_seed(0)
    encoder = SkipLstmEncoder(input_size=5, hidden_size=4, num_layers=2, dropout=0.5).double()
    x, mask = padded_batch()
    encoder.eval()
    evaluated = encoder(x, mask)
    encoder.train()
    torch.manual_seed(3)
    trained = encoder(x, mask)
    # layer 2 reads [dropout(h^1); x]: its input columns for x are never dropped, those for h^1 are, in training
    seen = []
    encoder.layers[1].register_forward_pre_hook(lambda module, args: seen.append(args[0]))
    torch.manual_seed(3)
    encoder(x, mask)
    first = encoder.layers[0](x, mask)
    joined = seen[0]
    torch.testing.assert_close(joined[..., 4:][mask], x[mask])
    assert (joined[..., :4][mask] == 0).any() and ((joined[..., :4] == 0) | torch.isclose(joined[..., :4], 2 * first)).all()
    assert not torch.allclose(evaluated, trained)


def test_every_parameter_gets_a_gradient_and_the_registered_name_builds_it():
    encoder = Seq2SeqEncoder.from_params(Params({"type": "skip_lstm", "input_size": 5, "hidden_size": 4,
                                                 "num_layers": 3, "dropout": 0.5}))
    assert isinstance(encoder, SkipLstmEncoder) and not encoder.is_bidirectional() and encoder.get_input_dim() == 5
    x, mask = padded_batch()
    encoder(x.float(), mask).sum().backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_its_stack_has_the_shape_of_the_lstmn_with_skip_connections():
    # the same input size per layer: the LSTMN's layer k + 1 reads [h_t^k; x_t] too
    ours = SkipLstmEncoder(input_size=150, hidden_size=300, num_layers=3)
    lstmn = LstmnEncoder(input_size=150, hidden_size=300, num_layers=3, skip_connections=True)
    assert [layer._module.input_size for layer in ours.layers] == [150, 450, 450]
    assert [layer.weight_ih.shape[1] for layer in lstmn.layers] == [150, 450, 450]


@pytest.mark.parametrize("settings, named", [({"hidden_size": 0}, "hidden_size"), ({"num_layers": 0}, "num_layers"),
                                             ({"dropout": 1.0}, "dropout")])
def test_bad_settings_name_what_is_wrong(settings, named):
    with pytest.raises(ConfigurationError, match=named):
        SkipLstmEncoder(**{"input_size": 5, "hidden_size": 4, **settings})
    with pytest.raises(ConfigurationError, match="input_size 5"):
        SkipLstmEncoder(input_size=5, hidden_size=4)(torch.zeros(2, 3, 6))
