"""
Mixed precision for our hand-written autograd Functions.

`torch.autocast` (AllenNLP's `"use_amp": true` runs every forward pass under CUDA autocast) casts the operands of
matrix products to float16 / bfloat16 in the forward pass, but a custom Function's backward runs without autocast:
a backward that multiplies a low-precision gradient by a float32 tensor it kept fails with `expected m1 and m2 to
have the same dtype`. PyTorch's answer for such Functions is `torch.amp.custom_fwd(cast_inputs=torch.float32)`:
the Function runs in float32 with autocast off, whatever precision its callers use. `float32_under_autocast` does
that for every device type at once (`custom_fwd` is bound to one device type when it decorates), so the same
Function serves CPU bfloat16 and CUDA float16.

Why float32 and not the autocast dtype: our Functions carry recurrent state across steps (the NSE memory's decay
a_t = Π (1 - z_s), the written history, the tree LSTM's node store), where rounding to 8 (bfloat16) or 11 (float16)
mantissa bits at every step compounds over the sequence; the per-step products they compute are small (batch × k)
and bound by kernel launches, not arithmetic, so float32 costs little. The large products around them (the fused
read LSTM, the compose layer over all steps, M_0 o_t for all t, embeddings, classifiers) stay under autocast.
Gradients flowing back into low-precision inputs are cast back to the input's dtype by autograd.
"""
import contextlib
import functools
from typing import Callable, Iterator, List

import torch

_DEVICE_TYPES = ("cuda", "cpu")


def autocast_device_types() -> List[str]:
    """The device types whose autocast is enabled here."""
    return [device for device in _DEVICE_TYPES if torch.is_autocast_enabled(device)]


def autocast_enabled() -> bool:
    return bool(autocast_device_types())


def state_dtype(like: torch.Tensor) -> torch.dtype:
    """The dtype for recurrent state kept beside `like`: float32 under autocast, else `like`'s own dtype."""
    return torch.float32 if autocast_enabled() and like.is_floating_point() else like.dtype


@contextlib.contextmanager
def autocast_disabled() -> Iterator[None]:
    """Autocast off for every device type on which it is on (nothing to do without autocast)."""
    with contextlib.ExitStack() as stack:
        for device in autocast_device_types():
            stack.enter_context(torch.autocast(device_type=device, enabled=False))
        yield


def _to_float32(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float32:
        return value.float()
    return value


def float32_under_autocast(forward: Callable) -> Callable:
    """
    Decorates a custom Function's `forward(ctx, *args)`: under autocast (any device type), floating-point tensor
    arguments are cast to float32 and the forward runs with autocast off. Without autocast it is a plain call, so
    float64 gradchecks and float32 runs are untouched. The backward needs nothing: it receives gradients of the
    float32 outputs and computes with the float32 tensors it saved.
    """

    @functools.wraps(forward)
    def wrapper(ctx, *args):
        if not autocast_enabled():
            return forward(ctx, *args)
        with autocast_disabled():
            return forward(ctx, *(_to_float32(a) for a in args))

    return wrapper
