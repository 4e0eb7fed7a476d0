"""
`allennlp.nn.util.move_to_device` without a call per string. AllenNLP's trainer moves every batch to its device
(on the CPU too), and its `move_to_device` recurses into everything, metadata included: an SNLI batch of 32 pairs
with its `metadata` (each pair's tokens as strings) is about 860 recursive calls, each converting the device
argument again, which made it the largest single cost of an SNLI epoch's host work after the collation. This
version is the same function (tensors moved, dicts and lists updated in place, tuples and NamedTuples rebuilt,
anything else returned as it is) that converts the device once and does not call itself on strings, numbers and
None, and skips a batched field the tensorized loader found free of tensors (`HostOnlyList`). Applied when
memplugins is imported; `tests/data_loaders/device_move_test.py` compares the two.
"""
from typing import Any, Union

import torch
from allennlp.common.util import int_to_device
from allennlp.nn import util as nn_util

from memplugins.compat.patching import patch
from memplugins.data_loaders.tensorized import HostOnlyList

_ATOMIC = (str, int, float, bool, type(None))


def move_to_device(obj: Any, device: Union[torch.device, int]) -> Any:
    return _move(obj, int_to_device(device))


def _move(obj: Any, device: torch.device) -> Any:
    if type(obj) is HostOnlyList:  # the tensorized loader checked it holds no tensor
        return obj
    if isinstance(obj, torch.Tensor):
        return obj if obj.device == device else obj.to(device=device)
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not isinstance(value, _ATOMIC):
                obj[key] = _move(value, device)
        return obj
    if isinstance(obj, list):
        for index, item in enumerate(obj):
            if not isinstance(item, _ATOMIC):
                obj[index] = _move(item, device)
        return obj
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return obj.__class__(*(_move(item, device) for item in obj))
    if isinstance(obj, tuple):
        return tuple(_move(item, device) for item in obj)
    return obj


def apply() -> None:
    patch(nn_util, "move_to_device", lambda original: move_to_device, rebind=True)
