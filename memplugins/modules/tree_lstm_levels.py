"""
The tree LSTM's composition over all internal nodes of a batch (Le and Zuidema 2015, section 3; the equations and
the node layout are documented in `memplugins.encoders.tree_lstm`), level by level, as one autograd Function with
a hand-written backward: the fast path `TreeLstmEncoder.encode` takes. `TreeLstmEncoder.reference_encode`, the
same computation written with autograd's operations, is kept beside it, and `tests/encoders/tree_lstm_test.py`
compares the two (outputs and every gradient, each activation, under autocast, through a retained graph), as well
as both with a recursive one-tree-at-a-time implementation.

A node passes 9 blocks of d to its parent: its output contributions [i1, i2, f1, f2 | c1 | o1 | c2 | o2] (the 8
products W·x of the equations, with the memory peepholes W_ci·c, W_cf·c added into the 4 gate blocks) and its
memory c. A level gathers its children's blocks (x: left, y: right), computes

    [i_1, i_2, f_1, f_2] = σ([x_i1 + y_i2, x_i2 + y_i1, x_f1 + y_f2, x_f2 + y_f1] + [b_i, b_i, b_f, b_f])
    u   = x_c1 ⊙ i_1 + y_c2 ⊙ i_2 + b_c;          c_p = f_1 ⊙ c_x + f_2 ⊙ c_y + g(u)
    [P; q] = [W_ci1, W_ci2, W_cf1, W_cf2; W_co] c_p
    o   = σ(x_o1 + y_o2 + q + b_o);                p = o ⊙ g(c_p)
    blocks of p for its parent: W_out p + [P, 0]

and stores the parents' blocks. Why the backward is equal: it is the chain rule of exactly these operations, level
by level from the root down (a parent's level is processed before its children's, so the gradient of a node's
blocks is complete when its level is reached; every node has one parent, so a level's child gradients are written,
not accumulated):

    g_p = g_out + g_blocks W_out;   g_o = g_p ⊙ g(c_p);   g_ô = g_o ⊙ o (1 - o)
    g_c = g_c(parent) + g_p ⊙ o ⊙ g'(c_p) + [g_P; g_ô] [W_ci; W_co] (g_P: the gate blocks' gradient)
    g_u = g_c ⊙ g'(u);  g_i1 = g_u ⊙ x_c1,  g_x_c1 = g_u ⊙ i_1 (and the same for the right child);
    g_f1 = g_c ⊙ c_x,  g_c_x = g_c ⊙ f_1;  gate pre-activations: times σ (1 - σ); y's gate pairs swapped back

The weight gradients of the per-level products (W_out, [W_ci; W_co]) are formed once, from all levels' rows.
What it saves over autograd: 20-odd graph nodes per level forward and twice as many backward, which at d = 50
cost far more than the arithmetic. Under autocast it runs in float32 (`memplugins.modules.autocast`). A second
backward through a retained graph works; `create_graph=True` raises (the backward has no graph of its own).
"""
from typing import List, Optional, Tuple

import torch

from memplugins.modules.autocast import autocast_disabled, autocast_enabled

# g and its derivative, from g's input u and output g(u)
ACTIVATION_DERIVATIVES = {
    "tanh": lambda u, gu: 1 - gu * gu,
    "sigmoid": lambda u, gu: gu * (1 - gu),
    "softsign": lambda u, gu: (1 - gu.abs()) ** 2,  # 1 / (1 + |u|)² = (1 - |softsign(u)|)²
}
ACTIVATIONS = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "softsign": torch.nn.functional.softsign}


def _swap_pairs(gates: torch.Tensor, d: int) -> torch.Tensor:
    """[a1, a2, b1, b2] -> [a2, a1, b2, b1] (blocks of d): the right child's gate blocks in the left one's order."""
    return gates.reshape(-1, 2, 2, d).flip(2).reshape(-1, 4 * d)


