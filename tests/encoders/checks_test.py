"""Issue 24: a wrong size in a config is a ConfigurationError naming the setting, at construction or (inputs of the
wrong size) at the first batch."""
import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder, Seq2VecEncoder

BAD_SIZES = [
    (Seq2SeqEncoder, {"type": "lstmn", "input_size": 4, "hidden_size": 0}, "hidden_size must be a positive"),
    (Seq2SeqEncoder, {"type": "lstmn", "input_size": 4, "hidden_size": 3, "num_layers": 0}, "num_layers must be"),
    (Seq2SeqEncoder, {"type": "lstmn", "input_size": -4, "hidden_size": 3}, "input_size must be"),
    (Seq2SeqEncoder, {"type": "lstmn", "input_size": 4, "hidden_size": 3, "dropout": 1.5}, "dropout must be"),
    (Seq2SeqEncoder, {"type": "nse", "input_size": 4, "hidden_size": -2}, "hidden_size must be"),
    (Seq2SeqEncoder, {"type": "nse", "input_size": 4, "hidden_size": 4, "num_layers": 0}, "num_layers must be"),
    (Seq2SeqEncoder, {"type": "nse", "input_size": 4, "hidden_size": 4, "num_extra_memories": -1}, "num_extra_memories"),
    (Seq2VecEncoder, {"type": "tree_lstm", "input_dim": 4, "hidden_dim": 0}, "hidden_dim must be"),
    (Seq2VecEncoder, {"type": "tree_lstm", "input_dim": 4, "hidden_dim": 3, "num_layers": 0}, "num_layers must be"),
    (Seq2VecEncoder, {"type": "tree_rnn", "input_dim": 0, "hidden_dim": 3}, "input_dim must be"),
    (Seq2VecEncoder, {"type": "iram", "input_dim": 4, "hidden_size": 0}, "hidden_size must be"),
    (Seq2VecEncoder, {"type": "iram", "input_dim": 4, "hidden_size": 4, "num_iterations": -1}, "num_iterations"),
]


@pytest.mark.parametrize("base, params, message", BAD_SIZES)
def test_bad_sizes_are_configuration_errors(base, params, message):
    with pytest.raises(ConfigurationError, match=message):
        base.from_params(Params(dict(params)))


@pytest.mark.parametrize("base, params", [
    (Seq2SeqEncoder, {"type": "lstmn", "input_size": 4, "hidden_size": 3}),
    (Seq2SeqEncoder, {"type": "nse", "input_size": 4, "hidden_size": 4}),
    (Seq2VecEncoder, {"type": "tree_lstm", "input_dim": 4, "hidden_dim": 3}),
    (Seq2VecEncoder, {"type": "tree_rnn", "input_dim": 4, "hidden_dim": 3}),
    (Seq2VecEncoder, {"type": "iram", "input_dim": 4, "hidden_size": 4}),
])
def test_inputs_of_another_size_name_the_setting(base, params):
    encoder = base.from_params(Params(dict(params)))
    with pytest.raises(ConfigurationError, match="built for input_size 4.*6 features per token"):
        encoder(torch.randn(2, 3, 6), torch.ones(2, 3, dtype=torch.bool))
