"""
A Triton kernel for step t of the NSE fast path's backward through its write LSTM (eq. 5, 13, with the step's
padding and the written value; `memplugins.modules.nse.backward`'s `_cell_backward`), used on CUDA: one launch where
torch operations take about a dozen (the dropout, the padding's pass-through of the state, the cell's backward, the
adjoints' sums). One program per batch row and block of k columns.

With g_v the written value's whole gradient (its output gradient plus every later read of it), d the dropout mask
of h_t (or 1), μ the step mask (or 1: a full step), the adjoints of the state after step t: ∂h = ∂h_W + ∂h_kept
(the gates' product with W_hh from step t + 1, and what step t + 1's padding passed through) and ∂c:

    g_h = (g_v d + ∂h) μ;  g_c = ∂c μ                               (a padded step's cell gets nothing)
    g_c' = g_c + g_h ⊙ o ⊙ (1 - tanh²(c_t))
    g_i = g_c' ⊙ ĉ ⊙ i(1 - i);  g_f = g_c' ⊙ c_{t-1} ⊙ f(1 - f);  g_ĉ = g_c' ⊙ i ⊙ (1 - ĉ²);
    g_o = g_h ⊙ tanh(c_t) ⊙ o(1 - o)
    ∂c ← g_c' ⊙ f + ∂c (1 - μ);  ∂h_kept ← ∂h (1 - μ)               (the state a padded step passed through)

(the gates in the NSE's order [i, f, ĉ, o]). The new ∂c and ∂h_kept go to new tensors, not over the ones loaded:
a block's element may be held by several warps of a program, and the loaded values feed the gates' gradients too
(`tests/modules/fast_path/kernel_hazards_test.py`). The caller forms the next ∂h_W, the W_hh part of
g_gates [W_ih W_hh]. Why equal to the torch operations: the same formulas in the same order per element
(`memplugins.modules.fast_path.contract.lstm_cell_backward` for the cell), up to a GPU compiler's fused
multiply-adds. `tests/modules/nse/read_kernel_test.py` runs it under Triton's interpreter against the literal
reference (padded, with dropout, every step taken as padded as in a CUDA graph) and, for steps masked inside a
sequence, against the sequence without them; `tests/gpu_test.py` runs it on CUDA.
"""
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl

from memplugins.modules.fast_path.launch import given, row_stride

BLOCK = 256


@triton.jit
def _cell_backward(grad_value, dropout, adjoint_hidden, kept_hidden, adjoint_memory, step_mask, activations,
                   previous_memory, memory_tanh, grad_gates, kept_hidden_out, adjoint_memory_out, k,
                   stride_gv, stride_d, stride_ah, stride_mask, stride_act, stride_pm, stride_mt, stride_gg,
                   HAS_DROPOUT: tl.constexpr, HAS_ADJOINT: tl.constexpr, HAS_KEPT: tl.constexpr,
                   HAS_MASK: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = cols < k
    g_h = tl.load(grad_value + b * stride_gv + cols, mask=in_k, other=0.0)
    if HAS_DROPOUT:
        g_h = g_h * tl.load(dropout + b * stride_d + cols, mask=in_k, other=0.0)
    a_h = tl.zeros((BLOCK_K,), grad_value.dtype.element_ty)
    if HAS_ADJOINT:
        a_h = tl.load(adjoint_hidden + b * stride_ah + cols, mask=in_k, other=0.0)
    if HAS_KEPT:
        a_h = a_h + tl.load(kept_hidden + b * k + cols, mask=in_k, other=0.0)
    a_c = tl.load(adjoint_memory + b * k + cols, mask=in_k, other=0.0)
    g_h = g_h + a_h
    g_c = a_c
    if HAS_MASK:
        mu = tl.load(step_mask + b * stride_mask)
        g_h = g_h * mu
        g_c = a_c * mu
    row = activations + b * stride_act
    i = tl.load(row + cols, mask=in_k, other=0.0)
    f = tl.load(row + k + cols, mask=in_k, other=0.0)
    c_hat = tl.load(row + 2 * k + cols, mask=in_k, other=0.0)
    o = tl.load(row + 3 * k + cols, mask=in_k, other=0.0)
    c_prev = tl.load(previous_memory + b * stride_pm + cols, mask=in_k, other=0.0)
    tanh_c = tl.load(memory_tanh + b * stride_mt + cols, mask=in_k, other=0.0)
    g_c = g_c + g_h * o * (1 - tanh_c * tanh_c)
    out = grad_gates + b * stride_gg
    tl.store(out + cols, (g_c * c_hat) * (i * (1 - i)), mask=in_k)
    tl.store(out + k + cols, (g_c * c_prev) * (f * (1 - f)), mask=in_k)
    tl.store(out + 2 * k + cols, (g_c * i) * (1 - c_hat * c_hat), mask=in_k)
    tl.store(out + 3 * k + cols, (g_h * tanh_c) * (o * (1 - o)), mask=in_k)
    new_a_c = g_c * f
    if HAS_MASK:
        new_a_c = new_a_c + a_c * (1 - mu)
        tl.store(kept_hidden_out + b * k + cols, a_h * (1 - mu), mask=in_k)
    tl.store(adjoint_memory_out + b * k + cols, new_a_c, mask=in_k)


def cell_backward(grad_value, dropout: Optional[torch.Tensor], adjoint_hidden: Optional[torch.Tensor],
                  kept_hidden: Optional[torch.Tensor], adjoint_memory, step_mask: Optional[torch.Tensor],
                  activations, previous_memory, memory_tanh, grad_gates
                  ) -> Tuple[Optional[torch.Tensor], torch.Tensor]:
    """
    Step t's write LSTM in reverse (module doc). grad_value g_v, dropout d (or None), adjoint_hidden ∂h_W (or None:
    none yet), previous_memory c_{t-1}, memory_tanh tanh(c_t) `(B, k)` and activations `(B, 4k)`: views with unit
    stride along the last dimension; kept_hidden ∂h_kept (or None: nothing passed through) and adjoint_memory ∂c
    `(B, k)`, contiguous; step_mask μ `(B, 1)` float or None (a full step). Writes grad_gates `(B, 4k)`; returns
    the new (∂h_kept, ∂c) before step t (∂h_kept None after a full step), as new contiguous tensors.
    """
    batch_size, k = grad_value.size()
    if not adjoint_memory.is_contiguous() or (kept_hidden is not None and not kept_hidden.is_contiguous()):
        raise ValueError("the NSE cell-backward kernel reads contiguous adjoints")
    block = min(BLOCK, triton.next_power_of_2(k))
    empty = grad_value.new_empty(0)
    kept_hidden_out = grad_value.new_empty(batch_size, k) if step_mask is not None else None
    adjoint_memory_out = grad_value.new_empty(batch_size, k)
    _cell_backward[(batch_size, triton.cdiv(k, block))](
        grad_value, given(dropout, empty), given(adjoint_hidden, empty), given(kept_hidden, empty), adjoint_memory,
        given(step_mask, empty), activations, previous_memory, memory_tanh, grad_gates,
        given(kept_hidden_out, empty), adjoint_memory_out, k,
        grad_value.stride(0), row_stride(dropout), row_stride(adjoint_hidden), row_stride(step_mask),
        activations.stride(0), previous_memory.stride(0), memory_tanh.stride(0), grad_gates.stride(0),
        HAS_DROPOUT=dropout is not None, HAS_ADJOINT=adjoint_hidden is not None, HAS_KEPT=kept_hidden is not None,
        HAS_MASK=step_mask is not None, BLOCK_K=block,
    )
    return kept_hidden_out, adjoint_memory_out
