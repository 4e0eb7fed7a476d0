"""The named state the NSE fast path (`memplugins.modules.nse.fast`) passes between its forward and backward."""
from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch


class Memory(NamedTuple):
    """One memory the loop reads, and writes if `written` (the encoding memory, or an MMA-NSE extra memory)."""

    initial_scores: torch.Tensor  # S0 = M_0 o_t for all t, (B, l, T)
    initial: torch.Tensor  # M_0, (B, l, k)
    mask: torch.BoolTensor  # which slots are real, (B, l)
    written: bool

    @staticmethod
    def flatten(memories: Sequence["Memory"]) -> Tuple[torch.Tensor, ...]:
        """The tensors as top-level Function arguments: every S0, then every M_0, then every mask."""
        return (*(m.initial_scores for m in memories), *(m.initial for m in memories), *(m.mask for m in memories))

    @staticmethod
    def regroup(written: Sequence[bool], tensors: Sequence[torch.Tensor]) -> List["Memory"]:
        count = len(written)
        return [Memory(tensors[n], tensors[count + n], tensors[2 * count + n], written[n]) for n in range(count)]


class CellWeights(NamedTuple):
    """The compose layer's weight on the reads and the write LSTMCell's weights."""

    compose_weight: torch.Tensor  # W_m, (c, N k)
    weight_ih: torch.Tensor  # (4k, c)
    weight_hh: torch.Tensor  # (4k, k)
    bias: torch.Tensor  # b_ih + b_hh, (4k,)


class StepState(NamedTuple):
    """What step t's reads keep for the backward (lists: one entry per written memory)."""

    history_scores: Optional[torch.Tensor]  # q = H_{<t} o_t, (B, t); None at t = 0
    decays: List[torch.Tensor]  # a_{t-1}, (B, l)
    write_weights: List[torch.Tensor]  # W_{t-1}, (B, l, t); none at t = 0
    coefficients: List[torch.Tensor]  # zᵀ W_{t-1}, (B, t); none at t = 0


class Buffers(NamedTuple):
    """Every step's intermediate values, (B, T, .) each, written before they are read (so allocated unfilled).

    The write LSTM's input at step t and its state before it share one row, `cell_inputs[:, t]` = [c_t; h_{t-1}]
    (row T: h_T), so that its gates are one product with [W_ih W_hh], and step t writes its new h (and c, into
    `cell_memories[:, t + 1]`) where step t + 1 reads them, with no copy."""

    values: Optional[torch.Tensor]  # H: the written v_t, (B, T, k)
    raw_keys: List[torch.Tensor]  # z per memory, before the step mask, (B, T, l)
    keys: Optional[List[torch.Tensor]]  # z' = z ⊙ mask_t per memory, (B, T, l)
    retrieved: torch.Tensor  # [r^1; ...; r^N], (B, T, N k)
    compose_input: torch.Tensor  # f_c's pre-activation, (B, T, c)
    # [c_t; h_{t-1}]: c_t (after its dropout, if any) and the write LSTM's h, (B, T + 1, c + k)
    cell_inputs: torch.Tensor
    cell_memories: torch.Tensor  # the write LSTM's c before step t, (B, T + 1, k)
    gates: torch.Tensor  # σ(i), σ(f), tanh(g), σ(o), (B, T, 4k)
    memory_tanh: torch.Tensor  # tanh(c_t), (B, T, k)

    @property
    def previous_memory(self) -> torch.Tensor:
        """Its c before step t, (B, T, k)."""
        return self.cell_memories[:, :-1]

    @classmethod
    def allocate(cls, queries: torch.Tensor, compose_size: int, slots: Sequence[int]) -> "Buffers":
        batch_size, num_steps, k = queries.size()

        def empty(*size):
            return queries.new_empty(batch_size, num_steps, *size)

        cell_inputs = queries.new_empty(batch_size, num_steps + 1, compose_size + k)
        cell_inputs[:, 0, compose_size:] = 0  # h_0
        cell_memories = queries.new_empty(batch_size, num_steps + 1, k)
        cell_memories[:, 0] = 0  # c_0
        return cls(empty(k), [empty(n) for n in slots], [empty(n) for n in slots], empty(k * len(slots)),
                   empty(compose_size), cell_inputs, cell_memories, empty(4 * k), empty(k))
