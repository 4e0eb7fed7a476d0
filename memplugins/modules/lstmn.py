"""
One layer of the Long Short-Term Memory-Network (Cheng, Dong and Lapata 2016, "Long Short-Term Memory-Networks for
Machine Reading", EMNLP), section 3.2, with the hook that attention fusion (section 4) needs.

For t = 1..T, with hidden tape H_{t-1} = (h_1..h_{t-1}) and memory tape C_{t-1} = (c_1..c_{t-1}):

    a_i^t = v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1})                 (4)   (x_t is h_t^k of the layer below: eq. 10)
    s^t   = softmax(a^t)                                                (5)
    [h~_t; c~_t] = sum_{i<t} s_i^t [h_i; c_i]                           (6)
    [i_t; f_t; o_t; c^_t] = [σ; σ; σ; tanh](W [h~_t, x_t] + b)          (7)
    c_t = f_t ⊙ c~_t + i_t ⊙ c^_t  (+ m_t, an optional per-step addend)  (8)  (deep fusion passes m_t = r_t ⊙ α~_t, eq. 15)
    h_t = o_t ⊙ tanh(c_t)                                               (9)

Choices the paper leaves open, and deviations:

* The first step. The tape is empty at t = 1, so there is nothing to attend to: s^1 is all zero and
  h~_1 = c~_1 = 0, which makes step 1 an ordinary LSTM step from a zero state. h~_0 = 0 in eq. 4.
* The tape holds every previous step (no memory-span bound: sentences are short).
* Padding. The paper's equations have none. Tape slots whose mask is 0 are never attended to (masked softmax),
  and a masked step leaves h~ unchanged, so a right-padded batch gives the same outputs as each sequence alone and
  outputs at padded positions are 0.
* Biases: eq. 7 as printed has none; we add the usual LSTM bias b (forget-gate part initialised to 1, other
  matrices Xavier-uniform). Eq. 4's projections have no bias, as printed.
* The authors' Torch code drops the h~_{t-1} term of eq. 4 in its encoder; we keep it, as the paper writes it.
* An option that is not the paper's, off by default: `recency_start` adds one learned score β to the most recent
  slot's in eq. 4, a_{t-1}^t += β (β a parameter, `recency_score`, started at `recency_start`). β = 0 is eq. 4; as
  β grows s^t goes to 1 on slot t-1 and the layer to an LSTM with eq. 7's weights (h~_t = h_{t-1}, c~_t = c_{t-1}),
  while the whole tape stays in reach. Why: started near uniform (eq. 4's v and W's Xavier-drawn, so every score
  is small), the LSTMN learns from SST's phrase labels to read far back, and reads 2.4 binary test points below an
  LSTM of its width in allennlp-models' own SST config (ten seeds); started at β = 5 (about 0.9 of s^t on slot t-1
  at t = 20), it stays near there (training moves β by under 0.2) and is level with that LSTM (84.85 against 85.16,
  five seeds; fine-grained it closes the LSTMN's dev gap to the LSTM too); as decomposable attention's encoder on SNLI
  it gains nothing held-out (docs/results.md "sst_lstmn", "Where its attention is held"; measured with the instrument
  `benchmarks/recency_lstmn.py`, whose plain-autograd layer the tests compare with this one).

Speed: W_x x_t and the x part of eq. 7 do not depend on the recurrence, so they are computed for all t in one
matmul; W_h h_i is computed once per slot as the tape grows; W_h~ h~_t (eq. 4 at t+1) and the h~ part of eq. 7 (at
t) come from one stacked matmul. A step costs two small matmuls plus the attention over the tape. `forward` runs
the recurrence as one autograd Function with a hand-written backward (`memplugins.modules.fast.lstmn`, whose
docstring says why it is equal to the equations); `memplugins.modules.reference.lstmn` writes eq. 4-9 literally,
one example at a time, and the tests compare the two.
"""
from typing import Optional, Tuple

import torch

from memplugins.modules.fast.lstmn import lstmn_recurrence
from memplugins.modules.tape_attention import additive_tape_read