def _forward(leaf_blocks, leaf_rows, levels, num_rows, output_weight, memory_weight, gate_bias, activation, saved):
    d = output_weight.size(1)
    g = ACTIVATIONS[activation]
    store = leaf_blocks.new_zeros(num_rows, 9 * d)  # every node's blocks for its parent
    store[leaf_rows, : 8 * d] = leaf_blocks  # leaves: memory 0
    outputs = leaf_blocks.new_zeros(num_rows, d)
    bias_i, bias_f, bias_c, bias_o = gate_bias.chunk(4)
    bias_gates = torch.cat([bias_i, bias_i, bias_f, bias_f])
    for parents, children in levels:
        n = parents.numel()
        both = store.index_select(0, children)  # (2n, 9d): left children, then right children
        x, y = both[:n], both[n:]
        gates = torch.sigmoid(torch.add(x[:, : 4 * d], _swap_pairs(y[:, : 4 * d], d)).add_(bias_gates))
        input_1, input_2, forget_1, forget_2 = gates.chunk(4, dim=-1)
        pre_candidate = torch.addcmul(torch.addcmul(bias_c, x[:, 4 * d : 5 * d], input_1), y[:, 6 * d : 7 * d], input_2)
        candidate = g(pre_candidate)
        memory = torch.addcmul(torch.addcmul(candidate, forget_1, x[:, 8 * d :]), forget_2, y[:, 8 * d :])
        peepholes = memory.mm(memory_weight.t())  # (n, 5d): gate peepholes for the parent, then W_co c_p
        output_gate = torch.sigmoid(x[:, 5 * d : 6 * d] + y[:, 7 * d : 8 * d] + peepholes[:, 4 * d :] + bias_o)
        memory_activation = g(memory)
        output = output_gate * memory_activation
        blocks = torch.empty_like(both[:n])
        blocks[:, : 8 * d] = output.mm(output_weight.t())
        blocks[:, : 4 * d] += peepholes[:, : 4 * d]
        blocks[:, 8 * d :] = memory
        store.index_copy_(0, parents, blocks)
        outputs.index_copy_(0, parents, output)
        if saved is not None:
            saved.append((gates, pre_candidate, candidate, memory, output_gate, memory_activation))
    return outputs, store


