import logging
import random
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence

import torch
from allennlp.common.util import lazy_groups_of
from allennlp.data.data_loaders.data_loader import DataLoader, TensorDict
from allennlp.data.data_loaders.multiprocess_data_loader import MultiProcessDataLoader
from allennlp.data.fields import Field, LabelField, MetadataField, SequenceLabelField, TensorField, TextField
from allennlp.data.instance import Instance
from allennlp.data.samplers import BucketBatchSampler
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenCharactersIndexer
from allennlp.data.vocabulary import Vocabulary
from allennlp.nn import util as nn_util

logger = logging.getLogger(__name__)

# token indexers whose padded tensors are their unpadded ones followed by zeros (False for masks)
_ZERO_PADDED_INDEXERS = (SingleIdTokenIndexer, TokenCharactersIndexer)


@DataLoader.register("tensorized")
class TensorizedDataLoader(MultiProcessDataLoader):
    """
    AllenNLP's `multiprocess` data loader, with the same parameters and the same batches under the same seed, that
    turns each instance into tensors once instead of once per epoch.

    Where AllenNLP's loader keeps the instances in memory (no `max_instances_in_memory`; after the first epoch,
    reading is cached), each epoch still re-computes every instance's padding lengths and padded tensors field by
    field in Python (`Batch.as_tensor_dict`), then walks every batch, metadata strings included, to move it to the
    device. Here each instance's fields become unpadded tensors the first time the instance is batched; a batch is
    then its instances' cached tensors padded with torch (zeros, or a `TensorField`'s `padding_value`) and stacked,
    and the `bucket` sampler's lengths are cached too (the same noise draws and order: `_bucket_batches`).
    Fields whose padding is not plain zeros (a transformer indexer's pad id, `ListField`, `MetadataField`, our
    `BinaryTreeField`, any other) are batched exactly as AllenNLP batches them, from the cached padding lengths.

    The batch order is AllenNLP's: the same batch sampler (or `batch_size` and `shuffle`) is asked for the batch
    indices with the same random draws, so a run gives the same batches, tensor for tensor
    (`tests/data_loaders/tensorized_test.py` compares the two loaders over two epochs of every shipped config's
    data). Where instances are not kept in memory (`max_instances_in_memory`, a lazy read) or are batched in worker
    processes, it is AllenNLP's loader unchanged. `index_with` a new vocabulary empties the cache.

    Registered as a `DataLoader` with name "tensorized". Parameters: those of AllenNLP's `multiprocess` loader
    (`batch_size`, `batch_sampler`, `shuffle`, `drop_last`, `batches_per_epoch`, `num_workers`,
    `max_instances_in_memory`, `start_method`, `cuda_device`, `quiet`, `collate_fn`). A custom `collate_fn` turns
    the cache off (its batches are its own).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._custom_collate = "collate_fn" in kwargs and kwargs["collate_fn"] is not None
        self._tensor_cache: List[Optional["_CachedInstance"]] = []

    def index_with(self, vocab: Vocabulary) -> None:
        self._tensor_cache = []
        super().index_with(vocab)

    def _caches(self) -> bool:
        return self.max_instances_in_memory is None and not self._custom_collate

    def _instances_to_batches(self, instance_iterator: Iterable[Instance], move_to_device) -> Iterator[TensorDict]:
        if not self._caches():
            yield from super()._instances_to_batches(instance_iterator, move_to_device)
            return
        instances = list(instance_iterator)
        if len(self._tensor_cache) != len(instances):
            self._tensor_cache = [None] * len(instances)
        for index, instance in enumerate(instances):
            cached = self._tensor_cache[index]
            if cached is None or cached.instance is not instance:  # (a cached instance is indexed already)
                self._index_instance(instance)
        if type(self.batch_sampler) is BucketBatchSampler and self.batch_sampler.sorting_keys and \
                all(cached is not None for cached in self._tensor_cache):
            batches: Iterable[Sequence[int]] = self._bucket_batches(instances)
        elif self.batch_sampler is not None:
            batches = self.batch_sampler.get_batch_indices(instances)
        else:
            order = list(range(len(instances)))
            if self.shuffle:
                random.shuffle(order)  # the permutation AllenNLP's `random.shuffle(instances)` draws
            assert self.batch_size is not None
            batches = (group for group in lazy_groups_of(iter(order), self.batch_size)
                       if not (self.drop_last and len(group) < self.batch_size))
        for indices in batches:
            batch = self._collate(instances, indices)
            if move_to_device and self.cuda_device is not None:
                batch = nn_util.move_to_device(batch, self.cuda_device)
            yield batch

    def _bucket_batches(self, instances: List[Instance]) -> List[List[int]]:
        """`BucketBatchSampler.get_batch_indices`, from each instance's cached lengths instead of asking every field
        again each epoch: the same noise draws in the same order (one `random.uniform` per instance and sorting
        key), the same stable sort on the noisy lengths, the same groups and shuffle."""
        sampler = self.batch_sampler
        keys, noise = sampler.sorting_keys, sampler.padding_noise
        noisy = []
        for index in range(len(instances)):
            lengths = self._tensor_cache[index].sort_lengths(keys)
            noisy.append(([value + random.uniform(-value * noise, value * noise) for value in lengths], index))
        noisy.sort(key=lambda item: item[0])
        batches = [list(group) for group in lazy_groups_of((index for _, index in noisy), sampler.batch_size)]
        if sampler.drop_last and batches and len(batches[-1]) < sampler.batch_size:
            batches.pop()
        if sampler.shuffle:
            random.shuffle(batches)
        return batches

    def _cached(self, instances: List[Instance], index: int) -> "_CachedInstance":
        cached = self._tensor_cache[index]
        if cached is None or cached.instance is not instances[index]:
            cached = self._tensor_cache[index] = _CachedInstance(instances[index])
        return cached

    def _collate(self, instances: List[Instance], indices: Sequence[int]) -> TensorDict:
        batch = [self._cached(instances, index) for index in indices]
        tensors: Dict[str, Any] = {}
        for name in batch[0].instance.fields:
            if name in batch[0].tensors:
                tensors[name] = _stack_padded([cached.tensors[name] for cached in batch],
                                              batch[0].padding_values[name])
            else:
                batched = _as_allennlp_batches([cached.instance.fields[name] for cached in batch],
                                               [cached.lengths[name] for cached in batch])
                if isinstance(batched, list) and not any(cached.holds_tensors[name] for cached in batch):
                    batched = HostOnlyList(batched)
                tensors[name] = batched
        return tensors


class HostOnlyList(list):
    """A batched field that holds no tensors (metadata: strings, numbers, dicts of them), checked once per instance
    when it was cached: moving a batch to its device skips it (`device_move`) instead of walking every string."""


class _CachedInstance:
    """An instance's padding lengths, and the unpadded tensors of its zero-padded fields."""

    __slots__ = ("instance", "lengths", "tensors", "padding_values", "holds_tensors", "_sort_lengths")

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.lengths = instance.get_padding_lengths()
        self.tensors: Dict[str, Any] = {}
        self.padding_values: Dict[str, Any] = {}
        self.holds_tensors: Dict[str, bool] = {}
        self._sort_lengths: Dict[tuple, List[int]] = {}
        for name, field in instance.fields.items():
            padding = _padding_value(field)
            if padding is not None:
                self.tensors[name] = field.as_tensor(self.lengths[name])
                self.padding_values[name] = padding
            else:  # only metadata batches as a list of plain values; any other field may hold tensors
                self.holds_tensors[name] = not isinstance(field, MetadataField) or _holds_tensors(field.metadata)

    def sort_lengths(self, keys: Sequence[str]) -> List[int]:
        """The bucket sampler's lengths: `len` of each sorting key's field."""
        key = tuple(keys)
        if key not in self._sort_lengths:
            self._sort_lengths[key] = [len(self.instance.fields[name]) for name in keys]
        return self._sort_lengths[key]


