"""
What the Triton launchers pass for an optional tensor. A kernel takes every argument whether or not its constexpr
flag lets it read one, so an absent tensor goes in as an empty one, with row stride 0.
"""
from typing import Optional

import torch


def given(x: Optional[torch.Tensor], empty: torch.Tensor) -> torch.Tensor:
    """`x`, or `empty` (a 0-element tensor of the launch's device) where it is None."""
    return x if x is not None else empty


def row_stride(x: Optional[torch.Tensor]) -> int:
    """`x.stride(0)`, or 0 where it is None."""
    return x.stride(0) if x is not None else 0
