"""
Triton kernels for the pointwise part of one level of the tree LSTM's fast path (`memplugins.modules.fast.
tree_lstm`, whose docstring gives the side-aware records and the equations), used on CUDA. Per level the plain
fast path gathers the children's records and then launches about a dozen elementwise operations around one
product; here the gather and everything before the product is one launch, and everything after it one more. Each
program takes a block of one parent's d columns:

    kernel 1 (gather and gates), for parent p with children x (row `children[p]`) and y (`children[n + p]`):
        s = rec_x + rec_y (the gate blocks and the output-gate block);  [i_1, i_2, f_1, f_2] = σ(s[gates])
        u = (i_1 ⊙ W_c1 x + i_2 ⊙ W_c2 y) + b_c;  g(u) stored;  c_p = (f_1 ⊙ c_x + f_2 ⊙ c_y) + g(u)
        writes the gates, g(u), c_p, and s[o] (the addend of the output gate's product, which torch then forms:
        s[o] + W_co c_p, one addmm)
    kernel 2 (output), given that pre-activation:  o = σ(·);  g(c_p);  p = o ⊙ g(c_p), also scattered into the
        node outputs at row `parents[p]`

with g one of tanh, sigmoid, softsign. The backward (the plain path's chain rule, tabulated in its docstring) has
two launches around its product with W_co too:

    backward kernel 1:  g_ô = g_p ⊙ g(c_p) ⊙ o (1 - o);  g_c += g_p ⊙ o ⊙ g'(c_p)        (then g_c += g_ô W_co)
    backward kernel 2:  g_u = g_c ⊙ g'(u);  the gate gradients [g_u ⊙ W_c1 x, g_u ⊙ W_c2 y, g_c ⊙ c_x, g_c ⊙ c_y] ⊙ σ';
                        each child's record gradient [gates | g_u ⊙ i_k | g_ô | g_c ⊙ f_k], scattered to its row

Why equal: the same formulas, each product and sum in the plain path's order (the two children's products added
left then right, then the bias or g(u)); tanh is computed as 1 - 2 / (exp(2x) + 1), since Triton's interpreter
has no libdevice, which is within a few units in the last place of 1 of torch.tanh. The forward saves what the
plain forward saves. `tests/modules/tree_lstm/level_kernel_test.py` runs all four under Triton's interpreter
against the recursive reference.
"""
from typing import Tuple

import torch
import triton
import triton.language as tl

from memplugins.modules.fast_path.cell_kernel import _tanh

BLOCK = 256
ACTIVATION_CODES = {"tanh": 0, "sigmoid": 1, "softsign": 2}


