"""
The NSE encoder's read-compose-write loop (Munkhdalai and Yu 2017, eq. 2-6 and, with extra memories, 10-15; the
equations and masking are documented in the package docstring, `memplugins.modules.nse`) as one autograd Function
with a hand-written backward: the fast path `NseEncoder` takes (one write-LSTM layer; deeper f_w runs `deep.py`).
Its reference is the literal per-example form of eq. 1-15 in `reference.py`, and
`tests/modules/nse/fast_test.py` compares the two: outputs, keys, final memories and every gradient, with padding,
the own and extra memories written or read-only, both compose settings and dropout.

The memories are kept in the factored form M_t = diag(a_t) M_0 + W_t H_t (a_t: decay, W_t: the l × t write weights,
H_t: the written values), which eq. 6 unrolls to: M_t = M_{t-1} ⊙ (1 - z_t 1ᵀ) + z_t h_tᵀ scales every earlier
term by (1 - z_t) and appends z_t h_tᵀ. Step t, for each memory, with o_t the read LSTM's output (computed before
the loop) and S0_t = M_0 o_t (all t at once, outside):

    eq.          forward                                        adjoint (reverse order)
    (6)(14)(15)  a ← a ⊙ (1 - z'),  W ← [W ⊙ (1 - z'), z'],     g_z' = g_W[:, t] - Σ_s g_W[:, s] ⊙ W_s - g_a ⊙ a
                 H ← [H; v_t],  z' = z ⊙ mask_t                 g_a ← g_a ⊙ (1 - z');  g_W[:, <t] ← ⊙ (1 - z')
    (5)(13)      h_t = LSTMCell(c_t, state);                    `contract.lstm_cell_backward`;
                 v_t = dropout(h_t) ⊙ mask_t                    [g_c_t, g_h_{t-1}] = g_gates [W_ih W_hh]
    (4)(12)      c_t = f_c(C_o o_t + b + W_m [r^1; ...; r^N])   g_pre = g_c_t ⊙ d_t ⊙ f_c';  g_r = g_pre W_m
                 ⊙ d_t (dropout on f_w's input, if given)
    (3)(11)      r = (z ⊙ a)ᵀ M_0 + (zᵀ W) H_{<t}               g_z += (M_0 g_r) ⊙ a + W (H g_r);  g_a += (M_0 g_r) ⊙ z;
                                                                g_W += z (H g_r)ᵀ
    (2)(10)      q = H_{<t} o_t;  s = a ⊙ S0_t + W q;           g_s = z ⊙ (g_z - <z, g_z>);  g_S0_t = g_s ⊙ a;
                 z = softmax(s) over real slots                 g_a += g_s ⊙ S0_t;  g_W += g_s qᵀ;  g_q = Wᵀ g_s;
                                                                g_o_t = g_q H_{<t}

With the encoder's `key_strength` (eq. 2'), the queries are β_t o_t: the loop reads with them as with o_t, since
the scores are its only use of them (f_c's o_t half, `composed`, comes in from outside), and autograd carries g_o_t
on to β_t and o_t.

The gradient of a written value v_s gathers every later step's reads of it, Σ_{t>s} g_q,t[s] o_t (through q) and
Σ_{t>s} (zᵀW)_t[s] g_r,t (through r); each later step adds its terms to every earlier value's gradient when it is
processed (one rank-1 update of H_{<t}'s gradient per term), so they are complete when step s is reached. M_0's
gradient Σ_t (z ⊙ a)_t g_r,tᵀ and the weight gradients of the per-step products (W_m, the write LSTM's) are each one
product over all steps.

What it saves over autograd: 60-odd graph nodes per step, which at B = 32, k = 300 cost about as much as their
arithmetic. The write LSTM's input c_t and its state h_{t-1} share one row of a buffer (`Buffers.cell_inputs`), so
its gates are one product with [W_ih W_hh] each way, and each step writes its new state where the next reads it; a
padded step is always the masked path inside a CUDA graph (`step_graphs.step_is_full`), so its masking is part of
the kernels rather than separate operations. The final memories are formed outside, from the returned a_T, W_T and
values, with autograd. Dropout on h_t (and, where the encoder places it there, on c_t as f_w's input: d_t above)
uses one mask drawn for all steps before the loop (the same distribution as per-step dropout). Mixed precision,
`no_grad`, retained graphs and `create_graph`: the fast-path contract (`memplugins.modules.fast_path.contract`).

On CUDA (float32 / float64) each memory's write of step t-1 and read of step t run as one Triton launch
(`read_kernel.py`, which says why it is equal; the first written memory's also computes q), and so does the write
LSTM's step with its padding and written value (`memplugins.modules.fast_path.cell_kernel`); the backward's kernels,
in float32 only (`backward.py` says why), are the read's (`read_backward_kernel.py`, which also adds the read's
share of the earlier values' gradients, and in the last written memory's launch the gradients through q), the
write's (`write_backward_kernel.py`) and the write LSTM's (`cell_backward_kernel.py`, with the step's padding and
dropout). The "eager" backend turns them off.
"""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch

