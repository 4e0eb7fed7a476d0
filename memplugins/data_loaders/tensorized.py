import logging
import random
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy
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

# tensors of these dtypes batch in numpy (`_stack_padded`); any other (bfloat16, complex) in torch
_NUMPY_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool, torch.float64,
                 torch.float32, torch.float16)
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
    then its instances' cached tensors padded (zeros, or a `TensorField`'s `padding_value`) and stacked in numpy,
    and the `bucket` sampler's lengths are cached too (the same noise draws and order: `_bucket_batches`). Once
    every instance is cached (from the second epoch), token ids, labels and metadata are kept side by side per
    field (`_Columns`), so that a batch is a few numpy operations per tensor. Fields whose padding is not plain
    zeros (a transformer indexer's pad id, `ListField`, our `BinaryTreeField`, any other) are batched exactly as
    AllenNLP batches them, from the cached padding lengths.

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
        # the bucket sampler's lengths of every cached instance: (sorting keys, array (instances, keys))
        self._sort_lengths: Optional[Tuple[Tuple[str, ...], numpy.ndarray]] = None
        # every cached instance's fields side by side, once all are cached (`_Columns`; False: they do not fit)
        self._columns: Any = None

    def index_with(self, vocab: Vocabulary) -> None:
        self._tensor_cache, self._sort_lengths, self._columns = [], None, None
        super().index_with(vocab)

    def _caches(self) -> bool:
        return self.max_instances_in_memory is None and not self._custom_collate

    def _instances_to_batches(self, instance_iterator: Iterable[Instance], move_to_device) -> Iterator[TensorDict]:
        if not self._caches():
            yield from super()._instances_to_batches(instance_iterator, move_to_device)
            return
        instances = list(instance_iterator)
        if len(self._tensor_cache) != len(instances):
            self._tensor_cache, self._sort_lengths, self._columns = [None] * len(instances), None, None
        complete = True  # every instance cached: the bucket sampler's lengths come from the cache
        for index, instance in enumerate(instances):
            cached = self._tensor_cache[index]
            if cached is None or cached.instance is not instance:  # (a cached instance is indexed already)
                self._index_instance(instance)
                if cached is not None:  # another instance at this position now: its cache is stale
                    self._tensor_cache[index], self._sort_lengths, self._columns = None, None, None
                complete = False
        if type(self.batch_sampler) is BucketBatchSampler and self.batch_sampler.sorting_keys and complete:
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
        if complete and self._columns is None:
            self._columns = _Columns.of(self._tensor_cache) or False
        for indices in batches:
            batch = self._columns.batch(indices) if complete and self._columns else self._collate(instances, indices)
            if move_to_device and self.cuda_device is not None:
                batch = nn_util.move_to_device(batch, self.cuda_device)
            yield batch

    def _bucket_batches(self, instances: List[Instance]) -> List[List[int]]:
        """`BucketBatchSampler.get_batch_indices`, from the instances' lengths, taken once and kept until an instance
        changes, instead of asking every field again each epoch, and in numpy: the same noise draws in the same
        order (`random.uniform(a, b)` is `a + (b - a) * random.random()`, one per instance and sorting key, and
        numpy's float64 arithmetic is Python's), the same stable sort on the noisy lengths (`numpy.lexsort` is
        stable, its last key first), the same groups and shuffle."""
        sampler = self.batch_sampler
        keys, noise = tuple(sampler.sorting_keys), sampler.padding_noise
        if self._sort_lengths is None or self._sort_lengths[0] != keys:
            lengths = [[len(instance.fields[name]) for name in keys] for instance in instances]
            self._sort_lengths = (keys, numpy.array(lengths, dtype=numpy.float64).reshape(len(instances), len(keys)))
        values = self._sort_lengths[1]
        draws = numpy.array([random.random() for _ in range(values.size)], dtype=numpy.float64).reshape(values.shape)
        low, high = -values * noise, values * noise
        noisy = values + (low + (high - low) * draws)
        order = numpy.lexsort(noisy.T[::-1]).tolist() if len(instances) else []
        batches = [list(group) for group in lazy_groups_of(iter(order), sampler.batch_size)]
        if sampler.drop_last and batches and len(batches[-1]) < sampler.batch_size:
            batches.pop()
        if sampler.shuffle:
            random.shuffle(batches)
        return batches

    def _cached(self, instances: List[Instance], index: int) -> "_CachedInstance":
        cached = self._tensor_cache[index]
        if cached is None or cached.instance is not instances[index]:
            cached = self._tensor_cache[index] = _CachedInstance(instances[index])
            self._sort_lengths = self._columns = None
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


class _Column(NamedTuple):
    """One tensor of a field (a leaf of its nested dict) over every instance: 1-D arrays concatenated, or 0-d
    values side by side."""

    flat: numpy.ndarray
    offsets: Optional[numpy.ndarray]  # None: 0-d values, one per instance
    lengths: Optional[numpy.ndarray]
    padding_value: Any

    def batch(self, indices: numpy.ndarray) -> torch.Tensor:
        """The instances' arrays, padded at the end with `padding_value` to the longest and stacked: what
        `_stack_padded` makes of them, by a few numpy operations on contiguous memory."""
        if self.offsets is None:
            return torch.from_numpy(self.flat[indices])
        lengths = self.lengths[indices]
        width = int(lengths.max()) if len(indices) else 0
        steps = numpy.arange(width)
        if width == 0:  # (so also when every array is empty)
            return torch.from_numpy(numpy.full((len(indices), width), self.padding_value, dtype=self.flat.dtype))
        positions = numpy.minimum(self.offsets[indices][:, None] + steps, self.flat.size - 1)
        batch = numpy.where(steps < lengths[:, None], self.flat[positions], self.padding_value)
        return torch.from_numpy(batch.astype(self.flat.dtype, copy=False))


class _Columns:
    """
    Every cached instance's fields side by side (the columns of the instances' table): each zero-padded tensor of
    at most one dimension as one `_Column`, each metadata field as the list of its values. A batch is then a few
    numpy operations per tensor on contiguous memory, with no Python access per instance and field (which, over an
    epoch's thousands of instances scattered in memory, cost more than the padding itself). The per-instance
    arrays become views into the columns (no second copy). Made only where every instance has the same fields and
    every field fits; otherwise `of` gives None and batches are made per instance (`_collate`).
    """

    def __init__(self, names: List[str], columns: Dict[str, Any], metadata: Dict[str, List[Any]]) -> None:
        self.names, self.columns, self.metadata = names, columns, metadata

    @classmethod
    def of(cls, cache: List[Optional["_CachedInstance"]]) -> Optional["_Columns"]:
        if not cache or any(cached is None for cached in cache):
            return None
        first = cache[0]
        names = list(first.instance.fields)
        if any(list(cached.instance.fields) != names for cached in cache):
            return None
        columns, metadata = {}, {}
        for name in names:
            if name in first.tensors:
                if any(name not in cached.tensors or cached.padding_values[name] != first.padding_values[name]
                       for cached in cache):
                    return None
                column = cls._column([cached.tensors[name] for cached in cache], first.padding_values[name])
                if column is None:
                    return None
                columns[name] = column
            elif all(type(cached.instance.fields[name]) is MetadataField and not cached.holds_tensors[name]
                     for cached in cache):
                metadata[name] = [cached.instance.fields[name].metadata for cached in cache]
            else:
                return None
        # the per-instance arrays as views into the columns
        for name, column in columns.items():
            cls._share([cached.tensors for cached in cache], name, column)
        return cls(names, columns, metadata)

    @classmethod
    def _column(cls, values: List[Any], padding_value: Any) -> Any:
        first = values[0]
        if isinstance(first, dict):
            if any(not isinstance(value, dict) or value.keys() != first.keys() for value in values):
                return None
            nested = {key: cls._column([value[key] for value in values], padding_value) for key in first}
            return None if any(column is None for column in nested.values()) else nested
        if not isinstance(first, numpy.ndarray) or first.ndim > 1 or \
                any(not isinstance(value, numpy.ndarray) or value.dtype != first.dtype or value.ndim != first.ndim
                    for value in values):
            return None
        if first.ndim == 0:
            return _Column(numpy.array(values, dtype=first.dtype), None, None, padding_value)
        lengths = numpy.fromiter((len(value) for value in values), dtype=numpy.int64, count=len(values))
        offsets = numpy.zeros(len(values), dtype=numpy.int64)
        numpy.cumsum(lengths[:-1], out=offsets[1:])
        return _Column(numpy.concatenate(values), offsets, lengths, padding_value)

    @classmethod
    def _share(cls, holders: List[Dict[str, Any]], key: str, column: Any) -> None:
        if isinstance(column, dict):
            for inner, nested in column.items():
                cls._share([holder[key] for holder in holders], inner, nested)
        elif column.offsets is not None:
            for holder, offset, length in zip(holders, column.offsets.tolist(), column.lengths.tolist()):
                holder[key] = column.flat[offset : offset + length]

    def batch(self, indices: Sequence[int]) -> TensorDict:
        positions = numpy.fromiter(indices, dtype=numpy.int64, count=len(indices))
        tensors: Dict[str, Any] = {}
        for name in self.names:
            if name in self.metadata:
                values = self.metadata[name]
                tensors[name] = HostOnlyList([values[index] for index in indices])
            else:
                tensors[name] = self._gather(self.columns[name], positions)
        return tensors

    @classmethod
    def _gather(cls, column: Any, positions: numpy.ndarray) -> Any:
        if isinstance(column, dict):
            return {key: cls._gather(nested, positions) for key, nested in column.items()}
        return column.batch(positions)


class HostOnlyList(list):
    """A batched field that holds no tensors (metadata: strings, numbers, dicts of them), checked once per instance
    when it was cached: moving a batch to its device skips it (`device_move`) instead of walking every string."""


class _CachedInstance:
    """An instance's padding lengths, and the unpadded tensors of its zero-padded fields."""

    __slots__ = ("instance", "lengths", "tensors", "padding_values", "holds_tensors")

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self.lengths = instance.get_padding_lengths()
        self.tensors: Dict[str, Any] = {}
        self.padding_values: Dict[str, Any] = {}
        self.holds_tensors: Dict[str, bool] = {}
        for name, field in instance.fields.items():
            padding = _padding_value(field)
            if padding is not None:
                self.tensors[name] = _as_array(field.as_tensor(self.lengths[name]))
                self.padding_values[name] = padding
            else:  # only metadata batches as a list of plain values; any other field may hold tensors
                self.holds_tensors[name] = not isinstance(field, MetadataField) or _holds_tensors(field.metadata)


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
    """Nested dicts of tensors (a TextField's) or tensors, padded at the end of every dimension and stacked: in
    numpy where the dtype has one (a row copy costs well under a microsecond there, against tens for each torch
    operation on small tensors), the same values and dtype as torch's padding."""
    if isinstance(items[0], dict):
        return {key: _stack_padded([item[key] for item in items], padding_value) for key in items[0]}
    first = items[0]
    if isinstance(first, numpy.ndarray):
        if first.ndim == 0:  # a label
            return torch.from_numpy(numpy.array(items, dtype=first.dtype))
        if first.ndim == 1:  # token ids: the common case, kept short
            lengths = [len(item) for item in items]
            batch = numpy.full((len(items), max(lengths)), padding_value, dtype=first.dtype)
            for row, item, length in zip(batch, items, lengths):
                row[:length] = item
            return torch.from_numpy(batch)
        shape = [max(sizes) for sizes in zip(*(item.shape for item in items))]
        batch = numpy.full((len(items), *shape), padding_value, dtype=first.dtype)
        for row, item in zip(batch, items):
            row[tuple(slice(0, size) for size in item.shape)] = item
        return torch.from_numpy(batch)
    if all(item.shape == first.shape for item in items):
        return torch.stack(items)
    if first.dim() == 1:
        return torch.nn.utils.rnn.pad_sequence(items, batch_first=True, padding_value=padding_value)
    shape = [max(sizes) for sizes in zip(*(item.shape for item in items))]
    batch = first.new_full((len(items), *shape), padding_value)
    for row, item in zip(batch, items):
        row[tuple(slice(0, size) for size in item.shape)] = item
    return batch


def _as_array(value: Any) -> Any:
    """A cached field's tensors as numpy arrays (views, no copy) where numpy has their dtype, for `_stack_padded`."""
    if isinstance(value, dict):
        return {key: _as_array(item) for key, item in value.items()}
    if isinstance(value, torch.Tensor) and value.device.type == "cpu" and not value.requires_grad and \
            value.dtype in _NUMPY_DTYPES:
        return value.numpy()
    return value


def _as_allennlp_batches(fields: List[Field], lengths: List[Dict[str, int]]) -> Any:
    """`Batch.as_tensor_dict` for one field: every instance padded to the batch's longest, then `batch_tensors`."""
    padding = {key: max(instance_lengths.get(key, 0) for instance_lengths in lengths) for key in lengths[0]}
    return fields[0].batch_tensors([field.as_tensor(padding) for field in fields])
