"""
The Neural Semantic Encoder (Munkhdalai and Yu 2017, eq. 1-6, and MMA-NSE's extra memories, eq. 7-15) for one
unpadded sequence, vector by vector: the literal reference of the one-layer fast path (`fast.py`) and of `deep.py`
(more than one write-LSTM layer, as the answer-selection model's two), which the tests compare with it. It reads
explicit weights (an `NseEncoder.weights()`, or anything with the same fields: read_layers, write_layers,
compose_weight, compose_bias, compose_activation, memory_projection, key_strength_weight, key_strength_bias,
initial_memory, write_memory, write_extra_memories) and imports nothing from the code it checks. Memories are lists
of slot vectors, as the paper's M is a k × l matrix of columns; a padded extra-memory slot is simply absent, and the
batched form returns it unchanged.
"""
from typing import List, Optional, Sequence, Tuple

import torch


def lstm_step(weight_ih, weight_hh, bias_ih, bias_hh, x, h, c) -> Tuple[torch.Tensor, torch.Tensor]:
    """One step of torch's LSTM cell, gates (i, f, g, o); biases None: none."""
    gates = weight_ih @ x + weight_hh @ h
    if bias_ih is not None:
        gates = gates + bias_ih + bias_hh
    i, f, g, o = gates.chunk(4)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def nse_reference(
    weights,
    x: torch.Tensor,
    extras: Sequence[torch.Tensor] = (),
    read_dropout: Optional[torch.Tensor] = None,
    value_dropout: Optional[torch.Tensor] = None,
    input_dropout: Optional[torch.Tensor] = None,
    compose_dropout: Optional[torch.Tensor] = None,
):
    """
    x `(T, d_in)`; extras: each extra memory's real slots `(l_n, k)`; read_dropout / value_dropout: scaled dropout
    masks `(T, k)` for o_t and for the written h_t (the encoder's dropout on its outputs), or None; input_dropout
    `(T, d_in)` / compose_dropout `(T, c)`: for x_t as f_r's input (M_0 keeps the undropped x, or holds the o_t
    computed from the dropped x with `initial_memory="read_states"`) and for c_t as f_w's input (the encoder's
    dropout on the LSTMs' inputs), or None. Returns H `(T, k)`, the final memory M_T `(T, k)`, the keys Z `(T, T)`,
    the final extra memories and their keys `(T, l_n)`.
    """
    k = weights.read_layers[0][1].size(1)
    f_c = torch.relu if weights.compose_activation == "relu" else (lambda u: u)
    extras = [list(extra) for extra in extras]
    layer_input = list(x if input_dropout is None else x * input_dropout)  # (1): f_r, layer by layer, step by step
    for layer_weights in weights.read_layers:
        h, c, outputs = x.new_zeros(k), x.new_zeros(k), []
        for x_t in layer_input:
            h, c = lstm_step(*layer_weights, x_t, h, c)
            outputs.append(h)
        layer_input = outputs
    if weights.initial_memory == "read_states":  # M_0: o_1, ..., o_T, before o_t's dropout
        M = list(layer_input)
    else:  # M_0: the embeddings, as the paper
        M = [weights.memory_projection @ x_i if weights.memory_projection is not None else x_i for x_i in x]
    states = [(x.new_zeros(k), x.new_zeros(k)) for _ in weights.write_layers]
    H, Z, extra_keys = [], [], [[] for _ in extras]
    for t, o_t in enumerate(layer_input):
        if read_dropout is not None:
            o_t = o_t * read_dropout[t]
        beta_t = 1.0  # the paper's keys; with key_strength, β_t = softplus(w_β^T o_t + b_β) (2'), (10')
        if weights.key_strength_weight is not None:
            beta_t = torch.nn.functional.softplus(weights.key_strength_weight[0] @ o_t + weights.key_strength_bias[0])
        z_t = torch.softmax(torch.stack([beta_t * (o_t @ m_i) for m_i in M]), 0)  # (2)
        m_rt = sum(z_i * m_i for z_i, m_i in zip(z_t, M))  # (3)
        reads = []
        for memory in extras:
            z_n = torch.softmax(torch.stack([beta_t * (o_t @ m_i) for m_i in memory]), 0)  # (10)
            reads.append((z_n, sum(z_i * m_i for z_i, m_i in zip(z_n, memory))))  # (11)
        composed = weights.compose_weight @ torch.cat([o_t, m_rt] + [m for _, m in reads])
        c_t = f_c(composed + weights.compose_bias if weights.compose_bias is not None else composed)  # (4), (12)
        if compose_dropout is not None:
            c_t = c_t * compose_dropout[t]
        layer_input_t, new_states = c_t, []
        for cell_weights, (h, c) in zip(weights.write_layers, states):  # (5), (13)
            h, c = lstm_step(*cell_weights, layer_input_t, h, c)
            new_states.append((h, c))
            layer_input_t = h
        states, h_t = new_states, layer_input_t
        if value_dropout is not None:
            h_t = h_t * value_dropout[t]
        if weights.write_memory:
            M = [(1 - z_i) * m_i + z_i * h_t for z_i, m_i in zip(z_t, M)]  # (6), (14)
        for n, (z_n, _) in enumerate(reads):
            if weights.write_extra_memories:
                extras[n] = [(1 - z_i) * m_i + z_i * h_t for z_i, m_i in zip(z_n, extras[n])]  # (15)
            extra_keys[n].append(z_n)
        H.append(h_t)
        Z.append(z_t)
    return (torch.stack(H), torch.stack(M), torch.stack(Z), [torch.stack(e) for e in extras],
            [torch.stack(z) for z in extra_keys])