from memplugins.modules.fast_path.contract import first_order_backward, run_fast_path, triton_kernel_applies
from memplugins.modules.nse.backward import backward
from memplugins.modules.nse.state import Buffers, CellWeights, Memory, StepState
from memplugins.modules.fast_path.step_graphs import StepGraphs, step_is_full

COMPOSE = ("relu", "linear")


class _Written(NamedTuple):
    """The factored state of the written memories, updated in place at every write: a_t `(B, l)` and W_t `(B, l, T)`
    per memory (None for a read-only one)."""

    decay: List[Optional[torch.Tensor]]
    weights: List[Optional[torch.Tensor]]


def _read(t: int, query, buffers: Buffers, memories: Sequence[Memory], written: _Written) -> StepState:
    """(2), (3), (10), (11) for step t: the keys z into `buffers.raw_keys`, the reads into `buffers.retrieved`."""
    k = query.size(-1)
    values = buffers.values
    history_scores = torch.bmm(query.unsqueeze(1), values[:, :t].transpose(1, 2)).squeeze(1) if t > 0 else None
    decays, write_weights, coefficients = [], [], []
    for n, memory in enumerate(memories):
        scores = memory.initial_scores[:, :, t]
        decay, weights = written.decay[n], written.weights[n]
        if memory.written and t > 0:
            scores = scores * decay + torch.bmm(history_scores.unsqueeze(1), weights[:, :, :t].transpose(1, 2)).squeeze(1)
        lowest = torch.finfo(scores.dtype).min
        z = torch.softmax(scores.masked_fill(~memory.mask, lowest), dim=-1).mul_(memory.mask)  # (2)
        buffers.raw_keys[n][:, t] = z
        read = buffers.retrieved[:, t, n * k : (n + 1) * k]
        read.copy_(torch.bmm((z * decay if memory.written else z).unsqueeze(1), memory.initial).squeeze(1))  # (3): M_0
        if memory.written:
            decays.append(decay.clone())
            if t > 0:
                coefficient = torch.bmm(z.unsqueeze(1), weights[:, :, :t]).squeeze(1)
                read += torch.bmm(coefficient.unsqueeze(1), values[:, :t]).squeeze(1)  # (3): the H part
                write_weights.append(weights[:, :, :t].clone())
                coefficients.append(coefficient)
    return StepState(history_scores, decays, write_weights, coefficients)


def _compose(t: int, buffers: Buffers, cell: CellWeights, compose: str,
             compose_dropout: Optional[torch.Tensor] = None) -> None:
    """(4): f_c's pre-activation in `buffers.compose_input` (which holds the o_t half, `composed`, on entry), c_t
    (after its dropout, if any: what f_w reads, and what W_ih's gradient needs) into its place in
    `buffers.cell_inputs`."""
    pre = buffers.compose_input[:, t].addmm_(buffers.retrieved[:, t], cell.compose_weight.t())  # in place: no copy
    c_t = buffers.cell_inputs[:, t, : pre.size(-1)]
    if compose == "relu":
        torch.clamp_min(pre, 0, out=c_t)  # what torch.relu computes
        if compose_dropout is not None:
            c_t.mul_(compose_dropout[:, t])
    elif compose_dropout is not None:
        torch.mul(pre, compose_dropout[:, t], out=c_t)
    else:
        c_t.copy_(pre)


