"""
The LSTM-RNN of Le and Zuidema (2015, "Compositional Distributional Semantics with Long Short Term Memory",
section 3): a recursive network over binary trees whose composition at a parent p with children x (left) and
y (right), outputs x, y and memories c_x, c_y, is

    i_1 = σ(W_i1 x + W_i2 y + W_ci1 c_x + W_ci2 c_y + b_i)
    i_2 = σ(W_i1 y + W_i2 x + W_ci1 c_y + W_ci2 c_x + b_i)
    f_1 = σ(W_f1 x + W_f2 y + W_cf1 c_x + W_cf2 c_y + b_f)
    f_2 = σ(W_f1 y + W_f2 x + W_cf1 c_y + W_cf2 c_x + b_f)
    c_p = f_1 ⊙ c_x + f_2 ⊙ c_y + g(W_c1 x ⊙ i_1 + W_c2 y ⊙ i_2 + b_c)
    o   = σ(W_o1 x + W_o2 y + W_co c_p + b_o)
    p   = o ⊙ g(c_p)

with two input and two forget gates (one per child, the same weights with the children swapped), full-matrix
peephole connections from the children's memories, and the activation g configurable (tanh, softsign,
sigmoid). A leaf's output is its word vector and its memory is 0. Leaf and internal nodes are untied: the
weights applied to a leaf child (size d × d_w) are a separate set from those applied to an internal child
(d × d), as in section 4. Our reading where the paper is not explicit: the output gate's peephole reads the
parent's new memory c_p (the "c" of the o equation, as in the standard LSTM's W_co c_t; the paper's complexity
count, (N-1) d×d for it, agrees).

Level-batched: every internal node of the same height, across the whole batch, is computed by one set of
tensor operations; each node's contributions to its parent (the 8 products W·x above, the 4 peephole products
W·c) are computed once, when the node is computed (for leaves: once for all leaves), so a level costs one
gather of its children's contributions and memories, elementwise gate arithmetic, and the matrix products of
the new nodes. The folder: `fast.py` runs the levels as one autograd Function with a hand-written backward (its
docstring says why it is equal to the equations, and it lays the weights out as side-aware records), with
`level_kernel.py` (a level's pointwise work as two Triton launches) and `layout.py` (the levels, sides and rows of
a batch's nodes); `reference.py` computes the equations literally, one tree at a time, recursively, from explicit
weights, and the tests compare the two.

Node states for node-level losses: `encode` returns all node states in the node buffer of
`memplugins.fields.BinaryTreeField`. Leaves' states are their word vectors when d_w = d; otherwise (our
addition, the paper gives leaves no d-dimensional state) a linear map W_l x without bias, used only for the
reported leaf states and for the root of a one-word sentence, never as input to composition.
"""
from memplugins.modules.tree_lstm.fast import ACTIVATIONS, TreeLstmWeights, tree_lstm_levels, tree_lstm_nodes
from memplugins.modules.tree_lstm.layout import right_branching_trees, sided_levels, tree_levels

__all__ = ["ACTIVATIONS", "TreeLstmWeights", "right_branching_trees", "sided_levels", "tree_levels", "tree_lstm_levels",
           "tree_lstm_nodes"]
