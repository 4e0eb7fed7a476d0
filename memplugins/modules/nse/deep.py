"""
The NSE with more than one write-LSTM layer (Munkhdalai and Yu 2017, section 4: "two-layer LSTM" read/write modules
for answer selection, which `memplugins.models.answer_selection` therefore defaults to), batched over the examples
and run step by step. The one-layer fast path (`fast.py`) does not cover it: its factored memory and hand-written
backward are derived for a single write cell. It takes explicit weights (`weights.NseWeights`), not the encoder.

Per step t, for the whole batch (rows of M are the paper's columns m_i; the reference's equation numbers):
    o_t                  the read LSTM's output, all t at once (1) (`run_masked_lstm`, as the fast path)
    z_t, m_r,t           = memory_read(M_{t-1}, o_t)                  (2), (3); (10), (11) per extra memory
                           (the query β_t o_t with `key_strength`, (2'); all t at once before the loop)
    c_t                  = compose([o_t; m_r,t; m_r,t^(n)...])       (4), (12)
    h_t^(1..L), c^(1..L) = the L write-LSTM cells (torch's LSTM cell), layer l's input the output of layer l - 1,
                           c_t the first's                             (5), (13)
    M_t                  = memory_write(M_{t-1}, z_t, h_t^(L))        (6); (14), (15) for written extra memories
with `memory.py`'s read and write (the NSE decoder's, with hand-written backward passes). The
compose layer's and the write cells' weight products go through `_StepProducts`: a step's backward returns its
input's gradient and leaves (x_t, g_t) for one product over all steps, Gᵀ X, that forms the weight's gradient (as
the one-layer fast path does), instead of autograd's (4k × k) outer product per step and weight; the rest of the
loop is autograd's.

Why it equals the reference: the same equations, each on a `(B, ...)` batch instead of one example:
- a padded slot (of M_0 or of an extra memory) gets z_i = 0 exactly (the read's masked softmax), which is what the
  reference's memory, which has no such slot, implies: the softmax over the real slots is the same, and a write
  leaves the padded slot as it was;
- at a padded step of an example (t ≥ its length) the read's mask is all false, so z_t = 0 and m_r,t = 0; the write
  with z_t = 0 returns M unchanged (lerp(M, h, 0) = M exactly), and the outputs H, Z and the extra keys are zero
  there, as the reference's padding. The write LSTMs run on through the padding (the sequences are right-padded,
  so only padded steps follow), but what they compute there is neither written nor returned: every memory after
  the loop is the one after the example's last real step, and the padded steps contribute nothing to any gradient;
- an example of length 0 reads and writes nothing: H = 0, M = M_0 = 0, extra memories unchanged.
- Dropout: the caller passes the scaled masks for o_t and for the written h_t, as to the reference (the write LSTM
  carries the h before dropout, the memory and H receive it after).
`tests/modules/nse/deep_test.py` compares outputs and every gradient with the reference in float64, padded,
with the own and extra memories written and read-only, and with dropout masks.

It keeps the fast-path contract (`memplugins.modules.fast_path.contract`): under autocast the loop runs in float32 with
autocast off (the read LSTM before it stays autocast's); the memory read and write refuse `create_graph=True` (for
higher-order gradients use the reference). Autograd keeps each step's memory for the backward: O(B T² k) floats
per memory (the one-layer fast path keeps O(B T k)), e.g. 13 MB for B = 4, T = 40, k = 512.
"""
from typing import List, Optional, Sequence, Tuple

import torch

from memplugins.modules.fast_path.contract import first_order_backward, in_float32_under_autocast
from memplugins.modules.nse.memory import memory_read, memory_write
from memplugins.modules.nse.weights import COMPOSE_ACTIVATIONS, NseWeights


class _Stash:
    """What the step products' backward passes leave for their weight's gradient: their inputs and output grads."""

    def __init__(self) -> None:
        self.inputs: List[torch.Tensor] = []
        self.grads: List[torch.Tensor] = []