def _cell(t: int, buffers: Buffers, cell_weight: torch.Tensor, bias: torch.Tensor, step_mask: Optional[torch.Tensor],
          dropout: Optional[torch.Tensor], kernel: bool = False) -> None:
    """(5) and the written value: the write LSTM's step from [c_t; h_{t-1}] with cell_weight [W_ih W_hh] (one
    product), its new (h, c) into row t + 1 of `buffers.cell_inputs` and `buffers.cell_memories` (a step whose
    step_mask is 0 keeps the previous ones; no mask: a full step), v_t = h_t ⊙ dropout ⊙ mask_t into
    `buffers.values` (its pointwise part in one Triton launch with `kernel`:
    `memplugins.modules.fast_path.cell_kernel`)."""
    k = buffers.memory_tanh.size(-1)
    gates = torch.addmm(bias, buffers.cell_inputs[:, t], cell_weight.t())  # (5): LSTMCell
    step_gates = buffers.gates[:, t]
    hidden, new_hidden_out = buffers.cell_inputs[:, t, -k:], buffers.cell_inputs[:, t + 1, -k:]
    memory, new_memory_out = buffers.cell_memories[:, t], buffers.cell_memories[:, t + 1]
    step_dropout = dropout[:, t] if dropout is not None else None
    if kernel:
        from memplugins.modules.fast_path.cell_kernel import lstm_cell_forward_kernel

        lstm_cell_forward_kernel(gates, None, memory, None, step_mask, step_gates, buffers.memory_tanh[:, t],
                                 new_hidden_out, new_memory_out, candidate_block=2,
                                 previous_hidden=hidden if step_mask is not None else None,
                                 values_out=buffers.values[:, t], dropout=step_dropout)
        return
    torch.sigmoid(gates, out=step_gates)
    torch.tanh(gates[:, 2 * k : 3 * k], out=step_gates[:, 2 * k : 3 * k])
    input_gate, forget_gate, cell_gate, output_gate = step_gates.chunk(4, dim=-1)
    new_memory = torch.addcmul(forget_gate * memory, input_gate, cell_gate)
    torch.tanh(new_memory, out=buffers.memory_tanh[:, t])
    new_hidden = output_gate * buffers.memory_tanh[:, t]
    value = new_hidden * step_dropout if step_dropout is not None else new_hidden
    if step_mask is None:
        buffers.values[:, t] = value
        new_hidden_out.copy_(new_hidden)
        new_memory_out.copy_(new_memory)
    else:  # a padded step writes nothing and leaves the write LSTM's state as it was
        torch.mul(value, step_mask, out=buffers.values[:, t])
        real = step_mask != 0
        torch.where(real, new_hidden, hidden, out=new_hidden_out)
        torch.where(real, new_memory, memory, out=new_memory_out)


def _kernel_read(t: int, query, buffers: Buffers, memories: Sequence[Memory], written: _Written,
                 slot_masks: List[torch.Tensor], step_masks: torch.Tensor) -> StepState:
    """`_read` with step t-1's write (which `_forward` leaves pending; its key z' = z ⊙ mask_{t-1}) in one Triton
    launch per memory (`memplugins.modules.nse.read_kernel`, whose docstring says why it is equal)."""
    from memplugins.modules.nse.read_kernel import write_and_read

    k = query.size(-1)
    # q = H_{<t} o_t, computed by the first written memory's launch
    history = query.new_empty(query.size(0), t) if t > 0 and any(m.written for m in memories) else None
    decays, write_weights, coefficients = [], [], []
    for n, memory in enumerate(memories):
        saved = write_and_read(t, memory.initial_scores, memory.initial, slot_masks[n], written.decay[n],
                               written.weights[n], buffers.raw_keys[n][:, t - 1] if t > 0 else None,
                               step_masks[:, t - 1] if t > 0 else None, history, buffers.values,
                               buffers.raw_keys[n][:, t], buffers.retrieved[:, t, n * k : (n + 1) * k],
                               query=query if memory.written and not decays else None)
        if memory.written:
            decays.append(saved.decay)
            if t > 0:
                write_weights.append(saved.weights)
                coefficients.append(saved.coefficients)
    return StepState(history, decays, write_weights, coefficients)


def _write(t: int, step_keys: List[torch.Tensor], memories: Sequence[Memory], written: _Written) -> None:
    """(6), (14), (15) with the keys z' = z ⊙ mask_t: a ← a ⊙ (1 - z'), W ← [W ⊙ (1 - z'), z'] (the kernel's next
    launch does it on its own)."""
    for n, z in enumerate(step_keys):
        if memories[n].written:
            keep = 1 - z
            written.decay[n].mul_(keep)
            written.weights[n][:, :, :t] *= keep.unsqueeze(-1)
            written.weights[n][:, :, t] = z


