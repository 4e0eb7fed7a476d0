"""
Triton kernels for the LSTM cell that the fast paths share (the LSTMN's eq. 7-9, the NSE's write LSTM, eq. 5), used
on CUDA. Each is one launch per step where torch operations take about ten (forward) and fourteen (backward); each
program takes a block of one batch row.

Forward (`lstm_cell_forward_kernel`), from the gate pre-activations s = s_a + s_b (the caller's two addends; the
NSE passes one) in the caller's layout (LSTMN [i, f, o, ĉ], NSE [i, f, ĉ, o]):

    [i, f, o] = σ(s[i, f, o]);  ĉ = tanh(s[ĉ])       (stored: the backward reads them)
    c = f ⊙ c_prev + i ⊙ ĉ (+ an addend m: the LSTMN's deep fusion, eq. 15);  tanh(c) stored;  h = o ⊙ tanh(c)
    with a step mask μ (the LSTMN's padding): h ← h μ, c ← c μ   (tanh(c) is stored before masking, as there);
    or (the NSE's padding) h, c ← the previous state where μ = 0, and the written value v = h ⊙ d μ (d: dropout)

Backward (`lstm_cell_backward_kernel`, `memplugins.modules.fast_path.contract.lstm_cell_backward` in one launch; the
LSTMN's, the NSE has its own with its padding, `memplugins.modules.nse.cell_backward_kernel`):

    g_c' = g_c + g_h ⊙ o ⊙ (1 - tanh²(c))
    g_i = g_c' ⊙ ĉ ⊙ i(1 - i);  g_f = g_c' ⊙ c_prev ⊙ f(1 - f);  g_ĉ = g_c' ⊙ i ⊙ (1 - ĉ²);  g_o = g_h ⊙ tanh(c) ⊙ o(1 - o)

returning g_c' and g_c' ⊙ f. Why equal: the same formulas with the same operations in the same order per element
(torch's addcmul is f c_prev + (i ĉ), and so is this), so the results are the torch version's up to the compiler's
fused multiply-adds on a GPU, except tanh: Triton's interpreter has no libdevice, so the forward computes it as
1 - 2 / (exp(2x) + 1), within a few units in the last place of 1 of torch.tanh (exact limits ±1 at ±∞). Tensors
come as (B, ·) views with unit stride along the last dimension. The interpreter tests of the LSTMN's kernels run
both, the NSE's the forward.
"""
from typing import Sequence, Tuple

import torch
import triton
import triton.language as tl

from memplugins.modules.fast_path.launch import given, row_stride

BLOCK = 256


