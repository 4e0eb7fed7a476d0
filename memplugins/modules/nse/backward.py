"""
The backward pass of the NSE fast path (`memplugins.modules.nse.fast`, whose docstring tabulates each equation's
adjoint): step by step in reverse, one function per equation group, in the order the chain rule meets them (the
write, the write LSTM, the compose layer, the reads).
"""
from dataclasses import dataclass
from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch

from memplugins.modules.fast_path.contract import lstm_cell_backward, triton_kernel_applies
from memplugins.modules.nse.state import Buffers, CellWeights, StepState
from memplugins.modules.fast_path.step_graphs import step_is_full


class Gradients(NamedTuple):
    queries: torch.Tensor  # g_o_t, (B, T, k)
    compose_input: torch.Tensor  # g of the o_t half of (4), (B, T, c)
    weights: Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]  # W_m, W_ih, W_hh, bias
    initial_scores: List[torch.Tensor]  # g_S0 per memory, (B, l, T)
    initials: List[torch.Tensor]  # g_M_0 per memory, (B, l, k)


@dataclass
class _Adjoints:
    """The gradients of the state after the step being processed."""

    decay: List[Optional[torch.Tensor]]  # g_a per memory (None: read-only)
    weights: List[Optional[torch.Tensor]]  # g_W per memory, (B, l, T)
    hidden: Optional[torch.Tensor]  # g of the write LSTM's h through the gates' product with W_hh (None: none yet)
    kept_hidden: Optional[torch.Tensor]  # ... and what a padded step passed through to it (None: the step was full)
    memory: torch.Tensor  # g of its c


@dataclass
class _Records:
    """Per-step gradients that the weight gradients (formed once at the end) and earlier steps read."""

    queries: torch.Tensor  # g_o_t through the history scores, (B, T, k)
    initial_scores: List[torch.Tensor]  # g_S0, (B, l, T)
    retrieved: torch.Tensor  # g_r, (B, T, N k)
    gates: torch.Tensor  # the write LSTM's pre-activation gradients, (B, T, 4k)
    compose_input: torch.Tensor  # g of f_c's pre-activation, (B, T, c)
    read_weights: List[torch.Tensor]  # z ⊙ a (the M_0 part of each read), (B, T, l)
    history_grads: torch.Tensor  # [t, s]: g of step t's history score of value s, zero-filled, (B, T, T)
    values: torch.Tensor  # g of each written value v_s: its output gradient, and each later read's as it is met


class _Step(NamedTuple):
    """What the functions below need of step t."""

    t: int
    state: StepState
    full: bool  # no sequence is padded at t
    mask: torch.Tensor  # (B, 1), float


