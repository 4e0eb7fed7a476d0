"""
Masked content-based read and write on a slot memory, shared by the NSE encoder (Munkhdalai and Yu 2017, eq. 2-3 /
6 and their multiple-memory versions 8-11 / 14-15) and, later, its decoder.

Memory: `(batch, slots, k)`, one row per slot (the paper stores slots as columns of M ∈ R^{k×l}).

    read:   z = softmax(M o)           over the slots whose mask is 1 (padding slots get weight exactly 0)
            m_r = z^T M
    write:  M <- M ⊙ (1 - z e_k^T) + z h^T      i.e. slot i becomes (1 - z_i) m_i + z_i h

A padded slot has z_i = 0 and so is never changed by a write.
"""
from typing import Tuple

import torch
from allennlp.nn.util import masked_softmax


def memory_read(memory: torch.Tensor, memory_mask: torch.BoolTensor, query: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """memory `(B, l, k)`, memory_mask `(B, l)`, query `(B, k)`; returns the key z `(B, l)` and m_r `(B, k)`."""
    # elementwise products and sums: faster on CPU than bmm's batched matrix-vector products
    scores = (memory * query.unsqueeze(1)).sum(-1)  # o^T M
    keys = masked_softmax(scores, memory_mask, memory_efficient=True)
    return keys, (keys.unsqueeze(-1) * memory).sum(1)


def memory_write(memory: torch.Tensor, keys: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """memory `(B, l, k)`, keys z `(B, l)` (0 where nothing may be written), value h `(B, k)`; returns the new memory."""
    # lerp computes (1 - z) * M + z * h in one fused operation
    return torch.lerp(memory, value.unsqueeze(1).expand_as(memory), keys.unsqueeze(-1))