@triton.jit
def _cell_backward(grad_hidden, grad_memory, input_gate, forget_gate, candidate, output_gate, previous_memory,
                   memory_tanh, grad_i, grad_f, grad_candidate, grad_o, grad_memory_out, grad_previous, k,
                   stride_gh, stride_gc, stride_i, stride_f, stride_c, stride_o, stride_pm, stride_mt,
                   stride_gi, stride_gf, stride_gcand, stride_go, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = cols < k
    g_h = tl.load(grad_hidden + b * stride_gh + cols, mask=in_k, other=0.0)
    g_c = tl.load(grad_memory + b * stride_gc + cols, mask=in_k, other=0.0)
    i = tl.load(input_gate + b * stride_i + cols, mask=in_k, other=0.0)
    f = tl.load(forget_gate + b * stride_f + cols, mask=in_k, other=0.0)
    c_hat = tl.load(candidate + b * stride_c + cols, mask=in_k, other=0.0)
    o = tl.load(output_gate + b * stride_o + cols, mask=in_k, other=0.0)
    c_prev = tl.load(previous_memory + b * stride_pm + cols, mask=in_k, other=0.0)
    tanh_c = tl.load(memory_tanh + b * stride_mt + cols, mask=in_k, other=0.0)
    g_c = g_c + g_h * o * (1 - tanh_c * tanh_c)
    tl.store(grad_i + b * stride_gi + cols, (g_c * c_hat) * (i * (1 - i)), mask=in_k)
    tl.store(grad_f + b * stride_gf + cols, (g_c * c_prev) * (f * (1 - f)), mask=in_k)
    tl.store(grad_candidate + b * stride_gcand + cols, (g_c * i) * (1 - c_hat * c_hat), mask=in_k)
    tl.store(grad_o + b * stride_go + cols, (g_h * tanh_c) * (o * (1 - o)), mask=in_k)
    tl.store(grad_memory_out + b * k + cols, g_c, mask=in_k)
    tl.store(grad_previous + b * k + cols, g_c * f, mask=in_k)


@triton.jit
def _gate(gates_a, gates_b, activations, block: tl.constexpr, k, cols, in_k, IS_CANDIDATE: tl.constexpr,
          HAS_B: tl.constexpr):
    """One gate block of one row (pointers at the row): σ or tanh of s_a + s_b, stored into `activations`."""
    s = tl.load(gates_a + block * k + cols, mask=in_k, other=0.0)
    if HAS_B:
        s = s + tl.load(gates_b + block * k + cols, mask=in_k, other=0.0)
    if IS_CANDIDATE:
        s = _tanh(s)
    else:
        s = tl.sigmoid(s)
    tl.store(activations + block * k + cols, s, mask=in_k)
    return s


@triton.jit
def _cell_forward(gates_a, gates_b, previous_memory, addend, step_mask, activations, memory_tanh, hidden_out,
                  memory_out, previous_hidden, values_out, dropout, k, stride_ga, stride_gb, stride_pm, stride_ad,
                  stride_mask, stride_act, stride_mt, stride_h, stride_c, stride_ph, stride_v, stride_d,
                  CANDIDATE: tl.constexpr, HAS_B: tl.constexpr, HAS_ADDEND: tl.constexpr, HAS_MASK: tl.constexpr,
                  KEEP: tl.constexpr, HAS_VALUES: tl.constexpr, HAS_DROPOUT: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    in_k = cols < k
    row_a, row_b, row_act = gates_a + b * stride_ga, gates_b + b * stride_gb, activations + b * stride_act
    i = _gate(row_a, row_b, row_act, 0, k, cols, in_k, False, HAS_B)
    f = _gate(row_a, row_b, row_act, 1, k, cols, in_k, False, HAS_B)
    third = _gate(row_a, row_b, row_act, 2, k, cols, in_k, CANDIDATE == 2, HAS_B)
    fourth = _gate(row_a, row_b, row_act, 3, k, cols, in_k, CANDIDATE == 3, HAS_B)
    if CANDIDATE == 2:
        c_hat, o = third, fourth
    else:
        o, c_hat = third, fourth
    c_prev = tl.load(previous_memory + b * stride_pm + cols, mask=in_k, other=0.0)
    c = f * c_prev + i * c_hat
    if HAS_ADDEND:
        c = c + tl.load(addend + b * stride_ad + cols, mask=in_k, other=0.0)
    tanh_c = _tanh(c)
    tl.store(memory_tanh + b * stride_mt + cols, tanh_c, mask=in_k)
    h = o * tanh_c
    if HAS_VALUES:
        v = h
        if HAS_DROPOUT:
            v = v * tl.load(dropout + b * stride_d + cols, mask=in_k, other=0.0)
        if HAS_MASK:
            v = v * tl.load(step_mask + b * stride_mask)
        tl.store(values_out + b * stride_v + cols, v, mask=in_k)
    if HAS_MASK:
        mu = tl.load(step_mask + b * stride_mask)
        if KEEP:
            real = mu != 0
            h = tl.where(real, h, tl.load(previous_hidden + b * stride_ph + cols, mask=in_k, other=0.0))
            c = tl.where(real, c, c_prev)
        else:
            h = h * mu
            c = c * mu
    tl.store(hidden_out + b * stride_h + cols, h, mask=in_k)
    tl.store(memory_out + b * stride_c + cols, c, mask=in_k)


@triton.jit
def _tanh(x):
    # tanh(x) = 1 - 2 / (exp(2x) + 1): exact at ±inf, and no libdevice call (the interpreter has none)
    return 1 - 2 / (tl.exp(2 * x) + 1)


def lstm_cell_forward_kernel(gates_a, gates_b, previous_memory, addend, step_mask, activations, memory_tanh,
                             hidden_out, memory_out, candidate_block: int, previous_hidden=None, values_out=None,
                             dropout=None) -> None:
    """The cell's forward in one launch (module doc): gates_a, gates_b (or None) `(B, ≥ 4k)`, the first 4k columns
    used; previous_memory `(B, k)`; addend `(B, k)` or None; step_mask `(B, 1)` float or None; writes activations
    `(B, 4k)`, memory_tanh, hidden_out and memory_out `(B, k)` (views with unit stride along the last dimension);
    candidate_block: the index of ĉ among the four gate blocks (3: LSTMN, 2: NSE). With previous_hidden `(B, k)`, a
    step whose mask is 0 keeps the previous state (h, c) instead of zeroing it (the NSE's padding); with values_out
    `(B, k)`, it also writes v = h ⊙ dropout (`(B, k)` or None) ⊙ step_mask there (the NSE's written value)."""
    batch_size, k = previous_memory.size()
    block = min(BLOCK, triton.next_power_of_2(k))
    empty = previous_memory.new_empty(0)
    _cell_forward[(batch_size, triton.cdiv(k, block))](
        gates_a, given(gates_b, empty), previous_memory, given(addend, empty), given(step_mask, empty), activations,
        memory_tanh, hidden_out, memory_out, given(previous_hidden, empty), given(values_out, empty),
        given(dropout, empty), k, gates_a.stride(0),
        row_stride(gates_b), previous_memory.stride(0), row_stride(addend), row_stride(step_mask),
        activations.stride(0), memory_tanh.stride(0), hidden_out.stride(0), memory_out.stride(0),
        row_stride(previous_hidden), row_stride(values_out), row_stride(dropout), CANDIDATE=candidate_block,
        HAS_B=gates_b is not None, HAS_ADDEND=addend is not None, HAS_MASK=step_mask is not None,
        KEEP=previous_hidden is not None, HAS_VALUES=values_out is not None, HAS_DROPOUT=dropout is not None,
        BLOCK_K=block,
    )


def lstm_cell_backward_kernel(grad_hidden, grad_memory, input_gate, forget_gate, candidate, output_gate,
                              previous_memory, memory_tanh, grad_gates: Sequence[torch.Tensor]
                              ) -> Tuple[torch.Tensor, torch.Tensor]:
    """`contract.lstm_cell_backward` in one launch: the same arguments (views `(B, k)` with unit stride along k: see
    `takes`), writes `grad_gates`, returns (g_c', g_c' ⊙ f) as new contiguous tensors."""
    tensors = [grad_hidden, grad_memory, input_gate, forget_gate, candidate, output_gate, previous_memory,
               memory_tanh, *grad_gates]
    batch_size, k = grad_hidden.size()
    grad_memory_out = grad_hidden.new_empty(batch_size, k)
    grad_previous = grad_hidden.new_empty(batch_size, k)
    block = min(BLOCK, triton.next_power_of_2(k))
    _cell_backward[(batch_size, triton.cdiv(k, block))](
        *tensors, grad_memory_out, grad_previous, k, *(t.stride(0) for t in tensors), BLOCK_K=block,
    )
    return grad_memory_out, grad_previous


def takes(*tensors: torch.Tensor) -> bool:
    """Whether the kernel's layout assumption holds: (B, k) tensors of one shape with unit stride along k."""
    shape = tensors[0].shape
    return all(t.dim() == 2 and t.shape == shape and t.stride(1) == 1 for t in tensors)
