from typing import Dict, Optional

import torch
from allennlp.modules.seq2vec_encoders.seq2vec_encoder import Seq2VecEncoder

from memplugins.encoders.checks import check_inputs
from memplugins.encoders.tree_lstm import TreeLstmOutput, TreeSeq2VecEncoder, tree_output
from memplugins.modules.tree_lstm.fast import ACTIVATIONS
from memplugins.modules.tree_lstm.layout import right_branching_trees, tree_levels


@Seq2VecEncoder.register("tree_rnn")
class TreeRnnEncoder(TreeSeq2VecEncoder):
    """
    The plain recursive neural network (RNN) that Le and Zuidema (2015) compare their LSTM-RNN with (section 5,
    Figures 6-7; the traditional recursive network of Socher et al.): over the same binary trees, a parent of
    children x (left) and y (right) is

        p = g(W_1 x + W_2 y + b)

    with leaf and internal weights untied as in the LSTM-RNN (section 4: the matrices applied to a leaf child,
    d × d_w, are a separate set from those applied to an internal child, d × d), g = tanh / softsign / sigmoid, and
    U(±1/√n) initialisation with n = 2 × the children's size (section 5). A leaf's state is its word vector (through a
    bias-free linear map when d_w != d, used for reported leaf states and one-word sentences only), as in
    `tree_lstm`, whose interface this shares: `encode(inputs, mask, tree)` returns every node's state, so
    `tree_classifier` supervises every node; without a tree, right-branching trees.

    Level-batched: all nodes of one height across the batch are computed together. Each node's two contributions
    to its parent (W_1 x and W_2 x) are computed once, when the node is; plain autograd tensors carry them (the
    RNN's per-level work is small, so `tree_lstm`'s hand-written node store is not needed).

    Registered as a `Seq2VecEncoder` with name "tree_rnn".

    # Parameters

    input_dim : `int`
        d_w (or `input_size`).
    hidden_dim : `int`
        d (or `hidden_size`).
    activation : `str`, optional (default = `"tanh"`)
    input_size, hidden_size, num_layers, dropout, bidirectional, bias : optional
        `lstm`'s names, as `tree_lstm` takes them (`TreeSeq2VecEncoder`).
    """

    def __init__(
        self,
        input_dim: Optional[int] = None,
        hidden_dim: Optional[int] = None,
        activation: str = "tanh",
        input_size: Optional[int] = None,
        hidden_size: Optional[int] = None,
        num_layers: int = 1,
        dropout: float = 0.0,
        bidirectional: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        input_dim, hidden_dim = self._configure("tree_rnn", (input_dim, hidden_dim, input_size, hidden_size), activation,
                                                num_layers, dropout, bidirectional, bias)
        self._g = ACTIVATIONS[activation]
        d = hidden_dim
        self.leaf_weights = torch.nn.Linear(input_dim, 2 * d, bias=False)  # [W_1; W_2] applied to a leaf child
        self.internal_weights = torch.nn.Linear(d, 2 * d, bias=False)  # [W_1; W_2] applied to an internal child
        self.bias = torch.nn.Parameter(torch.zeros(d))
        self.leaf_projection = torch.nn.Linear(input_dim, d, bias=False) if input_dim != d else None
        with torch.no_grad():
            for weights, size in ((self.leaf_weights, input_dim), (self.internal_weights, d)):
                weights.weight.uniform_(-(2 * size) ** -0.5, (2 * size) ** -0.5)

    def encode(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, tree: Optional[Dict[str, torch.Tensor]] = None
    ) -> TreeLstmOutput:
        """As `TreeLstmEncoder.encode`: inputs `(B, max_leaves, d_w)`, mask, a `BinaryTreeField`'s tensors."""
        check_inputs("tree_rnn", inputs, self._input_size)
        if tree is None:
            tree = right_branching_trees(mask)
        inputs = self.leaves(inputs, mask)
        batch_size = inputs.size(0)
        layout = tree_levels("tree_rnn", mask, tree)
        d = self._hidden_dim
        # every node's [W_1 x; W_2 x], rows in the flat node buffer (leaves' rows filled now, internal ones per level)
        leaf_contributions = self.leaf_weights(inputs).view(-1, 2 * d)
        contributions = leaf_contributions.new_zeros(batch_size * layout.num_nodes, 2 * d).index_put(
            (layout.leaf_rows,), leaf_contributions
        )
        states = inputs.new_zeros(batch_size * layout.num_nodes, d)
        for parents, children in layout.levels:
            p = self._g(contributions[children[:, 0], :d] + contributions[children[:, 1], d:] + self.bias)
            states = states.index_put((parents,), p)
            contributions = contributions.index_put((parents,), self.internal_weights(p))
        leaf_states = self.leaf_projection(inputs) if self.leaf_projection is not None else inputs
        return tree_output(states.view(batch_size, layout.num_nodes, d), leaf_states, mask, tree)
