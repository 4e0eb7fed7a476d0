"""
The LSTMN layer's recurrence (Cheng et al. 2016, eq. 4-9; the package docstring documents every equation and
choice) as one autograd Function with a hand-written backward pass: the fast path `LstmnLayer.forward` takes. Its
reference is the literal per-example form of eq. 4-9 in `reference.py`, and `tests/modules/lstmn/fast_test.py`
compares the two (outputs, attention and every gradient, padded, with a memory addend); the contract test
(`tests/modules/fast_path/contract_test.py`) covers autocast, `no_grad`, retained graphs, `create_graph` and DDP for
every fast path.

Why it is equal: the forward pass below runs the reference's operations in the same order (the tape, the key tape
W_h h_i and the summaries are written into preallocated (B, T, .) buffers instead of being re-stacked every step,
which changes no value), and the backward pass is the chain rule of those operations, step by step in reverse:

    h_t = o ⊙ tanh(c_t):        g_o = g_h ⊙ tanh(c_t);  g_c += g_h ⊙ o ⊙ (1 - tanh²(c_t))
    c_t = f ⊙ c~_t + i ⊙ ĉ (+m): g_f = g_c ⊙ c~_t, g_i = g_c ⊙ ĉ, g_ĉ = g_c ⊙ i, g_c~ = g_c ⊙ f, g_m = g_c
    gates (7):                  pre-activation gradients σ' = σ(1 - σ), tanh' = 1 - tanh²; g_h~ = g_P W_s
    [h~; c~] = Σ_i s_i [h_i; c_i] (6):  g_s_i = <[h_i; c_i], [g_h~; g_c~]>;  g_[h_i; c_i] += s_i [g_h~; g_c~]
    softmax (5):                g_a = s ⊙ (g_s - <s, g_s>)
    a_i = v^T u_i, u_i = tanh(W_h h_i + q_t) (4):  g_v += Σ_i g_a_i u_i;  g_pre_i = (1 - u_i²) ⊙ g_a_i v;
                                g_(W_h h_i) += g_pre_i;  g_q_t = Σ_i g_pre_i
    q_t = W_x x_t + W_h~ h~_{t-1}: g_(W_x x_t) = g_q_t, and g_q_t flows to h~_{t-1}'s projection at step t-1
    a_{t-1} += β (the optional recency score, `LstmnLayer`'s doc; not the paper's):  g_β = Σ_t Σ_b g_a_{t-1}^t

A step's backward runs after every later step's, so the gradients that later reads add to h_t, c_t and W_h h_t
are complete when step t is reached. The weight gradients of the two per-step products (W_h h_t and
W_s h~_t, W_s = [the h~ part of W; W_h~]) are formed once, as one product over all steps and the batch, instead of
T small ones; the products on x (W_x x_t, the x part of W) are outside the Function, batched over all t.

One rewrite of (4): tanh(x) = 2σ(2x) - 1, so a_i = 2 v^T σ(2 (W_h h_i + q_t)) - Σ_j v_j. The constant is the same
for every slot and softmax (5) ignores it, so the scores are taken as 2 v^T σ(2 (...)) (the key tape holds 2 W_h h_i):
equal up to rounding, and σ costs a third of tanh on the CPU (torch's vectorised tanh is the slower kernel). In the
backward, 1 - u² = 4σ(1 - σ) and g_v = Σ_i g_a_i (2σ_i - 1) = 2 Σ_i g_a_i σ_i, because each row of g_a sums to 0.

What it saves over autograd: no per-step re-stacking of the tapes (O(T²) copies forward, as many gradient
accumulations backward), no graph node per operation, and one weight-gradient product per weight. It keeps what
autograd would: each step's σ(2 (W_h h_i + q_t)) (B, t, h), needed for the backward.

Mixed precision, `no_grad`, retained graphs and `create_graph`: the fast-path contract
(`memplugins.modules.fast_path.contract`); the batched products on x outside the Function stay autocast's.

On CUDA (float32 or float64), each step's read of the tape (eq. 4-6) and its backward are one Triton launch each
instead of about seven and ten (`tape_read_kernel.py`, which says why they are equal), and so are the cell's eq. 7-9 forward and backward
(`memplugins.modules.fast_path.cell_kernel`); the "eager" backend turns them off. Under
`TRITON_INTERPRET=1` the kernels also run on CPU tensors, through Triton's interpreter: that is how the default
tests check them without a GPU (slowly: not for training).
"""
from typing import List, NamedTuple, Optional, Tuple