class _TreeLstmLevels(torch.autograd.Function):
    @staticmethod
    def forward(ctx, leaf_blocks, output_weight, memory_weight, gate_bias, leaf_rows, levels, num_rows, activation):
        saved: List[Tuple[torch.Tensor, ...]] = []
        outputs, store = _forward(leaf_blocks, leaf_rows, levels, num_rows, output_weight, memory_weight, gate_bias,
                                  activation, saved)
        ctx.levels, ctx.activation, ctx.per_level = levels, activation, saved
        ctx.save_for_backward(store, outputs, leaf_rows, output_weight, memory_weight)
        return outputs

    @staticmethod
    def backward(ctx, grad_outputs: torch.Tensor):
        if torch.is_grad_enabled():
            raise RuntimeError("tree_lstm: the composition's backward is not differentiable (no double backward); "
                               "use TreeLstmEncoder.reference_encode for higher-order gradients")
        store, outputs, leaf_rows, output_weight, memory_weight = ctx.saved_tensors
        d = output_weight.size(1)
        derivative = ACTIVATION_DERIVATIVES[ctx.activation]
        grad_store = store.new_zeros(store.size())
        grad_bias = store.new_zeros(4 * d)
        block_grads, output_rows, peephole_grads, memory_rows = [], [], [], []
        for (parents, children), (gates, pre_candidate, candidate, memory, output_gate, memory_activation) in zip(
            reversed(ctx.levels), reversed(ctx.per_level)
        ):
            n = parents.numel()
            both = store.index_select(0, children)
            x, y = both[:n], both[n:]
            grad_blocks = grad_store.index_select(0, parents)  # complete: the parents' level ran before
            grad_contributions = grad_blocks[:, : 8 * d]
            grad_output = torch.addmm(grad_outputs.index_select(0, parents), grad_contributions, output_weight)
            grad_output_pre = grad_output * memory_activation * output_gate * (1 - output_gate)
            grad_peepholes = torch.cat([grad_contributions[:, : 4 * d], grad_output_pre], dim=-1)  # (n, 5d)
            grad_memory = torch.addmm(grad_blocks[:, 8 * d :], grad_peepholes, memory_weight)
            grad_memory += grad_output * output_gate * derivative(memory, memory_activation)
            grad_pre_candidate = grad_memory * derivative(pre_candidate, candidate)
            input_1, input_2, forget_1, forget_2 = gates.chunk(4, dim=-1)
            grad_gates = torch.cat([grad_pre_candidate * x[:, 4 * d : 5 * d], grad_pre_candidate * y[:, 6 * d : 7 * d],
                                    grad_memory * x[:, 8 * d :], grad_memory * y[:, 8 * d :]], dim=-1)
            grad_gates *= gates * (1 - gates)
            grad_children = torch.zeros_like(both)
            grad_x, grad_y = grad_children[:n], grad_children[n:]
            grad_x[:, : 4 * d] = grad_gates
            grad_y[:, : 4 * d] = _swap_pairs(grad_gates, d)
            torch.mul(grad_pre_candidate, input_1, out=grad_x[:, 4 * d : 5 * d])
            grad_x[:, 5 * d : 6 * d] = grad_output_pre
            torch.mul(grad_pre_candidate, input_2, out=grad_y[:, 6 * d : 7 * d])
            grad_y[:, 7 * d : 8 * d] = grad_output_pre
            torch.mul(grad_memory, forget_1, out=grad_x[:, 8 * d :])
            torch.mul(grad_memory, forget_2, out=grad_y[:, 8 * d :])
            grad_store.index_copy_(0, children, grad_children)  # one parent per node: written, not accumulated
            summed_gates = grad_gates.sum(0)
            grad_bias += torch.cat([summed_gates[:d] + summed_gates[d : 2 * d],
                                    summed_gates[2 * d : 3 * d] + summed_gates[3 * d :],
                                    grad_pre_candidate.sum(0), grad_output_pre.sum(0)])
            block_grads.append(grad_contributions)
            output_rows.append(parents)
            peephole_grads.append(grad_peepholes)
            memory_rows.append(memory)
        grad_output_weight = grad_memory_weight = None
        if block_grads:
            grad_output_weight = torch.cat(block_grads).t().mm(outputs.index_select(0, torch.cat(output_rows)))
            grad_memory_weight = torch.cat(peephole_grads).t().mm(torch.cat(memory_rows))
        else:
            grad_output_weight, grad_memory_weight = torch.zeros_like(output_weight), torch.zeros_like(memory_weight)
        grad_leaf_blocks = grad_store.index_select(0, leaf_rows)[:, : 8 * d]
        return grad_leaf_blocks, grad_output_weight, grad_memory_weight, grad_bias, None, None, None, None


def tree_lstm_levels(
    leaf_blocks: torch.Tensor,
    leaf_rows: torch.Tensor,
    levels: List[Tuple[torch.Tensor, torch.Tensor]],
    num_rows: int,
    output_weight: torch.Tensor,
    memory_weight: torch.Tensor,
    gate_bias: torch.Tensor,
    activation: str,
) -> torch.Tensor:
    """
    leaf_blocks: the leaves' 8 contribution blocks `(num_leaves, 8d)` at rows `leaf_rows` of the node buffer;
    levels: per height, the parents' rows `(n,)` and their children's rows (left children, then right, `(2n,)`);
    num_rows: the node buffer's size; output_weight W_out `(8d, d)`; memory_weight [W_ci1, W_ci2, W_cf1, W_cf2;
    W_co] `(5d, d)`; gate_bias [b_i, b_f, b_c, b_o] `(4d,)`. Returns every node's output `(num_rows, d)` (0 at the
    leaves' and padding rows).
    """
    tensors = (leaf_blocks, output_weight, memory_weight, gate_bias)
    if autocast_enabled():  # float32 composition (module doc)
        with autocast_disabled():
            return tree_lstm_levels(leaf_blocks.float(), leaf_rows, levels, num_rows, output_weight.float(),
                                    memory_weight.float(), gate_bias.float(), activation)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return _TreeLstmLevels.apply(leaf_blocks, output_weight, memory_weight, gate_bias, leaf_rows, levels,
                                     num_rows, activation)
    return _forward(leaf_blocks, leaf_rows, levels, num_rows, output_weight, memory_weight, gate_bias, activation,
                    None)[0]
