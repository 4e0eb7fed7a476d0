"""
NSE's slot memories (Munkhdalai and Yu 2017, eq. 2-3 / 6 and their multiple-memory versions 10-11 / 14-15) kept in
factored form, for an encoder that knows all its read queries o_1..o_T in advance (the read LSTM depends only on
the inputs) and writes the same value h_t into every memory it writes.

The write (6), M_t = M_{t-1} ⊙ (1 - z_t e^T) + z_t h_t^T, scales each slot by (1 - z_{t,i}) and adds a multiple of h_t,
so after t writes

    M_t = diag(a_t) M_0 + W_t H_t,    a_t = a_{t-1} ⊙ (1 - z_t),   W_t = [diag(1 - z_t) W_{t-1},  z_t]

with a_0 = 1, W_t the (l × t) matrix of write weights and H_t = [h_1; ...; h_t] the (t × k) written values (row s of
W_t is slot i's weight on h_s: z_{s,i} Π_{s<r≤t} (1 - z_{r,i})). The reads of step t then never need M_{t-1}:

    M_{t-1} o_t   = a_{t-1} ⊙ (M_0 o_t) + W_{t-1} (H_{t-1} o_t)        scores of (2)
    z_t^T M_{t-1} = (z_t ⊙ a_{t-1})^T M_0 + (z_t^T W_{t-1}) H_{t-1}    retrieval (3)

M_0 o_t is computed for every t in one product before the loop, H_{t-1} o_t is shared by all memories, and only the
final memory M_T is formed, once. A step costs one read of the fixed M_0 (which stays in cache) and two of the
written history, O((l + t) k), instead of creating, storing and differentiating a new (l × k) memory, about 25 passes
over it forward and backward (`memplugins.modules.memory`, which the step-by-step decoder still uses). The algebra is
exact; `tests/modules/factored_memory_test.py` compares it with eq. 2-3 / 6 step by step.

Gradients: the per-step products with M_0 and with the history defer their large terms, as `StepLinear` does for
weights. M_0's gradient Σ_t (z_t ⊙ a_{t-1}) g_t^T is one product over all steps; the history is plain storage (no
autograd copy of it per step), each read's backward records its small per-step gradients, and the backward of the
write of h_s (which autograd runs after the backward of every later read, through the tokens the reads take) forms
h_s's gradient from them in two vector-matrix products.

Masking as in `memplugins.modules.memory`: padding slots get z = 0 (never read, never written), a memory with no
real slot reads z = 0 and m = 0, and a padded step writes with z = 0.

Mixed precision: the history's Functions and the deferred M_0 products run in float32 under autocast, and the
state (a_t, W_t, H) is float32 there (`memplugins.modules.autocast`); the batched products outside them (M_0 o_t for
all t, the scores' W (H o_t), the final M_T) are autocast's to cast.
"""
from typing import List, Optional, Tuple

import torch

from memplugins.modules.autocast import float32_under_autocast, state_dtype
from memplugins.modules.step_linear import DeferredStepProduct


