"""
The tree LSTM's composition over all internal nodes of a batch (Le and Zuidema 2015, section 3; the equations are
documented in the package docstring, `memplugins.modules.tree_lstm`), level by level, as one autograd Function with
a hand-written backward: the fast path `TreeLstmEncoder.encode` takes, through `tree_lstm_nodes`, which also lays
the encoder's weights out as the records below. Its reference is the recursive, one-tree-at-a-time form of the
paper's equations in `reference.py`, and `tests/modules/tree_lstm/fast_test.py` compares the two (every node's
output and every gradient, each activation, with a leaf LSTM below).

Side-aware records. Every node but a root is either the left (x) or the right (y) child of its parent, and which
is known from the tree before anything is computed. A node computes, once, the record its parent reads: 7 blocks
of d,

    left child x:   [W_i1 x + W_ci1 c_x + b_i, W_i2 x + W_ci2 c_x + b_i, W_f1 x + W_cf1 c_x + b_f,
                     W_f2 x + W_cf2 c_x + b_f | W_c1 x | W_o1 x + b_o | c_x]
    right child y:  [W_i2 y + W_ci2 c_y,       W_i1 y + W_ci1 c_y,       W_f2 y + W_cf2 c_y,
                     W_f1 y + W_cf1 c_y       | W_c2 y | W_o2 y       | c_y]

(the right child's blocks are already in the parent's gate order, [i_1, i_2, f_1, f_2]; the biases ride on the
left child, which every parent has exactly once). A parent's gate pre-activations and output-gate terms are then
the plain sum of its two children's records:

    s = rec_x + rec_y;  [i_1, i_2, f_1, f_2] = σ(s[gates])
    u = i_1 ⊙ W_c1 x + i_2 ⊙ W_c2 y + b_c;   c_p = f_1 ⊙ c_x + f_2 ⊙ c_y + g(u)
    o = σ(s[o] + W_co c_p);                  p = o ⊙ g(c_p)

which are the paper's equations term by term (a product per child block, one sum, no reordering of blocks). A
node computes 6 blocks for its parent rather than the 8 (both children's sets) a side-blind layout needs: the
per-node matrix products are the paper's count (6 d·d_w per leaf, 6 d² + 4 d² + d² per internal node).

Why the backward is equal: it is the chain rule of the operations above, level by level from the root down (a
parent's level is processed before its children's, so the gradient of a node's record is complete when its level is
reached; every node has one parent, so a level writes its children's record gradients, never accumulates them):

    g_p = g_out + g_rec[:6d] W_side;   g_ô = g_p ⊙ g(c_p) ⊙ o (1 - o)
    g_c = g_rec[c] + g_rec[gates] W_peep,side + g_p ⊙ o ⊙ g'(c_p) + g_ô W_co;   g_u = g_c ⊙ g'(u)
    g_s[gates] = [g_u ⊙ W_c1 x, g_u ⊙ W_c2 y, g_c ⊙ c_x, g_c ⊙ c_y] ⊙ σ'  (the same for both children: s is a sum)
    g_rec_x = [g_s[gates] | g_u ⊙ i_1 | g_ô | g_c ⊙ f_1],   g_rec_y = [g_s[gates] | g_u ⊙ i_2 | g_ô | g_c ⊙ f_2]

The weight gradients of the per-level products are formed once, from all levels' rows. What it saves over
autograd: 20-odd graph nodes per level forward and twice as many backward, which at d = 50 cost more than the
arithmetic. Mixed precision, `no_grad`, retained graphs and `create_graph`: the fast-path contract
(`memplugins.modules.fast_path.contract`). The node layout (`sided_levels`) is `layout.py`'s.

On CUDA (float32 / float64) a level's gather and the pointwise work around its one product are two Triton launches
(`level_kernel.py`, which says why they are equal); the "eager" backend turns that off. With the default "graphs"
backend on CUDA, the whole forward and the whole backward are each one CUDA graph per key (`step_graphs`): the
batch is padded to the key's leaves, levels and level sizes (`tree_lstm_nodes`, `layout.level_capacities`), so the
host launches nothing per level; `tests/modules/tree_lstm/graphs_test.py` compares it with this eager loop and the
reference.
"""
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch

