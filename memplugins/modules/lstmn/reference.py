"""
The LSTMN layer (Cheng et al. 2016, eq. 4-9) for one unpadded sequence, vector by vector: the literal reference of
the fast path (`fast.py`), which the tests compare with it. It reads explicit weights (an `LstmnLayer.weights()`, or
anything with the same named tensors: W_h, W_x, W_ht, v, W_in, W_sum, b, recency) and imports nothing from the code it
checks. The first step reads an empty tape (h~_1 = c~_1 = 0), as the package docstring says; the optional addend
m_t of eq. 8 is the deep attention fusion's (eq. 15); with a recency score β (not the paper's) β is added to slot
t-1's a_i^t.
"""
from typing import Optional, Tuple

import torch


def lstmn_reference(x: torch.Tensor, weights, addend: Optional[torch.Tensor] = None
                    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x `(T, d_in)`, addend `(T, h)` or None; returns the hidden tape `(T, h)`, the memory tape `(T, h)` and the
    attention `(T, T)` (row t: s^t over the slots i < t)."""
    W_h, W_x, W_ht, v = weights.W_h, weights.W_x, weights.W_ht, weights.v
    W_in, W_sum, b, beta = weights.W_in, weights.W_sum, weights.b, weights.recency
    k = W_h.size(0)
    H, C, S = [], [], []
    h_tilde_previous = x.new_zeros(k)
    for t, x_t in enumerate(x):
        if t == 0:  # an empty tape: nothing to attend to
            h_tilde, c_tilde, s = x.new_zeros(k), x.new_zeros(k), x.new_zeros(0)
        else:
            a = torch.stack([v @ torch.tanh(W_h @ h_i + W_x @ x_t + W_ht @ h_tilde_previous) for h_i in H])  # (4)
            if beta is not None:  # β on the most recent slot, h_{t-1}
                a = torch.cat([a[:-1], a[-1:] + beta])
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


def lstmn_reference_batch(inputs: torch.Tensor, mask: torch.BoolTensor, weights,
                          addend: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`lstmn_reference` over a right-padded batch, one sequence at a time, padded back with zeros: the hidden
    tape, memory tape `(B, T, h)` and attention `(B, T, T)`, as `LstmnLayer.forward` returns them."""
    batch_size, num_steps, _ = inputs.size()
    hidden = weights.W_h.size(0)
    outputs = []
    for b, length in enumerate(mask.sum(1).tolist()):
        if length == 0:
            zeros = inputs.new_zeros(num_steps, hidden)
            outputs.append((zeros, zeros, inputs.new_zeros(num_steps, num_steps)))
            continue
        h, c, s = lstmn_reference(inputs[b, :length], weights, None if addend is None else addend[b, :length])
        pad = num_steps - length
        outputs.append((torch.nn.functional.pad(h, (0, 0, 0, pad)), torch.nn.functional.pad(c, (0, 0, 0, pad)),
                        torch.nn.functional.pad(s, (0, pad, 0, pad))))
    return tuple(torch.stack(parts) for parts in zip(*outputs))
