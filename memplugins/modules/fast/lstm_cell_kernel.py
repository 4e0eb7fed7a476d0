"""
A Triton kernel for the LSTM cell's backward that the fast paths share (`memplugins.modules.fast.contract.
lstm_cell_backward`: the LSTMN's eq. 7-9 and the NSE's write LSTM), used on CUDA. Written with torch operations it
is about fourteen elementwise launches per step; here it is one, each program taking a block of one batch row:

    g_c' = g_c + g_h ⊙ o ⊙ (1 - tanh²(c))
    g_i = g_c' ⊙ ĉ ⊙ i(1 - i);  g_f = g_c' ⊙ c_prev ⊙ f(1 - f);  g_ĉ = g_c' ⊙ i ⊙ (1 - ĉ²);  g_o = g_h ⊙ tanh(c) ⊙ o(1 - o)

and it returns g_c' and g_c' ⊙ f. Why equal: the same formulas with the same operations in the same order per
element, so the results are the torch version's up to the compiler's fused multiply-adds. The gate activations
and the gates' gradients come as (B, k) views in whatever gate layout the caller has (LSTMN [i, f, o, ĉ], NSE
[i, f, ĉ, o]), each with unit stride along k. The interpreter tests of the LSTMN and NSE kernels run it.
"""
from typing import Sequence, Tuple

import torch
import triton
import triton.language as tl

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
