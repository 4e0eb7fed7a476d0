"""
A slow, recursive, one-tree-at-a-time implementation of Le and Zuidema's (2015) LSTM-RNN equations, written from
the paper with named weight matrices (sliced out of a `TreeLstmEncoder`), as the reference for tests and for
benchmarks/tree_lstm.py, and `batch_of`, the encoder's batched tree tensors, which both use too.
"""
from typing import Dict, List, Tuple

import torch

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.modules.tree_lstm_levels import ACTIVATIONS
from memplugins.fields import BinaryTree, BinaryTreeField


def reference_tree_lstm(encoder: TreeLstmEncoder, words: torch.Tensor, tree: BinaryTree) -> List[torch.Tensor]:
    """words `(n, d_w)` for the tree's leaves; returns every node's output vector in node order (leaves as states)."""
    g = ACTIVATIONS[encoder._activation]
    n = len(tree.leaves)
    leaf_w = dict(zip(["i1", "i2", "f1", "f2", "c1", "o1", "c2", "o2"], encoder.leaf_output_weights.weight.chunk(8)))
    inner_w = dict(zip(["i1", "i2", "f1", "f2", "c1", "o1", "c2", "o2"], encoder.internal_output_weights.weight.chunk(8)))
    peep = dict(zip(["ci1", "ci2", "cf1", "cf2"], encoder.memory_weights.weight.chunk(4)))
    w_co = encoder.output_peephole.weight
    b_i, b_f, b_c, b_o = encoder.gate_bias.chunk(4)

    def node(index: int) -> Tuple[torch.Tensor, torch.Tensor, bool]:
        """(output, memory, is_leaf) of node `index`, computed recursively."""
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
    states += [node(n + j)[0] for j in range(len(tree.children))]
    return states


def batch_of(trees: List[BinaryTree]) -> Tuple[Dict[str, torch.Tensor], torch.BoolTensor]:
    """The `BinaryTreeField` batch tensors of `trees` and the mask of their leaves (the tokens)."""
    fields = [BinaryTreeField(BinaryTree(t.leaves, t.children)) for t in trees]
    padding = {"num_internal": max(len(t.children) for t in trees)}
    tensors = fields[0].batch_tensors([f.as_tensor(padding) for f in fields])
    mask = torch.zeros(len(trees), padding["num_internal"] + 1, dtype=torch.bool)
    for b, t in enumerate(trees):
        mask[b, : len(t.leaves)] = True
    return tensors, mask