def nse_reference_batch(
    weights,
    inputs: torch.Tensor,
    mask: torch.BoolTensor,
    extra_memories: Sequence[Tuple[torch.Tensor, torch.BoolTensor]] = (),
    read_dropout: Optional[torch.Tensor] = None,
    value_dropout: Optional[torch.Tensor] = None,
    input_dropout: Optional[torch.Tensor] = None,
    compose_dropout: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, List[torch.Tensor], List[torch.Tensor]]:
    """`nse_reference` over a right-padded batch, one sequence at a time, in `NseOutput`'s order and shapes: zero
    at padding, and the padded slots of the extra memories unchanged. Dropout masks `(B, T, size)` or None."""
    pad = torch.nn.functional.pad
    num_steps = inputs.size(1)
    k = weights.read_layers[0][1].size(1)
    examples = []
    for b, length in enumerate(mask.sum(1).tolist()):
        slots = [int(slot_mask[b].sum()) for _, slot_mask in extra_memories]
        extras = [extra[b, :n] for (extra, _), n in zip(extra_memories, slots)]
        if length == 0:  # nothing is read or written
            empty = inputs.new_zeros(0, k)
            H, M, Z, E, ZN = empty, empty, inputs.new_zeros(0, 0), extras, [inputs.new_zeros(0, n) for n in slots]
        else:
            masks = [None if d is None else d[b, :length]
                     for d in (read_dropout, value_dropout, input_dropout, compose_dropout)]
            H, M, Z, E, ZN = nse_reference(weights, inputs[b, :length], extras, *masks)
        rest = num_steps - length
        examples.append((
            pad(H, (0, 0, 0, rest)), pad(M, (0, 0, 0, rest)), pad(Z, (0, rest, 0, rest)),
            [torch.cat([e, extra[b, n:]]) for e, (extra, _), n in zip(E, extra_memories, slots)],
            [pad(z, (0, extra.size(1) - n, 0, rest)) for z, (extra, _), n in zip(ZN, extra_memories, slots)],
        ))
    hidden, memory, keys, finals, extra_keys = zip(*examples)
    return (torch.stack(hidden), torch.stack(memory), torch.stack(keys), [torch.stack(e) for e in zip(*finals)],
            [torch.stack(z) for z in zip(*extra_keys)])