class LstmnLayer(torch.nn.Module):
    """
    `forward(inputs (B, T, input_size), mask (B, T), memory_addend (B, T, hidden) or None)` returns the hidden tape
    `(B, T, hidden)`, the memory tape `(B, T, hidden)` and the intra-attention weights `(B, T, T)` (row t is s^t over
    slots i < t; detached: they are for inspection, not for losses).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 recency_start: Optional[float] = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.recency_start = recency_start
        self.tape_key = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W_h
        self.input_query = torch.nn.Linear(input_size, hidden_size, bias=False)  # W_x
        self.summary_query = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W_h~
        self.scorer = torch.nn.Linear(hidden_size, 1, bias=False)  # v
        # eq. 7's W and b, named as torch.nn.LSTM's parameters so that LSTM initializer regexes reach them (h~_t
        # takes h_{t-1}'s place); b = bias_ih + bias_hh, as torch's LSTM has it, so that esim's `bias_ih` (zero)
        # and `bias_hh` (`lstm_hidden_bias`: forget gate 1) regexes each find their parameter
        self.weight_ih = torch.nn.Parameter(torch.empty(4 * hidden_size, input_size))  # x_t part of W
        self.weight_hh = torch.nn.Parameter(torch.empty(4 * hidden_size, hidden_size))  # h~_t part of W
        if bias:
            self.bias_ih = torch.nn.Parameter(torch.empty(4 * hidden_size))
            self.bias_hh = torch.nn.Parameter(torch.empty(4 * hidden_size))
        else:  # `lstm`'s bias: false
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        # β of the option above (module doc); a 0-d parameter draws nothing, so every other start is unchanged
        if recency_start is not None:
            self.recency_score = torch.nn.Parameter(torch.tensor(float(recency_start)))
        else:
            self.register_parameter("recency_score", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1:
                torch.nn.init.xavier_uniform_(parameter)
            else:
                torch.nn.init.zeros_(parameter)
        if self.bias_hh is not None:
            with torch.no_grad():  # forget-gate bias 1, the usual LSTM remedy for early vanishing memory
                self.bias_hh[self.hidden_size : 2 * self.hidden_size].fill_(1.0)
        if self.recency_score is not None:
            with torch.no_grad():
                self.recency_score.fill_(float(self.recency_start))

    def gate_bias(self) -> Optional[torch.Tensor]:
        """b of eq. 7 (None without biases)."""
        return None if self.bias_hh is None else self.bias_ih + self.bias_hh

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:
        # archives from before b was split in two, as torch's LSTM has it, hold only bias_hh: b is the same with a
        # zero bias_ih
        if self.bias_ih is not None and prefix + "bias_hh" in state_dict and prefix + "bias_ih" not in state_dict:
            state_dict[prefix + "bias_ih"] = torch.zeros_like(state_dict[prefix + "bias_hh"])
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, memory_addend: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        hidden = self.hidden_size
        tapes, attention = lstmn_recurrence(
            self.input_query(inputs),  # W_x x_t for all t
            torch.nn.functional.linear(inputs, self.weight_ih, self.gate_bias()),  # W[., x_t] + b for all t
            memory_addend,
            mask,
            self.tape_key.weight,
            self.scorer.weight[0],
            torch.cat([self.weight_hh, self.summary_query.weight], dim=0),
            self.recency_score,
        )
        return tapes[..., :hidden], tapes[..., hidden:], attention


class LstmnInterAttention(torch.nn.Module):
    """
    The LSTMN decoder's inter-attention over a source's tapes (Cheng et al. 2016, section 4, eq. 11-13), for
    target inputs x_1..x_n and source hidden tape Y = (γ_1..γ_m) and memory tape A = (α_1..α_m):

        b_j^t = u^T tanh(W_γ γ_j + W_x x_t + W_γ~ γ~_{t-1})      (11)
        p^t   = softmax(b^t)        (masked over source padding) (12)
        [γ~_t; α~_t] = sum_j p_j^t [γ_j; α_j]                    (13)

    with γ~_0 = 0. The chain depends on x and the source only, never on the decoder's own states, so it runs as its
    own loop before the decoder. A padded target step leaves γ~ unchanged and reads nothing.

    `forward(inputs (B, n, d_x), input_mask (B, n), source_hidden (B, m, h), source_memory (B, m, h),
    source_mask (B, m))` returns γ~ `(B, n, h)`, α~ `(B, n, h)` and p `(B, n, m)`.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.source_key = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W_γ
        self.input_query = torch.nn.Linear(input_size, hidden_size, bias=False)  # W_x
        self.summary_query = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W_γ~
        self.scorer = torch.nn.Linear(hidden_size, 1, bias=False)  # u
        for parameter in self.parameters():
            torch.nn.init.xavier_uniform_(parameter)

    def forward(
        self,
        inputs: torch.Tensor,
        input_mask: torch.BoolTensor,
        source_hidden: torch.Tensor,
        source_memory: torch.Tensor,
        source_mask: torch.BoolTensor,
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        hidden = self.hidden_size
        keys = self.source_key(source_hidden)  # W_γ γ_j, once
        source_tape = torch.cat([source_hidden, source_memory], dim=-1)
        queries = self.input_query(inputs).unbind(1)
        step_masks = input_mask.unsqueeze(-1).unbind(1)
        summary_hidden = inputs.new_zeros(inputs.size(0), hidden)  # γ~_0
        hidden_summaries, memory_summaries, weights_per_step = [], [], []
        for t, query in enumerate(queries):
            weights, (summary,) = additive_tape_read(  # (11)-(13)
                keys, query + self.summary_query(summary_hidden), self.scorer, (source_tape,), source_mask
            )
            step_mask = step_masks[t]
            summary = summary * step_mask
            summary_hidden = torch.where(step_mask, summary[:, :hidden], summary_hidden)
            hidden_summaries.append(summary[:, :hidden])
            memory_summaries.append(summary[:, hidden:])
            weights_per_step.append(weights * step_mask)
        return torch.stack(hidden_summaries, 1), torch.stack(memory_summaries, 1), torch.stack(weights_per_step, 1)
