"""
Le and Zuidema's (2015) LSTM-RNN (section 3) for one tree at a time, recursively, with named weight matrices sliced
out of explicit weights (a `TreeLstmEncoder.weights()`, or anything with the same fields: leaf_output,
internal_output, memory, output_peephole, gate_bias, leaf_projection, activation): the literal reference of the fast
path (`fast.py`), which imports nothing from it, and what `benchmarks/speed/tree_lstm.py` times as the way common
PyTorch tree LSTMs run. A leaf's output is its word vector and its memory 0; weights applied to a leaf child are the
leaf set.
"""
from typing import Dict, List, Tuple

import torch

from memplugins.fields.binary_tree_field import BinaryTree, trees_of_batch

BLOCKS = ["i1", "i2", "f1", "f2", "c1", "o1", "c2", "o2"]
G = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "softsign": lambda u: u / (1 + u.abs())}


def leaf_state(weights, word: torch.Tensor) -> torch.Tensor:
    """What a leaf reports: its word vector, or W_l x where d_w != d (never an input to composition)."""
    return weights.leaf_projection @ word if weights.leaf_projection is not None else word


def tree_lstm_reference(weights, words: torch.Tensor, tree: BinaryTree) -> List[torch.Tensor]:
    """words `(n, d_w)` for the tree's leaves (after a leaf LSTM, if the encoder has one); returns every node's
    output vector in node order, the leaves' as `leaf_state` gives them."""
    return _reference(weights, words, tree)[0]


def tree_lstm_gates(weights, words: torch.Tensor, tree: BinaryTree) -> torch.Tensor:
    """`(n - 1, 4)`: each internal node's gates averaged over the units, in node order: f1 and f2 (how much of the
    left and the right child's memory it keeps, eq. 4) and i1 and i2 (how much of each child's new content it
    takes, eq. 3). What `attention-map` draws for a tree LSTM."""
    gates = _reference(weights, words, tree)[1]
    return torch.stack(gates) if gates else words.new_zeros(0, 4)


def _reference(weights, words: torch.Tensor, tree: BinaryTree) -> Tuple[List[torch.Tensor], List[torch.Tensor]]:
    g = G[weights.activation]
    n = len(tree.leaves)
    d = weights.output_peephole.size(0)
    leaf_w = dict(zip(BLOCKS, weights.leaf_output.chunk(8)))
    inner_w = dict(zip(BLOCKS, weights.internal_output.chunk(8)))
    peep = dict(zip(["ci1", "ci2", "cf1", "cf2"], weights.memory.chunk(4)))
    w_co = weights.output_peephole
    b_i, b_f, b_c, b_o = weights.gate_bias.chunk(4)

    def node(index: int) -> Tuple[torch.Tensor, torch.Tensor, bool]:
        """(output, memory, is_leaf) of node `index`."""
        if index < n:
            return words[index], words.new_zeros(d), True
        left, right = tree.children[index - n]
        x, c_x, x_leaf = node(left)
        y, c_y, y_leaf = node(right)
        wx = leaf_w if x_leaf else inner_w  # untied leaf / internal weights
        wy = leaf_w if y_leaf else inner_w
        i1 = torch.sigmoid(wx["i1"] @ x + wy["i2"] @ y + peep["ci1"] @ c_x + peep["ci2"] @ c_y + b_i)
        i2 = torch.sigmoid(wy["i1"] @ y + wx["i2"] @ x + peep["ci1"] @ c_y + peep["ci2"] @ c_x + b_i)
        f1 = torch.sigmoid(wx["f1"] @ x + wy["f2"] @ y + peep["cf1"] @ c_x + peep["cf2"] @ c_y + b_f)
        f2 = torch.sigmoid(wy["f1"] @ y + wx["f2"] @ x + peep["cf1"] @ c_y + peep["cf2"] @ c_x + b_f)
        c_p = f1 * c_x + f2 * c_y + g((wx["c1"] @ x) * i1 + (wy["c2"] @ y) * i2 + b_c)
        o = torch.sigmoid(wx["o1"] @ x + wy["o2"] @ y + w_co @ c_p + b_o)
        gates[index - n] = torch.stack([f1.mean(), f2.mean(), i1.mean(), i2.mean()])
        return o * g(c_p), c_p, False

    gates: Dict[int, torch.Tensor] = {}
    states = [leaf_state(weights, words[i]) for i in range(n)]
    outputs = states + [node(n + j)[0] for j in range(len(tree.children))]
    return outputs, [gates[j] for j in range(len(tree.children))]


def tree_lstm_reference_batch(weights, leaves: torch.Tensor, mask: torch.BoolTensor,
                              tensors: Dict[str, torch.Tensor]) -> torch.Tensor:
    """Every node's state `(B, max_leaves + max_internal, d)` in the node buffer's order, as
    `TreeLstmEncoder.encode(...).node_states` returns them (0 at padding), one tree at a time; `leaves` are what
    the tree composes (after a leaf LSTM, if the encoder has one)."""
    max_leaves, max_internal = mask.size(1), tensors["children"].size(1)
    d = weights.output_peephole.size(0)
    rows = []
    for b, tree in enumerate(trees_of_batch(mask, tensors)):
        n = len(tree.leaves)
        states = tree_lstm_reference(weights, leaves[b, :n], tree)
        zeros = leaves.new_zeros(d)
        rows.append(torch.stack(states[:n] + [zeros] * (max_leaves - n)
                                + states[n:] + [zeros] * (max_internal - len(tree.children))))
    return torch.stack(rows)
