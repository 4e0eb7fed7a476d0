import copy

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model

from tests.conftest import TEST_FIXTURES
from tests.models.pair_model_case import PairModelTestCase
from memplugins.modules.nse.reference import nse_reference as reference_nse


def variant(name: str, dropout: float = 0.1, **nse) -> dict:
    """The model options of the paper's three SNLI models in the component form (None: the option removed)."""
    encoder = {"type": "nse", "hidden_size": 6, "dropout": dropout, **nse}
    return {"premise_encoder": encoder, "dropout": dropout,
            "hypothesis_encoder": None if name == "nse" else {**encoder, "num_extra_memories": 1},
            "premise_attention": name == "mma_nse_attention"}


class TestNsePairClassifier(PairModelTestCase):
    CONFIG = TEST_FIXTURES / "nse_pair_classifier.jsonnet"

    @pytest.mark.parametrize("name", ["nse", "mma_nse", "mma_nse_attention"])
    def test_train_save_load_and_batch_consistency(self, name):
        config = self.set_up_variant(**variant(name))
        self.ensure_model_can_train_save_and_load(config)
        self.ensure_batch_predictions_are_consistent()

    @pytest.mark.parametrize("name", ["nse", "mma_nse", "mma_nse_attention"])
    @pytest.mark.parametrize("compose", ["relu", "linear_wide"])
    def test_the_0_1_flag_form_builds_the_same_model(self, name, compose):
        """Archives of the 0.1 form load, and both forms draw the same weights in the same order."""
        vocab = Vocabulary({"tokens": {"a": 1, "b": 1}, "labels": {"x": 1, "y": 1, "z": 1}})
        common = {"type": "nse_pair_classifier", "classifier_feedforward": {
            "input_dim": 24, "num_layers": 1, "hidden_dims": 16, "activations": "relu"},
            "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 5}}}}
        wide = lambda n: {"compose_size": (2 + n) * 6, "compose_activation": "linear"} if compose != "relu" else {}  # noqa: E731
        components = variant(name, 0.3, **wide(0))
        if components["hypothesis_encoder"] is not None:
            components["hypothesis_encoder"].update(wide(1))
        forms = [{"hidden_size": 6, "variant": name, "dropout": 0.3, "compose": compose},
                 {key: value for key, value in components.items() if value is not None}]
        state_dicts = []
        for form in forms:
            torch.manual_seed(0)
            state_dicts.append(Model.from_params(vocab=vocab, params=Params(copy.deepcopy({**common, **form}))).state_dict())
        assert list(state_dicts[0]) == list(state_dicts[1])
        assert all(torch.equal(state_dicts[0][key], state_dicts[1][key]) for key in state_dicts[0])
        with pytest.raises(ConfigurationError, match="not both"):
            Model.from_params(vocab=vocab, params=Params(copy.deepcopy({**common, **forms[1], "hidden_size": 6})))

    @pytest.mark.parametrize("name", ["nse", "mma_nse"])
    def test_equals_reference(self, name):
        """Per pair: the premise NSE (eq. 1-6), the hypothesis NSE reading the premise memory (eq. 7-15), features."""
        self.set_up_variant(**variant(name, dropout=0.0))
        variant_name = name
        model = self.model.eval()
        logits = model(**self.dataset.as_tensor_dict())["label_logits"]
        for i, x_p, x_h in self.embedded_pairs():
            H_p, M_p, _, _, _ = reference_nse(model._premise_encoder.weights(), x_p)
            extras = () if variant_name == "nse" else (M_p,)
            H_h, _, _, _, _ = reference_nse(model._hypothesis_encoder.weights(), x_h, extras)
            p, h = H_p[-1], H_h[-1]
            expected = model._output(model._classifier_feedforward(torch.cat([p, h, (p - h).abs(), p * h])))
            torch.testing.assert_close(logits[i], expected, atol=1e-5, rtol=0)

    def test_predictions_carry_memory_keys(self):
        self.set_up_variant(**variant("mma_nse_attention"))
        output = self.model.forward_on_instances(self.instances[:2])[0]
        n, m = len(output["hypothesis_tokens"]), len(output["premise_tokens"])
        assert output["premise_keys"].shape == (m, m)
        assert output["hypothesis_keys"].shape == (n, n)
        assert output["hypothesis_premise_keys"].shape == (n, m)
        assert output["premise_attention"].shape == (m,)
        torch.testing.assert_close(torch.as_tensor(output["hypothesis_premise_keys"]).sum(-1), torch.ones(n))
