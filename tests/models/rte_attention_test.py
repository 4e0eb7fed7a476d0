import pytest
import torch

from tests.conftest import TEST_FIXTURES
from tests.models.pair_model_case import PairModelTestCase

VARIANTS = [
    {"mode": "conditional"},
    {"mode": "attention"},
    {"mode": "word_by_word"},
    {"mode": "conditional", "two_way": True},
    {"mode": "attention", "two_way": True},
    {"mode": "word_by_word", "two_way": True},
    {"mode": "word_by_word", "shared_encoders": True},
]


class TestRteAttention(PairModelTestCase):
    CONFIG = TEST_FIXTURES / "rte_attention.jsonnet"


    @pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
    def test_train_save_load_and_batch_consistency(self, options):
        config = self.set_up_variant(**options)
        self.ensure_model_can_train_save_and_load(config)
        # padding invariance: each pair alone gives the same outputs as inside the padded batch
        self.ensure_batch_predictions_are_consistent()

    @pytest.mark.parametrize("mode", ["attention", "word_by_word"])
    def test_attention_outputs(self, mode):
        self.set_up_variant(mode=mode, two_way=True)
        self.model.eval()
        output = self.model(**self.dataset.as_tensor_dict())
        premise_mask = self.dataset.as_tensor_dict()["premise"]["tokens"]["tokens"] != 0
        hypothesis_mask = self.dataset.as_tensor_dict()["hypothesis"]["tokens"]["tokens"] != 0
        premise_attention, hypothesis_attention = output["premise_attention"], output["hypothesis_attention"]
        if mode == "attention":
            assert premise_attention.shape == premise_mask.shape
            assert hypothesis_attention.shape == hypothesis_mask.shape
            torch.testing.assert_close(premise_attention.sum(-1), torch.ones(len(self.instances)))
            assert (premise_attention[~premise_mask] == 0).all()
        else:
            batch, n, length = premise_attention.shape
            assert (n, length) == (hypothesis_mask.size(1), premise_mask.size(1))
            # one distribution over premise tokens per real hypothesis token, zero rows for padding
            torch.testing.assert_close(premise_attention.sum(-1), hypothesis_mask.float())
            assert (premise_attention.masked_select(~premise_mask.unsqueeze(1)) == 0).all()
            assert hypothesis_attention.shape == (batch, length, n)

    def test_conditional_encoding_uses_premise(self):
        """The hypothesis reader starts from the premise's last cell: changing only the premise changes the output."""
        self.set_up_variant(mode="conditional")
        self.model.eval()
        tensors = self.dataset.as_tensor_dict()
        before = self.model(**tensors)["label_logits"]
        tensors["premise"]["tokens"]["tokens"] = tensors["premise"]["tokens"]["tokens"].roll(1, dims=0)
        after = self.model(**tensors)["label_logits"]
        assert not torch.allclose(before, after)

    def test_predictions_are_human_readable(self):
        self.set_up_variant(mode="word_by_word")
        output = self.model.forward_on_instances(self.instances[:2])
        assert output[0]["label"] in {"entailment", "neutral", "contradiction"}
        assert len(output[0]["premise_attention"]) == len(output[0]["hypothesis_tokens"])
        assert len(output[0]["premise_attention"][0]) == len(output[0]["premise_tokens"])

    def test_unknown_mode_is_a_configuration_error(self):
        from allennlp.common.checks import ConfigurationError

        with pytest.raises(ConfigurationError, match="mode must be one of"):
            self.set_up_variant(mode="bahdanau")


def reference_lstm(lstm: torch.nn.LSTM, inputs: torch.Tensor, c: torch.Tensor):
    """Eq. 1-6 step by step (torch's gate order i, f, g, o), h_0 = 0; returns all outputs and the last cell."""
    h = torch.zeros(lstm.hidden_size)
    outputs = []
    for x_t in inputs:
        gates = lstm.weight_ih_l0 @ x_t + lstm.bias_ih_l0 + lstm.weight_hh_l0 @ h + lstm.bias_hh_l0
        i, f, g, o = gates.chunk(4)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)  # (2), (3), (5)
        h = torch.sigmoid(o) * torch.tanh(c)  # (4), (6)
        outputs.append(h)
    return torch.stack(outputs), c


class TestRteAttentionAgainstReference(PairModelTestCase):
    CONFIG = TEST_FIXTURES / "rte_attention.jsonnet"

    def test_word_by_word_model_equals_paper_equations(self):
        """Whole model, one unpadded pair at a time: projection, conditional encoding (eq. 1-6), eq. 11-14, softmax."""
        from tests.modules.rte_attention_test import reference_word_by_word

        self.set_up_variant()
        model = self.model.eval()
        logits = model(**self.dataset.as_tensor_dict())["label_logits"]
        for i, embedded_premise, embedded_hypothesis in self.embedded_pairs(6):
            x_p = model._input_projection(embedded_premise)
            x_h = model._input_projection(embedded_hypothesis)
            Y, c_L = reference_lstm(model._premise_lstm, x_p, torch.zeros(8))
            H, _ = reference_lstm(model._hypothesis_lstm, x_h, c_L)  # conditional encoding: c_0 = c_L
            r_N, _ = reference_word_by_word(model._attention, Y, H)
            h_star = torch.tanh(model._attention_projection.weight @ r_N + model._output_projection.weight @ H[-1])  # (14)
            expected = model._classifier(h_star)
            torch.testing.assert_close(logits[i], expected, atol=1e-5, rtol=0)
