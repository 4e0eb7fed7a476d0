"""
The NSE encoder's read-compose-write loop (Munkhdalai and Yu 2017, eq. 2-6 and, with extra memories, 10-15; the
equations and masking are documented in `memplugins.encoders.nse`) as one autograd Function with a hand-written
backward: the fast path `NseEncoder` takes (one write-LSTM layer; deeper f_w runs the reference). The reference,
`NseEncoder.reference_encode`, is the same loop written with autograd and the factored memory of
`memplugins.modules.factored_memory` (itself tested against the step-by-step memory of eq. 2-3 / 6), and
`tests/modules/nse_recurrence_test.py` compares the two: outputs, keys, final memories and every gradient, with
padding, extra memories written or read-only, dropout, under autocast and through a retained graph.

The memories are kept in the factored form M_t = diag(a_t) M_0 + W_t H_t (a_t: decay, W_t: l × t write weights, H_t:
the written values). Step t, for each memory, with o_t the read LSTM's output (computed before the loop) and
S0_t = M_0 o_t (all t at once, outside):

    q = H_{<t} o_t;   s = a ⊙ S0_t + W q;   z = softmax(s) over real slots          (2), (10)
    r = (z ⊙ a)^T M_0 + (z^T W) H_{<t}                                            (3), (11)
    c_t = f_c(C_o o_t + b + W_m [r^1; ...; r^N])                                  (4), (12)   (the o_t half outside)
    h_t = LSTMCell(c_t, state);  value v_t = dropout(h_t) ⊙ mask_t                 (5), (13)
    a ← a ⊙ (1 - z'),  W ← [W ⊙ (1 - z'), z'],  H_t = [H_{<t}; v_t],  z' = z ⊙ mask_t   (6), (14), (15)

Why the backward is equal: it is the chain rule of exactly these operations, step by step in reverse. The adjoint
of the write is g_a ← g_a ⊙ (1 - z'), g_W ← g_W[:, :t] ⊙ (1 - z'), g_z' = g_W[:, t] - <g_W[:, :t], W> - g_a ⊙ a; of
the reads g_(z⊙a) M_0 part, g_z += (M_0 g_r) ⊙ a + W^T (H g_r) , g_W += z (H g_r)^T, softmax g_s = z ⊙ (g_z - <z, g_z>),
g_a += g_s ⊙ S0_t + (M_0 g_r) ⊙ z, g_W += g_s q^T, g_q = W^T g_s, g_o_t += g_q H_{<t}. The gradient of a written value
v_s collects every later step's reads of it (Σ_{t>s} g_q,t[s] o_t + Σ_{t>s} (z^T W)_t[s] g_r,t), which are all
recorded when step s is reached. M_0's gradient Σ_t (z ⊙ a)_t g_r,t^T and the weight gradients of the per-step
products (W_m, the write LSTM's) are each one product over all steps.

What it saves over autograd: 60-odd graph nodes per step (the write LSTM's cell, the compose layer, the memory reads
and writes), which at B = 32, k = 300 cost about as much as their arithmetic. The final memories are formed
outside, from the returned a_T, W_T and values, with autograd. Under autocast the loop runs in float32
(`memplugins.modules.autocast`); a second backward through a retained graph works; `create_graph=True` raises.
Dropout on h_t uses a mask drawn for all steps before the loop (the same distribution as per-step dropout).
"""
from typing import List, Optional, Sequence, Tuple

import torch

from memplugins.modules.autocast import autocast_disabled, autocast_enabled

COMPOSE = ("relu", "linear")


class _Saved:
    def __init__(self) -> None:
        self.history_scores: List[torch.Tensor] = []  # q_t = H_{<t} o_t, (B, t)
        self.decays: List[List[torch.Tensor]] = []  # per step, per written memory: a_{t-1}
        self.write_weights: List[List[torch.Tensor]] = []  # per step, per written memory: W_{t-1} (B, l, t)
        self.coefficients: List[List[torch.Tensor]] = []  # per step, per written memory: z^T W_{t-1} (B, t)


