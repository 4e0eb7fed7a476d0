import pytest
import torch

from tests.conftest import TEST_FIXTURES
from tests.models.pair_model_case import PairModelTestCase
from memplugins.modules.reference.nse import nse_reference as reference_nse



class TestNsePairClassifier(PairModelTestCase):
    CONFIG = TEST_FIXTURES / "nse_pair_classifier.jsonnet"


    @pytest.mark.parametrize("variant", ["nse", "mma_nse", "mma_nse_attention"])
    def test_train_save_load_and_batch_consistency(self, variant):
        config = self.set_up_variant(variant=variant)
        self.ensure_model_can_train_save_and_load(config)
        self.ensure_batch_predictions_are_consistent()

    @pytest.mark.parametrize("variant", ["nse", "mma_nse"])
    def test_equals_reference(self, variant):
        """Per pair: the premise NSE (eq. 1-6), the hypothesis NSE reading the premise memory (eq. 7-15), features."""
        self.set_up_variant(variant=variant, dropout=0.0)
        model = self.model.eval()
        logits = model(**self.dataset.as_tensor_dict())["label_logits"]
        for i, x_p, x_h in self.embedded_pairs():
            H_p, M_p, _, _, _ = reference_nse(model._premise_encoder, x_p)
            extras = () if variant == "nse" else (M_p,)
            H_h, _, _, _, _ = reference_nse(model._hypothesis_encoder, x_h, extras)
            p, h = H_p[-1], H_h[-1]
            expected = model._output(model._classifier_feedforward(torch.cat([p, h, (p - h).abs(), p * h])))
            torch.testing.assert_close(logits[i], expected, atol=1e-5, rtol=0)

    def test_predictions_carry_memory_keys(self):
        self.set_up_variant(variant="mma_nse_attention")
        output = self.model.forward_on_instances(self.instances[:2])[0]
        n, m = len(output["hypothesis_tokens"]), len(output["premise_tokens"])
        assert output["premise_keys"].shape == (m, m)
        assert output["hypothesis_keys"].shape == (n, n)
        assert output["hypothesis_premise_keys"].shape == (n, m)
        assert output["premise_attention"].shape == (m,)
        torch.testing.assert_close(torch.as_tensor(output["hypothesis_premise_keys"]).sum(-1), torch.ones(n))
