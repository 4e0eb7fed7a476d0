"""
The attention layers of Rocktäschel et al. (2016), "Reasoning about Entailment with Neural Attention", section 2.3-2.4.

Notation follows the paper: Y = [h_1 .. h_L] are the premise outputs (here `(batch, L, k)`, rows instead of the
paper's columns), h_t the hypothesis outputs, k the hidden size. Deviation from the paper: padding. The paper
trains on unpadded single sequences; here the softmax over premise positions is masked (padded premise slots get
weight exactly 0) and, in word-by-word attention, a padded hypothesis step leaves r unchanged, so a padded batch
gives the same outputs as each pair alone.
"""
from typing import Tuple

import torch
from allennlp.nn.util import masked_softmax


class LastOutputAttention(torch.nn.Module):
    """
    Attention conditioned on the last hypothesis output h_N, eq. 7-9:

        M = tanh(W^y Y + W^h h_N ⊗ e_L)        (7)
        α = softmax(w^T M)                      (8)
        r = Y α^T                               (9)

    `forward(premise_outputs (B, L, k), premise_mask (B, L), last_output (B, k))` returns r `(B, k)` and
    α `(B, L)`.
    """

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.premise_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^y
        self.query_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^h
        self.scorer = torch.nn.Linear(hidden_size, 1, bias=False)  # w

    def forward(
        self, premise_outputs: torch.Tensor, premise_mask: torch.BoolTensor, last_output: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        m = torch.tanh(self.premise_projection(premise_outputs) + self.query_projection(last_output).unsqueeze(1))  # (7)
        alpha = masked_softmax(self.scorer(m).squeeze(-1), premise_mask, memory_efficient=True)  # (8)
        r = torch.bmm(alpha.unsqueeze(1), premise_outputs).squeeze(1)  # (9)
        return r, alpha


class WordByWordAttention(torch.nn.Module):
    """
    Word-by-word attention, eq. 11-13: for every hypothesis output h_t (t = 1..N),

        M_t = tanh(W^y Y + (W^h h_t + W^r r_{t-1}) ⊗ e_L)     (11)
        α_t = softmax(w^T M_t)                                  (12)
        r_t = Y α_t^T + tanh(W^t r_{t-1})                       (13)

    with r_0 = 0. W^y Y and W^h h_t do not depend on r, so they are computed for all positions at once; only the
    r recursion steps. At a padded hypothesis position r_t = r_{t-1} and α_t = 0.

    `forward(premise_outputs (B, L, k), premise_mask (B, L), hypothesis_outputs (B, N, k), hypothesis_mask (B, N))`
    returns r_N `(B, k)` (r after each pair's last real hypothesis token) and α `(B, N, L)`.
    """

    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.premise_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^y
        self.query_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^h
        self.recurrent_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^r
        self.carry_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^t
        self.scorer = torch.nn.Linear(hidden_size, 1, bias=False)  # w

    def forward(
        self,
        premise_outputs: torch.Tensor,
        premise_mask: torch.BoolTensor,
        hypothesis_outputs: torch.Tensor,
        hypothesis_mask: torch.BoolTensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        batch_size = hypothesis_outputs.size(0)
        projected_premise = self.premise_projection(premise_outputs)  # W^y Y, (B, L, k)
        projected_queries = self.query_projection(hypothesis_outputs)  # W^h h_t for all t, (B, N, k)
        r = hypothesis_outputs.new_zeros(batch_size, self.hidden_size)
        alphas = []
        # unbound rather than indexed per step: the backward of `x[:, t]` is a full-size zero tensor for every t
        steps = zip(projected_queries.unbind(1), hypothesis_mask.unsqueeze(-1).unbind(1))
        for query, step_mask in steps:
            m = torch.tanh(projected_premise + (query + self.recurrent_projection(r)).unsqueeze(1))  # (11)
            alpha = masked_softmax(self.scorer(m).squeeze(-1), premise_mask, memory_efficient=True)  # (12)
            r_next = torch.bmm(alpha.unsqueeze(1), premise_outputs).squeeze(1) + torch.tanh(self.carry_projection(r))  # (13)
            r = torch.where(step_mask, r_next, r)
            alphas.append(alpha * step_mask)
        return r, torch.stack(alphas, dim=1)