@triton.jit
def _activation(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == 0:
        return _tanh(x)
    elif ACTIVATION == 1:
        return tl.sigmoid(x)
    else:
        return x / (1 + tl.abs(x))


@triton.jit
def _gather_and_gates(store, children, candidate_bias, gates, candidate, memory, output_pre, n, d, stride_store,
                      ACTIVATION: tl.constexpr, BLOCK_D: tl.constexpr):
    p = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < d
    left = store + tl.load(children + p).to(tl.int64) * stride_store
    right = store + tl.load(children + n + p).to(tl.int64) * stride_store
    i_1 = tl.sigmoid(tl.load(left + cols, mask=in_d, other=0.0) + tl.load(right + cols, mask=in_d, other=0.0))
    i_2 = tl.sigmoid(tl.load(left + d + cols, mask=in_d, other=0.0) + tl.load(right + d + cols, mask=in_d, other=0.0))
    f_1 = tl.sigmoid(tl.load(left + 2 * d + cols, mask=in_d, other=0.0)
                     + tl.load(right + 2 * d + cols, mask=in_d, other=0.0))
    f_2 = tl.sigmoid(tl.load(left + 3 * d + cols, mask=in_d, other=0.0)
                     + tl.load(right + 3 * d + cols, mask=in_d, other=0.0))
    row = p * 4 * d
    tl.store(gates + row + cols, i_1, mask=in_d)
    tl.store(gates + row + d + cols, i_2, mask=in_d)
    tl.store(gates + row + 2 * d + cols, f_1, mask=in_d)
    tl.store(gates + row + 3 * d + cols, f_2, mask=in_d)
    u = (tl.load(left + 4 * d + cols, mask=in_d, other=0.0) * i_1
         + tl.load(right + 4 * d + cols, mask=in_d, other=0.0) * i_2)
    u = u + tl.load(candidate_bias + cols, mask=in_d, other=0.0)
    g_u = _activation(u, ACTIVATION)
    tl.store(candidate + p * d + cols, g_u, mask=in_d)
    c = (tl.load(left + 6 * d + cols, mask=in_d, other=0.0) * f_1
         + tl.load(right + 6 * d + cols, mask=in_d, other=0.0) * f_2)
    tl.store(memory + p * d + cols, c + g_u, mask=in_d)
    tl.store(output_pre + p * d + cols, tl.load(left + 5 * d + cols, mask=in_d, other=0.0)
             + tl.load(right + 5 * d + cols, mask=in_d, other=0.0), mask=in_d)


@triton.jit
def _output(pre, memory, parents, output_gate, memory_activation, output, outputs, d,
            ACTIVATION: tl.constexpr, BLOCK_D: tl.constexpr):
    p = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < d
    o = tl.sigmoid(tl.load(pre + p * d + cols, mask=in_d, other=0.0))
    g_c = _activation(tl.load(memory + p * d + cols, mask=in_d, other=0.0), ACTIVATION)
    h = o * g_c
    tl.store(output_gate + p * d + cols, o, mask=in_d)
    tl.store(memory_activation + p * d + cols, g_c, mask=in_d)
    tl.store(output + p * d + cols, h, mask=in_d)
    tl.store(outputs + tl.load(parents + p).to(tl.int64) * d + cols, h, mask=in_d)


@triton.jit
def _derivative(gu, ACTIVATION: tl.constexpr):
    """g' from g's output, as the plain backward's `ACTIVATION_DERIVATIVES`."""
    if ACTIVATION == 0:
        return 1 - gu * gu
    elif ACTIVATION == 1:
        return gu * (1 - gu)
    else:
        return (1 - tl.abs(gu)) * (1 - tl.abs(gu))


@triton.jit
def _output_backward(grad_output, grad_memory, output_gate, memory_activation, grad_output_pre, d,
                     ACTIVATION: tl.constexpr, BLOCK_D: tl.constexpr):
    p = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < d
    row = p * d + cols
    g_p = tl.load(grad_output + row, mask=in_d, other=0.0)
    o = tl.load(output_gate + row, mask=in_d, other=0.0)
    g_c = tl.load(memory_activation + row, mask=in_d, other=0.0)
    tl.store(grad_output_pre + row, ((g_p * g_c) * o) * (1 - o), mask=in_d)
    g_m = tl.load(grad_memory + row, mask=in_d, other=0.0)
    tl.store(grad_memory + row, g_m + (g_p * o) * _derivative(g_c, ACTIVATION), mask=in_d)


@triton.jit
def _child_gradient(grad_row, grad_i_1, grad_i_2, grad_f_1, grad_f_2, gate, grad_u, grad_c, grad_output_pre, forget,
                    d, cols, in_d):
    """One child's record gradient (pointer at its row): the gate blocks (the same for both children: s is a sum),
    then its candidate, output-gate and memory blocks."""
    tl.store(grad_row + cols, grad_i_1, mask=in_d)
    tl.store(grad_row + d + cols, grad_i_2, mask=in_d)
    tl.store(grad_row + 2 * d + cols, grad_f_1, mask=in_d)
    tl.store(grad_row + 3 * d + cols, grad_f_2, mask=in_d)
    tl.store(grad_row + 4 * d + cols, gate * grad_u, mask=in_d)
    tl.store(grad_row + 5 * d + cols, grad_output_pre, mask=in_d)
    tl.store(grad_row + 6 * d + cols, forget * grad_c, mask=in_d)


@triton.jit
def _gates_backward(grad_memory, candidate, gates, store, children, grad_output_pre, grad_pre_candidate, grad_store,
                    n, d, stride_store, ACTIVATION: tl.constexpr, BLOCK_D: tl.constexpr):
    p = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    in_d = cols < d
    row = p * d + cols
    left_row = tl.load(children + p).to(tl.int64)
    right_row = tl.load(children + n + p).to(tl.int64)
    left, right = store + left_row * stride_store, store + right_row * stride_store
    g_c = tl.load(grad_memory + row, mask=in_d, other=0.0)
    g_u = g_c * _derivative(tl.load(candidate + row, mask=in_d, other=0.0), ACTIVATION)
    tl.store(grad_pre_candidate + row, g_u, mask=in_d)
    gate_row = gates + p * 4 * d
    i_1 = tl.load(gate_row + cols, mask=in_d, other=0.0)
    i_2 = tl.load(gate_row + d + cols, mask=in_d, other=0.0)
    f_1 = tl.load(gate_row + 2 * d + cols, mask=in_d, other=0.0)
    f_2 = tl.load(gate_row + 3 * d + cols, mask=in_d, other=0.0)
    grad_i_1 = (tl.load(left + 4 * d + cols, mask=in_d, other=0.0) * g_u) * (i_1 * (1 - i_1))
    grad_i_2 = (tl.load(right + 4 * d + cols, mask=in_d, other=0.0) * g_u) * (i_2 * (1 - i_2))
    grad_f_1 = (tl.load(left + 6 * d + cols, mask=in_d, other=0.0) * g_c) * (f_1 * (1 - f_1))
    grad_f_2 = (tl.load(right + 6 * d + cols, mask=in_d, other=0.0) * g_c) * (f_2 * (1 - f_2))
    g_o = tl.load(grad_output_pre + row, mask=in_d, other=0.0)
    _child_gradient(grad_store + left_row * stride_store, grad_i_1, grad_i_2, grad_f_1, grad_f_2, i_1, g_u, g_c, g_o,
                    f_1, d, cols, in_d)
    _child_gradient(grad_store + right_row * stride_store, grad_i_1, grad_i_2, grad_f_1, grad_f_2, i_2, g_u, g_c,
                    g_o, f_2, d, cols, in_d)


def output_backward(grad_output: torch.Tensor, grad_memory: torch.Tensor, output_gate: torch.Tensor,
                    memory_activation: torch.Tensor, activation: str) -> torch.Tensor:
    """Backward kernel 1 (module doc): given g_p and g_c `(n, d)` (contiguous; g_c updated in place), returns g_ô."""
    n, d = grad_output.size()
    grad_output_pre = grad_output.new_empty(n, d)
    block = min(BLOCK, triton.next_power_of_2(d))
    _output_backward[(n, triton.cdiv(d, block))](
        grad_output, grad_memory, output_gate, memory_activation, grad_output_pre, d,
        ACTIVATION=ACTIVATION_CODES[activation], BLOCK_D=block,
    )
    return grad_output_pre


def gates_backward(grad_memory: torch.Tensor, candidate: torch.Tensor, gates: torch.Tensor, store: torch.Tensor,
                   children: torch.Tensor, grad_output_pre: torch.Tensor, grad_store: torch.Tensor,
                   activation: str) -> torch.Tensor:
    """Backward kernel 2 (module doc): writes both children's record gradients into rows `children` of grad_store
    `(rows, 7d)` (contiguous, as store); returns g_u `(n, d)`."""
    n, d = grad_memory.size()
    grad_pre_candidate = grad_memory.new_empty(n, d)
    block = min(BLOCK, triton.next_power_of_2(d))
    _gates_backward[(n, triton.cdiv(d, block))](
        grad_memory, candidate, gates, store, children, grad_output_pre, grad_pre_candidate, grad_store, n, d,
        store.stride(0), ACTIVATION=ACTIVATION_CODES[activation], BLOCK_D=block,
    )
    return grad_pre_candidate


def gather_and_gates(store: torch.Tensor, children: torch.Tensor, candidate_bias: torch.Tensor, d: int,
                     activation: str) -> Tuple[torch.Tensor, ...]:
    """Kernel 1 (module doc) for the n parents of a level: store `(rows, 7d)` contiguous, children `(2n,)` (left
    children's rows, then right), b_c `(d,)`. Returns gates `(n, 4d)`, g(u), c_p and s[o] `(n, d)` each."""
    n = children.numel() // 2
    gates = store.new_empty(n, 4 * d)
    candidate, memory, output_pre = (store.new_empty(n, d) for _ in range(3))
    block = min(BLOCK, triton.next_power_of_2(d))
    _gather_and_gates[(n, triton.cdiv(d, block))](
        store, children, candidate_bias.contiguous(), gates, candidate, memory, output_pre, n, d, store.stride(0),
        ACTIVATION=ACTIVATION_CODES[activation], BLOCK_D=block,
    )
    return gates, candidate, memory, output_pre


def level_output(pre: torch.Tensor, memory: torch.Tensor, parents: torch.Tensor, outputs: torch.Tensor,
                 activation: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Kernel 2 (module doc): pre = s[o] + W_co c_p `(n, d)`, c_p `(n, d)`, parents `(n,)`; writes p into rows
    `parents` of outputs `(rows, d)` (contiguous) and returns o, g(c_p) and p `(n, d)`."""
    n, d = memory.size()
    output_gate, memory_activation, output = (memory.new_empty(n, d) for _ in range(3))
    block = min(BLOCK, triton.next_power_of_2(d))
    _output[(n, triton.cdiv(d, block))](
        pre, memory, parents, output_gate, memory_activation, output, outputs, d,
        ACTIVATION=ACTIVATION_CODES[activation], BLOCK_D=block,
    )
    return output_gate, memory_activation, output
