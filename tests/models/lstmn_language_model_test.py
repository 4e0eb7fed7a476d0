"""training_config/ptb_lstmn_lm.jsonnet (allennlp-models' language_model + lstmn) on a tiny PTB-format fixture."""
import pytest
from allennlp.common.testing import ModelTestCase

from memplugins.encoders import LstmnEncoder

CONFIG = "training_config/ptb_lstmn_lm.jsonnet"
TINY = "fixtures/ptb_format/tiny.txt"


class TestLstmnLanguageModelConfig(ModelTestCase):
    @pytest.fixture(autouse=True)
    def tiny_data(self, monkeypatch):
        monkeypatch.setenv("PTB_TRAIN", TINY)
        monkeypatch.setenv("PTB_VALIDATION", TINY)
        monkeypatch.setenv("NUM_EPOCHS", "1")

    @pytest.mark.parametrize("layers", ["1", "2"])
    def test_train_save_load_and_batch_consistency(self, monkeypatch, layers):
        monkeypatch.setenv("LSTMN_LAYERS", layers)
        self.set_up_model(CONFIG, TINY, seed=0)
        assert isinstance(self.model._contextualizer, LstmnEncoder)
        assert len(self.model._contextualizer.layers) == int(layers)
        # the config's bucket sampler shuffles; the save/load comparison needs the same batches twice
        self.ensure_model_can_train_save_and_load(
            CONFIG, overrides='{"data_loader.batch_sampler.shuffle": false, "data_loader.batch_sampler.padding_noise": 0.0}'
        )
        # summed losses and the batch weight legitimately differ between a batch and its single items
        self.ensure_batch_predictions_are_consistent(keys_to_ignore=("forward_loss", "batch_weight"))
