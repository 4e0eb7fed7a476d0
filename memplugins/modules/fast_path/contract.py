"""
The contract every fast path keeps, and what they share. A fast path is a recurrence written as one autograd
Function with a hand-written backward (`memplugins.modules.lstmn.fast`, `.nse.fast`, `.tree_lstm.fast`); beside each,
in the same folder, `reference.py` writes the paper's equations literally, one example at a time, and the tests
compare the two (`tests/modules/`).

1. One entry point, `run_fast_path(function, forward, *args)`:
   * under autocast (any device type: AllenNLP's `use_amp` is CUDA autocast, CPU autocast is bfloat16) every
     floating-point tensor argument is cast to float32 and the recurrence runs with autocast off. Why float32: the
     recurrences carry state across steps (the NSE memory's decay, the LSTMN tapes, the tree's records), where
     rounding to 8 or 11 mantissa bits at every step compounds along the sequence, and their per-step products are
     small and bound by kernel launches, not arithmetic. The large products around them (input projections, the
     fused read LSTM, classifiers) stay autocast's. Gradients reach low-precision inputs cast back by autograd.
   * when a backward may run (grad mode on and a floating-point argument requires grad), `function.apply(*args)`;
   * otherwise `forward(*args, None)`: the same forward pass, keeping nothing for a backward (a long input's saved
     state is O(T²) for the LSTMN and the NSE);
   * with the "graphs" backend on CUDA (`backend.py`), either of the two through CUDA graphs of the whole loop
     (`step_graphs.py`, for the fast paths that pass their `graphs`).
2. The Function's `backward` is decorated with `first_order_backward`: it has no graph of its own, so under
   `create_graph=True` it raises, naming the literal reference, instead of returning gradients whose own graph
   misses the recurrence's part. (`torch.autograd.function.once_differentiable` defers that error to the second
   differentiation, where `torch.autograd.grad(..., inputs)` never reaches it: the engine skips its error node,
   which leads to no requested input, and the second-order gradient comes back silently wrong.)
3. The backward reads what the forward saved and never consumes it: a retained graph backpropagates twice.
4. Differentiable tensors are top-level arguments of `apply` (autograd does not see tensors inside lists); a fast
   path that takes a variable number of them (the NSE's memories) flattens them and regroups them inside.
"""
import functools
import importlib
import os
from typing import Any, Callable, Tuple, Type

import torch

from memplugins.modules.fast_path import backend
from memplugins.modules.fast_path.autocast import autocast_disabled, autocast_enabled