from memplugins.modules.fast_path import backend
from memplugins.modules.fast_path.contract import first_order_backward, run_fast_path, triton_kernel_applies
from memplugins.modules.fast_path.step_graphs import StepGraphs
from memplugins.modules.tree_lstm.layout import SidedLevels, nodes_per_tree, pad_leaves, sided_levels


class TreeLstmWeights(NamedTuple):
    """A tree LSTM's weights as plain tensors (`TreeLstmEncoder.weights()`; what `reference.py` reads too)."""

    leaf_output: torch.Tensor  # (8d, d_w): blocks [W_i1, W_i2, W_f1, W_f2, W_c1, W_o1, W_c2, W_o2] for a leaf child
    internal_output: torch.Tensor  # (8d, d): the same blocks for an internal child (untied from the leaf set)
    memory: torch.Tensor  # (4d, d): peephole blocks [W_ci1, W_ci2, W_cf1, W_cf2]
    output_peephole: torch.Tensor  # (d, d): W_co
    gate_bias: torch.Tensor  # (4d,): [b_i, b_f, b_c, b_o]
    leaf_projection: Optional[torch.Tensor]  # (d, d_w): a leaf's reported state when d_w != d, else None
    activation: str  # g: "tanh", "sigmoid" or "softsign"

Structure = Tuple[Tuple[int, int, int], ...]  # per level (#left, #right, #root): `SidedLevels.structure`

ACTIVATIONS = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "softsign": torch.nn.functional.softsign}
# g' from g's output
ACTIVATION_DERIVATIVES = {
    "tanh": lambda gu: 1 - gu * gu,
    "sigmoid": lambda gu: gu * (1 - gu),
    "softsign": lambda gu: (1 - gu.abs()) ** 2,  # 1 / (1 + |u|)² = (1 - |softsign(u)|)²
}
# blocks [i1, i2, f1, f2, c1, o1, c2, o2] of a child's output weights, in the record's order for each side
LEFT_BLOCKS, RIGHT_BLOCKS = [0, 1, 2, 3, 4, 5], [1, 0, 3, 2, 6, 7]
# blocks [ci1, ci2, cf1, cf2] of the memory peepholes
LEFT_PEEPHOLES, RIGHT_PEEPHOLES = [0, 1, 2, 3], [1, 0, 3, 2]


def _levels(parents: torch.Tensor, children: torch.Tensor, structure: Structure):
    """Per level (parents, children, #left, #right): views of the flat layout (`SidedLevels`)."""
    offset = 0
    for num_left, num_right, num_roots in structure:
        n = num_left + num_right + num_roots
        yield parents[offset : offset + n], children[2 * offset : 2 * (offset + n)], num_left, num_right
        offset += n


