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
