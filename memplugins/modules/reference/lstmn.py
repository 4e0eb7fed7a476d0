"""
The LSTMN layer (Cheng et al. 2016, eq. 4-9) for one unpadded sequence, vector by vector, with the weights of a
`memplugins.modules.lstmn.LstmnLayer`: the reference of the fast path `memplugins.modules.fast.lstmn`. The first
step reads an empty tape (h~_1 = c~_1 = 0), as the layer's docstring says; the optional addend m_t of eq. 8 is the
deep attention fusion's (eq. 15); a layer with the recency score (not the paper's) adds β to slot t-1's a_i^t.
"""
from typing import Optional, Tuple

import torch


def lstmn_layer_reference(
    layer, x: torch.Tensor, addend: Optional[torch.Tensor] = None
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x `(T, d_in)`, addend `(T, h)` or None; returns the hidden tape `(T, h)`, the memory tape `(T, h)` and the
    attention `(T, T)` (row t: s^t over the slots i < t)."""
    W_h, W_x, W_ht = layer.tape_key.weight, layer.input_query.weight, layer.summary_query.weight
    v, W_in, W_sum = layer.scorer.weight[0], layer.weight_ih, layer.weight_hh
    b = layer.gate_bias() if layer.gate_bias() is not None else x.new_zeros(4 * layer.hidden_size)
    k = layer.hidden_size
    H, C, S = [], [], []
    h_tilde_previous = x.new_zeros(k)
    for t, x_t in enumerate(x):
        if t == 0:  # an empty tape: nothing to attend to
            h_tilde, c_tilde, s = x.new_zeros(k), x.new_zeros(k), x.new_zeros(0)
        else:
            a = torch.stack([v @ torch.tanh(W_h @ h_i + W_x @ x_t + W_ht @ h_tilde_previous) for h_i in H])  # (4)
            if layer.recency_score is not None:  # β on the most recent slot, h_{t-1}
                a = torch.cat([a[:-1], a[-1:] + layer.recency_score])
            s = torch.softmax(a, dim=0)  # (5)
            h_tilde = sum(s_i * h_i for s_i, h_i in zip(s, H))  # (6)
            c_tilde = sum(s_i * c_i for s_i, c_i in zip(s, C))  # (6)
        i, f, o, c_hat = (W_sum @ h_tilde + W_in @ x_t + b).chunk(4)  # (7): W [h~_t, x_t] + b
        c_t = torch.sigmoid(f) * c_tilde + torch.sigmoid(i) * torch.tanh(c_hat)  # (8)
        if addend is not None:
            c_t = c_t + addend[t]
        h_t = torch.sigmoid(o) * torch.tanh(c_t)  # (9)
        H.append(h_t)
        C.append(c_t)
        S.append(torch.nn.functional.pad(s, (0, len(x) - t)))
        h_tilde_previous = h_tilde
    return torch.stack(H), torch.stack(C), torch.stack(S).detach()


def lstmn_layer_reference_batch(
    layer, inputs: torch.Tensor, mask: torch.BoolTensor, addend: Optional[torch.Tensor] = None
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`lstmn_layer_reference` over a right-padded batch, one sequence at a time, padded back with zeros: the
    hidden tape, memory tape `(B, T, h)` and attention `(B, T, T)`, as `LstmnLayer.forward` returns them."""
    batch_size, num_steps, _ = inputs.size()
    outputs = []
    for b, length in enumerate(mask.sum(1).tolist()):
        if length == 0:
            zeros = inputs.new_zeros(num_steps, layer.hidden_size)
            outputs.append((zeros, zeros, inputs.new_zeros(num_steps, num_steps)))
            continue
        h, c, s = lstmn_layer_reference(layer, inputs[b, :length], None if addend is None else addend[b, :length])
        pad = num_steps - length
        outputs.append((torch.nn.functional.pad(h, (0, 0, 0, pad)), torch.nn.functional.pad(c, (0, 0, 0, pad)),
                        torch.nn.functional.pad(s, (0, pad, 0, pad))))
    return tuple(torch.stack(parts) for parts in zip(*outputs))
