"""The README's "own configs" example: an allennlp-models config trains offline, before and after swapping in lstmn."""
import json

import pytest
from allennlp.commands.train import train_model_from_file

from memplugins.encoders import LstmnEncoder

SWAP = {"model.encoder.type": "lstmn", "model.inference_encoder.type": "lstmn", "trainer.num_epochs": 1}


@pytest.mark.parametrize("overrides", [{"trainer.num_epochs": 1}, SWAP], ids=["lstm", "lstmn"])
def test_allennlp_models_esim_config_trains_offline(tmp_path, overrides):
    model = train_model_from_file("examples/esim_snli.jsonnet", str(tmp_path), overrides=json.dumps(overrides),
                                  return_model=True)
    assert (tmp_path / "model.tar.gz").exists()
    uses_lstmn = isinstance(model._encoder, LstmnEncoder) and isinstance(model._inference_encoder, LstmnEncoder)
    assert uses_lstmn == (overrides is SWAP)
    assert json.loads((tmp_path / "metrics.json").read_text())["training_loss"] > 0