def backward(queries, mask, dropout, compose_dropout, cell: CellWeights, compose: str, written: Sequence[bool],
             initial_scores: List[torch.Tensor], initials: List[torch.Tensor], buffers: Buffers,
             steps: List[StepState], grad_values: Optional[torch.Tensor], grads) -> Gradients:
    batch_size, num_steps, k = queries.size()
    count, num_written = len(written), sum(written)
    grad_keys, grad_decays, grad_weights = grads[:count], grads[count : count + num_written], grads[count + num_written :]
    index = [sum(written[:n]) if written[n] else None for n in range(count)]  # a memory's place among the written

    def adjoint(gradients, n, *size):
        if not written[n]:
            return None
        given = gradients[index[n]]
        if given is None:
            return queries.new_zeros(batch_size, *size)
        return given.clone(memory_format=torch.contiguous_format)  # the kernel updates it in place, row by row

    adjoints = _Adjoints([adjoint(grad_decays, n, m.size(1)) for n, m in enumerate(initials)],
                         [adjoint(grad_weights, n, m.size(1), num_steps) for n, m in enumerate(initials)],
                         None, None, queries.new_zeros(batch_size, k))
    records = _Records(
        queries.new_empty(queries.size()), [torch.empty_like(s) for s in initial_scores],
        queries.new_empty(buffers.retrieved.size()), queries.new_empty(batch_size, num_steps, 4 * k),
        queries.new_empty(buffers.compose_input.size()),
        [queries.new_empty(batch_size, num_steps, m.size(1)) for m in initials],
        queries.new_zeros(batch_size, num_steps, num_steps),
        grad_values.clone(memory_format=torch.contiguous_format) if grad_values is not None
        else queries.new_zeros(queries.size()),
    )
    records.queries[:, 0] = 0  # o_1 reads no history
    full_steps = step_is_full(mask)
    step_masks = mask.unsqueeze(-1).to(queries.dtype)
    cell_weight = torch.cat([cell.weight_ih, cell.weight_hh], dim=1)  # [W_ih W_hh], as the forward's product
    # Not in float64 on CUDA: there, on an H100 (2026-11-24, torch 2.11, Triton 3.6), the backward's kernels gave
    # gradients up to 2 % off the torch operations' in processes that had run other CUDA work first (a fresh process
    # matched to 1e-15; float32 matched the torch path in the same processes). Likely the in-place race fixed on
    # 2026-11-26 (nse_read_backward_kernel's module doc), which showed only when warps ran out of step; kept off until
    # a GPU run shows the float64 kernels agree again. Triton's interpreter on the CPU still checks their arithmetic.
    kernel = triton_kernel_applies(queries, "memplugins.modules.nse.read_backward_kernel") and not (
        queries.is_cuda and queries.dtype == torch.float64)
    if kernel:  # the kernel reads rows of M_0 with unit stride
        initials = [initial.contiguous() for initial in initials]
    # the read-backward kernel of the last written memory finishes the history scores' gradient (its pass 5)
    finisher = max((n for n in range(count) if written[n]), default=None) if kernel else None
    for t in reversed(range(num_steps)):
        step = _Step(t, steps[t], full_steps[t], step_masks[:, t])
        grad_z = _write_backward(step, buffers.keys, grad_keys, written, index, adjoints, kernel)
        grad_composed = _cell_backward(step, records.values[:, t], dropout, buffers, cell_weight, adjoints, records,
                                       kernel)
        grad_reads = _compose_backward(t, grad_composed, buffers, cell, compose, records, compose_dropout)
        grad_history = records.history_grads[:, t, :t] if t > 0 else None
        for n in range(count):
            arguments = (step, n, grad_reads[:, n * k : (n + 1) * k], grad_z[n], index[n], buffers, initial_scores[n],
                         initials[n], adjoints, records, grad_history)
            if kernel:
                _kernel_read_backward(*arguments, query=queries[:, t] if n == finisher else None)
            else:
                _read_backward(*arguments)
        if t > 0 and finisher is None:  # through q = H_{<t} o_t: o_t's gradient, and each earlier value's
            records.values[:, :t].baddbmm_(grad_history.unsqueeze(-1), queries[:, t].unsqueeze(1))
            torch.bmm(grad_history.unsqueeze(1), buffers.values[:, :t], out=records.queries[:, t].unsqueeze(1))
    return _gradients(buffers, records, k, count)


def _write_backward(step: _Step, keys, grad_keys, written, index, adjoints: _Adjoints, kernel: bool = False
                    ) -> List[torch.Tensor]:
    """(6), (14), (15) in reverse: g_z' per memory; the adjoints of a and W move to before the write (a written
    memory's in one Triton launch with `kernel`: `memplugins.modules.nse.write_backward_kernel`)."""
    t, grad_z = step.t, []
    for n in range(len(written)):
        z_masked = keys[n][:, t]
        if kernel and written[n]:
            from memplugins.modules.nse.write_backward_kernel import write_backward

            grad_z.append(write_backward(t, z_masked, grad_keys[n][:, t] if grad_keys[n] is not None else None,
                                         step.mask, step.state.decays[index[n]],
                                         step.state.write_weights[index[n]] if t > 0 else None,
                                         adjoints.decay[n], adjoints.weights[n]))
            continue
        g = grad_keys[n][:, t].clone() if grad_keys[n] is not None else torch.zeros_like(z_masked)
        if written[n]:
            g -= adjoints.decay[n] * step.state.decays[index[n]]
            g += adjoints.weights[n][:, :, t]
            if t > 0:
                g -= (adjoints.weights[n][:, :, :t] * step.state.write_weights[index[n]]).sum(-1)
                adjoints.weights[n][:, :, :t] *= (1 - z_masked).unsqueeze(-1)
            adjoints.decay[n] *= 1 - z_masked
        grad_z.append(g if step.full else g * step.mask)
    return grad_z