class _WeightGradient(torch.autograd.Function):
    """
    Connects a weight to the step products that use it through a scalar token. Every step product consumes the
    token, so autograd runs this backward after all of theirs: it then forms the weight's gradient as one product
    over all steps, Σ_t g_tᵀ x_t = Gᵀ X, from what they stashed, instead of one (4k × k) outer product per step
    and per weight (at batch 4, k = 512, those took 60 % of the loop's time, bound by writing 4 MB each).
    """

    @staticmethod
    def forward(ctx, weight: torch.Tensor, stash: _Stash) -> torch.Tensor:
        ctx.stash = stash
        return weight.new_zeros(())

    @staticmethod
    @first_order_backward
    def backward(ctx, _grad_token: torch.Tensor):
        stash = ctx.stash
        if not stash.grads:
            return None, None
        grad = torch.cat(stash.grads).t().mm(torch.cat(stash.inputs))
        stash.inputs, stash.grads = [], []  # a retained graph's next backward stashes anew
        return grad, None


class _StepProduct(torch.autograd.Function):
    """x Wᵀ for one step: the backward returns x's gradient and stashes (x, g) for `_WeightGradient`."""

    @staticmethod
    def forward(ctx, inputs: torch.Tensor, weight: torch.Tensor, token: torch.Tensor, stash: _Stash) -> torch.Tensor:
        ctx.save_for_backward(inputs, weight)
        ctx.stash = stash
        return inputs.mm(weight.t())

    @staticmethod
    @first_order_backward
    def backward(ctx, grad: torch.Tensor):
        inputs, weight = ctx.saved_tensors
        ctx.stash.inputs.append(inputs.detach())  # detached: the stash holds no graph (no reference cycle)
        ctx.stash.grads.append(grad)
        grad_inputs = grad.mm(weight) if ctx.needs_input_grad[0] else None
        return grad_inputs, None, grad.new_zeros(()), None


class _StepProducts:
    """x ↦ x Wᵀ at every step of a loop, W's gradient formed once over all steps (plain `linear` where W gets none)."""

    def __init__(self, weight: torch.Tensor) -> None:
        self.weight = weight
        self.stash = _Stash()
        self.token = (_WeightGradient.apply(weight, self.stash)
                      if torch.is_grad_enabled() and weight.requires_grad else None)

    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        if self.token is None:
            return torch.nn.functional.linear(inputs, self.weight)
        return _StepProduct.apply(inputs, self.weight.detach(), self.token, self.stash)


def nse_deep_write(
    weights: NseWeights,
    read_outputs: torch.Tensor,
    initial_memory: torch.Tensor,
    mask: torch.BoolTensor,
    extra_memories: Sequence[Tuple[torch.Tensor, torch.BoolTensor]] = (),
    read_dropout: Optional[torch.Tensor] = None,
    value_dropout: Optional[torch.Tensor] = None,
    compose_dropout: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, List[torch.Tensor], List[torch.Tensor]]:
    """
    The loop over the read LSTM's outputs o_t `read_outputs` `(B, T, k)` (eq. 1, computed by the caller for all t;
    before their dropout) and M_0 `initial_memory` `(B, T, k)`, with mask `(B, T)` and the extra memories (each
    `(B, l_n, k)` with its slot mask), in `NseOutput`'s order and shapes: H `(B, T, k)`, M_T `(B, T, k)`, keys
    `(B, T, T)`, the final extra memories and their keys `(B, T, l_n)`. read_dropout / value_dropout: scaled dropout
    masks `(B, T, k)` for o_t and for the written h_t, or None; compose_dropout `(B, T, c)`: for c_t as the first
    write layer's input, or None (dropout on x_t, the other input placement, is in `read_outputs` already).
    """
    # the recurrence in float32 under autocast (the fast-path contract)
    return in_float32_under_autocast(_loop, weights, read_outputs, initial_memory, mask, list(extra_memories),
                                     read_dropout, value_dropout, compose_dropout)