def _forward(leaf_records, leaf_rows, parents, children, structure, num_rows, weights, activation, keep):
    """The levels, lowest first: (every node's output `(num_rows, d)`, what the backward reads or None)."""
    left_weight, right_weight, left_peephole, right_peephole, output_peephole, left_bias, candidate_bias = weights
    d = output_peephole.size(0)
    g = ACTIVATIONS[activation]
    # transposed once, not per level
    left_weight, right_weight, left_peephole, right_peephole, output_peephole = (
        left_weight.t(), right_weight.t(), left_peephole.t(), right_peephole.t(), output_peephole.t()
    )
    # each node's record for its parent; a real row is read only after it was written, and a padded layout's
    # children row (`SidedLevels`) is read and never written: zeros, so that padding stays finite
    store = leaf_records.new_zeros(num_rows, 7 * d)
    store.index_copy_(0, leaf_rows, torch.cat([leaf_records, leaf_records.new_zeros(len(leaf_records), d)], 1))
    outputs = leaf_records.new_zeros(num_rows, d)
    kernel = (triton_kernel_applies(leaf_records, "memplugins.modules.tree_lstm.level_kernel")
              and store.is_contiguous() and outputs.is_contiguous())
    per_level: List[Tuple[torch.Tensor, ...]] = []
    for level_parents, level_children, num_left, num_right in _levels(parents, children, structure):
        n = level_parents.numel()
        if kernel:  # the same in two Triton launches around the product (`tree_level_kernel`)
            from memplugins.modules.tree_lstm.level_kernel import gather_and_gates, level_output

            gates, candidate, memory, output_pre = gather_and_gates(store, level_children, candidate_bias, d,
                                                                    activation)
            output_gate, memory_activation, output = level_output(
                torch.addmm(output_pre, memory, output_peephole), memory, level_parents, outputs, activation)
        else:
            pair = store.index_select(0, level_children).view(2, n, 7 * d)  # left children's records, then right
            summed = pair[0] + pair[1]
            gates = torch.sigmoid(summed[:, : 4 * d])  # [i_1, i_2, f_1, f_2]
            per_child = gates.view(n, 2, 2, d).permute(1, 2, 0, 3)  # [i or f][child k], (n, d) each
            pre_candidate = (pair[:, :, 4 * d : 5 * d] * per_child[0]).sum(0).add_(candidate_bias)  # u
            candidate = g(pre_candidate)
            memory = (pair[:, :, 6 * d :] * per_child[1]).sum(0).add_(candidate)  # c_p
            output_gate = torch.sigmoid(torch.addmm(summed[:, 5 * d : 6 * d], memory, output_peephole))
            memory_activation = g(memory)
            output = output_gate * memory_activation
            outputs.index_copy_(0, level_parents, output)
        with_parent = num_left + num_right
        if with_parent:
            records = output.new_empty(with_parent, 7 * d)
            torch.addmm(left_bias, output[:num_left], left_weight, out=records[:num_left, : 6 * d])
            torch.mm(output[num_left:with_parent], right_weight, out=records[num_left:, : 6 * d])
            records[:num_left, : 4 * d].addmm_(memory[:num_left], left_peephole)
            records[num_left:, : 4 * d].addmm_(memory[num_left:with_parent], right_peephole)
            records[:, 6 * d :] = memory[:with_parent]
            store.index_copy_(0, level_parents[:with_parent], records)
        if keep:
            per_level.append((gates, candidate, memory, output_gate, memory_activation, output))
    if not keep:
        return outputs, None
    # one buffer per kind, not six tensors per level: a graph's call copies what it keeps (`step_graphs`)
    widths = (4, 1, 1, 1, 1, 1)  # gates, g(u), c_p, o, g(c_p), output: blocks of d
    kept = tuple(torch.cat([level[kind] for level in per_level]) if per_level else store.new_zeros(0, width * d)
                 for kind, width in enumerate(widths))
    return outputs, _Saved(store, leaf_rows, parents, children, tuple(weights), kept,
                           structure, activation)


class _Saved(NamedTuple):
    """What the backward reads (from the forward; it changes none of it)."""

    store: torch.Tensor
    leaf_rows: torch.Tensor
    parents: torch.Tensor
    children: torch.Tensor
    weights: Tuple[torch.Tensor, ...]
    per_level: Tuple[torch.Tensor, ...]  # all levels' gates, g(u), c_p, o, g(c_p) and outputs, one buffer each
    structure: Structure
    activation: str


def _forward_keeping(leaf_records, leaf_rows, parents, children, structure, num_rows, activation, *weights):
    """`_forward`, keeping what the backward reads: ((outputs,), saved)."""
    outputs, saved = _forward(leaf_records, leaf_rows, parents, children, structure, num_rows, weights, activation,
                              keep=True)
    return (outputs,), saved