def _holds_tensors(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, dict):
        return any(_holds_tensors(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_tensors(item) for item in value)
    return not isinstance(value, (str, int, float, bool, type(None)))  # anything else: assume it may


def _padding_value(field: Field) -> Optional[Any]:
    """What AllenNLP pads this field's tensors with, where that is one constant; None: batch it AllenNLP's way."""
    kind = type(field)
    if kind is TextField:
        indexers = field._token_indexers or {}
        return 0 if indexers and all(type(indexer) in _ZERO_PADDED_INDEXERS for indexer in indexers.values()) else None
    if kind in (LabelField, SequenceLabelField):
        return 0
    if kind is TensorField:
        return field.padding_value
    return None


def _stack_padded(items: List[Any], padding_value: Any) -> Any:
    """Nested dicts of tensors (a TextField's) or tensors, padded at the end of every dimension and stacked."""
    if isinstance(items[0], dict):
        return {key: _stack_padded([item[key] for item in items], padding_value) for key in items[0]}
    first = items[0]
    if all(item.shape == first.shape for item in items):
        return torch.stack(items)
    if first.dim() == 1:
        return torch.nn.utils.rnn.pad_sequence(items, batch_first=True, padding_value=padding_value)
    shape = [max(sizes) for sizes in zip(*(item.shape for item in items))]
    batch = first.new_full((len(items), *shape), padding_value)
    for row, item in zip(batch, items):
        row[tuple(slice(0, size) for size in item.shape)] = item
    return batch


def _as_allennlp_batches(fields: List[Field], lengths: List[Dict[str, int]]) -> Any:
    """`Batch.as_tensor_dict` for one field: every instance padded to the batch's longest, then `batch_tensors`."""
    padding = {key: max(instance_lengths.get(key, 0) for instance_lengths in lengths) for key in lengths[0]}
    return fields[0].batch_tensors([field.as_tensor(padding) for field in fields])
