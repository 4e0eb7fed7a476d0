"""
`LstmnLayer`: one layer of the LSTMN (eq. 4-9 of Cheng et al. 2016; the package docstring, `memplugins.modules.lstmn`,
writes them out with every choice and deviation). `forward` runs the fast path (`fast.py`); `weights()` gives the
layer's weights as plain tensors, for the literal reference (`reference.py`).
"""
from typing import NamedTuple, Optional, Tuple

import torch

from memplugins.modules.lstmn.fast import lstmn_recurrence


class LstmnWeights(NamedTuple):
    """An `LstmnLayer`'s weights as plain tensors, named as in eq. 4 and 7 (what `reference.py` reads)."""

    W_h: torch.Tensor  # (h, h): the tape's keys, eq. 4
    W_x: torch.Tensor  # (h, d_in): the input's query, eq. 4
    W_ht: torch.Tensor  # (h, h): W_h~, the last summary's query, eq. 4
    v: torch.Tensor  # (h,): the scorer, eq. 4
    W_in: torch.Tensor  # (4h, d_in): the x_t part of eq. 7's W
    W_sum: torch.Tensor  # (4h, h): the h~_t part of eq. 7's W
    b: torch.Tensor  # (4h,): eq. 7's bias (zeros without biases)
    recency: Optional[torch.Tensor] = None  # β, the optional recency score (not the paper's), or None


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

    def weights(self) -> LstmnWeights:
        """The weights as plain tensors (`LstmnWeights`), for the literal reference."""
        bias = self.gate_bias()
        return LstmnWeights(self.tape_key.weight, self.input_query.weight, self.summary_query.weight,
                            self.scorer.weight[0], self.weight_ih, self.weight_hh,
                            bias if bias is not None else self.weight_ih.new_zeros(4 * self.hidden_size),
                            self.recency_score)

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