def _forward(queries, composed, mask, dropout, initial_scores, initials, memory_masks, written, compose_weight,
             weight_ih, weight_hh, bias, compose, saved: Optional[_Saved]):
    batch_size, num_steps, k = queries.size()
    # (buffers written at every step before they are read: allocated without zero-filling)
    values = queries.new_empty(batch_size, num_steps, k)  # H: the written v_t
    raw_keys = [queries.new_empty(batch_size, num_steps, m.size(1)) for m in initials]  # z (before the step mask)
    keys = [queries.new_empty(batch_size, num_steps, m.size(1)) for m in initials]  # z' = z ⊙ mask_t
    decay = [queries.new_ones(batch_size, m.size(1)) if w else None for m, w in zip(initials, written)]
    weights = [queries.new_zeros(batch_size, m.size(1), num_steps) if w else None for m, w in zip(initials, written)]
    retrieved = queries.new_empty(batch_size, num_steps, k * len(initials))
    compose_input = queries.new_empty(batch_size, num_steps, composed.size(-1))  # f_c's pre-activation
    composed_out = queries.new_empty(batch_size, num_steps, composed.size(-1))  # c_t
    gate_values = queries.new_empty(batch_size, num_steps, 4 * k)  # σ(i), σ(f), tanh(g), σ(o)
    previous_hidden = queries.new_empty(batch_size, num_steps, k)
    previous_memory = queries.new_empty(batch_size, num_steps, k)
    memory_tanh = queries.new_empty(batch_size, num_steps, k)
    lowest = torch.finfo(queries.dtype).min
    not_masked = [~m for m in memory_masks]
    step_is_full = mask.all(0).tolist()
    step_masks = mask.unsqueeze(-1).to(queries.dtype)
    hidden = queries.new_zeros(batch_size, k)
    memory = queries.new_zeros(batch_size, k)
    compose_weight_t, weight_ih_t, weight_hh_t = compose_weight.t(), weight_ih.t(), weight_hh.t()
    for t in range(num_steps):
        query = queries[:, t]
        history_scores = None
        if t > 0:
            history_scores = torch.bmm(query.unsqueeze(1), values[:, :t].transpose(1, 2)).squeeze(1)
        step_decays, step_weights, step_coefficients = [], [], []
        for n, (initial, memory_mask) in enumerate(zip(initials, memory_masks)):
            scores = initial_scores[n][:, :, t]
            if written[n] and t > 0:
                scores = scores * decay[n] + torch.bmm(history_scores.unsqueeze(1),
                                                       weights[n][:, :, :t].transpose(1, 2)).squeeze(1)
            z = torch.softmax(scores.masked_fill(not_masked[n], lowest), dim=-1).mul_(memory_mask)  # (2)
            raw_keys[n][:, t] = z
            read = retrieved[:, t, n * k : (n + 1) * k]
            weighted = z * decay[n] if written[n] else z
            read.copy_(torch.bmm(weighted.unsqueeze(1), initial).squeeze(1))  # (3): the M_0 part
            if written[n]:
                step_decays.append(decay[n].clone())
                if t > 0:
                    coefficients = torch.bmm(z.unsqueeze(1), weights[n][:, :, :t]).squeeze(1)
                    read += torch.bmm(coefficients.unsqueeze(1), values[:, :t]).squeeze(1)  # (3): the H part
                    step_weights.append(weights[n][:, :, :t].clone())
                    step_coefficients.append(coefficients)
        pre = torch.addmm(composed[:, t], retrieved[:, t], compose_weight_t)  # (4)
        compose_input[:, t] = pre
        c_t = torch.relu(pre) if compose == "relu" else pre
        composed_out[:, t] = c_t
        gates = torch.addmm(bias, c_t, weight_ih_t).addmm_(hidden, weight_hh_t)  # (5): LSTMCell
        step_gates = gate_values[:, t]
        torch.sigmoid(gates, out=step_gates)
        torch.tanh(gates[:, 2 * k : 3 * k], out=step_gates[:, 2 * k : 3 * k])
        input_gate, forget_gate, cell_gate, output_gate = step_gates.chunk(4, dim=-1)
        previous_hidden[:, t] = hidden
        previous_memory[:, t] = memory
        new_memory = torch.addcmul(forget_gate * memory, input_gate, cell_gate)
        torch.tanh(new_memory, out=memory_tanh[:, t])
        new_hidden = output_gate * memory_tanh[:, t]
        value = new_hidden * dropout[:, t] if dropout is not None else new_hidden
        if step_is_full[t]:
            hidden, memory = new_hidden, new_memory
            step_keys = [raw_keys[n][:, t] for n in range(len(initials))]
        else:
            step_mask = step_masks[:, t]
            hidden = torch.where(mask[:, t, None], new_hidden, hidden)
            memory = torch.where(mask[:, t, None], new_memory, memory)
            value = value * step_mask
            step_keys = [raw_keys[n][:, t] * step_mask for n in range(len(initials))]
        values[:, t] = value
        for n, z in enumerate(step_keys):  # (6), (14), (15)
            keys[n][:, t] = z
            if written[n]:
                keep = 1 - z
                decay[n] *= keep
                weights[n][:, :, :t] *= keep.unsqueeze(-1)
                weights[n][:, :, t] = z
        if saved is not None:
            saved.history_scores.append(history_scores)
            saved.decays.append(step_decays)
            saved.write_weights.append(step_weights)
            saved.coefficients.append(step_coefficients)
    buffers = (raw_keys, retrieved, compose_input, composed_out, gate_values, previous_hidden, previous_memory,
               memory_tanh)
    return values, keys, [d for d in decay if d is not None], [w for w in weights if w is not None], buffers