def _loop(weights, read_outputs, memory, mask, extra_memories, read_dropout, value_dropout, compose_dropout):
    if read_dropout is not None:
        read_outputs = read_outputs * read_dropout
    batch_size, num_steps, k = read_outputs.shape
    extras = [extra for extra, _ in extra_memories]
    extra_masks = [slots for _, slots in extra_memories]
    write_memory, write_extras = weights.write_memory, weights.write_extra_memories
    activation = COMPOSE_ACTIVATIONS[weights.compose_activation]
    states = [(read_outputs.new_zeros(batch_size, k), read_outputs.new_zeros(batch_size, k))
              for _ in weights.write_layers]
    # the compose layer's and each write cell's products, [x, h] [W_ih, W_hh]ᵀ, with their gradients deferred
    compose = _StepProducts(weights.compose_weight)
    cells = [(_StepProducts(torch.cat([weight_ih, weight_hh], 1)), bias_ih + bias_hh if bias_ih is not None else None)
             for weight_ih, weight_hh, bias_ih, bias_hh in weights.write_layers]
    hidden, keys, extra_keys = [], [], [[] for _ in extras]
    queries = read_outputs.unbind(1)  # one backward node for all steps (a slice per step would add a (B, T, k) each)
    # the reads' queries β_t o_t, β_t = softplus(w_β^T o_t + b_β) (2'); without key_strength they are the o_t above
    # (no second unbind node)
    keyed = queries
    if weights.key_strength_weight is not None:
        strengths = torch.nn.functional.softplus(torch.nn.functional.linear(
            read_outputs, weights.key_strength_weight, weights.key_strength_bias))
        keyed = (read_outputs * strengths).unbind(1)
    for t in range(num_steps):
        step = mask[:, t].unsqueeze(1)  # (B, 1): whether step t is real for each example
        o_t = queries[t]
        z_t, read = memory_read(memory, mask & step, keyed[t])  # (2), (3); nothing at a padded step
        reads = [memory_read(extra, slots & step, keyed[t]) for extra, slots in zip(extras, extra_masks)]
        composed = compose(torch.cat([o_t, read] + [r for _, r in reads], -1))  # (4), (12)
        if weights.compose_bias is not None:
            composed = composed + weights.compose_bias
        layer_input = activation(composed)
        if compose_dropout is not None:
            layer_input = layer_input * compose_dropout[:, t]
        for layer, ((products, bias), (h, c)) in enumerate(zip(cells, states)):  # (5), (13): layer by layer
            gates = products(torch.cat([layer_input, h], -1))  # torch's LSTM cell: gates (i, f, g, o)
            if bias is not None:
                gates = gates + bias
            i, f, g, o = gates.chunk(4, -1)
            new_c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            new_h = torch.sigmoid(o) * torch.tanh(new_c)
            states[layer] = (new_h, new_c)  # past an example's end they run on, unread (see the docstring)
            layer_input = new_h
        h_t = layer_input if value_dropout is None else layer_input * value_dropout[:, t]
        if write_memory:
            memory = memory_write(memory, z_t, h_t)  # (6), (14): z_t = 0 at padded slots and steps
        for n, (z_n, _) in enumerate(reads):
            if write_extras:
                extras[n] = memory_write(extras[n], z_n, h_t)  # (15)
            extra_keys[n].append(z_n)
        hidden.append(h_t * step)
        keys.append(z_t)
    if num_steps == 0:
        empty = read_outputs.new_zeros(batch_size, 0, k)
        return empty, memory, read_outputs.new_zeros(batch_size, 0, 0), extras, [
            read_outputs.new_zeros(batch_size, 0, extra.size(1)) for extra in extras]
    return (torch.stack(hidden, 1), memory, torch.stack(keys, 1), extras,
            [torch.stack(z, 1) for z in extra_keys])
