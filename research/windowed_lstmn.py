"""
A measuring instrument for replicate.py's SST rows, not a model of the package: our `lstmn` (Cheng et al. 2016,
eq. 4-9) whose intra-attention reads only each step's last K slots, in training as in evaluation:

    a_i^t = v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1}),   i = max(1, t-K) .. t-1     (4), on the window only
    s^t   = softmax(a^t) over the window                                                (5)
    [h~_t; c~_t] = sum over the window of s_i^t [h_i; c_i]                              (6)

and eq. 7-9 unchanged. With K = 1, s^t is 1 on slot t-1, so h~_t = h_{t-1} and c~_t = c_{t-1}: an LSTM with eq. 7's
weights. With K at least the sequence's length it is the `lstmn`. A row trained with K between asks which of the
LSTMN's reads costs it what it costs (its tape over a sentence's far past, or any averaging of past cells at all).
`research/lstmn_attention_use.py --window K` asks the same of a model trained with the whole tape, at test time
only.

`layer_steps` writes eq. 4-9 step by step over a right-padded batch with plain autograd (a third implementation
beside the fast path and the per-example reference): what this encoder trains with, and what
`lstmn_attention_use.py` runs its replacements of s^t with. The tests check that K at least the length gives the
`lstmn`'s outputs and K = 1 torch's LSTM's, and that a padded batch gives each sequence's outputs alone.

Parameters, their names and their start are the `lstmn`'s (each layer is built as an `LstmnLayer` and copied, with
the random draws the `lstmn` would make, so a seed starts both alike); only the forward differs. Right-padded batches
only (what AllenNLP's padding gives): a valid step after a padded one is refused, since the window counts slots,
not valid ones. Left to right only; no memory addend (deep fusion's).

Registered as a `Seq2SeqEncoder` with name "windowed_lstmn" when this module is imported (replicate.py's rows name
it in `packages`; the run analyses import it with the plugins).
"""
from typing import Callable, List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.encoders.lstmn import LstmnEncoder
from memplugins.modules.lstmn import LstmnLayer


