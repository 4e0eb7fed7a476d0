"""The SST configs (AllenNLP's basic_classifier with our encoders) train, save and load on the shipped SST trees."""
import json

import pytest
from allennlp.common import Params
from allennlp.common.params import with_overrides
from allennlp.common.testing import ModelTestCase

SST = "fixtures/sst/dev_sample.txt"
# the bucket sampler shuffles (the save/load comparison needs the same batches twice) and sorts by length (its first
# batch of phrases could be all one-word, which leaves recurrent weights without gradient): one fixed batch
FIXED_BATCHES = {"data_loader.batch_sampler.shuffle": False, "data_loader.batch_sampler.padding_noise": 0.0,
                 "data_loader.batch_sampler.batch_size": 10000}
# the configs' sizes (300 / 168 units) make one pass over ~1,500 phrases slow; the test is about the wiring
SMALL = {"model.seq2seq_encoder.hidden_size": 8, "model.seq2vec_encoder.embedding_dim": 8,
         "model.feedforward.input_dim": 8, "model.feedforward.hidden_dims": 8}


class TestSstConfigs(ModelTestCase):
    @pytest.fixture(autouse=True)
    def one_epoch(self, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")

    @pytest.mark.parametrize("config", ["training_config/sst2_nse.jsonnet", "training_config/sst5_nse.jsonnet",
                                        "training_config/sst_lstmn.jsonnet"])
    def test_train_save_load(self, config):
        small_config = self.TEST_DIR / "config.json"
        small_config.write_text(json.dumps(with_overrides(Params.from_file(config).as_dict(), SMALL)))
        self.set_up_model(small_config, SST, seed=0)
        # the NSE configs keep the GloVe vectors fixed: no gradient expected there
        self.ensure_model_can_train_save_and_load(
            str(small_config), overrides=json.dumps(FIXED_BATCHES),
            gradients_to_ignore={"_text_field_embedder.token_embedder_tokens.weight"},
        )
        self.ensure_batch_predictions_are_consistent()
