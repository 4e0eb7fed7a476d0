"""
Masked content-based read and write on a slot memory (Munkhdalai and Yu 2017, eq. 2-3 / 6), one step at a time:
the NSE decoder's memory operations (its queries depend on its own previous outputs, so it cannot use the encoder's
factored loop, `memplugins.modules.nse.fast`).

Memory: `(batch, slots, k)`, one row per slot (the paper stores slots as columns of M ∈ R^{k×l}).

    read:   z = softmax(M o)           over the slots whose mask is 1 (padding slots get weight exactly 0;
                                       a memory with no real slot gives z = 0 and reads m_r = 0)
            m_r = z^T M
    write:  M <- M ⊙ (1 - z e_k^T) + z h^T      i.e. slot i becomes (1 - z_i) m_i + z_i h

A padded slot has z_i = 0 and so is never changed by a write.

Both operations run once per time step over the whole `(B, l, k)` memory, so they dominate the decoder's cost; they are
autograd Functions with hand-derived backward passes that touch the memory as few times as possible (autograd's
generic backward of the same expressions makes about twice as many passes over it). The derivations:

    read:  gz_i += <m_i, g_mr>;  g_s = z ⊙ (gz - <z, gz>)  (softmax);
           gM = z g_mr^T + g_s o^T;  g_o = M^T g_s
    write: M' = M + z ⊙ (h - M):  gM = (1 - z) ⊙ gM';  gz_i = <gM'_i, h - m_i>;  g_h = Σ_i z_i gM'_i

`tests/modules/memory_test.py` checks them with `torch.autograd.gradcheck`. They keep the fast-path contract
(`memplugins.modules.fast_path.contract`): float32 under autocast (the memory is recurrent state, rewritten at every
step), nothing saved under `no_grad`, a backward that is not differentiated again.
"""
from typing import Tuple

import torch

from memplugins.modules.fast_path.contract import first_order_backward, run_fast_path


def _read(memory: torch.Tensor, memory_mask: torch.Tensor, query: torch.Tensor, _saved=None):
    # elementwise product + sum is faster on CPU than bmm's batched matrix-vector products for M o ...
    scores = (memory * query.unsqueeze(1)).sum(-1)
    scores = scores.masked_fill(~memory_mask, torch.finfo(scores.dtype).min)
    keys = torch.softmax(scores, dim=-1) * memory_mask  # the mask product zeroes rows with no real slot
    # ... and bmm is faster for the weighted sum over slots z^T M
    return keys, torch.bmm(keys.unsqueeze(1), memory).squeeze(1)


def _write(memory: torch.Tensor, keys: torch.Tensor, value: torch.Tensor, _saved=None):
    # lerp computes (1 - z) * M + z * h in one fused operation
    return torch.lerp(memory, value.unsqueeze(1).expand_as(memory), keys.unsqueeze(-1))


class _MemoryRead(torch.autograd.Function):
    @staticmethod
    def forward(ctx, memory: torch.Tensor, memory_mask: torch.Tensor, query: torch.Tensor):
        keys, retrieved = _read(memory, memory_mask, query)
        ctx.save_for_backward(memory, query, keys)
        return keys, retrieved

    @staticmethod
    @first_order_backward
    def backward(ctx, grad_keys: torch.Tensor, grad_retrieved: torch.Tensor):
        memory, query, keys = ctx.saved_tensors
        grad_memory = grad_query = None
        grad_keys = grad_keys + (memory * grad_retrieved.unsqueeze(1)).sum(-1)
        grad_scores = keys * (grad_keys - (keys * grad_keys).sum(-1, keepdim=True))
        if ctx.needs_input_grad[0]:
            grad_memory = keys.unsqueeze(-1) * grad_retrieved.unsqueeze(1)
            grad_memory.addcmul_(grad_scores.unsqueeze(-1), query.unsqueeze(1))
        if ctx.needs_input_grad[2]:
            grad_query = torch.bmm(grad_scores.unsqueeze(1), memory).squeeze(1)
        return grad_memory, None, grad_query


class _MemoryWrite(torch.autograd.Function):
    @staticmethod
    def forward(ctx, memory: torch.Tensor, keys: torch.Tensor, value: torch.Tensor):
        ctx.save_for_backward(memory, keys, value)
        return _write(memory, keys, value)

    @staticmethod
    @first_order_backward
    def backward(ctx, grad_new: torch.Tensor):
        memory, keys, value = ctx.saved_tensors
        grad_memory = grad_keys = grad_value = None
        if ctx.needs_input_grad[0]:
            grad_memory = grad_new * (1 - keys).unsqueeze(-1)
        if ctx.needs_input_grad[1]:
            grad_keys = (grad_new * (value.unsqueeze(1) - memory)).sum(-1)
        if ctx.needs_input_grad[2]:
            grad_value = torch.bmm(keys.unsqueeze(1), grad_new).squeeze(1)
        return grad_memory, grad_keys, grad_value


def memory_read(memory: torch.Tensor, memory_mask: torch.BoolTensor, query: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """memory `(B, l, k)`, memory_mask `(B, l)`, query `(B, k)`; returns the key z `(B, l)` and m_r `(B, k)`."""
    return run_fast_path(_MemoryRead, _read, memory, memory_mask, query)


def memory_write(memory: torch.Tensor, keys: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """memory `(B, l, k)`, keys z `(B, l)` (0 where nothing may be written), value h `(B, k)`; returns the new memory."""
    return run_fast_path(_MemoryWrite, _write, memory, keys, value)
