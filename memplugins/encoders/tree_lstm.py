from typing import Dict, NamedTuple, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2vec_encoders.seq2vec_encoder import Seq2VecEncoder

from memplugins.encoders.checks import check_dropout, check_inputs, check_sizes
from memplugins.modules.masked_lstm import run_masked_lstm
from memplugins.modules.tree_lstm.fast import ACTIVATIONS, TreeLstmWeights, tree_lstm_nodes
from memplugins.modules.tree_lstm.layout import right_branching_trees


class TreeLstmOutput(NamedTuple):
    """Everything one pass of `TreeLstmEncoder.encode` produces."""

    node_states: torch.Tensor  # (B, max_leaves + max_internal, d): leaves then internal nodes, the field's buffer
    node_mask: torch.BoolTensor  # (B, max_leaves + max_internal): which nodes exist
    root_states: torch.Tensor  # (B, d)


def lstm_names(encoder: str, input_dim, hidden_dim, input_size, hidden_size):
    """(input_dim, hidden_dim) from a tree encoder's own names or `lstm`'s, with a clear error when neither is given."""
    input_dim = input_dim if input_dim is not None else input_size
    hidden_dim = hidden_dim if hidden_dim is not None else hidden_size
    if input_dim is None or hidden_dim is None:
        raise ConfigurationError(f"{encoder}: input_dim (or input_size) and hidden_dim (or hidden_size) are required")
    return input_dim, hidden_dim


def tree_output(
    internal_states: torch.Tensor, leaf_states: torch.Tensor, mask: torch.BoolTensor, tree: Dict[str, torch.Tensor]
) -> "TreeLstmOutput":
    """The `TreeLstmOutput` of a tree encoder: leaf states (zeroed at padding) then the internal nodes' states
    (`internal_states`: `(B, num_nodes, d)` in the field's node order, of which the leaf rows are ignored)."""
    max_leaves = mask.size(1)
    node_states = torch.cat([leaf_states * mask.unsqueeze(-1), internal_states[:, max_leaves:]], dim=1)
    node_mask = torch.cat([mask, tree["mask"]], dim=1)
    root_states = node_states[torch.arange(mask.size(0), device=mask.device), tree["root"]]
    return TreeLstmOutput(node_states=node_states, node_mask=node_mask, root_states=root_states)




class TreeSeq2VecEncoder(Seq2VecEncoder):
    """What the tree encoders share as `Seq2VecEncoder`s: `forward` is the root state of `encode`'s nodes (trees
    from the batch, or right-branching), `get_input_dim` / `get_output_dim` are `_input_size` / `_hidden_dim`, and
    `lstm`'s layer settings: `num_layers = n > 1` runs an (n-1)-layer left-to-right LSTM of size d over the leaves
    first (the "leaf LSTM" of Choi, Yoo and Lee 2018), and the tree composes its outputs, n recurrent layers in all;
    `dropout` is `lstm`'s, between those layers (nothing with one layer); `bidirectional: true` and `bias: false`
    are ConfigurationErrors (a tree has no reading direction; the papers' cells have biases)."""

    _input_size: int
    _hidden_dim: int

    def _configure(self, encoder: str, names: Tuple[Optional[int], Optional[int], Optional[int], Optional[int]],
                   activation: str, num_layers: int, dropout: float, bidirectional: bool, bias: bool) -> Tuple[int, int]:
        """Checks the settings and builds what `lstm`'s ask for (class docstring). `names`: (input_dim, hidden_dim,
        input_size, hidden_size). Returns (the size of what the tree composes, d)."""
        input_dim, hidden_dim = lstm_names(encoder, *names)
        if activation not in ACTIVATIONS:
            raise ConfigurationError(f"{encoder}: activation must be one of {list(ACTIVATIONS)}, got {activation!r}")
        if bidirectional:
            raise ConfigurationError(f"{encoder}: a tree has no reading direction; set bidirectional: false")
        if not bias:
            raise ConfigurationError(f"{encoder}: bias=False is not supported (the paper's cells have biases)")
        check_sizes(encoder, input_dim=input_dim, hidden_dim=hidden_dim, num_layers=num_layers)
        check_dropout(encoder, dropout)
        self._input_size = input_dim
        self.leaf_lstm = None
        if num_layers > 1:
            self.leaf_lstm = torch.nn.LSTM(input_dim, hidden_dim, num_layers=num_layers - 1, batch_first=True,
                                           dropout=dropout if num_layers > 2 else 0.0)
        self._leaf_dropout = torch.nn.Dropout(dropout)
        self._hidden_dim = hidden_dim
        return (hidden_dim if self.leaf_lstm is not None else input_dim), hidden_dim

    def leaves(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """What the tree composes: the leaf LSTM's outputs (with `lstm`'s dropout after them), or the inputs."""
        if self.leaf_lstm is None:
            return inputs
        outputs, _ = run_masked_lstm(self.leaf_lstm, inputs, mask)
        return self._leaf_dropout(outputs)

    def get_input_dim(self) -> int:
        return self._input_size

    def get_output_dim(self) -> int:
        return self._hidden_dim

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, tree: Optional[Dict[str, torch.Tensor]] = None
    ) -> torch.Tensor:
        return self.encode(inputs, mask, tree).root_states

    def encode(self, inputs: torch.Tensor, mask: torch.BoolTensor,
               tree: Optional[Dict[str, torch.Tensor]] = None) -> TreeLstmOutput:
        raise NotImplementedError


