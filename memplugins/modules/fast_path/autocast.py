"""
Which autocast is on, and a way to turn it off for a block: what the fast-path contract
(`memplugins.modules.fast_path.contract`: our recurrences run in float32 under autocast) and the CnnEncoder fix
(`memplugins.compat.cnn_encoder_autocast`) need. `torch.autocast` is per device type; these helpers act on every
device type on which it is on, so one code path serves CPU bfloat16 and CUDA float16 / bfloat16.
"""
import contextlib
from typing import Iterator, List

import torch

_DEVICE_TYPES = ("cuda", "cpu")


def autocast_device_types() -> List[str]:
    """The device types whose autocast is enabled here."""
    return [device for device in _DEVICE_TYPES if torch.is_autocast_enabled(device)]


def autocast_enabled() -> bool:
    return bool(autocast_device_types())


@contextlib.contextmanager
def autocast_disabled() -> Iterator[None]:
    """Autocast off for every device type on which it is on (nothing to do without autocast)."""
    with contextlib.ExitStack() as stack:
        for device in autocast_device_types():
            stack.enter_context(torch.autocast(device_type=device, enabled=False))
        yield
