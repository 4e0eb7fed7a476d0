import json
from typing import Iterator, Tuple

import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

TINY = "fixtures/snli/tiny.jsonl"


class PairModelTestCase(ModelTestCase):
    """ModelTestCase for our SNLI pair models: a test config with model options overridden, and per-pair inputs."""

    CONFIG = None  # set by subclasses

    def set_up_variant(self, **model_options) -> str:
        """The test config with `model_options` set (an option given as None is removed)."""
        params = Params.from_file(str(self.CONFIG)).as_dict()
        params["model"].update(model_options)
        params["model"] = {key: value for key, value in params["model"].items() if value is not None}
        config = self.TEST_DIR / "config.json"
        config.write_text(json.dumps(params))
        self.set_up_model(config, TINY, seed=0)
        return str(config)

    def embedded_pairs(self, count: int = 5) -> Iterator[Tuple[int, torch.Tensor, torch.Tensor]]:
        """(index, embedded premise, embedded hypothesis) of the first pairs, each unpadded (batch of one)."""
        for i, instance in enumerate(self.instances[:count]):
            single = Batch([instance])
            single.index_instances(self.vocab)
            tensors = single.as_tensor_dict()
            embedder = self.model._text_field_embedder
            yield i, embedder(tensors["premise"])[0], embedder(tensors["hypothesis"])[0]