class _NseRecurrence(torch.autograd.Function):
    @staticmethod
    def forward(ctx, queries, composed, mask, dropout, compose_weight, weight_ih, weight_hh, bias, written, compose,
                *memory_tensors):
        count = len(written)
        initial_scores, initials, memory_masks = (memory_tensors[:count], memory_tensors[count : 2 * count],
                                                  memory_tensors[2 * count :])
        saved = _Saved()
        values, keys, decays, weights, buffers = _forward(
            queries, composed, mask, dropout, initial_scores, initials, memory_masks, written, compose_weight,
            weight_ih, weight_hh, bias, compose, saved
        )
        ctx.saved, ctx.written, ctx.compose = saved, written, compose
        ctx.buffers = buffers
        ctx.save_for_backward(queries, mask, dropout, compose_weight, weight_ih, weight_hh, values, *keys,
                              *initial_scores, *initials)
        return (values, *keys, *decays, *weights)

    @staticmethod
    def backward(ctx, grad_values, *grads):
        if torch.is_grad_enabled():
            raise RuntimeError("nse: the recurrence's backward is not differentiable (no double backward); "
                               "use NseEncoder.reference_encode for higher-order gradients")
        written, count = ctx.written, len(ctx.written)
        num_written = sum(written)
        queries, mask, dropout, compose_weight, weight_ih, weight_hh, values, *rest = ctx.saved_tensors
        keys, initial_scores, initials = rest[:count], rest[count : 2 * count], rest[2 * count :]
        grad_keys = grads[:count]
        grad_decays = list(grads[count : count + num_written])
        grad_weights = list(grads[count + num_written :])
        raw_keys, retrieved, compose_input, composed_out, gate_values, previous_hidden, previous_memory, \
            memory_tanh = ctx.buffers
        saved: _Saved = ctx.saved
        batch_size, num_steps, k = queries.size()
        grad_values = grad_values if grad_values is not None else queries.new_zeros(queries.size())
        # adjoints of the state after the step being processed
        written_index = [sum(written[:n]) if written[n] else None for n in range(count)]
        decay_adjoint = [
            (grad_decays[written_index[n]].clone() if grad_decays[written_index[n]] is not None
             else queries.new_zeros(batch_size, initials[n].size(1))) if written[n] else None
            for n in range(count)
        ]
        weight_adjoint = [
            (grad_weights[written_index[n]].clone() if grad_weights[written_index[n]] is not None
             else queries.new_zeros(batch_size, initials[n].size(1), num_steps)) if written[n] else None
            for n in range(count)
        ]
        grad_hidden = queries.new_zeros(batch_size, k)
        grad_memory = queries.new_zeros(batch_size, k)
        # (buffers written at every step before they are read: allocated without zero-filling)
        grad_queries = queries.new_empty(queries.size())
        grad_queries[:, 0] = 0  # o_1 reads no history
        grad_initial_scores = [torch.empty_like(s) for s in initial_scores]
        grad_retrieved = queries.new_empty(retrieved.size())
        grad_gates_all = queries.new_empty(batch_size, num_steps, 4 * k)
        grad_compose_input = queries.new_empty(compose_input.size())
        read_weights = [queries.new_empty(batch_size, num_steps, m.size(1)) for m in initials]  # z ⊙ a (for M_0)
        # [t, s]: the gradient of step t's read of value s, through q (with o_t) and through z^T W (with g_r)
        query_grads = queries.new_zeros(batch_size, num_steps, num_steps)
        coefficient_rows = [queries.new_zeros(batch_size, num_steps, num_steps) if w else None for w in written]
        step_is_full = mask.all(0).tolist()
        step_masks = mask.unsqueeze(-1).to(queries.dtype)
        for t in reversed(range(num_steps)):
            step_mask = step_masks[:, t]
            full = step_is_full[t]
            # the written value v_t: its output gradient plus every later read of it
            grad_value = grad_values[:, t]
            if t + 1 < num_steps:
                later = query_grads[:, t + 1 :, t].unsqueeze(1).contiguous()
                grad_value = grad_value + torch.bmm(later, queries[:, t + 1 :]).squeeze(1)
                for n in range(count):
                    if written[n]:
                        later = coefficient_rows[n][:, t + 1 :, t].unsqueeze(1).contiguous()
                        grad_value = grad_value + torch.bmm(later, grad_retrieved[:, t + 1 :, n * k : (n + 1) * k]
                                                            ).squeeze(1)
            # the writes (6), (14), (15), in reverse
            grad_z = []
            step_decays = saved.decays[t]
            step_weights = saved.write_weights[t]
            for n in range(count):
                z_masked = keys[n][:, t]
                g = grad_keys[n][:, t].clone() if grad_keys[n] is not None else torch.zeros_like(z_masked)
                if written[n]:
                    i = written_index[n]
                    decay_before = step_decays[i]
                    g -= decay_adjoint[n] * decay_before
                    g += weight_adjoint[n][:, :, t]
                    if t > 0:
                        g -= (weight_adjoint[n][:, :, :t] * step_weights[i]).sum(-1)
                        weight_adjoint[n][:, :, :t] *= (1 - z_masked).unsqueeze(-1)
                    decay_adjoint[n] *= 1 - z_masked
                grad_z.append(g if full else g * step_mask)
            # the write LSTM (5)
            input_gate, forget_gate, cell_gate, output_gate = gate_values[:, t].chunk(4, dim=-1)
            grad_new_hidden = grad_value * dropout[:, t] if dropout is not None else grad_value
            if full:
                grad_new_hidden = grad_new_hidden + grad_hidden
                grad_new_memory = grad_memory
                grad_hidden_before = grad_memory_before = None
            else:
                grad_new_hidden = (grad_new_hidden + grad_hidden) * step_mask
                grad_new_memory = grad_memory * step_mask
                grad_hidden_before, grad_memory_before = grad_hidden * (1 - step_mask), grad_memory * (1 - step_mask)
            tanh_memory = memory_tanh[:, t]
            grad_new_memory = grad_new_memory + grad_new_hidden * output_gate * (1 - tanh_memory * tanh_memory)
            grad_gates = grad_gates_all[:, t]
            g_i, g_f, g_g, g_o = grad_gates.chunk(4, dim=-1)
            torch.mul(grad_new_memory * cell_gate, input_gate * (1 - input_gate), out=g_i)
            torch.mul(grad_new_memory * previous_memory[:, t], forget_gate * (1 - forget_gate), out=g_f)
            torch.mul(grad_new_memory * input_gate, 1 - cell_gate * cell_gate, out=g_g)
            torch.mul(grad_new_hidden * tanh_memory, output_gate * (1 - output_gate), out=g_o)
            grad_memory = grad_new_memory * forget_gate
            grad_hidden = grad_gates.mm(weight_hh)
            if grad_hidden_before is not None:
                grad_memory = grad_memory + grad_memory_before
                grad_hidden = grad_hidden + grad_hidden_before
            grad_composed = grad_gates.mm(weight_ih)
            # the compose layer (4)
            if ctx.compose == "relu":
                grad_composed = grad_composed * (compose_input[:, t] > 0)
            grad_compose_input[:, t] = grad_composed
            grad_read_all = grad_composed.mm(compose_weight)
            grad_retrieved[:, t] = grad_read_all
            # the reads (2), (3), (10), (11)
            history_scores = saved.history_scores[t]
            grad_history_scores = queries.new_zeros(batch_size, t) if t > 0 else None
            for n in range(count):
                z = raw_keys[n][:, t]
                grad_read = grad_read_all[:, n * k : (n + 1) * k]
                grad_weighted = torch.bmm(grad_read.unsqueeze(1), initials[n].transpose(1, 2)).squeeze(1)
                g = grad_z[n]
                if written[n]:
                    i = written_index[n]
                    decay_before = step_decays[i]
                    read_weights[n][:, t] = z * decay_before
                    g = g + grad_weighted * decay_before
                    decay_adjoint[n] += grad_weighted * z
                    if t > 0:
                        write_weights = step_weights[i]
                        coefficient_rows[n][:, t, :t] = saved.coefficients[t][i]
                        grad_coefficients = torch.bmm(grad_read.unsqueeze(1),
                                                      values[:, :t].transpose(1, 2)).squeeze(1)
                        g = g + torch.bmm(grad_coefficients.unsqueeze(1), write_weights.transpose(1, 2)).squeeze(1)
                        weight_adjoint[n][:, :, :t].addcmul_(z.unsqueeze(2), grad_coefficients.unsqueeze(1))
                else:
                    read_weights[n][:, t] = z
                    g = g + grad_weighted
                grad_scores = z * (g - (z * g).sum(-1, keepdim=True))  # softmax
                if written[n]:
                    grad_initial_scores[n][:, :, t] = grad_scores * decay_before
                    decay_adjoint[n] += grad_scores * initial_scores[n][:, :, t]
                    if t > 0:
                        weight_adjoint[n][:, :, :t].addcmul_(grad_scores.unsqueeze(2), history_scores.unsqueeze(1))
                        grad_history_scores += torch.bmm(grad_scores.unsqueeze(1), write_weights).squeeze(1)
                else:
                    grad_initial_scores[n][:, :, t] = grad_scores
            if t > 0:
                query_grads[:, t, :t] = grad_history_scores
                grad_queries[:, t] = torch.bmm(grad_history_scores.unsqueeze(1), values[:, :t]).squeeze(1)
        flat = batch_size * num_steps
        flat_gates = grad_gates_all.view(flat, 4 * k)
        grad_weight_ih = flat_gates.t().mm(composed_out.view(flat, -1))
        grad_weight_hh = flat_gates.t().mm(previous_hidden.view(flat, k))
        grad_bias = flat_gates.sum(0)
        grad_compose_weight = grad_compose_input.view(flat, -1).t().mm(retrieved.view(flat, -1))
        grad_initials = [
            torch.bmm(read_weights[n].transpose(1, 2), grad_retrieved[:, :, n * k : (n + 1) * k]) for n in range(count)
        ]
        return (grad_queries, grad_compose_input, None, None, grad_compose_weight, grad_weight_ih, grad_weight_hh,
                grad_bias, None, None, *grad_initial_scores, *grad_initials, *([None] * count))


