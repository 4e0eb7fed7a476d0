"""
The `tensorized` loader gives AllenNLP's `multiprocess` loader's batches, tensor for tensor (values, dtypes, nesting,
metadata), over two epochs (the second from its cache) of every shipped config's own reader and fixture data, with
the config's own batch sampler or batch size, under the same seed; and falls back to AllenNLP's loader where it
does not cache.
"""
import copy
import random

import pytest
import torch
from allennlp.common import Params
from allennlp.data import DataLoader, DatasetReader, Vocabulary
from allennlp.data.data_loaders import MultiProcessDataLoader

from memplugins.data_loaders import TensorizedDataLoader
from memplugins.data_loaders.device_move import move_to_device
from memplugins.data_loaders.tensorized import HostOnlyList
from tests.config_models import CONFIGS, REPO_ROOT


def same(a, b, where="batch"):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape, where
        assert torch.equal(a, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for index, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{where}[{index}]")
    else:
        assert a == b, where


def same_epoch(allennlp_loader, ours, epoch: int, where: str):
    """One epoch of each loader under the same seed: the same batches, tensor for tensor. Returns ours."""
    random.seed(epoch)
    expected = list(allennlp_loader)
    random.seed(epoch)
    got = list(ours)
    assert len(got) == len(expected) > 0
    for index, (batch, reference) in enumerate(zip(got, expected)):
        same(batch, reference, f"{where}, epoch {epoch}, batch {index}")
    return got


def loaders(config: str, **changes):
    params = Params.from_file(str(REPO_ROOT / config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    loader_params = params.pop("data_loader").as_dict()
    assert loader_params.pop("type") == "tensorized", f"{config}: the shipped configs use the tensorized loader"
    loader_params.update(changes)
    data_path = params.pop("train_data_path")
    built = [DataLoader.from_params(Params({**copy.deepcopy(loader_params), "type": kind}), reader=reader,
                                    data_path=data_path) for kind in ("multiprocess", "tensorized")]
    instances = list(built[0].iter_instances())
    vocab = Vocabulary.from_instances(instances)
    for loader in built:
        loader.index_with(vocab)
    return built


@pytest.mark.parametrize("config", CONFIGS)
def test_the_same_batches_as_allennlps_loader_over_two_epochs(config):
    allennlp_loader, ours = loaders(config)
    assert type(ours) is TensorizedDataLoader
    calls = []
    bucket_batches = ours._bucket_batches
    ours._bucket_batches = lambda instances: calls.append(1) or bucket_batches(instances)
    for epoch in range(2):
        same_epoch(allennlp_loader, ours, epoch, config)
    assert all(cached is not None for cached in ours._tensor_cache)
    # the second epoch of a config whose fields are all token ids, labels and metadata came from the columns
    fields = {type(field).__name__ for instance in ours.iter_instances() for field in instance.fields.values()}
    leaves = [leaf for cached in ours._tensor_cache for leaf in torch.utils._pytree.tree_leaves(cached.tensors)]
    if fields <= {"TextField", "LabelField", "MetadataField"} and all(leaf.ndim <= 1 for leaf in leaves):
        assert ours._columns, config
    # the second epoch of a bucketed config drew its batches from the cached lengths
    assert len(calls) == (1 if type(ours.batch_sampler).__name__ == "BucketBatchSampler" else 0)


def test_without_instances_in_memory_it_is_allennlps_loader():
    allennlp_loader, ours = loaders("training_config/snli_mma_nse.jsonnet", max_instances_in_memory=16)
    random.seed(3)
    expected = list(allennlp_loader)
    random.seed(3)
    got = list(ours)
    for batch, reference in zip(got, expected):
        same(batch, reference)
    assert not ours._tensor_cache
    assert isinstance(ours, MultiProcessDataLoader)


def test_a_new_vocabulary_empties_the_cache():
    _, ours = loaders("training_config/sst2_nse.jsonnet")
    list(ours)
    assert ours._tensor_cache
    ours.index_with(Vocabulary.from_instances(list(ours.iter_instances())))
    assert not ours._tensor_cache


def test_metadata_without_tensors_is_not_walked_but_anything_else_moves_as_allennlp_moves_it():
    from allennlp.nn.util import move_to_device as allennlp_move

    from memplugins.compat.patching import original_of

    original = original_of(allennlp_move)
    metadata = HostOnlyList([{"tokens": ["a", "b"]}])
    batch = {"x": torch.ones(2), "meta": metadata, "pair": (torch.zeros(1), "s"), "nested": [[torch.ones(1), 3]]}
    reference = copy.deepcopy(batch)
    moved = move_to_device(batch, -1)
    assert moved["meta"] is metadata and moved is batch
    same(moved, original(reference, -1))
    # a metadata list that does hold a tensor is a plain list: walked and moved
    _, ours = loaders("training_config/snli_mma_nse.jsonnet")
    batch = next(iter(ours))
    assert type(batch["metadata"]) is HostOnlyList


def test_new_instances_and_batches_changed_in_place_do_not_reach_the_cache():
    """Epoch 1 caches; a model that writes into its batch (in place) changes nothing cached; then the data is read
    again (new instance objects, in another order, at the same positions): the cached tensors and bucket lengths of
    the old ones are not used, and every epoch's batches stay AllenNLP's."""
    allennlp_loader, ours = loaders("training_config/snli_mma_nse.jsonnet")
    for epoch in range(3):
        if epoch == 2:
            fresh = list(reversed(list(allennlp_loader.reader.read(allennlp_loader.data_path))))
            for loader in (allennlp_loader, ours):
                loader._instances = list(fresh)
                loader.index_with(allennlp_loader._vocab) if loader is allennlp_loader else [
                    instance.index_fields(allennlp_loader._vocab) for instance in fresh]
        for batch in same_epoch(allennlp_loader, ours, epoch, "snli_mma_nse"):
            for tensor in (batch["premise"]["tokens"]["tokens"], batch["label"]):
                tensor.fill_(7)  # what a model may do to its inputs