def _cell_backward(step: _Step, grad_value, dropout, buffers: Buffers, cell_weight: torch.Tensor,
                   adjoints: _Adjoints, records: _Records, kernel: bool = False) -> torch.Tensor:
    """(5), (13) in reverse, from the written value's whole gradient: the write LSTM's gate gradients into
    `records.gates`, the adjoints of its state moved to before step t (in one Triton launch with `kernel`:
    `memplugins.modules.nse.cell_backward_kernel`, whose docstring has the formulas); returns g_c_t."""
    t, k = step.t, grad_value.size(-1)
    grad_gates = records.gates[:, t]
    step_dropout = dropout[:, t] if dropout is not None else None
    if kernel:
        from memplugins.modules.nse.cell_backward_kernel import cell_backward

        adjoints.kept_hidden, adjoints.memory = cell_backward(
            grad_value, step_dropout, adjoints.hidden, adjoints.kept_hidden, adjoints.memory,
            None if step.full else step.mask, buffers.gates[:, t], buffers.previous_memory[:, t],
            buffers.memory_tanh[:, t], grad_gates)
    else:
        input_gate, forget_gate, cell_gate, output_gate = buffers.gates[:, t].chunk(4, dim=-1)
        grad_hidden = grad_value * step_dropout if step_dropout is not None else grad_value
        hidden = adjoints.hidden if adjoints.hidden is not None else torch.zeros_like(grad_value)
        if adjoints.kept_hidden is not None:
            hidden = hidden + adjoints.kept_hidden
        if step.full:
            grad_hidden, grad_memory, kept_memory = grad_hidden + hidden, adjoints.memory, None
            adjoints.kept_hidden = None
        else:  # a padded step passed the state through: that part of the adjoint skips the cell
            adjoints.kept_hidden, kept_memory = hidden * (1 - step.mask), adjoints.memory * (1 - step.mask)
            grad_hidden, grad_memory = (grad_hidden + hidden) * step.mask, adjoints.memory * step.mask
        _, adjoints.memory = lstm_cell_backward(grad_hidden, grad_memory, input_gate, forget_gate, cell_gate,
                                                output_gate, buffers.previous_memory[:, t],
                                                buffers.memory_tanh[:, t], grad_gates.chunk(4, dim=-1))
        if kept_memory is not None:
            adjoints.memory = adjoints.memory + kept_memory
    products = grad_gates.mm(cell_weight)  # [g_c_t, g_h_{t-1}]: one product with [W_ih W_hh]
    adjoints.hidden = products[:, -k:]
    return products[:, :-k]


def _compose_backward(t, grad_composed, buffers: Buffers, cell: CellWeights, compose: str, records: _Records,
                      compose_dropout: Optional[torch.Tensor] = None):
    """(4), (12) in reverse: g of f_c's pre-activation (through c_t's dropout, if any) into `records.compose_input`,
    and g_r = g_pre W_m for every memory's read into `records.retrieved`."""
    if compose_dropout is not None:
        grad_composed = grad_composed * compose_dropout[:, t]
    grad_pre = records.compose_input[:, t]
    if compose == "relu":  # ReLU's own backward: the gradient where the pre-activation is positive, else 0
        torch.ops.aten.threshold_backward.grad_input(grad_composed, buffers.compose_input[:, t], 0,
                                                     grad_input=grad_pre)
    else:
        grad_pre.copy_(grad_composed)
    grad_reads = records.retrieved[:, t]
    torch.mm(grad_pre, cell.compose_weight, out=grad_reads)
    return grad_reads


