"""Builds the model of any shipped config, with its own reader, vocabulary settings and default (fixture) data."""
import itertools
from pathlib import Path
from typing import Dict, List, NamedTuple

import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Instance, Vocabulary
from allennlp.models import Model

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted(str(p.relative_to(REPO_ROOT)) for p in (REPO_ROOT / "training_config").glob("*.jsonnet"))


class ConfigModel(NamedTuple):
    model: Model
    vocab: Vocabulary
    instances: List[Instance]

    def batch(self, device: str = "cpu") -> Dict[str, torch.Tensor]:
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        return _to_device(batch.as_tensor_dict(), device)


def _to_device(tensors, device):
    if isinstance(tensors, torch.Tensor):
        return tensors.to(device)
    if isinstance(tensors, dict):
        return {k: _to_device(v, device) for k, v in tensors.items()}
    return tensors


def build_config_model(config: str, num_instances: int = 8, overrides: str = "", seed: int = 0) -> ConfigModel:
    """The config's model over its first `num_instances` training instances (the shipped fixture by default)."""
    params = Params.from_file(str(REPO_ROOT / config), overrides)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(itertools.islice(reader.read(params.pop("train_data_path")), num_instances))
    vocab = Vocabulary.from_params(params.pop("vocabulary", Params({})), instances=instances)
    torch.manual_seed(seed)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    return ConfigModel(model, vocab, instances)


def config_archive(config: str, folder: Path, num_instances: int = 16, seed: int = 0) -> Path:
    """`folder/model.tar.gz`: an archive of the config's model (weights as built, untrained) with its resolved config
    and the vocabulary of its first `num_instances` training instances, as `allennlp train` would archive it. For
    tests of what opens archives (commands, predictors, interpreters) without training each config."""
    from allennlp.models.archival import Meta, archive_model

    archive = folder / "model.tar.gz"
    if archive.exists():
        return archive
    folder.mkdir(parents=True, exist_ok=True)
    built = build_config_model(config, num_instances=num_instances, seed=seed)
    Params.from_file(str(REPO_ROOT / config)).to_file(str(folder / "config.json"))
    built.vocab.save_to_files(str(folder / "vocabulary"))
    torch.save(built.model.state_dict(), folder / "best.th")
    Meta.new().to_file(str(folder / "meta.json"))
    archive_model(str(folder), weights="best.th")
    return archive