class StepMatrixReader(DeferredStepProduct):
    """`u_t ↦ u_t^T M` (batched) for the steps of one forward pass; M's gradient is formed once, over all steps."""

    @staticmethod
    def product(weights: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        return torch.bmm(weights.unsqueeze(1), matrix).squeeze(1)

    @staticmethod
    def input_gradient(grad_output: torch.Tensor, matrix: torch.Tensor) -> torch.Tensor:
        # g^T M^T with the vector on the left: one pass over M (bmm of M by a column vector is several times slower)
        return torch.bmm(grad_output.unsqueeze(1), matrix.transpose(1, 2)).squeeze(1)

    @staticmethod
    def weight_gradient(weights: List[torch.Tensor], grad_outputs: List[torch.Tensor]) -> torch.Tensor:
        return torch.bmm(torch.stack(weights, 2), torch.stack(grad_outputs, 1))  # (B, l, steps) (B, steps, k)


class _HistoryWrite(torch.autograd.Function):
    @staticmethod
    @float32_under_autocast
    def forward(ctx, value: torch.Tensor, token: Optional[torch.Tensor], history: "_HistoryBuffers", step: int):
        history.values[:, step] = value.detach()
        ctx.history, ctx.step = history, step
        ctx.set_materialize_grads(False)
        return value.new_zeros(())  # the token later reads depend on

    @staticmethod
    def backward(ctx, _token_grad: Optional[torch.Tensor]):
        # every later read has recorded its gradients by now (each depends on this write's token)
        history, s = ctx.history, ctx.step
        # only the steps after s read h_s (their rows t <= s are zero): products over t > s alone
        # (contiguous: bmm copies a strided operand batch item by batch item)
        later_query_grads = history.query_grads[:, s + 1 :, s].unsqueeze(1).contiguous()
        grad = torch.bmm(later_query_grads, history.queries[:, s + 1 :]).squeeze(1)
        batch_size, steps, reads, _ = history.read_grads.size()
        later = (steps - s - 1) * reads
        coefficients = history.read_coefficients[:, s + 1 :, :, s].reshape(batch_size, 1, later).contiguous()
        later_read_grads = history.read_grads[:, s + 1 :].reshape(batch_size, later, -1)
        grad = grad + torch.bmm(coefficients, later_read_grads).squeeze(1)
        if s == 0:
            # the last history node of any backward pass that ran a read: start clean if the graph is used again
            # (a later pass may run fewer reads and must not see this pass's gradients)
            history.query_grads.zero_()
            history.read_grads.zero_()
        return grad, None, None, None


class _HistoryQuery(torch.autograd.Function):
    @staticmethod
    @float32_under_autocast
    def forward(ctx, query: torch.Tensor, token: torch.Tensor, history: "_HistoryBuffers", step: int):
        ctx.history, ctx.step = history, step
        return torch.bmm(query.unsqueeze(1), history.values[:, :step].transpose(1, 2)).squeeze(1)  # H_{<t} o_t

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        history, t = ctx.history, ctx.step
        history.query_grads[:, t, :t] = grad  # H_s's share, g_{t,s} o_t, is formed by the write of h_s
        return torch.bmm(grad.unsqueeze(1), history.values[:, :t]).squeeze(1), None, None, None


class _HistoryRead(torch.autograd.Function):
    @staticmethod
    @float32_under_autocast
    def forward(ctx, coefficients: torch.Tensor, token: torch.Tensor, history: "_HistoryBuffers", step: int):
        history.read_coefficients[:, step, :, :step] = coefficients.detach()
        ctx.history, ctx.step = history, step
        return torch.bmm(coefficients, history.values[:, :step])  # (B, reads, k): c^T H_{<t} per memory

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        history, t = ctx.history, ctx.step
        history.read_grads[:, t] = grad
        return torch.bmm(grad, history.values[:, :t].transpose(1, 2)), None, None, None


class _HistoryBuffers:
    """
    The plain storage the history's graph nodes share: written values H, the queries, and the per-step gradients
    the reads record. It holds no tensor with a graph: the nodes' contexts refer to it, and anything here that
    referred back to the graph would be a reference cycle through autograd's C++ nodes that Python's garbage
    collector cannot break (the pass's whole graph would stay alive; see `memplugins.modules.step_linear`).
    """

    def __init__(self, queries: torch.Tensor, num_reads: int) -> None:
        batch_size, steps, size = queries.size()
        dtype = state_dtype(queries)  # float32 under autocast (memplugins.modules.autocast)
        self.queries = queries.detach().to(dtype)
        self.values = queries.new_zeros(batch_size, steps, size, dtype=dtype)
        self.query_grads = queries.new_zeros(batch_size, steps, steps, dtype=dtype)  # [b, t, s]: ∂L/∂(h_s · o_t)
        self.read_coefficients = queries.new_zeros(batch_size, steps, num_reads, steps, dtype=dtype)  # [b, t, r, s]
        self.read_grads = queries.new_zeros(batch_size, steps, num_reads, size, dtype=dtype)  # ∂L/∂(read r at t)


class WriteHistory:
    """
    H: the values h_1..h_T written so far, `(B, T, k)`, as plain storage read by `query` (H_{<t} o_t) and `read`
    (C H_{<t}, one coefficient row per written memory), with the per-step gradients those reads record.
    """

    def __init__(self, queries: torch.Tensor, num_reads: int) -> None:
        self._buffers = _HistoryBuffers(queries, num_reads)
        self.token: Optional[torch.Tensor] = None  # the latest write's output (a graph tensor: kept only here)

    def query(self, step: int, query: torch.Tensor) -> torch.Tensor:
        return _HistoryQuery.apply(query, self.token, self._buffers, step)

    def read(self, step: int, coefficients: torch.Tensor) -> torch.Tensor:
        return _HistoryRead.apply(coefficients, self.token, self._buffers, step)

    def write(self, step: int, value: torch.Tensor) -> None:
        self.token = _HistoryWrite.apply(value, self.token, self._buffers, step)


class FactoredMemory:
    """
    One memory M_t = diag(a_t) M_0 + W_t H_t (see the module doc). `initial` `(B, l, k)` is M_0, `mask` `(B, l)` its
    real slots, `queries` `(B, T, k)` every o_t; `written`: whether `write` will be called (false for a memory that
    is only read).
    """

    def __init__(self, initial: torch.Tensor, mask: torch.BoolTensor, queries: torch.Tensor, written: bool) -> None:
        self.initial = initial
        self.mask = mask
        self.written = written
        # M_0 o_t for every t at once; unbound, because indexing step t would cost a full-size zero gradient per step
        self.initial_scores = torch.bmm(initial, queries.transpose(1, 2)).unbind(2)
        # the keys feed a_t and W_t, which compound over the steps: float32 under autocast (CPU autocast would
        # otherwise keep the softmax in bfloat16)
        self._state_dtype = state_dtype(initial)
        self.reader = StepMatrixReader(initial)
        self.decay: Optional[torch.Tensor] = None  # a_t, (B, l); None: all ones
        self.write_weights: Optional[torch.Tensor] = None  # W_t, (B, l, t); None: t = 0

    def keys(self, step: int, history_scores: Optional[torch.Tensor]) -> torch.Tensor:
        """z_t = softmax(M_{t-1} o_t) over the real slots (2); `history_scores`: H_{<t} o_t `(B, t)`."""
        scores = self.initial_scores[step].to(self._state_dtype)
        if self.decay is not None:
            scores = scores * self.decay
            scores = scores + torch.bmm(self.write_weights, history_scores.unsqueeze(-1)).squeeze(-1)
        scores = scores.masked_fill(~self.mask, torch.finfo(scores.dtype).min)
        return torch.softmax(scores, dim=-1) * self.mask  # the mask product zeroes rows with no real slot

    def read_initial(self, keys: torch.Tensor) -> torch.Tensor:
        """The M_0 part of z_t^T M_{t-1} (3)."""
        return self.reader(keys * self.decay if self.decay is not None else keys)

    def history_coefficients(self, keys: torch.Tensor) -> Optional[torch.Tensor]:
        """z_t^T W_{t-1} `(B, t)`, the weights of the H part of (3); None before the first write."""
        if self.write_weights is None:
            return None
        return torch.bmm(keys.unsqueeze(1), self.write_weights).squeeze(1)

    def write(self, keys: torch.Tensor) -> None:
        """Records (6) with key `keys` (0 where nothing may be written); the value is the step's `WriteHistory` row."""
        keep = 1 - keys
        self.decay = keep if self.decay is None else self.decay * keep
        column = keys.unsqueeze(-1)
        if self.write_weights is None:
            self.write_weights = column
        else:
            self.write_weights = torch.cat([self.write_weights * keep.unsqueeze(-1), column], dim=-1)

    def final(self, written_values: torch.Tensor) -> torch.Tensor:
        """M_T, from `written_values` `(B, T, k)`, the h_t written (with autograd, unlike `WriteHistory`)."""
        if self.write_weights is None:
            return self.initial
        return self.initial * self.decay.unsqueeze(-1) + torch.bmm(self.write_weights, written_values)


def read_memories(
    step: int, query: torch.Tensor, memories: List[FactoredMemory], history: WriteHistory
) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    """Keys z^n_t and retrievals m^n_t (2-3, 10-11) of every memory at `step`, sharing the history products."""
    history_scores = history.query(step, query) if step > 0 else None
    keys = [memory.keys(step, history_scores) for memory in memories]
    retrieved = [memory.read_initial(z) for memory, z in zip(memories, keys)]
    coefficients = [(n, memory.history_coefficients(z)) for n, (memory, z) in enumerate(zip(memories, keys))]
    coefficients = [(n, c) for n, c in coefficients if c is not None]
    if coefficients:
        from_history = history.read(step, torch.stack([c for _, c in coefficients], 1)).unbind(1)
        for (n, _), m in zip(coefficients, from_history):
            retrieved[n] = retrieved[n] + m
    return keys, retrieved