def layer_steps(
    layer: LstmnLayer, inputs: torch.Tensor, mode: str = "model"
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Eq. 4-9 of LAYER for a right-padded batch `(B, T, d)`, step by step, with s^t from eq. 5 over the layer's own
    window (`model`: the whole tape for an `LstmnLayer`, the last `layer.window` slots for a `WindowedLstmnLayer`),
    from eq. 5 over the last K slots (`last K`), 1 on slot t-1 (`most recent slot`) or uniform over slots < t
    (`uniform`). Returns the hidden and memory tapes `(B, T, h)` and s `(B, T, T)` (row t: the weights on slots
    i < t, detached), at every position: the caller masks padded ones. A layer with a `recency_score` β
    (the lstmn's recency_start) adds it to slot t-1's a_i^t wherever s^t is eq. 5's."""
    batch_size, num_steps, _ = inputs.shape
    k = layer.hidden_size
    if mode.startswith("last "):
        window: Optional[int] = int(mode.removeprefix("last "))
    elif mode == "model":
        window = getattr(layer, "window", None)
    elif mode in ("most recent slot", "uniform"):
        window = None
    else:
        raise ValueError(f"layer_steps: unknown mode {mode!r}")
    bias = layer.gate_bias() if layer.gate_bias() is not None else inputs.new_zeros(4 * k)
    input_gates = inputs @ layer.weight_ih.t() + bias  # W[., x_t] + b
    input_queries = layer.input_query(inputs)  # W_x x_t
    hidden_tape: List[torch.Tensor] = []
    memory_tape: List[torch.Tensor] = []
    keys: List[torch.Tensor] = []  # W_h h_i, once per slot
    attention = inputs.new_zeros(batch_size, num_steps, num_steps)
    h_tilde = inputs.new_zeros(batch_size, k)
    c_tilde = inputs.new_zeros(batch_size, k)
    for t in range(num_steps):
        if t > 0:
            first = 0 if window is None else max(0, t - window)  # the slots read: first .. t-1
            H, C = torch.stack(hidden_tape[first:], 1), torch.stack(memory_tape[first:], 1)
            if mode == "most recent slot":
                recent = torch.full((batch_size,), t - 1 - first, device=inputs.device)
                s = torch.nn.functional.one_hot(recent, t - first).to(inputs.dtype)
            elif mode == "uniform":
                s = inputs.new_full((batch_size, t), 1.0 / t)
            else:
                query = input_queries[:, t] + layer.summary_query(h_tilde)
                scores = layer.scorer(torch.tanh(torch.stack(keys[first:], 1) + query.unsqueeze(1))).squeeze(-1)  # (4)
                recency = getattr(layer, "recency_score", None)  # recency_lstmn's β, on slot t-1's score
                if recency is not None:
                    scores = torch.cat([scores[:, :-1], scores[:, -1:] + recency], dim=1)
                s = torch.softmax(scores, dim=-1)  # (5)
            h_tilde = torch.einsum("bi,bik->bk", s, H)  # (6)
            c_tilde = torch.einsum("bi,bik->bk", s, C)
            attention[:, t, first:t] = s.detach()
        i, f, o, c_hat = (input_gates[:, t] + h_tilde @ layer.weight_hh.t()).chunk(4, dim=-1)  # (7)
        c = torch.sigmoid(f) * c_tilde + torch.sigmoid(i) * torch.tanh(c_hat)  # (8)
        h = torch.sigmoid(o) * torch.tanh(c)  # (9)
        hidden_tape.append(h)
        memory_tape.append(c)
        keys.append(layer.tape_key(h))
    return torch.stack(hidden_tape, 1), torch.stack(memory_tape, 1), attention


def copies_of(layers: torch.nn.ModuleList, make_copy: Callable[[LstmnLayer], LstmnLayer]) -> torch.nn.ModuleList:
    """Each of the `lstmn`'s LAYERS as the instrument's layer MAKE_COPY builds, holding the layer's parameters. The
    copies' own random draws leave the generator where the `lstmn` left it, so a seed starts an instrument as it
    starts the `lstmn`; a parameter the copy adds keeps the start the copy gave it."""
    copies = []
    with torch.random.fork_rng():
        for layer in layers:
            copy = make_copy(layer)
            _, unexpected = copy.load_state_dict(layer.state_dict(), strict=False)
            if unexpected:
                raise ValueError(f"copies_of: {type(copy).__name__} lacks the lstmn's {unexpected}")
            copies.append(copy)
    return torch.nn.ModuleList(copies)


class WindowedLstmnLayer(LstmnLayer):
    """An `LstmnLayer` whose eq. 4-6 read the last `window` slots of the tape (module doc; None: the whole tape)."""

    def __init__(self, input_size: int, hidden_size: int, window: Optional[int], bias: bool = True) -> None:
        super().__init__(input_size, hidden_size, bias=bias)
        self.window = window

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, memory_addend: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if memory_addend is not None:
            raise ConfigurationError("windowed_lstmn: no memory addend (deep attention fusion's m_t)")
        if (mask[:, 1:] & ~mask[:, :-1]).any():
            raise ValueError("windowed_lstmn: right-padded batches only (a valid step follows a padded one): the "
                             "window counts the slots before a step")
        hidden, memory, attention = layer_steps(self, inputs)
        valid = mask.unsqueeze(-1).to(inputs.dtype)
        return hidden * valid, memory * valid, attention * valid


@Seq2SeqEncoder.register("windowed_lstmn")
class WindowedLstmnEncoder(LstmnEncoder):
    """
    `lstmn` with eq. 4-6 over each step's last `window` slots (module doc).

    # Parameters

    input_size, hidden_size, num_layers, skip_connections, dropout, bias : as `lstmn`'s.
    window : `int`
        K: how many of the most recent slots eq. 5's softmax is taken over (at least 1).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        window: int,
        num_layers: int = 1,
        skip_connections: bool = False,
        dropout: float = 0.0,
        bias: bool = True,
    ) -> None:
        if window < 1:
            raise ConfigurationError(f"windowed_lstmn: a window holds at least one slot, not {window}")
        super().__init__(input_size, hidden_size, num_layers, skip_connections, dropout, bias=bias)
        self.layers = copies_of(
            self.layers, lambda layer: WindowedLstmnLayer(layer.input_size, hidden_size, window, bias=bias))
