import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.params import with_overrides
from allennlp.common.testing import ModelTestCase
from PIL import Image

SST = "fixtures/sst/dev_sample.txt"
SMALL = {"model.encoder.hidden_size": 8, "model.maxout.input_dim": 16, "model.maxout.output_dims": 8}
FIXED_BATCHES = {"data_loader.batch_sampler.shuffle": False, "data_loader.batch_sampler.padding_noise": 0.0,
                 "data_loader.batch_sampler.batch_size": 10000}


class TestIramClassifier(ModelTestCase):
    def small_config(self, config: str) -> str:
        path = self.TEST_DIR / "config.json"
        path.write_text(json.dumps(with_overrides(Params.from_file(config).as_dict(), SMALL)))
        return str(path)

    @pytest.mark.parametrize("config", ["training_config/sst2_iram_vanilla.jsonnet",
                                        "training_config/sst2_iram_full.jsonnet",
                                        "training_config/sst5_iram_full.jsonnet",
                                        "training_config/sst2_iram_full_char_cnn.jsonnet"])
    def test_train_save_load(self, config, monkeypatch):
        monkeypatch.setenv("NUM_EPOCHS", "1")
        small = self.small_config(config)
        self.set_up_model(small, SST, seed=0)
        self.ensure_model_can_train_save_and_load(
            small, overrides=json.dumps(FIXED_BATCHES),
            gradients_to_ignore={"_text_field_embedder.token_embedder_tokens.weight"},  # fixed GloVe
        )
        self.ensure_batch_predictions_are_consistent(keys_to_ignore=("attention_overlap",))

    def test_the_penalty_is_part_of_the_training_loss(self, monkeypatch):
        monkeypatch.setenv("IRAM_PENALTY", "0.5")
        self.set_up_model(self.small_config("training_config/sst2_iram_vanilla.jsonnet"), SST, seed=0)
        self.model.eval()
        tensors = self.dataset.as_tensor_dict()
        with_penalty = self.model(**tensors)
        attention = with_penalty["attention"]
        self.model._encoder._attention_penalty = 0.0
        without = self.model(**tensors)
        from memplugins.encoders.iram import attention_overlap

        assert torch.allclose(with_penalty["loss"] - without["loss"], 0.5 * attention_overlap(attention).mean())
        metrics = self.model.get_metrics()
        assert metrics["attention_penalty"] > 0 and metrics["attention_overlap"] > 0


def test_attention_map_png_grows_with_the_input(tmp_path, monkeypatch, capsys):
    """In this process (the `attention-map` command's own CLI path is tests/cli_test.py's): 3 iterations drawn, and
    the figure widens with the sentence."""
    from argparse import Namespace

    from allennlp.commands.train import train_model_from_file

    from memplugins.commands.attention_map import run_attention_map

    monkeypatch.setenv("NUM_EPOCHS", "1")
    overrides = json.dumps({**SMALL, "model.encoder.num_context_layers": 1})
    train_model_from_file("training_config/sst2_iram_vanilla.jsonnet", str(tmp_path / "out"), overrides=overrides)
    sizes = []
    for name, sentence in (("short", "a good film"), ("long", "a good film with a dull and overlong final act")):
        png = tmp_path / f"{name}.png"
        run_attention_map(Namespace(archive_file=str(tmp_path / "out" / "model.tar.gz"),
                                    input=json.dumps({"sentence": sentence}), output_file=str(png), key=None,
                                    line=1, predictor=None, layer=1, scale="absolute", cuda_device=-1))
        assert "3 x" in capsys.readouterr().out
        with Image.open(png) as image:
            sizes.append(image.size)
            assert len(set(image.getdata())) > 2  # not blank: cells, labels
    assert sizes[1][0] > sizes[0][0]