import torch

from memplugins.modules.fast_path.contract import (
    first_order_backward,
    lstm_cell_backward,
    run_fast_path,
    triton_kernel_applies,
)
from memplugins.modules.fast_path.step_graphs import StepGraphs, step_is_full


def tape_read_kernel_applies(tensor: torch.Tensor) -> bool:
    """Whether the Triton read (module doc) runs for this tensor."""
    return triton_kernel_applies(tensor, "memplugins.modules.lstmn.tape_read_kernel")


class StepRead(NamedTuple):
    """What step t's read of the tape (eq. 4-6) keeps for the backward."""

    activation: torch.Tensor  # σ(2 (W_h h_i + q_t)), (B, t, h)
    weights: torch.Tensor  # s^t, (B, t)


def _recurrence(
    query_from_input: torch.Tensor,
    gates_from_input: torch.Tensor,
    addend: Optional[torch.Tensor],
    mask: torch.BoolTensor,
    key_weight: torch.Tensor,
    scorer: torch.Tensor,
    summary_weight: torch.Tensor,
    recency: Optional[torch.Tensor],
    saved: Optional[List[StepRead]],
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    batch_size, num_steps, hidden = query_from_input.size()
    tape = query_from_input.new_zeros(batch_size, num_steps, 2 * hidden)  # [h_t; c_t]
    keys = query_from_input.new_zeros(batch_size, num_steps, hidden)  # W_h h_t
    summaries = query_from_input.new_zeros(batch_size, num_steps, 2 * hidden)  # [h~_t; c~_t]; row 0 stays 0
    activations = query_from_input.new_empty(batch_size, num_steps, 4 * hidden)  # σ(i), σ(f), σ(o), tanh(ĉ)
    memory_tanh = query_from_input.new_empty(batch_size, num_steps, hidden)
    attention = query_from_input.new_zeros(batch_size, num_steps, num_steps)
    step_masks = mask.unsqueeze(-1).to(query_from_input.dtype)
    full_steps = step_is_full(mask)
    lowest = torch.finfo(query_from_input.dtype).min
    summary_query = query_from_input.new_zeros(batch_size, hidden)  # W_h~ h~_0 = 0
    kernel = tape_read_kernel_applies(query_from_input)
    if kernel:
        from memplugins.modules.lstmn.tape_read_kernel import tape_read_forward

        valid, scorer = mask.to(torch.uint8).contiguous(), scorer.contiguous()
    for t in range(num_steps):
        if t > 0:
            # (4) as 2 v^T σ(2 (W_h h_i + W_x x_t + W_h~ h~_{t-1})), up to a constant (module doc); `keys` holds
            # 2 W_h h_i and the query is doubled here
            query = 2 * (query_from_input[:, t] + summary_query)
            if kernel:  # (4)-(6) in one launch
                activation, weights = tape_read_forward(keys, query, scorer, tape, valid, t, summaries[:, t],
                                                        recency)
            else:
                activation = torch.sigmoid(keys[:, :t] + query.unsqueeze(1))
                scores = activation.matmul(2 * scorer)
                if recency is not None:  # β on the most recent slot (module doc)
                    scores[:, t - 1] += recency
                scores.masked_fill_(~mask[:, :t], lowest)
                weights = torch.softmax(scores, dim=-1)  # (5)
                summaries[:, t] = torch.bmm(weights.unsqueeze(1), tape[:, :t]).squeeze(1)  # (6)
            attention[:, t, :t] = weights
            if saved is not None:
                saved.append(StepRead(activation, weights))
        projected = summaries[:, t, :hidden].mm(summary_weight.t())  # h~ part of (7), and W_h~ h~_t for step t+1
        step_mask = None if full_steps[t] else step_masks[:, t]
        output = _cell(t, projected, gates_from_input, summaries, addend, step_mask, activations, memory_tanh, tape,
                       kernel)
        if step_mask is None:
            summary_query = projected[:, 4 * hidden :]
        else:  # padding: zero outputs (in `_cell`), and h~ (so the next query) unchanged
            summary_query = torch.where(mask[:, t, None], projected[:, 4 * hidden :], summary_query)
            attention[:, t] *= step_mask
        keys[:, t] = output.mm(key_weight.t()).mul_(2)
    return tape, attention, keys, summaries, activations, memory_tanh


def _cell(t, projected, gates_from_input, summaries, addend, step_mask, activations, memory_tanh, tape, kernel):
    """(7)-(9) for step t, padding (step_mask, or None when no sequence is padded at t) zeroing h_t and c_t: writes
    the activations, tanh(c_t) and the tape's slot t, returns h_t (a view of the tape). With `kernel`, in one
    Triton launch (`memplugins.modules.fast_path.cell_kernel`)."""
    hidden = memory_tanh.size(-1)
    if kernel and gates_from_input.stride(-1) == 1 and (addend is None or addend.stride(-1) == 1):
        from memplugins.modules.fast_path.cell_kernel import lstm_cell_forward_kernel

        lstm_cell_forward_kernel(gates_from_input[:, t], projected, summaries[:, t, hidden:],
                                 addend[:, t] if addend is not None else None, step_mask, activations[:, t],
                                 memory_tanh[:, t], tape[:, t, :hidden], tape[:, t, hidden:], candidate_block=3)
        return tape[:, t, :hidden]
    gates = gates_from_input[:, t] + projected[:, : 4 * hidden]  # (7)
    step_activations = activations[:, t]
    torch.sigmoid(gates[:, : 3 * hidden], out=step_activations[:, : 3 * hidden])
    torch.tanh(gates[:, 3 * hidden :], out=step_activations[:, 3 * hidden :])
    input_gate, forget_gate, output_gate, candidate = step_activations.chunk(4, dim=-1)
    memory = torch.addcmul(forget_gate * summaries[:, t, hidden:], input_gate, candidate)  # (8)
    if addend is not None:
        memory = memory + addend[:, t]
    torch.tanh(memory, out=memory_tanh[:, t])
    output = output_gate * memory_tanh[:, t]  # (9)
    if step_mask is not None:
        output = output * step_mask
        memory = memory * step_mask
    tape[:, t, :hidden] = output
    tape[:, t, hidden:] = memory
    return output


class _Saved(NamedTuple):
    """What the backward reads (from the forward; it changes none of it)."""

    tape: torch.Tensor
    summaries: torch.Tensor
    activations: torch.Tensor
    memory_tanh: torch.Tensor
    mask: torch.BoolTensor
    key_weight: torch.Tensor
    scorer: torch.Tensor
    summary_weight: torch.Tensor
    recency: Optional[torch.Tensor]
    reads: List[StepRead]
    has_addend: bool


class _LstmnRecurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx, query_from_input, gates_from_input, addend, mask, key_weight, scorer, summary_weight, recency):
        (tape, attention), saved = _forward_keeping(query_from_input, gates_from_input, addend, mask, key_weight,
                                                    scorer, summary_weight, recency)
        ctx.reads, ctx.has_addend = saved.reads, saved.has_addend
        ctx.save_for_backward(*saved[:9])  # the tensors (the tape is an output: kept on ctx it would form a cycle)
        ctx.mark_non_differentiable(attention)
        return tape, attention

    @staticmethod
    @first_order_backward
    def backward(ctx, grad_tape: Optional[torch.Tensor], _grad_attention):
        return _backward(_Saved(*ctx.saved_tensors, ctx.reads, ctx.has_addend), grad_tape)