def nse_recurrence(
    queries: torch.Tensor,
    composed: torch.Tensor,
    mask: torch.BoolTensor,
    dropout: Optional[torch.Tensor],
    memories: Sequence[Tuple[torch.Tensor, torch.Tensor, torch.BoolTensor, bool]],
    compose_weight: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias: torch.Tensor,
    compose: str,
) -> Tuple[torch.Tensor, List[torch.Tensor], List[torch.Tensor], List[torch.Tensor]]:
    """
    queries: o_t `(B, T, k)`; composed: the o_t half of (4) with its bias `(B, T, c)`; mask `(B, T)`; dropout: a
    scaled dropout mask for h_t `(B, T, k)` or None; memories: (S0 = M_0 o_t for all t `(B, l, T)`, M_0 `(B, l, k)`,
    slot mask `(B, l)`, written) each; compose_weight: W_m `(c, N k)`; weight_ih `(4k, c)`, weight_hh `(4k, k)`, bias
    `(4k,)`: the write LSTMCell's; compose: "relu" or "linear". Returns the written values (h_t after dropout, 0 at
    padding) `(B, T, k)`, the keys z' per memory `(B, T, l)`, and per written memory a_T `(B, l)` and W_T `(B, l, T)`.
    """
    initial_scores = [m[0] for m in memories]
    initials = [m[1] for m in memories]
    memory_masks = [m[2] for m in memories]
    written = tuple(bool(m[3]) for m in memories)
    floats = (queries, composed, dropout, compose_weight, weight_ih, weight_hh, bias, *initial_scores, *initials)
    if autocast_enabled():  # float32 recurrence (module doc)
        with autocast_disabled():
            cast = lambda t: t.float() if t is not None else None  # noqa: E731
            return nse_recurrence(cast(queries), cast(composed), mask, cast(dropout),
                                  [(cast(s), cast(m), mm, w) for s, m, mm, w in memories], cast(compose_weight),
                                  cast(weight_ih), cast(weight_hh), cast(bias), compose)
    count = len(memories)
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in floats):
        outputs = _NseRecurrence.apply(queries, composed, mask, dropout, compose_weight, weight_ih, weight_hh, bias,
                                       written, compose, *initial_scores, *initials, *memory_masks)
        values, keys = outputs[0], list(outputs[1 : 1 + count])
        rest = outputs[1 + count :]
        num_written = sum(written)
        return values, keys, list(rest[:num_written]), list(rest[num_written:])
    values, keys, decays, weights, _ = _forward(queries, composed, mask, dropout, initial_scores, initials,
                                                memory_masks, written, compose_weight, weight_ih, weight_hh, bias,
                                                compose, None)
    return values, keys, decays, weights
