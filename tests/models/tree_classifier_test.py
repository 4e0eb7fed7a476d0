import json

from allennlp.common.testing import ModelTestCase
from allennlp.models import load_archive
from allennlp.predictors import Predictor

SST = "fixtures/sst/dev_sample.txt"


class TestTreeClassifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model("training_config/sst5_tree_lstm.jsonnet", SST, seed=0)

    def test_train_save_load(self, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        self.ensure_model_can_train_save_and_load(
            "training_config/sst5_tree_lstm.jsonnet", overrides=json.dumps({"data_loader.shuffle": False})
        )
        self.ensure_batch_predictions_are_consistent()

    def test_loss_is_the_sum_of_node_cross_entropies_per_sentence(self):
        import torch

        from memplugins.models.tree_classifier import compact_node_order

        tensors = self.dataset.as_tensor_dict()
        output = self.model(**tensors)
        buffer_labels = tensors["tree"]["labels"]
        mask = tensors["tokens"]["tokens"]["tokens"] != 0
        index = compact_node_order(mask, buffer_labels.size(1))
        labels = buffer_labels.gather(1, index).masked_fill(~output["node_mask"], -1)
        assert (labels >= 0).sum() == (buffer_labels >= 0).sum()  # every labelled node appears once
        log_probs = torch.log_softmax(output["node_logits"], -1)
        picked = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        expected = -(picked * (labels >= 0)).sum() / labels.size(0)
        assert torch.allclose(output["loss"], expected)

    def test_sst2_trains(self, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        self.set_up_model("training_config/sst2_tree_lstm.jsonnet", SST, seed=0)
        self.ensure_model_can_train_save_and_load(
            "training_config/sst2_tree_lstm.jsonnet", overrides=json.dumps({"data_loader.shuffle": False})
        )

    def test_tree_rnn_trains_saves_loads_and_batches(self, monkeypatch):
        """Le & Zuidema's RNN baseline (sst5_tree_rnn) through the same model."""
        monkeypatch.setenv("NUM_EPOCHS", "1")
        self.set_up_model("training_config/sst5_tree_rnn.jsonnet", SST, seed=0)
        self.ensure_model_can_train_save_and_load(
            "training_config/sst5_tree_rnn.jsonnet", overrides=json.dumps({"data_loader.shuffle": False})
        )
        self.ensure_batch_predictions_are_consistent()

    def test_predictor_takes_trees_and_plain_sentences(self, monkeypatch, tmp_path):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        from allennlp.commands.train import train_model_from_file

        train_model_from_file("training_config/sst5_tree_lstm.jsonnet", tmp_path / "out")
        predictor = Predictor.from_archive(load_archive(str(tmp_path / "out" / "model.tar.gz")))
        tree_output = predictor.predict_json({"sentence": "(3 (2 It) (4 (2 is) (3 lovely)))"})
        plain_output = predictor.predict_json({"sentence": "A dull, lifeless film."})
        assert tree_output["tokens"] == ["It", "is", "lovely"]
        assert tree_output["node_spans"] == [[0, 1], [1, 2], [2, 3], [1, 3], [0, 3]]
        assert len(tree_output["node_labels"]) == 5 and tree_output["label"] in {"0", "1", "2", "3", "4"}
        assert plain_output["tokens"] == ["A", "dull", ",", "lifeless", "film", "."]
        assert plain_output["node_spans"][-1] == [0, 6] and plain_output["node_spans"][-2] == [1, 6]
        assert len(plain_output["node_labels"]) == 11


class TestSnliTreeLstm(ModelTestCase):
    def test_train_save_load(self, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        self.set_up_model("training_config/snli_tree_lstm.jsonnet", "fixtures/snli/tiny.jsonl", seed=0)
        overrides = {"data_loader.batch_sampler.shuffle": False, "data_loader.batch_sampler.padding_noise": 0.0}
        self.ensure_model_can_train_save_and_load(
            "training_config/snli_tree_lstm.jsonnet", overrides=json.dumps(overrides),
            # fixed GloVe; the leaf projection (50 -> 100) only reaches the roots of one-word sentences
            gradients_to_ignore={"_text_field_embedder.token_embedder_tokens.weight", "_encoder.leaf_projection.weight"},
        )
        self.ensure_batch_predictions_are_consistent()