@Seq2VecEncoder.register("tree_lstm")
class TreeLstmEncoder(TreeSeq2VecEncoder):
    """
    The LSTM-RNN of Le and Zuidema (2015, "Compositional Distributional Semantics with Long Short Term Memory",
    section 3): a recursive network over binary trees with two input and two forget gates, full-matrix peepholes,
    untied leaf and internal weights and a configurable activation g. The equations, our readings where the paper is
    not explicit, and why the level-batched fast path equals them are written out in `memplugins.modules.tree_lstm`.
    `encode` returns every node's state (for node-level losses) in `memplugins.fields.BinaryTreeField`'s node buffer;
    `weights()` gives the weights as plain tensors, for the literal reference.

    As a plain `Seq2VecEncoder`, `forward(inputs, mask, tree=None)` returns the root vector; without a tree (e.g. in
    `basic_classifier`) each sequence gets the documented default right-branching tree (w_1 (w_2 (... w_n))).

    A drop-in for the `lstm` Seq2VecEncoder: it also takes `lstm`'s names `input_size`, `hidden_size`,
    `num_layers`, `dropout`, `bidirectional` and `bias` (`TreeSeq2VecEncoder`: the paper's network has one layer;
    `num_layers = n > 1`, our addition for configs written for a deeper `lstm`, runs a leaf LSTM under the tree, and
    the leaf states are then its outputs).

    Registered as a `Seq2VecEncoder` with name "tree_lstm".

    # Parameters

    input_dim : `int`
        d_w, the size of the word vectors at the leaves (or `input_size`).
    hidden_dim : `int`
        d, the size of internal node outputs and memories (or `hidden_size`).
    activation : `str`, optional (default = `"tanh"`)
        g: "tanh", "softsign" or "sigmoid".
    input_size, hidden_size, num_layers, dropout, bidirectional, bias : optional
        `lstm`'s names (see above).
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
        input_dim, hidden_dim = self._configure("tree_lstm", (input_dim, hidden_dim, input_size, hidden_size), activation,
                                                num_layers, dropout, bidirectional, bias)
        self._input_dim = input_dim
        self._activation = activation
        d = hidden_dim
        # Contribution blocks of a child's output, in order: W_i1, W_i2, W_f1, W_f2, W_c1, W_o1, W_c2, W_o2 (W_c1 /
        # W_o1 are used when the child is a left child, W_c2 / W_o2 when it is a right child).
        self.leaf_output_weights = torch.nn.Linear(input_dim, 8 * d, bias=False)
        self.internal_output_weights = torch.nn.Linear(d, 8 * d, bias=False)
        # Peephole blocks of an internal child's memory: W_ci1, W_ci2, W_cf1, W_cf2 (leaf memories are 0).
        self.memory_weights = torch.nn.Linear(d, 4 * d, bias=False)
        self.output_peephole = torch.nn.Linear(d, d, bias=False)  # W_co
        self.gate_bias = torch.nn.Parameter(torch.zeros(4 * d))  # b_i, b_f, b_c, b_o
        self.leaf_projection = torch.nn.Linear(input_dim, d, bias=False) if input_dim != d else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """
        Section 5: "the initial values for a weight matrix were uniformly sampled from [-1/√n, 1/√n] where n is the
        number of total input units". Our reading of n, per gate of a parent whose children have outputs of size
        `in` (d_w for leaves, d for internal nodes): i and f read both children's outputs and memories (2 in + 2d),
        the candidate both outputs (2 in), o both outputs and c_p (2 in + d); the memory peepholes belong to i and
        f (4d) and W_co to o (3d). Biases start at 0. (torch's default would use each matrix's own fan-in.)
        """
        d = self._hidden_dim
        with torch.no_grad():
            for weights, size in ((self.leaf_output_weights, self.leaf_output_weights.in_features),
                                  (self.internal_output_weights, d)):
                # blocks [i1, i2, f1, f2, c1, o1, c2, o2]
                fan_ins = [2 * size + 2 * d] * 4 + [2 * size, 2 * size + d, 2 * size, 2 * size + d]
                for block, fan_in in zip(weights.weight.split(d), fan_ins):
                    block.uniform_(-fan_in ** -0.5, fan_in ** -0.5)
            self.memory_weights.weight.uniform_(-(4 * d) ** -0.5, (4 * d) ** -0.5)
            self.output_peephole.weight.uniform_(-(3 * d) ** -0.5, (3 * d) ** -0.5)
            self.gate_bias.zero_()

    def leaf_states(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.leaf_projection(inputs) if self.leaf_projection is not None else inputs

    def encode(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, tree: Optional[Dict[str, torch.Tensor]] = None
    ) -> TreeLstmOutput:
        """
        inputs `(B, max_leaves, d_w)` (the leaves), mask `(B, max_leaves)`, tree: the tensors of a
        `BinaryTreeField` (`children`, `heights`, `mask`, `root`); default: right-branching trees.
        """
        check_inputs("tree_lstm", inputs, self._input_size)
        if tree is None:
            tree = right_branching_trees(mask)
        inputs = self.leaves(inputs, mask)
        nodes = tree_lstm_nodes(inputs, mask, tree, self.weights())
        return tree_output(nodes, self.leaf_states(inputs), mask, tree)

    def weights(self) -> TreeLstmWeights:
        """The weights as plain tensors (`TreeLstmWeights`), for the fast path and the literal reference."""
        return TreeLstmWeights(self.leaf_output_weights.weight, self.internal_output_weights.weight,
                               self.memory_weights.weight, self.output_peephole.weight, self.gate_bias,
                               self.leaf_projection.weight if self.leaf_projection is not None else None,
                               self._activation)