def _forward(queries, composed, mask, dropout, compose_dropout, cell: CellWeights, compose: str,
             memories: Sequence[Memory], saved: Optional[List[StepState]]):
    batch_size, num_steps, k = queries.size()
    buffers = Buffers.allocate(queries, composed.size(-1), [m.initial.size(1) for m in memories])
    written = _Written(
        [queries.new_ones(batch_size, m.initial.size(1)) if m.written else None for m in memories],
        [queries.new_zeros(batch_size, m.initial.size(1), num_steps) if m.written else None for m in memories],
    )
    full_steps = step_is_full(mask)
    step_masks = mask.unsqueeze(-1).to(queries.dtype)
    kernel = triton_kernel_applies(queries, "memplugins.modules.nse.read_kernel")
    if kernel:  # the kernel reads rows of M_0 and the masks with unit stride
        memories = [m._replace(initial=m.initial.contiguous()) for m in memories]
        slot_masks = [m.mask.to(torch.uint8).contiguous() for m in memories]
    cell_weight = torch.cat([cell.weight_ih, cell.weight_hh], dim=1)  # [W_ih W_hh]: one product per step
    buffers.compose_input.copy_(composed)  # (4)'s o_t half; each step adds its reads' half in place
    for t in range(num_steps):
        if kernel:
            state = _kernel_read(t, queries[:, t], buffers, memories, written, slot_masks, step_masks)
        else:
            state = _read(t, queries[:, t], buffers, memories, written)
        _compose(t, buffers, cell, compose, compose_dropout)
        step_mask = None if full_steps[t] else step_masks[:, t]
        _cell(t, buffers, cell_weight, cell.bias, step_mask, dropout, kernel)
        if not kernel or t == num_steps - 1:  # the kernel's next launch does the write otherwise
            step_keys = [keys[:, t] for keys in buffers.raw_keys]
            _write(t, step_keys if step_mask is None else [z * step_mask for z in step_keys], memories, written)
        if saved is not None:
            saved.append(state)
    for raw_keys, keys in zip(buffers.raw_keys, buffers.keys):
        torch.mul(raw_keys, step_masks, out=keys)  # z', what each step wrote with
    decays = [d for d in written.decay if d is not None]
    weights = [w for w in written.weights if w is not None]
    return buffers.values, buffers.keys, decays, weights, buffers


class _Saved(NamedTuple):
    """What the backward reads (from the forward; it changes none of it)."""

    queries: torch.Tensor
    mask: torch.BoolTensor
    dropout: Optional[torch.Tensor]
    compose_dropout: Optional[torch.Tensor]
    cell: CellWeights
    compose: str
    written: Tuple[bool, ...]
    initial_scores: List[torch.Tensor]
    initials: List[torch.Tensor]
    buffers: Buffers
    steps: List[StepState]


def _forward_keeping(queries, composed, mask, dropout, compose_dropout, compose_weight, weight_ih, weight_hh, bias,
                     written, compose, *memory_tensors):
    """`_forward` with `_NseRecurrence.apply`'s flat arguments, keeping what the backward reads: (outputs, saved)."""
    count, steps = len(written), []
    cell = CellWeights(compose_weight, weight_ih, weight_hh, bias)
    values, keys, decays, weights, buffers = _forward(queries, composed, mask, dropout, compose_dropout, cell, compose,
                                                      Memory.regroup(written, memory_tensors), steps)
    saved = _Saved(queries, mask, dropout, compose_dropout, cell, compose, written, list(memory_tensors[:count]),
                   list(memory_tensors[count : 2 * count]), buffers, steps)
    return (values, *keys, *decays, *weights), saved


def _input_gradients(saved: _Saved, grads):
    """The gradients of `_NseRecurrence.apply`'s arguments, from the outputs' (values first)."""
    gradients = backward(*saved, grads[0], grads[1:])
    return (gradients.queries, gradients.compose_input, None, None, None, *gradients.weights, None, None,
            *gradients.initial_scores, *gradients.initials, *([None] * len(saved.written)))


