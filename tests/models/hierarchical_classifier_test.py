import json

import pytest
from allennlp.common.testing import ModelTestCase

SAMPLE = "fixtures/yelp13_format/sample.ss"
FIXED_BATCHES = {"data_loader.batch_sampler.shuffle": False, "data_loader.batch_sampler.padding_noise": 0.0,
                 "data_loader.batch_sampler.batch_size": 100}


class TestHierarchicalClassifier(ModelTestCase):
    @pytest.mark.parametrize("config", ["training_config/yelp13_nse_nse.jsonnet",
                                        "training_config/yelp13_nse_lstm.jsonnet"])
    def test_train_save_load(self, config, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        self.set_up_model(config, SAMPLE, seed=0)
        self.ensure_model_can_train_save_and_load(
            config, overrides=json.dumps(FIXED_BATCHES),
            gradients_to_ignore={"_text_field_embedder.token_embedder_tokens.weight"},  # fixed GloVe
        )
        self.ensure_batch_predictions_are_consistent()  # a document alone = the same document in a padded batch

    def test_mse_is_over_the_rating_values(self):
        self.set_up_model("training_config/yelp13_nse_lstm.jsonnet", SAMPLE, seed=0)
        self.model.eval()
        tensors = self.dataset.as_tensor_dict()
        output = self.model(**tensors)
        rating = lambda i: float(self.vocab.get_token_from_index(int(i), "labels"))  # noqa: E731
        expected = sum((rating(p) - rating(g)) ** 2 for p, g in zip(output["logits"].argmax(-1), tensors["label"]))
        assert self.model.get_metrics(reset=True)["mse"] == pytest.approx(expected / len(tensors["label"]))