def _forward_keeping(query_from_input, gates_from_input, addend, mask, key_weight, scorer, summary_weight, recency):
    """`_recurrence`, keeping what the backward reads: ((tape, attention), saved)."""
    reads: List[StepRead] = []
    tape, attention, _keys, summaries, activations, memory_tanh = _recurrence(
        query_from_input, gates_from_input, addend, mask, key_weight, scorer, summary_weight, recency, reads
    )
    saved = _Saved(tape, summaries, activations, memory_tanh, mask, key_weight, scorer, summary_weight, recency,
                   reads, addend is not None)
    return (tape, attention), saved


def _backward(saved: _Saved, grad_tape: Optional[torch.Tensor]):
    (tape, summaries, activations, memory_tanh, mask, key_weight, scorer, summary_weight, recency, reads,
     has_addend) = saved
    kernel = tape_read_kernel_applies(tape)
    batch_size, num_steps, double_hidden = tape.size()
    hidden = double_hidden // 2
    # accumulators: gradients of the tape, of the key tape and of the step's projections (7)
    grad_tape = grad_tape.contiguous().clone() if grad_tape is not None else tape.new_zeros(tape.size())
    grad_keys = tape.new_zeros(batch_size, num_steps, hidden)
    grad_projected = tape.new_zeros(batch_size, num_steps, 5 * hidden)
    grad_query_from_input = tape.new_zeros(batch_size, num_steps, hidden)
    grad_addend = tape.new_zeros(batch_size, num_steps, hidden) if has_addend else None
    grad_scorer = torch.zeros_like(scorer)
    grad_summary_query = tape.new_zeros(batch_size, hidden)  # of W_h~ h~_t, from step t+1's query
    # β's gradient, step by step: g_a of slot t-1 at step t (column 0 stays 0: step 1 reads nothing)
    grad_recency_steps = tape.new_zeros(batch_size, num_steps) if recency is not None else None
    full_steps = step_is_full(mask)
    if kernel:
        from memplugins.modules.lstmn.tape_read_kernel import tape_read_backward

        grad_scorer_rows = tape.new_zeros(batch_size, hidden)
    for t in reversed(range(num_steps)):
        grad_output = torch.addmm(grad_tape[:, t, :hidden], grad_keys[:, t], key_weight)  # + the key W_h h_t
        grad_memory = grad_tape[:, t, hidden:]
        if full_steps[t]:
            grad_projected[:, t, 4 * hidden :] = grad_summary_query
            grad_summary_query = torch.zeros_like(grad_summary_query)
        else:
            step_mask = mask[:, t, None]
            grad_output = grad_output * step_mask
            grad_memory = grad_memory * step_mask
            grad_projected[:, t, 4 * hidden :] = grad_summary_query * step_mask
            grad_summary_query = grad_summary_query * ~step_mask
        input_gate, forget_gate, output_gate, candidate = activations[:, t].chunk(4, dim=-1)
        grad_i, grad_f, grad_o, grad_candidate = grad_projected[:, t, : 4 * hidden].chunk(4, dim=-1)
        # (9), (8), (7): pre-activation gradients written in place into grad_projected
        grad_memory, grad_summary_memory = lstm_cell_backward(
            grad_output, grad_memory, input_gate, forget_gate, candidate, output_gate, summaries[:, t, hidden:],
            memory_tanh[:, t], (grad_i, grad_f, grad_candidate, grad_o), kernel=kernel,
        )
        if grad_addend is not None:
            grad_addend[:, t] = grad_memory
        if t == 0:
            break  # h~_1 = c~_1 = 0: nothing was read
        grad_summary = torch.cat([grad_projected[:, t].mm(summary_weight), grad_summary_memory], dim=-1)
        activation, weights = reads[t - 1]
        if kernel:  # (6), (5), (4) in one launch
            tape_read_backward(grad_summary, tape, weights, activation, scorer, grad_tape, grad_keys,
                               grad_query_from_input[:, t], grad_scorer_rows, t,
                               grad_recency_steps[:, t] if recency is not None else None)
            grad_summary_query = grad_summary_query + grad_query_from_input[:, t]
            continue
        # (6)
        # (the vector on the left: bmm of a (t, 2h) matrix by a column vector is several times slower)
        grad_weights = torch.bmm(grad_summary.unsqueeze(1), tape[:, :t].transpose(1, 2)).squeeze(1)
        grad_tape[:, :t].addcmul_(weights.unsqueeze(2), grad_summary.unsqueeze(1))
        # (5)
        grad_scores = weights * (grad_weights - (weights * grad_weights).sum(-1, keepdim=True))
        if recency is not None:  # β was added to slot t-1's score: its gradient is that score's
            grad_recency_steps[:, t] = grad_scores[:, t - 1]
        # (4) with u = 2σ - 1: g_v = Σ g_a (2σ - 1) = 2 Σ g_a σ (each row of g_a sums to 0), 1 - u² = 4σ(1 - σ)
        grad_scorer += grad_scores.reshape(1, -1).mm(activation.reshape(-1, hidden)).squeeze(0)
        grad_pre = torch.addcmul(activation, activation, activation, value=-1)
        grad_pre *= (4 * grad_scores).unsqueeze(-1)
        grad_pre *= scorer
        grad_keys[:, :t] += grad_pre
        grad_query = grad_pre.sum(1)
        grad_query_from_input[:, t] = grad_query
        grad_summary_query = grad_summary_query + grad_query
    if kernel:
        grad_scorer = grad_scorer_rows.sum(0)
    grad_scorer *= 2
    flat_outputs = tape[..., :hidden].reshape(-1, hidden)
    grad_key_weight = grad_keys.reshape(-1, hidden).t().mm(flat_outputs)
    grad_summary_weight = grad_projected.reshape(-1, 5 * hidden).t().mm(summaries[..., :hidden].reshape(-1, hidden))
    grad_gates_from_input = grad_projected[..., : 4 * hidden]
    grad_recency = grad_recency_steps.sum() if recency is not None else None
    return (grad_query_from_input, grad_gates_from_input, grad_addend, None,
            grad_key_weight, grad_scorer, grad_summary_weight, grad_recency)