def first_order_backward(backward: Callable) -> Callable:
    """Decorates a fast path's `backward(ctx, *grads)`: refuses `create_graph=True` (clause 2) and runs without
    recording a graph."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        if torch.is_grad_enabled():  # create_graph=True
            raise RuntimeError(
                f"{type(ctx).__name__.replace('Backward', '')}: a hand-written backward has no graph of its own (no "
                "double backward); for higher-order gradients use the literal reference beside it (reference.py)"
            )
        return backward(ctx, *grads)

    return wrapper


def _float32(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.float() if value.is_floating_point() and value.dtype != torch.float32 else value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return type(value)(*(_float32(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_float32(v) for v in value)
    return value


def _needs_backward(args) -> bool:
    return torch.is_grad_enabled() and any(
        isinstance(a, torch.Tensor) and a.is_floating_point() and a.requires_grad for a in args
    )


def in_float32_under_autocast(function: Callable, *args, **kwargs):
    """`function(*args, **kwargs)`; under autocast (clause 1) with autocast off and every floating-point tensor
    argument, also inside tuples and lists, cast to float32. For recurrences that keep the contract without being
    one Function (`memplugins.modules.nse.deep`), and for `run_fast_path` itself."""
    if not autocast_enabled():
        return function(*args, **kwargs)
    with autocast_disabled():
        return function(*(_float32(a) for a in args), **kwargs)


def run_fast_path(function: Type[torch.autograd.Function], forward: Callable, *args, graphs: Any = None):
    """Runs a fast path by the contract above: `function.apply(*args)` or `forward(*args, None)`; or, where
    `graphs` (the fast path's `step_graphs.StepGraphs`) applies, the same through its CUDA graphs."""
    if autocast_enabled():
        return in_float32_under_autocast(run_fast_path, function, forward, *args, graphs=graphs)
    if graphs is not None and graphs.applies(args):
        outputs = graphs(args, _needs_backward(args))
        if outputs is not None:  # None: the capture failed, and was logged once; the eager loop runs
            return outputs
    if _needs_backward(args):
        return function.apply(*args)
    return forward(*args, None)


def lstm_cell_backward(
    grad_hidden: torch.Tensor,
    grad_memory: torch.Tensor,
    input_gate: torch.Tensor,
    forget_gate: torch.Tensor,
    candidate: torch.Tensor,
    output_gate: torch.Tensor,
    previous_memory: torch.Tensor,
    memory_tanh: torch.Tensor,
    grad_gates: Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
    kernel: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The LSTM cell's backward, shared by the fast paths (the LSTMN's eq. 7-9, the NSE's write LSTM). Forward, from
    the activations σ(i), σ(f), tanh(ĉ), σ(o):

        c = f ⊙ c_prev + i ⊙ ĉ (+ an addend);   h = o ⊙ tanh(c)

    Given g_h and the gradient g_c that reaches c from later steps, writes the pre-activation gradients into
    `grad_gates` (views for i, f, ĉ, o, in whatever order the caller's gate layout has them):

        g_c' = g_c + g_h ⊙ o ⊙ (1 - tanh²(c))
        g_i = g_c' ⊙ ĉ ⊙ i(1 - i),  g_f = g_c' ⊙ c_prev ⊙ f(1 - f),  g_ĉ = g_c' ⊙ i ⊙ (1 - ĉ²),
        g_o = g_h ⊙ tanh(c) ⊙ o(1 - o)

    and returns (g_c', the gradient of c itself, which an addend of c receives; g_c' ⊙ f, that of c_prev). With
    `kernel` (the caller's `triton_kernel_applies`, decided once per pass, not per step), the same in one Triton
    launch (`memplugins.modules.fast_path.cell_kernel`) where the tensors' layout fits it.
    """
    arguments = (grad_hidden, grad_memory, input_gate, forget_gate, candidate, output_gate, previous_memory,
                 memory_tanh, *grad_gates)
    if kernel:
        from memplugins.modules.fast_path import cell_kernel as lstm_cell_kernel

        if lstm_cell_kernel.takes(*arguments):
            return lstm_cell_kernel.lstm_cell_backward_kernel(*arguments[:8], grad_gates)
    grad_memory = grad_memory + grad_hidden * output_gate * (1 - memory_tanh * memory_tanh)
    grad_i, grad_f, grad_candidate, grad_o = grad_gates
    torch.mul(grad_memory * candidate, input_gate * (1 - input_gate), out=grad_i)
    torch.mul(grad_memory * previous_memory, forget_gate * (1 - forget_gate), out=grad_f)
    torch.mul(grad_memory * input_gate, 1 - candidate * candidate, out=grad_candidate)
    torch.mul(grad_hidden * memory_tanh, output_gate * (1 - output_gate), out=grad_o)
    return grad_memory, grad_memory * forget_gate


def triton_kernel_applies(tensor: torch.Tensor, kernel_module: str) -> bool:
    """Whether a fast path runs its Triton kernels (`kernel_module`) for this tensor: float32 or float64 on CUDA, or
    on the CPU under Triton's interpreter (`TRITON_INTERPRET=1`: how the default tests check them without a GPU,
    slowly); never with the "eager" backend (`backend.py`) or without Triton installed."""
    if not backend.current().triton or tensor.dtype not in (torch.float32, torch.float64):
        return False
    if not (tensor.is_cuda or os.environ.get("TRITON_INTERPRET") == "1"):
        return False
    try:
        importlib.import_module(kernel_module)
    except ImportError:  # no Triton installed: the plain torch operations
        return False
    return True
