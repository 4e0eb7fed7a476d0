import pytest
import torch
from allennlp.common import Params
from allennlp.modules import Seq2VecEncoder

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields import BinaryTree
from memplugins.readers import parse_sst_tree
from tests.encoders.tree_lstm_reference import batch_of, reference_tree_lstm

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


@pytest.mark.parametrize("activation", ["tanh", "softsign", "sigmoid"])
@pytest.mark.parametrize("input_dim", [5, 6])
def test_level_batched_equals_the_recursive_reference(activation, input_dim):
    encoder = random_encoder(input_dim, 5, activation)
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_of(trees)
    inputs = torch.randn(len(trees), mask.size(1), input_dim)
    output = encoder.encode(inputs, mask, tensors)
    for b, tree in enumerate(trees):
        reference = reference_tree_lstm(encoder, inputs[b, : len(tree.leaves)], tree)
        got = output.node_states[b, node_rows(tree, mask.size(1))]
        assert torch.allclose(got, torch.stack(reference), atol=1e-5)
        assert torch.allclose(output.root_states[b], reference[-1], atol=1e-5)
        assert output.node_mask[b].sum() == 2 * len(tree.leaves) - 1


def test_a_mixed_batch_equals_each_tree_alone():
    encoder = random_encoder()
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_of(trees)
    inputs = torch.randn(len(trees), mask.size(1), 6)
    batched = encoder.encode(inputs, mask, tensors)
    for b, tree in enumerate(trees):
        alone_tensors, alone_mask = batch_of([tree])
        n = len(tree.leaves)
        alone = encoder.encode(inputs[b : b + 1, :n], alone_mask, alone_tensors)
        assert torch.allclose(batched.root_states[b], alone.root_states[0], atol=1e-6)
        assert torch.allclose(
            batched.node_states[b, node_rows(tree, mask.size(1))], alone.node_states[0, node_rows(tree, n)], atol=1e-6
        )


def test_every_parameter_gets_a_gradient():
    encoder = random_encoder(6, 5)  # d_w != d: the leaf projection exists
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_of(trees)
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
        assert torch.allclose(roots[b], reference_tree_lstm(encoder, inputs[b, :n], tree)[-1], atol=1e-6)


def test_leaves_must_be_exactly_the_tokens():
    encoder = random_encoder()
    tensors, mask = batch_of([parse_sst_tree(SHAPES[0])])
    with pytest.raises(Exception, match="leaf positions"):
        encoder.encode(torch.randn(1, 5, 6), torch.ones(1, 5, dtype=torch.bool), tensors)


def test_gradients_equal_those_of_the_recursive_reference():
    # the level-batched pass has a hand-written backward (modules/tree_lstm_levels.py): compare every gradient
    encoder = random_encoder(6, 5).double()
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_of(trees)
    inputs = torch.randn(len(trees), mask.size(1), 6, dtype=torch.double, requires_grad=True)
    probe = torch.randn(len(trees), 2 * mask.size(1) - 1, 5, dtype=torch.double)
    output = encoder.encode(inputs, mask, tensors)
    fast = torch.autograd.grad((output.node_states * probe).sum(), [inputs, *encoder.parameters()])
    total = 0
    for b, tree in enumerate(trees):
        states = torch.stack(reference_tree_lstm(encoder, inputs[b, : len(tree.leaves)], tree))
        total = total + (states * probe[b, node_rows(tree, mask.size(1))]).sum()
    slow = torch.autograd.grad(total, [inputs, *encoder.parameters()], allow_unused=True)
    for (name, _), f, s in zip([("inputs", None), *encoder.named_parameters()], fast, slow):
        assert torch.allclose(f, s if s is not None else torch.zeros_like(f), atol=1e-10), name


def test_a_second_backward_through_a_retained_graph_gives_the_same_gradients():
    encoder = random_encoder(6, 5)
    tensors, mask = batch_of([parse_sst_tree(s) for s in SHAPES])
    output = encoder.encode(torch.randn(len(SHAPES), mask.size(1), 6), mask, tensors).node_states.sum()
    first = torch.autograd.grad(output, list(encoder.parameters()), retain_graph=True)
    second = torch.autograd.grad(output, list(encoder.parameters()))
    for a, b in zip(first, second):
        assert torch.allclose(a, b)


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


@pytest.mark.parametrize("activation", ["tanh", "softsign", "sigmoid"])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_fast_path_equals_the_autograd_reference_encode(activation, num_layers):
    """`encode` (one Function, hand-written backward) against `reference_encode` (the same levels with autograd)."""
    torch.manual_seed(0)
    encoder = TreeLstmEncoder(6, 5, activation, num_layers=num_layers).double()
    for parameter in encoder.parameters():
        torch.nn.init.normal_(parameter, std=0.5)
    trees = [parse_sst_tree(s) for s in SHAPES]
    tensors, mask = batch_of(trees)
    inputs = torch.randn(len(trees), mask.size(1), 6, dtype=torch.double, requires_grad=True)
    probe = torch.randn(len(trees), 2 * mask.size(1) - 1, 5, dtype=torch.double)
    results = []
    for encode in (encoder.encode, encoder.reference_encode):
        output = encode(inputs, mask, tensors)
        grads = torch.autograd.grad((output.node_states * probe).sum(), [inputs, *encoder.parameters()])
        results.append((output, grads))
    (fast, fast_grads), (reference, reference_grads) = results
    torch.testing.assert_close(fast.node_states, reference.node_states, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(fast.root_states, reference.root_states, atol=1e-12, rtol=1e-10)
    for (name, _), f, r in zip([("inputs", None), *encoder.named_parameters()], fast_grads, reference_grads):
        assert f.abs().sum() > 0, name
        torch.testing.assert_close(f, r, atol=1e-11, rtol=1e-9, msg=name)


def test_no_grad_and_double_backward():
    encoder = random_encoder(6, 5)
    tensors, mask = batch_of([parse_sst_tree(s) for s in SHAPES])
    inputs = torch.randn(len(SHAPES), mask.size(1), 6, requires_grad=True)
    with_graph = encoder.encode(inputs, mask, tensors).node_states
    with torch.no_grad():
        without = encoder.encode(inputs, mask, tensors).node_states
    torch.testing.assert_close(with_graph, without, atol=0, rtol=0)
    assert without.grad_fn is None
    with pytest.raises(RuntimeError, match="no double backward"):
        torch.autograd.grad(with_graph.sum(), inputs, create_graph=True)


def test_bfloat16_autocast_runs_the_levels_in_float32():
    encoder = random_encoder(6, 5)
    tensors, mask = batch_of([parse_sst_tree(s) for s in SHAPES])
    inputs = torch.randn(len(SHAPES), mask.size(1), 6)
    expected = encoder.encode(inputs, mask, tensors).root_states
    expected_grads = torch.autograd.grad(expected.sum(), list(encoder.parameters()))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = encoder.encode(inputs, mask, tensors).root_states
        got_grads = torch.autograd.grad(got.float().sum(), list(encoder.parameters()))
    torch.testing.assert_close(got.float(), expected, atol=0.05, rtol=0)
    for g, e in zip(got_grads, expected_grads):
        assert g.dtype == torch.float32 and (g - e).norm() / e.norm() < 0.05