class _TreeLstmLevels(torch.autograd.Function):
    @staticmethod
    def forward(ctx, leaf_records, leaf_rows, parents, children, structure, num_rows, activation, *weights):
        (outputs,), saved = _forward_keeping(leaf_records, leaf_rows, parents, children, structure, num_rows,
                                             activation, *weights)
        ctx.structure, ctx.activation, ctx.num_weights = structure, activation, len(weights)
        ctx.save_for_backward(saved.store, leaf_rows, parents, children, *weights, *saved.per_level)
        return outputs

    @staticmethod
    @first_order_backward
    def backward(ctx, grad_outputs: torch.Tensor):
        store, leaf_rows, parents, children, *rest = ctx.saved_tensors
        weights, per_level = tuple(rest[: ctx.num_weights]), tuple(rest[ctx.num_weights :])
        return _backward(_Saved(store, leaf_rows, parents, children, weights, per_level, ctx.structure,
                                ctx.activation), grad_outputs)


def _backward(saved: _Saved, grad_outputs: torch.Tensor):
    """The gradients of `_TreeLstmLevels.apply`'s arguments (module docstring), from `saved` (unchanged)."""
    store, leaf_rows, parents, children, weights, per_level, structure, activation = saved
    left_weight, right_weight, left_peephole, right_peephole, output_peephole, _, _ = weights
    d = output_peephole.size(0)
    derivative = ACTIVATION_DERIVATIVES[activation]
    # a real row is read only after its parent's level wrote it; the rows of roots and of a padded layout's padding
    # parents are read and never written: zeros
    grad_store = store.new_zeros(store.size())
    kernel = triton_kernel_applies(store, "memplugins.modules.tree_lstm.level_kernel") and store.is_contiguous()
    if kernel:
        from memplugins.modules.tree_lstm import level_kernel as tree_level_kernel
    sizes = [sum(level) for level in structure]
    levels = list(_levels(parents, children, structure))
    kept = list(zip(*(kind.split(sizes) for kind in per_level))) if sizes else []
    # rows for the weight gradients, formed once at the end: (gradient of the product, its input)
    products: Dict[str, Tuple[List[torch.Tensor], List[torch.Tensor]]] = {
        name: ([], []) for name in ("left", "right", "left_peephole", "right_peephole", "output_peephole")
    }
    candidate_grads = []
    for (level_parents, level_children, num_left, num_right), (gates, candidate, memory, output_gate,
                                                               memory_activation, output) in zip(reversed(levels),
                                                                                                 reversed(kept)):
        n, with_parent = level_parents.numel(), num_left + num_right
        grad_output = grad_outputs.index_select(0, level_parents)
        grad_memory = grad_output.new_zeros(n, d)
        if with_parent:  # complete: the parents' level ran before
            grad_records = grad_store.index_select(0, level_parents[:with_parent])
            grad_left, grad_right = grad_records[:num_left], grad_records[num_left:]
            grad_output[:num_left].addmm_(grad_left[:, : 6 * d], left_weight)
            grad_output[num_left:with_parent].addmm_(grad_right[:, : 6 * d], right_weight)
            grad_memory[:with_parent] = grad_records[:, 6 * d :]
            grad_memory[:num_left].addmm_(grad_left[:, : 4 * d], left_peephole)
            grad_memory[num_left:with_parent].addmm_(grad_right[:, : 4 * d], right_peephole)
            for name, grad, inputs in (("left", grad_left[:, : 6 * d], output[:num_left]),
                                       ("right", grad_right[:, : 6 * d], output[num_left:with_parent]),
                                       ("left_peephole", grad_left[:, : 4 * d], memory[:num_left]),
                                       ("right_peephole", grad_right[:, : 4 * d], memory[num_left:with_parent])):
                products[name][0].append(grad)
                products[name][1].append(inputs)
        if kernel:  # the pointwise work around the product in two Triton launches (`tree_level_kernel`)
            grad_output_pre = tree_level_kernel.output_backward(grad_output, grad_memory, output_gate,
                                                                memory_activation, activation)
            grad_memory.addmm_(grad_output_pre, output_peephole)
            grad_pre_candidate = tree_level_kernel.gates_backward(grad_memory, candidate, gates, store,
                                                                  level_children, grad_output_pre, grad_store,
                                                                  activation)
            products["output_peephole"][0].append(grad_output_pre)
            products["output_peephole"][1].append(memory)
            candidate_grads.append(grad_pre_candidate)
            continue
        grad_output_pre = grad_output * memory_activation * output_gate * (1 - output_gate)  # g_ô
        grad_memory += grad_output * output_gate * derivative(memory_activation)
        grad_memory.addmm_(grad_output_pre, output_peephole)
        products["output_peephole"][0].append(grad_output_pre)
        products["output_peephole"][1].append(memory)
        grad_pre_candidate = grad_memory * derivative(candidate)  # g_u
        candidate_grads.append(grad_pre_candidate)
        pair = store.index_select(0, level_children).view(2, n, 7 * d)
        per_child = gates.view(n, 2, 2, d).permute(1, 2, 0, 3)  # [i or f][child k]
        grad_gates = grad_output.new_empty(n, 2, 2, d)  # [i or f, child k] per node
        torch.mul(pair[:, :, 4 * d : 5 * d], grad_pre_candidate, out=grad_gates.permute(1, 2, 0, 3)[0])
        torch.mul(pair[:, :, 6 * d :], grad_memory, out=grad_gates.permute(1, 2, 0, 3)[1])
        grad_gates = grad_gates.view(n, 4 * d).mul_(gates * (1 - gates))
        grad_pair = grad_output.new_empty(2, n, 7 * d)
        grad_pair[:, :, : 4 * d] = grad_gates
        torch.mul(per_child[0], grad_pre_candidate, out=grad_pair[:, :, 4 * d : 5 * d])
        grad_pair[:, :, 5 * d : 6 * d] = grad_output_pre
        torch.mul(per_child[1], grad_memory, out=grad_pair[:, :, 6 * d :])
        grad_store.index_copy_(0, level_children, grad_pair.view(2 * n, 7 * d))
    weight_grads = {}
    for name, (grads, inputs) in products.items():
        weight_grads[name] = (torch.cat(grads).t().mm(torch.cat(inputs)) if grads
                              else store.new_zeros(weights[list(products).index(name)].size()))
    grad_leaf_records = grad_store[:, : 6 * d].index_select(0, leaf_rows)
    # the left bias of internal left children's records (the leaves' records are made, with it, by the caller)
    grad_left_bias = (torch.cat(products["left"][0]).sum(0) if products["left"][0]
                      else store.new_zeros(6 * d))
    grad_candidate_bias = torch.cat(candidate_grads).sum(0) if candidate_grads else store.new_zeros(d)
    return (grad_leaf_records, None, None, None, None, None, None, weight_grads["left"], weight_grads["right"],
            weight_grads["left_peephole"], weight_grads["right_peephole"], weight_grads["output_peephole"],
            grad_left_bias, grad_candidate_bias)


