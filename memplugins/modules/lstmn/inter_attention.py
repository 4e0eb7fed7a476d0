"""
`LstmnInterAttention`: the LSTMN decoder's inter-attention over a source's tapes (Cheng et al. 2016, section 4, eq.
11-13), which both attention fusions of `memplugins.models.lstmn_fusion` read.
"""
from typing import Tuple

import torch

from memplugins.modules.tape_attention import additive_tape_read


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