def _length_dims(args):
    """T (length group 0) is dimension 1 of the (B, T, .) inputs and the mask, of the tape, and dimensions 1 and 2
    of the attention."""
    steps = {1: 0}
    return [steps, steps, steps if args[2] is not None else {}, steps, {}, {}, {}, {}], [steps, {1: 0, 2: 0}]


# the CUDA graphs of this loop (`step_graphs`)
_GRAPHS = StepGraphs("lstmn", _forward_keeping, lambda saved, grads: _backward(saved, grads[0]),
                     non_differentiable=(1,), length_dims=_length_dims)


def lstmn_recurrence(
    query_from_input: torch.Tensor,
    gates_from_input: torch.Tensor,
    addend: Optional[torch.Tensor],
    mask: torch.BoolTensor,
    key_weight: torch.Tensor,
    scorer: torch.Tensor,
    summary_weight: torch.Tensor,
    recency: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    query_from_input: W_x x_t `(B, T, h)`; gates_from_input: the x part of (7) plus b `(B, T, 4h)`; addend: m_t of
    (8) `(B, T, h)` or None; mask `(B, T)`; key_weight W_h `(h, h)`; scorer v `(h,)`; summary_weight
    [the h~ part of W; W_h~] `(5h, h)`; recency: β `()`, added to slot t-1's score at every step t, or None (the
    paper's eq. 4). Returns the tape [h_t; c_t] `(B, T, 2h)` (0 at padding) and the attention `(B, T, T)` (not
    differentiable).
    """
    tape, attention, *_ = run_fast_path(_LstmnRecurrence, _recurrence, query_from_input, gates_from_input, addend,
                                        mask, key_weight, scorer, summary_weight, recency, graphs=_GRAPHS)
    return tape, attention
