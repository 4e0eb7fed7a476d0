from typing import Sequence

import torch


def reverse_padded(tensor: torch.Tensor, mask: torch.BoolTensor, dims: Sequence[int] = (1,)) -> torch.Tensor:
    """
    Reverses each right-padded sequence within its own length along every axis in `dims` (time axes of size T),
    leaving padding where it is: with lengths 3 and 2, positions (0 1 2) and (0 1 |2) become (2 1 0) and (1 0 |2).
    `mask` is `(B, T)`; `tensor` has the batch on axis 0. Applying it twice gives back `tensor`, so running a
    left-to-right encoder on the reversed input and reversing its output gives a right-to-left encoder.
    """
    lengths = mask.sum(1, keepdim=True)  # (B, 1)
    positions = torch.arange(mask.size(1), device=mask.device).unsqueeze(0)  # (1, T)
    source = torch.where(positions < lengths, lengths - 1 - positions, positions)  # (B, T)
    for dim in dims:
        shape = [tensor.size(0)] + [1] * (tensor.dim() - 1)
        shape[dim] = tensor.size(dim)
        index = source.view(shape).expand_as(tensor)
        tensor = tensor.gather(dim, index)
    return tensor