def _read_backward(step: _Step, n, grad_read, grad_z, index, buffers: Buffers, initial_scores, initial,
                   adjoints: _Adjoints, records: _Records, grad_history) -> None:
    """(3), (2) (or (11), (10)) of memory n in reverse; adds to the history scores' gradient `grad_history` and to
    the earlier written values' gradients."""
    t, state = step.t, step.state
    z = buffers.raw_keys[n][:, t]
    grad_weighted = torch.bmm(grad_read.unsqueeze(1), initial.transpose(1, 2)).squeeze(1)  # M_0 g_r
    if index is None:  # read-only: z is the whole read weight
        records.read_weights[n][:, t] = z
        g = grad_z + grad_weighted
        records.initial_scores[n][:, :, t] = z * (g - (z * g).sum(-1, keepdim=True))  # softmax
        return
    decay = state.decays[index]
    records.read_weights[n][:, t] = z * decay
    g = grad_z + grad_weighted * decay
    adjoints.decay[n] += grad_weighted * z
    if t > 0:
        write_weights = state.write_weights[index]
        # through r = (zᵀ W) H: the earlier values' gradients
        records.values[:, :t].baddbmm_(state.coefficients[index].unsqueeze(-1), grad_read.unsqueeze(1))
        grad_coefficients = torch.bmm(grad_read.unsqueeze(1), buffers.values[:, :t].transpose(1, 2)).squeeze(1)
        g = g + torch.bmm(grad_coefficients.unsqueeze(1), write_weights.transpose(1, 2)).squeeze(1)
        adjoints.weights[n][:, :, :t].addcmul_(z.unsqueeze(2), grad_coefficients.unsqueeze(1))
    grad_scores = z * (g - (z * g).sum(-1, keepdim=True))  # softmax
    records.initial_scores[n][:, :, t] = grad_scores * decay
    adjoints.decay[n] += grad_scores * initial_scores[:, :, t]
    if t > 0:
        adjoints.weights[n][:, :, :t].addcmul_(grad_scores.unsqueeze(2), state.history_scores.unsqueeze(1))
        grad_history += torch.bmm(grad_scores.unsqueeze(1), write_weights).squeeze(1)


def _kernel_read_backward(step: _Step, n, grad_read, grad_z, index, buffers: Buffers, initial_scores, initial,
                          adjoints: _Adjoints, records: _Records, grad_history, query=None) -> None:
    """`_read_backward` in one Triton launch (`memplugins.modules.nse.read_backward_kernel`, which says why
    it is equal); with query o_t (the last written memory), also the gradients through q = H_{<t} o_t."""
    from memplugins.modules.nse.read_backward_kernel import read_backward

    t, state = step.t, step.state
    has_history = index is not None and t > 0
    read_backward(t, buffers.raw_keys[n][:, t], grad_z.contiguous(), grad_read, initial, initial_scores,
                  state.decays[index] if index is not None else None,
                  state.write_weights[index] if has_history else None,
                  state.coefficients[index] if has_history else None, state.history_scores if has_history else None,
                  buffers.values, records.read_weights[n][:, t], records.values, records.initial_scores[n],
                  adjoints.decay[n], adjoints.weights[n], grad_history, query=query,
                  grad_query=records.queries[:, t] if query is not None else None)


def _gradients(buffers: Buffers, records: _Records, k: int, count: int) -> Gradients:
    """The weight gradients of the per-step products, each one product over all steps."""
    batch_size, num_steps = records.gates.shape[:2]
    flat = batch_size * num_steps
    flat_gates = records.gates.view(flat, 4 * k)
    cell_inputs = buffers.cell_inputs[:, :num_steps]
    cell_weights = flat_gates.t().mm(cell_inputs.reshape(flat, cell_inputs.size(-1)))  # [W_ih W_hh]
    weights = (
        records.compose_input.view(flat, -1).t().mm(buffers.retrieved.view(flat, -1)),  # W_m
        cell_weights[:, :-k],  # W_ih
        cell_weights[:, -k:],  # W_hh
        flat_gates.sum(0),  # bias
    )
    initials = [torch.bmm(records.read_weights[n].transpose(1, 2), records.retrieved[:, :, n * k : (n + 1) * k])
                for n in range(count)]
    return Gradients(records.queries, records.compose_input, weights, records.initial_scores, initials)
