import pytest
import torch
from allennlp.common.checks import ConfigurationError

from tests.conftest import TEST_FIXTURES
from tests.models.pair_model_case import PairModelTestCase
from memplugins.models.lstmn_fusion import LstmnFusion
from memplugins.modules.lstmn.reference import lstmn_reference



def reference_inter_attention(attention, X, Y, A):
    """Eq. 11-13 for one unpadded pair: X target inputs (n, d), Y / A source hidden / memory tapes (m, h)."""
    W_g, W_x, W_gt, u = (attention.source_key.weight, attention.input_query.weight,
                         attention.summary_query.weight, attention.scorer.weight[0])
    gamma_tilde = torch.zeros(Y.size(1))
    hidden, memory, weights = [], [], []
    for x_t in X:
        b = torch.stack([u @ torch.tanh(W_g @ y_j + W_x @ x_t + W_gt @ gamma_tilde) for y_j in Y])  # (11)
        p = torch.softmax(b, dim=0)  # (12)
        gamma_tilde = sum(p_j * y_j for p_j, y_j in zip(p, Y))  # (13)
        alpha_tilde = sum(p_j * a_j for p_j, a_j in zip(p, A))  # (13)
        hidden.append(gamma_tilde)
        memory.append(alpha_tilde)
        weights.append(p)
    return torch.stack(hidden), torch.stack(memory), torch.stack(weights)


def reference_deep_decoder(layer, gate, X, G, Al):
    """Eq. 4-9 with eq. 14-16: c_t also gets r_t ⊙ α~_t, r_t = σ(W_r [γ~_t, x_t] + b) (the layer's memory addend)."""
    r = torch.stack([torch.sigmoid(gate.weight @ torch.cat([G[t], x_t]) + gate.bias) for t, x_t in enumerate(X)])  # (14)
    return lstmn_reference(X, layer.weights(), addend=r * Al)[0]  # (15), (16)


class TestLstmnFusion(PairModelTestCase):
    CONFIG = TEST_FIXTURES / "lstmn_fusion.jsonnet"


    @pytest.mark.parametrize("fusion, recency_start", [("none", None), ("shallow", None), ("deep", None),
                                                       ("deep", 2.0)])
    def test_train_save_load_and_batch_consistency(self, fusion, recency_start):
        # with recency_start, the gradient check includes both LSTMNs' β
        config = self.set_up_variant(fusion=fusion, recency_start=recency_start)
        self.ensure_model_can_train_save_and_load(config)
        self.ensure_batch_predictions_are_consistent()

    @pytest.mark.parametrize("fusion", ["none", "shallow", "deep"])
    @pytest.mark.parametrize("recency_start", [None, 2.0], ids=["eq4", "recency"])
    def test_equals_reference_of_eq_4_to_16(self, fusion, recency_start):
        self.set_up_variant(fusion=fusion, dropout=0.0, recency_start=recency_start)
        model = self.model.eval()
        if recency_start is not None:  # each LSTMN its own β, so that reading the other's fails
            model._encoder.recency_score.data.fill_(3.0)
            model._decoder.recency_score.data.fill_(-1.5)
        logits = model(**self.dataset.as_tensor_dict())["label_logits"]
        for i, x_p, x_h in self.embedded_pairs():
            Y, A, _ = lstmn_reference(x_p, model._encoder.weights())
            if fusion == "none":  # Table 3's LSTMN: two LSTMNs, no inter-attention
                H, _, _ = lstmn_reference(x_h, model._decoder.weights())
            else:
                G, Al, _ = reference_inter_attention(model._inter_attention, x_h, Y, A)
            if fusion == "shallow":
                H, _, _ = lstmn_reference(torch.cat([x_h, G], dim=-1), model._decoder.weights())
            elif fusion == "deep":
                H = reference_deep_decoder(model._decoder, model._fusion_gate, x_h, G, Al)
            features = torch.cat([Y.mean(0), H.mean(0)])
            expected = model._output(model._classifier_feedforward(features))
            torch.testing.assert_close(logits[i], expected, atol=1e-5, rtol=0)

    def test_predictions_carry_trimmed_attention(self):
        self.set_up_variant()
        output = self.model.forward_on_instances(self.instances[:2])[0]
        n, m = len(output["hypothesis_tokens"]), len(output["premise_tokens"])
        assert output["inter_attention"].shape == (n, m)
        assert output["premise_intra_attention"].shape == (m, m)
        assert output["hypothesis_intra_attention"].shape == (n, n)
        torch.testing.assert_close(torch.as_tensor(output["inter_attention"]).sum(-1), torch.ones(n))

    def test_recency_start_is_opt_in_for_both_lstmns(self):
        self.set_up_variant()
        assert not any("recency" in name for name in self.model.state_dict())  # archives as before the option
        self.set_up_variant(recency_start=4.0)
        scores = {name: value.item() for name, value in self.model.named_parameters() if "recency" in name}
        assert scores == {"_encoder.recency_score": 4.0, "_decoder.recency_score": 4.0}

    @pytest.mark.parametrize("start", [float("inf"), float("nan"), "5"])
    def test_a_recency_start_that_is_not_a_finite_number_is_refused(self, start):
        self.set_up_variant()
        with pytest.raises(ConfigurationError, match="lstmn_fusion: recency_start"):
            LstmnFusion(self.vocab, self.model._text_field_embedder, 6, self.model._classifier_feedforward,
                        recency_start=start)