# the CUDA graphs of the levels (`step_graphs`): the caller pads each batch to a key's shapes (`tree_lstm_nodes`)
_GRAPHS = StepGraphs("tree_lstm", _forward_keeping, lambda saved, grads: _backward(saved, grads[0]))


def tree_lstm_nodes(inputs: torch.Tensor, mask: torch.BoolTensor, tree: Dict[str, torch.Tensor],
                    weights: TreeLstmWeights) -> torch.Tensor:
    """
    Every node's output `(B, num_nodes, d)` in the `BinaryTreeField` node order (the leaf rows 0): the leaves
    `inputs` `(B, max_leaves, d_w)` with `mask`, composed over `tree` (the field's tensors). Lays the weights out as
    the side-aware records of the module docstring and runs the levels (`tree_lstm_levels`).

    With CUDA graphs (`step_graphs`), a graph key's shapes: the leaves are padded to a multiple of the backend's
    `graph_bucket`, the levels to one too (at most L - 1), and each level to the fixed size of `level_capacities`;
    the outputs are cut back. Padding nodes compose zero records into a row nothing reads, and receive zero
    gradients, so outputs and gradients are the exact layout's (`tests/modules/tree_lstm/graphs_test.py`).
    """
    batch_size, max_leaves, _ = inputs.size()
    num_nodes = nodes_per_tree("tree_lstm", mask, tree)
    d = weights.output_peephole.size(0)
    graphed = max_leaves > 1 and _GRAPHS.applies((inputs,))
    bucket, real_leaves = None, max_leaves
    if graphed:
        bucket = backend.current().graph_bucket
        max_leaves = -(-max_leaves // bucket) * bucket
        inputs, mask, tree = pad_leaves(inputs, mask, tree, max_leaves)
        num_nodes = 2 * max_leaves - 1
    sided = sided_levels(mask, tree, num_nodes, level_bucket=bucket)
    bias_i, bias_f, bias_c, bias_o = weights.gate_bias.chunk(4)
    left_bias = torch.cat([bias_i, bias_i, bias_f, bias_f, bias_c.new_zeros(d), bias_o])
    leaf_weights = weights.leaf_output.view(8, d, -1)
    internal_weights = weights.internal_output.view(8, d, d)
    peepholes = weights.memory.view(4, d, d)
    flat_inputs = inputs.reshape(batch_size * max_leaves, -1)
    left_positions, right_positions = sided.leaf_positions
    leaf_records = torch.cat([
        torch.addmm(left_bias, flat_inputs[left_positions], leaf_weights[LEFT_BLOCKS].reshape(6 * d, -1).t()),
        flat_inputs[right_positions].mm(leaf_weights[RIGHT_BLOCKS].reshape(6 * d, -1).t()),
    ])
    leaf_rows = torch.cat(sided.leaf_rows)
    if graphed:  # a fixed number of leaf records: the padding ones go to the row nothing reads
        padding = batch_size * max_leaves - len(leaf_rows)
        leaf_records = torch.cat([leaf_records, leaf_records.new_zeros(padding, 6 * d)])
        leaf_rows = torch.cat([leaf_rows, leaf_rows.new_full((padding,), sided.num_rows - 1)])
    outputs = tree_lstm_levels(
        leaf_records, leaf_rows, sided,
        (internal_weights[LEFT_BLOCKS].reshape(6 * d, d), internal_weights[RIGHT_BLOCKS].reshape(6 * d, d),
         peepholes[LEFT_PEEPHOLES].reshape(4 * d, d), peepholes[RIGHT_PEEPHOLES].reshape(4 * d, d),
         weights.output_peephole, left_bias, bias_c),
        weights.activation,
        graphs=graphed,
    )
    nodes = outputs[: batch_size * num_nodes].view(batch_size, num_nodes, d)
    if max_leaves != real_leaves:
        nodes = torch.cat([nodes[:, :real_leaves], nodes[:, max_leaves : max_leaves + real_leaves - 1]], 1)
    return nodes


def tree_lstm_levels(
    leaf_records: torch.Tensor,
    leaf_rows: torch.Tensor,
    layout: SidedLevels,
    weights: Tuple[torch.Tensor, ...],
    activation: str,
    graphs: bool = False,
) -> torch.Tensor:
    """
    leaf_records: the first 6 record blocks of the leaves that have a parent `(num, 6d)` (a left child's with the
    left bias), at node rows `leaf_rows`; layout: `sided_levels`; weights: the records' output weights (left,
    right: `(6d, d)` each, in record order), memory peepholes (left, right: `(4d, d)`), W_co `(d, d)`, the left
    record's bias `(6d,)` and b_c `(d,)`; graphs: through CUDA graphs (a padded layout). Returns every node's output
    `(layout.num_rows, d)` (0 at the leaves' and padding rows).
    """
    outputs = run_fast_path(_TreeLstmLevels, _forward_flat, leaf_records, leaf_rows, layout.parents, layout.children,
                            layout.structure, layout.num_rows, activation, *weights,
                            graphs=_GRAPHS if graphs else None)
    return outputs[0] if isinstance(outputs, tuple) else outputs  # the graphs return their outputs' tuple


def _forward_flat(leaf_records, leaf_rows, parents, children, structure, num_rows, activation, *weights_and_none):
    """`_forward` with `_TreeLstmLevels.apply`'s arguments (the contract's forward without a graph)."""
    *weights, _ = weights_and_none
    return _forward(leaf_records, leaf_rows, parents, children, structure, num_rows, weights, activation,
                    keep=False)[0]
