"""The `tree_lstm` encoder against the literal recursive form of Le and Zuidema's equations
(`memplugins.modules.tree_lstm.reference`), and its behaviour as a `Seq2VecEncoder`."""
import pytest
import torch
from allennlp.common import Params
from allennlp.modules import Seq2VecEncoder

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields import BinaryTree
from memplugins.readers import parse_sst_tree
from memplugins.fields import batch_trees
from memplugins.modules.tree_lstm.reference import tree_lstm_reference

SHAPES = [
    "(3 (2 It) (4 (2 's) (3 lovely)))",  # small
    "(2 word)",  # a one-word sentence: the root is a leaf
    "(1 (1 (1 (1 (1 (2 a) (2 b)) (2 c)) (2 d)) (2 e)) (2 f))",  # deep left-branching
    "(2 (2 (2 a) (2 b)) (2 (2 c) (2 (2 d) (2 (2 e) (2 (2 f) (2 g))))))",  # mixed
]


def node_rows(tree, max_leaves):
    return list(range(len(tree.leaves))) + [max_leaves + j for j in range(len(tree.children))]


def random_encoder(input_dim=6, hidden_dim=5, activation="tanh"):
    torch.manual_seed(0)
    encoder = TreeLstmEncoder(input_dim, hidden_dim, activation)
    for parameter in encoder.parameters():
        torch.nn.init.normal_(parameter, std=0.5)  # non-trivial gates and biases
    return encoder


def test_a_mixed_batch_equals_each_tree_alone():
    encoder = random_encoder()
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_trees(trees)
    inputs = torch.randn(len(trees), mask.size(1), 6)
    batched = encoder.encode(inputs, mask, tensors)
    for b, tree in enumerate(trees):
        alone_tensors, alone_mask = batch_trees([tree])
        n = len(tree.leaves)
        alone = encoder.encode(inputs[b : b + 1, :n], alone_mask, alone_tensors)
        assert torch.allclose(batched.root_states[b], alone.root_states[0], atol=1e-6)
        assert torch.allclose(
            batched.node_states[b, node_rows(tree, mask.size(1))], alone.node_states[0, node_rows(tree, n)], atol=1e-6
        )


def test_every_parameter_gets_a_gradient():
    encoder = random_encoder(6, 5)  # d_w != d: the leaf projection exists
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_trees(trees)
    output = encoder.encode(torch.randn(len(trees), mask.size(1), 6), mask, tensors)
    output.node_states.sum().backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_without_a_tree_it_is_right_branching_and_works_as_a_plain_seq2vec_encoder():
    encoder = Seq2VecEncoder.from_params(Params({"type": "tree_lstm", "input_dim": 6, "hidden_dim": 5}))
    inputs = torch.randn(2, 4, 6)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.bool)
    roots = encoder(inputs, mask)
    for b, n in enumerate([4, 2]):
        tree = BinaryTree.right_branching([str(i) for i in range(n)])
        assert torch.allclose(roots[b], tree_lstm_reference(encoder.weights(), inputs[b, :n], tree)[-1], atol=1e-6)


def test_leaves_must_be_exactly_the_tokens():
    encoder = random_encoder()
    tensors, mask = batch_trees([parse_sst_tree(SHAPES[0])])
    with pytest.raises(Exception, match="leaf positions"):
        encoder.encode(torch.randn(1, 5, 6), torch.ones(1, 5, dtype=torch.bool), tensors)


def test_initialisation_is_uniform_in_one_over_root_n_of_each_gates_inputs():
    """Le & Zuidema section 5: U(-1/√n, 1/√n), n the gate's total input units (our reading: see reset_parameters)."""
    torch.manual_seed(0)
    d_w, d = 30, 20
    encoder = TreeLstmEncoder(d_w, d)
    for weights, size in ((encoder.leaf_output_weights.weight, d_w), (encoder.internal_output_weights.weight, d)):
        blocks = weights.split(d)
        fan_ins = [2 * size + 2 * d] * 4 + [2 * size, 2 * size + d, 2 * size, 2 * size + d]
        for block, fan_in in zip(blocks, fan_ins):
            bound = fan_in ** -0.5
            assert block.abs().max() <= bound and block.abs().max() > 0.9 * bound
    assert encoder.memory_weights.weight.abs().max() <= (4 * d) ** -0.5
    assert encoder.output_peephole.weight.abs().max() <= (3 * d) ** -0.5
    assert torch.all(encoder.gate_bias == 0)
