"""
Le and Zuidema's (2015) LSTM-RNN (section 3) for one tree at a time, recursively, with named weight matrices sliced
out of a `memplugins.encoders.tree_lstm.TreeLstmEncoder`: the reference of the fast path
`memplugins.modules.fast.tree_lstm`, and what `benchmarks/tree_lstm.py` times as the way common PyTorch tree LSTMs
run. A leaf's output is its word vector and its memory 0; weights applied to a leaf child are the leaf set.
"""
from typing import Dict, List, Tuple

import torch

from memplugins.fields.binary_tree_field import BinaryTree, trees_of_batch
from memplugins.modules.fast.tree_lstm import ACTIVATIONS

BLOCKS = ["i1", "i2", "f1", "f2", "c1", "o1", "c2", "o2"]



def tree_lstm_reference(encoder, words: torch.Tensor, tree: BinaryTree) -> List[torch.Tensor]:
    """words `(n, d_w)` for the tree's leaves (after the encoder's leaf LSTM, if it has one); returns every node's
    output vector in node order, the leaves' as the encoder reports them (`leaf_states`)."""
    g = ACTIVATIONS[encoder._activation]
    n = len(tree.leaves)
    leaf_w = dict(zip(BLOCKS, encoder.leaf_output_weights.weight.chunk(8)))
    inner_w = dict(zip(BLOCKS, encoder.internal_output_weights.weight.chunk(8)))
    peep = dict(zip(["ci1", "ci2", "cf1", "cf2"], encoder.memory_weights.weight.chunk(4)))
    w_co = encoder.output_peephole.weight
    b_i, b_f, b_c, b_o = encoder.gate_bias.chunk(4)

    def node(index: int) -> Tuple[torch.Tensor, torch.Tensor, bool]:
        """(output, memory, is_leaf) of node `index`."""
        if index < n:
            return words[index], words.new_zeros(encoder.get_output_dim()), True
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
        return o * g(c_p), c_p, False

    states = [encoder.leaf_states(words[i]) for i in range(n)]
    return states + [node(n + j)[0] for j in range(len(tree.children))]


def tree_lstm_reference_batch(
    encoder, inputs: torch.Tensor, mask: torch.BoolTensor, tensors: Dict[str, torch.Tensor]
) -> torch.Tensor:
    """Every node's state `(B, max_leaves + max_internal, d)` in the node buffer's order, as
    `TreeLstmEncoder.encode(...).node_states` returns them (0 at padding), one tree at a time."""
    inputs = encoder.leaves(inputs, mask)
    max_leaves, max_internal = mask.size(1), tensors["children"].size(1)
    rows = []
    for b, tree in enumerate(trees_of_batch(mask, tensors)):
        n = len(tree.leaves)
        states = tree_lstm_reference(encoder, inputs[b, :n], tree)
        zeros = inputs.new_zeros(encoder.get_output_dim())
        leaves = states[:n] + [zeros] * (max_leaves - n)
        internal = states[n:] + [zeros] * (max_internal - len(tree.children))
        rows.append(torch.stack(leaves + internal))
    return torch.stack(rows)