class _NseRecurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx, queries, composed, mask, dropout, compose_dropout, compose_weight, weight_ih, weight_hh, bias,
                written, compose, *memory_tensors):
        outputs, saved = _forward_keeping(queries, composed, mask, dropout, compose_dropout, compose_weight,
                                          weight_ih, weight_hh, bias, written, compose, *memory_tensors)
        buffers = saved.buffers
        # the outputs go through save_for_backward (kept on ctx they would form a reference cycle with their graph)
        ctx.saved = saved._replace(queries=None, mask=None, dropout=None, compose_dropout=None, cell=None,
                                   initial_scores=None, initials=None, buffers=buffers._replace(values=None, keys=None))
        ctx.save_for_backward(queries, mask, dropout, compose_dropout, *saved.cell, buffers.values, *buffers.keys,
                              *saved.initial_scores, *saved.initials)
        return outputs

    @staticmethod
    @first_order_backward
    def backward(ctx, *grads):
        count = len(ctx.saved.written)
        queries, mask, dropout, compose_dropout, *rest = ctx.saved_tensors
        cell, values, keys = CellWeights(*rest[:4]), rest[4], rest[5 : 5 + count]
        initial_scores, initials = rest[5 + count : 5 + 2 * count], rest[5 + 2 * count :]
        saved = ctx.saved._replace(queries=queries, mask=mask, dropout=dropout, compose_dropout=compose_dropout,
                                   cell=cell, initial_scores=list(initial_scores), initials=list(initials),
                                   buffers=ctx.saved.buffers._replace(values=values, keys=list(keys)))
        return _input_gradients(saved, grads)


def _length_dims(args):
    """The lengths the graphs pad (`step_graphs`): T (group 0) and each memory's slot count l_n (group n + 1), in
    the arguments of `_NseRecurrence.apply` and in its outputs (values, keys, and the written memories' a_T and
    W_T). Padded steps and slots are masked, which changes no real output (the encoder's padding invariance)."""
    written = args[9]
    count = len(written)
    steps = {1: 0}
    arg_dims = [steps, steps, steps, *(steps if d is not None else {} for d in args[3:5]), {}, {}, {}, {}, {}, {}]
    arg_dims += [{1: n + 1, 2: 0} for n in range(count)]  # S0: (B, l, T)
    arg_dims += [{1: n + 1} for n in range(count)] * 2  # M_0: (B, l, k); slot masks: (B, l)
    written_memories = [n for n in range(count) if written[n]]
    output_dims = [steps] + [{1: 0, 2: n + 1} for n in range(count)]  # values (B, T, k); keys (B, T, l)
    output_dims += [{1: n + 1} for n in written_memories] + [{1: n + 1, 2: 0} for n in written_memories]
    return arg_dims, output_dims


# the CUDA graphs of this loop (`step_graphs`)
_GRAPHS = StepGraphs("nse", _forward_keeping, _input_gradients, length_dims=_length_dims)


def nse_recurrence(
    queries: torch.Tensor,
    composed: torch.Tensor,
    mask: torch.BoolTensor,
    dropout: Optional[torch.Tensor],
    memories: Sequence[Memory],
    cell: CellWeights,
    compose: str,
    compose_dropout: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, List[torch.Tensor], List[torch.Tensor], List[torch.Tensor]]:
    """
    queries: o_t `(B, T, k)` (β_t o_t with the encoder's `key_strength`: only eq. 2 and 10 read them); composed:
    the o_t half of (4) with its bias `(B, T, c)`; mask `(B, T)`; dropout: a scaled dropout mask for h_t `(B, T, k)`
    or None; memories: a `Memory` each; cell: W_m `(c, N k)` and the write
    LSTMCell's weights; compose: "relu" or "linear"; compose_dropout: a scaled dropout mask for c_t as f_w's input
    `(B, T, c)` or None. Returns the written values (h_t after dropout, 0 at padding)
    `(B, T, k)`, the keys z' per memory `(B, T, l)`, and per written memory a_T `(B, l)` and W_T `(B, l, T)`.
    """
    written = tuple(bool(m.written) for m in memories)
    outputs = run_fast_path(_NseRecurrence, _forward_flat, queries, composed, mask, dropout, compose_dropout, *cell,
                            written, compose, *Memory.flatten(memories), graphs=_GRAPHS)
    count, num_written = len(memories), sum(written)
    values, keys, rest = outputs[0], list(outputs[1 : 1 + count]), outputs[1 + count :]
    return values, keys, list(rest[:num_written]), list(rest[num_written : 2 * num_written])


def _forward_flat(queries, composed, mask, dropout, compose_dropout, compose_weight, weight_ih, weight_hh, bias,
                  written, compose, *memory_tensors):
    """`_forward` with `_NseRecurrence.apply`'s flat arguments (the contract's forward without a graph); the last
    argument is the contract's `saved` (None)."""
    *memory_tensors, saved = memory_tensors
    values, keys, decays, weights, _ = _forward(queries, composed, mask, dropout, compose_dropout,
                                                CellWeights(compose_weight, weight_ih, weight_hh, bias), compose,
                                                Memory.regroup(written, memory_tensors), saved)
    return (values, *keys, *decays, *weights)
