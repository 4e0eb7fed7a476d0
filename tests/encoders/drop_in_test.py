"""Our encoders take the constructor vocabulary of the AllenNLP encoders they replace (issue 15)."""
import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder, Seq2VecEncoder
from allennlp.nn import InitializerApplicator

LSTM_NAMES = {"input_size": 5, "hidden_size": 4, "num_layers": 2, "bidirectional": True, "dropout": 0.0}


def _batch():
    torch.manual_seed(0)
    inputs = torch.randn(3, 6, 5)
    mask = torch.ones(3, 6, dtype=torch.bool)
    mask[1, 4:] = False
    mask[2, 2:] = False
    return inputs, mask


@pytest.mark.parametrize("name", ["lstmn", "nse"])
def test_bidirectional_is_a_right_to_left_encoder_concatenated(name):
    encoder = Seq2SeqEncoder.from_params(Params({"type": name, **LSTM_NAMES})).eval()
    assert encoder.is_bidirectional() and encoder.get_output_dim() == 8
    inputs, mask = _batch()
    outputs = encoder(inputs, mask)
    assert outputs.shape == (3, 6, 8)
    for i, length in enumerate(mask.sum(1).tolist()):
        alone = inputs[i : i + 1, :length]
        alone_mask = mask[i : i + 1, :length]
        encoder(alone, alone_mask)  # the left-to-right half is the encoder's own pass
        forward = encoder._left_to_right(alone, alone_mask) if name == "lstmn" else encoder._encode(alone, alone_mask).hidden
        backward = encoder.backward_encoder(alone.flip(1), alone_mask).flip(1)  # read right to left, re-ordered
        torch.testing.assert_close(outputs[i, :length, :4], forward[0], atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(outputs[i, :length, 4:], backward[0], atol=1e-5, rtol=1e-5)
        assert torch.all(outputs[i, length:] == 0)


def test_bidirectional_lstmn_attention_is_in_token_order():
    encoder = Seq2SeqEncoder.from_params(Params({"type": "lstmn", **LSTM_NAMES}))
    inputs, mask = _batch()
    encoder(inputs, mask)
    attention = encoder.last_attention  # (B, 2 * layers, T, T): left-to-right layers, then right-to-left ones
    assert attention.shape == (3, 4, 6, 6)
    for i, length in enumerate(mask.sum(1).tolist()):
        backward = attention[i, 2:, :length, :length]
        assert torch.all(backward.tril() == 0)  # row t attends to i > t only
        torch.testing.assert_close(backward[:, :-1].sum(-1), torch.ones(2, length - 1))  # the last token: empty tape
        assert torch.all(attention[i, :2, :length, :length].triu() == 0)


def test_nse_num_layers_sets_both_lstms_and_encode_refuses_bidirectional():
    encoder = Seq2SeqEncoder.from_params(Params({"type": "nse", **LSTM_NAMES}))
    assert encoder.read_lstm.num_layers == 2 and len(encoder.write_cells) == 2
    inputs, mask = _batch()
    with pytest.raises(ConfigurationError, match="left to right"):
        encoder.encode(inputs, mask)
    explicit = Seq2SeqEncoder.from_params(Params({"type": "nse", "input_size": 5, "hidden_size": 4, "num_layers": 2,
                                                  "num_write_layers": 1}))
    assert explicit.read_lstm.num_layers == 2 and len(explicit.write_cells) == 1


@pytest.mark.parametrize("name", ["lstmn", "nse"])
def test_gradients_reach_both_directions(name):
    encoder = Seq2SeqEncoder.from_params(Params({"type": name, **LSTM_NAMES}))
    inputs, mask = _batch()
    encoder(inputs, mask).sum().backward()
    for parameter_name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, parameter_name


def test_lstm_initializer_regexes_reach_lstmn_weights():
    """esim's published initializer: with these names, LSTMN gets exactly what torch.nn.LSTM gets."""
    encoder = Seq2SeqEncoder.from_params(Params({"type": "lstmn", "input_size": 5, "hidden_size": 4}))
    with torch.no_grad():
        for parameter in encoder.parameters():
            parameter.fill_(7.0)
    InitializerApplicator.from_params(Params({"regexes": [
        [".*weight_ih.*", {"type": "xavier_uniform"}],
        [".*weight_hh.*", {"type": "orthogonal"}],
        [".*bias_ih.*", {"type": "zero"}],
        [".*bias_hh.*", {"type": "lstm_hidden_bias"}],
    ]}))(encoder)
    layer = encoder.layers[0]
    assert (layer.weight_ih != 7).all()
    torch.testing.assert_close(layer.weight_hh.t() @ layer.weight_hh, torch.eye(4), atol=1e-5, rtol=1e-5)
    expected_bias = torch.zeros(16)
    expected_bias[4:8] = 1.0  # the forget gate, second block in both gate orders
    torch.testing.assert_close(layer.bias_hh.detach(), expected_bias)
    assert (layer.bias_ih == 0).all()  # esim's `.*bias_ih.*` regex: zero


def test_iram_takes_lstm_names_and_keeps_the_output_size():
    bidirectional = Seq2VecEncoder.from_params(Params({"type": "iram", **LSTM_NAMES}))
    assert bidirectional.get_input_dim() == 5 and bidirectional.get_output_dim() == 8
    assert bidirectional.context_lstm.num_layers == 2
    unidirectional = Seq2VecEncoder.from_params(Params({"type": "iram", **{**LSTM_NAMES, "bidirectional": False}}))
    assert unidirectional.get_output_dim() == 4  # what an lstm with these settings outputs
    default = Seq2VecEncoder.from_params(Params({"type": "iram", **{k: v for k, v in LSTM_NAMES.items() if k != "bidirectional"}}))
    assert default.get_output_dim() == 4  # lstm's default is unidirectional: a swap keeps its size
    inputs, mask = _batch()
    assert unidirectional(inputs, mask).shape == (3, 4)
    with pytest.raises(ConfigurationError, match="even"):
        Seq2VecEncoder.from_params(Params({"type": "iram", "input_size": 5, "hidden_size": 5, "bidirectional": False}))


def test_tree_lstm_num_layers_is_a_leaf_lstm_under_the_tree():
    deep = Seq2VecEncoder.from_params(Params({"type": "tree_lstm", "input_size": 5, "hidden_size": 4, "num_layers": 3}))
    assert deep.get_input_dim() == 5 and deep.get_output_dim() == 4 and deep.leaf_lstm.num_layers == 2
    tree_only = Seq2VecEncoder.from_params(Params({"type": "tree_lstm", "input_dim": 4, "hidden_dim": 4}))
    tree_only.load_state_dict({k: v for k, v in deep.state_dict().items() if not k.startswith("leaf_lstm")})
    inputs, mask = _batch()
    from memplugins.modules.masked_lstm import run_masked_lstm

    leaves, _ = run_masked_lstm(deep.leaf_lstm, inputs, mask)
    torch.testing.assert_close(deep(inputs, mask), tree_only(leaves, mask))
    with pytest.raises(ConfigurationError, match="no reading direction"):
        Seq2VecEncoder.from_params(Params({"type": "tree_lstm", "input_size": 5, "hidden_size": 4, "bidirectional": True}))



@pytest.mark.parametrize("params", [
    {"type": "lstmn", "input_size": 5, "hidden_size": 4, "bias": False},
    {"type": "nse", "input_size": 5, "hidden_size": 4, "bias": False},
])
def test_bias_false_leaves_the_biases_out(params):
    encoder = Seq2SeqEncoder.from_params(Params(dict(params)))
    assert not [name for name, _ in encoder.named_parameters() if "bias" in name]
    inputs, mask = _batch()
    encoder(inputs, mask).sum().backward()


@pytest.mark.parametrize("base, params, message", [
    (Seq2SeqEncoder, {"type": "lstmn", "input_size": 5, "hidden_size": 4, "stateful": True}, "stateful=True"),
    (Seq2SeqEncoder, {"type": "nse", "input_size": 5, "hidden_size": 4, "stateful": True}, "stateful=True"),
    (Seq2VecEncoder, {"type": "tree_lstm", "input_size": 5, "hidden_size": 4, "bias": False}, "bias=False"),
    (Seq2VecEncoder, {"type": "tree_rnn", "input_size": 5, "hidden_size": 4, "bidirectional": True}, "no reading direction"),
    (Seq2VecEncoder, {"type": "iram", "input_size": 5, "hidden_size": 4, "bias": False}, "bias=False"),
])
def test_lstm_settings_without_a_meaning_here_are_configuration_errors(base, params, message):
    with pytest.raises(ConfigurationError, match=message):
        base.from_params(Params(dict(params)))


@pytest.mark.parametrize("name", ["tree_lstm", "tree_rnn"])
def test_tree_encoders_take_lstms_layers_and_dropout(name):
    encoder = Seq2VecEncoder.from_params(Params({"type": name, "input_size": 5, "hidden_size": 4, "num_layers": 3,
                                                 "dropout": 0.5}))
    assert encoder.leaf_lstm.num_layers == 2 and encoder.leaf_lstm.dropout == 0.5
    inputs, mask = _batch()
    assert encoder(inputs, mask).shape == (len(inputs), 4)
    one_layer = Seq2VecEncoder.from_params(Params({"type": name, "input_size": 5, "hidden_size": 4, "dropout": 0.0}))
    assert one_layer.leaf_lstm is None


def test_an_lstmn_archive_from_before_the_bias_split_loads_with_the_same_bias():
    encoder = Seq2SeqEncoder.from_params(Params({"type": "lstmn", "input_size": 5, "hidden_size": 4}))
    old = {k: v for k, v in encoder.state_dict().items() if not k.endswith("bias_ih")}
    old["layers.0.bias_hh"] = old["layers.0.bias_hh"] + encoder.layers[0].bias_ih.detach()
    fresh = Seq2SeqEncoder.from_params(Params({"type": "lstmn", "input_size": 5, "hidden_size": 4}))
    fresh.load_state_dict(old)
    torch.testing.assert_close(fresh.layers[0].gate_bias(), encoder.layers[0].gate_bias())
