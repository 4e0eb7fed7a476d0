"""
Additive attention over a tape of vectors, the read operation shared by the LSTMN's intra-attention (Cheng et al.
2016, eq. 4-6 and 10) and its inter-attention for attention fusion (eq. 11-13):

    a_i = v^T tanh(K_i + q)          K_i = W_h h_i (the projected keys), q = W_x x_t + W_h~ h~_{t-1}
    s   = softmax(a)                 over the tape slots allowed by `mask` (padding and, for intra-attention,
                                     positions >= t get weight exactly 0)
    [h~; c~] = sum_i s_i [h_i; c_i]  the adaptive summaries of every value tape given

The keys are projected once per tape slot by the caller (the LSTMN keeps W_h h_i incrementally), so one read costs
a tanh over (batch, slots, d) and one weighted sum per value tape. When no slot is allowed (the LSTMN's first
step, whose tape is empty) the weights and the summaries are all zero.
"""
from typing import List, Sequence, Tuple

import torch
from allennlp.nn.util import masked_softmax


def additive_tape_read(
    keys: torch.Tensor,
    query: torch.Tensor,
    scorer: torch.nn.Linear,
    values: Sequence[torch.Tensor],
    mask: torch.BoolTensor,
    may_be_empty: bool = True,
) -> Tuple[torch.Tensor, List[torch.Tensor]]:
    """
    keys: `(batch, slots, d)` projected tape; query: `(batch, d)`; scorer: `Linear(d, 1, bias=False)` (v or u);
    values: tapes `(batch, slots, d_v)` to summarise; mask: `(batch, slots)`; `may_be_empty=False` promises every row
    of the mask has a True slot (skips the empty-tape correction).
    Returns the weights `(batch, slots)` and one summary `(batch, d_v)` per value tape.
    """
    scores = torch.tanh(keys + query.unsqueeze(1)).matmul(scorer.weight[0])  # a matrix-vector product, not a GEMM
    weights = masked_softmax(scores, mask, memory_efficient=True)
    if may_be_empty:  # masked_softmax gives a uniform distribution over an all-masked row; an empty tape reads nothing
        weights = weights * mask.any(dim=-1, keepdim=True)
    return weights, [torch.bmm(weights.unsqueeze(1), tape).squeeze(1) for tape in values]
