import torch
from allennlp.common.testing import ModelTestCase

from tests.conftest import TEST_FIXTURES


class TestAnswerSelection(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(TEST_FIXTURES / "answer_selection.jsonnet", "fixtures/wikiqa/WikiQA-dev.sample.tsv", seed=0)

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(TEST_FIXTURES / "answer_selection.jsonnet")
        self.ensure_batch_predictions_are_consistent()

    def test_outputs_and_ranking_metrics(self):
        self.model.eval()
        output = self.model(**self.dataset.as_tensor_dict())
        assert output["probability"].shape == (60,)
        torch.testing.assert_close(output["probability"], torch.sigmoid(output["logit"]))
        assert output["question_answer_keys"].shape[:2] == output["question_keys"].shape[:2]
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"MAP", "MRR", "questions", "questions_without_answer", "accuracy"}
        assert 0 < metrics["MAP"] <= 1 and 0 < metrics["MRR"] <= 1

    def test_the_0_1_flag_form_builds_the_same_model(self):
        """Archives of the 0.1 form (`hidden_size`, layers) load; both forms draw the same weights in order."""
        import copy

        import pytest
        from allennlp.common import Params
        from allennlp.common.checks import ConfigurationError
        from allennlp.models import Model

        common = {"type": "answer_selection", "classifier_feedforward": {
            "input_dim": 24, "num_layers": 1, "hidden_dims": 16, "activations": "relu"},
            "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 5}}}}
        forms = [{"hidden_size": 6, "num_read_layers": 2, "num_write_layers": 2},
                 {"answer_encoder": {"type": "nse", "hidden_size": 6, "num_layers": 2},
                  "question_encoder": {"type": "nse", "hidden_size": 6, "num_layers": 2, "num_extra_memories": 1}}]
        state_dicts = []
        for form in forms:
            torch.manual_seed(0)
            model = Model.from_params(vocab=self.vocab, params=Params(copy.deepcopy({**common, **form})))
            state_dicts.append(model.state_dict())
        assert list(state_dicts[0]) == list(state_dicts[1])
        assert all(torch.equal(state_dicts[0][key], state_dicts[1][key]) for key in state_dicts[0])
        with pytest.raises(ConfigurationError, match="num_extra_memories: 1"):
            Model.from_params(vocab=self.vocab, params=Params(copy.deepcopy({**common, **forms[1], "question_encoder": {
                "type": "nse", "hidden_size": 6}})))
