"""
The tree LSTM's levels through CUDA graphs (`memplugins.modules.tree_lstm.fast`, `step_graphs`), checked on the CPU
with the simulated capture (a replay re-runs the recorded function into the captured static buffers): the padded
layout a graph key needs (leaves and levels padded to the bucket, each level to `level_capacities`) against the
exact layout of the eager fast path and against the literal recursive reference, every node's output and every
gradient, in float64. `tests/gpu_test.py` captures real graphs on CUDA.
"""
import collections
import random
from typing import List

import pytest
import torch

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields import BinaryTree, batch_trees
from memplugins.modules.fast_path import step_graphs
from memplugins.modules.tree_lstm import fast as fast_tree
from memplugins.modules.tree_lstm.layout import level_capacities, nodes_per_tree, pad_leaves, sided_levels
from memplugins.modules.tree_lstm.reference import tree_lstm_reference_batch
from tests.modules.fast_path.cases import randomize, sst_trees

GRAPHS = fast_tree._GRAPHS


@pytest.fixture
def graphs(monkeypatch):
    monkeypatch.setattr(step_graphs, "SIMULATE_ON_CPU", True)
    monkeypatch.setattr(GRAPHS, "cache", collections.OrderedDict())
    monkeypatch.setattr(GRAPHS, "captures", 0)
    monkeypatch.setattr(GRAPHS, "failed", None)
    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPHS", "1")


def eager(monkeypatch, function):
    with monkeypatch.context() as patch:
        patch.setenv("MEMPLUGINS_CUDA_GRAPHS", "0")
        return function()


def random_tree(num_leaves: int, rng: random.Random, shape: str = "random") -> BinaryTree:
    """A binary tree over `num_leaves` leaves in post-order: split points drawn at random, or every split at the
    left end ("right": right-branching) or the right end ("left"), or a comb of left subtrees of 2 leaves ("comb",
    the most left children of height 1 a tree can have)."""
    children = []

    def build(start: int, end: int) -> int:
        if end - start == 1:
            return start
        if shape == "random":
            split = rng.randint(start + 1, end - 1)
        elif shape == "right":
            split = start + 1
        elif shape == "left":
            split = end - 1
        else:  # comb: ((a b) ((c d) ((e f) ... g)))
            split = min(start + 2, end - 1)
        left, right = build(start, split), build(split, end)
        children.append((left, right))
        return num_leaves + len(children) - 1

    build(0, num_leaves)
    return BinaryTree([f"w{i}" for i in range(num_leaves)], children)


def run(encoder: TreeLstmEncoder, trees: List[BinaryTree], seed: int, reference: bool = False):
    """Every node's state and the gradients of a fixed random projection of them (inputs and every parameter)."""
    tensors, mask = batch_trees(trees)
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(len(trees), mask.size(1), encoder._input_size, dtype=torch.float64, generator=generator)
    inputs.requires_grad_()
    probe = torch.randn(len(trees), 2 * mask.size(1) - 1, encoder.get_output_dim(), dtype=torch.float64,
                        generator=generator)
    if reference:
        states = tree_lstm_reference_batch(encoder.weights(), encoder.leaves(inputs, mask), mask, tensors)
    else:
        states = encoder.encode(inputs, mask, tensors).node_states
    return states, torch.autograd.grad((states * probe).sum(), [inputs, *encoder.parameters()])


def assert_same(got, expected, atol=1e-12):
    (states, grads), (expected_states, expected_grads) = got, expected
    torch.testing.assert_close(states, expected_states, atol=atol, rtol=1e-10)
    for g, e in zip(grads, expected_grads):
        torch.testing.assert_close(g, e, atol=atol, rtol=1e-9)


def encoder(activation: str = "tanh", input_dim: int = 5, num_layers: int = 1) -> TreeLstmEncoder:
    return randomize(TreeLstmEncoder(input_dim, 4, activation, num_layers=num_layers).double(), seed=1)


@pytest.mark.parametrize("activation", ["tanh", "softsign", "sigmoid"])
@pytest.mark.parametrize("input_dim, num_layers", [(4, 1), (6, 2)])
def test_the_graphed_levels_equal_the_eager_path_and_the_reference(activation, input_dim, num_layers, graphs,
                                                                   monkeypatch):
    model = encoder(activation, input_dim, num_layers)
    trees = sst_trees()  # a one-word tree, a deep left-branching one, a mixed one; 8 leaves at most
    expected = eager(monkeypatch, lambda: run(model, trees, seed=3))
    assert not GRAPHS.cache
    got = run(model, trees, seed=3)
    assert GRAPHS.captures == 2 and len(GRAPHS.cache) == 1
    assert_same(got, expected)
    assert_same(got, run(model, trees, seed=3, reference=True), atol=1e-11)
    for grad in got[1]:
        assert grad.abs().sum() > 0


def test_batches_of_one_key_replay_one_capture(graphs, monkeypatch):
    """Different trees and lengths that pad to the same leaves, levels and batch size share one graph pair."""
    model = encoder()
    rng = random.Random(0)
    for batch in range(6):
        trees = [random_tree(rng.randint(2, 16), rng) for _ in range(5)]
        trees[0] = random_tree(16, rng, "left")  # height 15: the key's 16 leaves and 15 levels, every batch
        got = run(model, trees, seed=batch)
        assert_same(got, eager(monkeypatch, lambda: run(model, trees, seed=batch)))
    assert GRAPHS.captures == 2 and len(GRAPHS.cache) == 1


@pytest.mark.parametrize("shape", ["random", "right", "left", "comb"])
def test_the_padded_layout_holds_every_tree_shape(shape, graphs, monkeypatch):
    """The level capacities are tight for a comb (left children of height 1) and for a chain (one node a level):
    each shape, at lengths that do and do not fill their bucket, through the graphs."""
    model = encoder()
    rng = random.Random(1)
    for lengths in ([9, 16, 2], [17, 3, 24], [8, 8, 8, 8]):
        trees = [random_tree(n, rng, shape) for n in lengths]
        got = run(model, trees, seed=len(lengths))
        assert_same(got, eager(monkeypatch, lambda: run(model, trees, seed=len(lengths))))
        assert_same(got, run(model, trees, seed=len(lengths), reference=True), atol=1e-11)


def test_the_level_capacities_bound_every_tree():
    """Per height, the left children and roots, and the right children, of many random, chain and comb trees never
    exceed `level_capacities` (the comb reaches it), so a padded layout never refuses a real batch."""
    rng = random.Random(2)
    reached = set()
    for _ in range(300):
        num_leaves = rng.randint(2, 40)
        tree = random_tree(num_leaves, rng, rng.choice(["random", "random", "right", "left", "comb"]))
        heights = tree.heights()
        parent_side = {}
        for left, right in tree.children:
            parent_side[left], parent_side[right] = "left", "right"
        capacities = level_capacities(1, num_leaves, num_leaves - 1)
        for height, (left_capacity, right_capacity) in enumerate(capacities, 1):
            nodes = [num_leaves + j for j, h in enumerate(heights) if h == height]
            left = sum(parent_side.get(node, "root") in ("left", "root") for node in nodes)
            right = sum(parent_side.get(node) == "right" for node in nodes)
            assert left <= left_capacity and right <= right_capacity, (tree, height)
            if nodes and left == left_capacity > 1:
                reached.add(height)
    assert 1 in reached


def test_the_padded_layout_places_padding_where_nothing_reads_it():
    trees = sst_trees()
    tensors, mask = batch_trees(trees)
    inputs = torch.zeros(len(trees), mask.size(1), 1)
    _, padded_mask, padded_tree = pad_leaves(inputs, mask, tensors, 16)
    num_nodes = nodes_per_tree("tree_lstm", padded_mask, padded_tree)
    layout = sided_levels(padded_mask, padded_tree, num_nodes, level_bucket=8)
    exact = sided_levels(mask, tensors, nodes_per_tree("tree_lstm", mask, tensors))
    capacities = level_capacities(len(trees), 16, 8)
    assert layout.structure == tuple((left, right, 0) for left, right in capacities)
    assert layout.num_rows == len(trees) * num_nodes + 2
    trash, zero = layout.num_rows - 1, layout.num_rows - 2
    assert int((layout.parents != trash).sum()) == int(tensors["mask"].sum())  # every real node once
    assert int((layout.children != zero).sum()) == 2 * int(tensors["mask"].sum())
    assert not (layout.children == trash).any() and not (layout.parents == zero).any()
    assert exact.num_levels == 5 and sum(map(sum, exact.structure)) == int(tensors["mask"].sum())
    assert sided_levels(padded_mask, padded_tree, num_nodes, level_bucket=3).num_levels == 6  # height 5
    assert sided_levels(padded_mask, padded_tree, num_nodes, level_bucket=32).num_levels == 15  # at most L - 1


def test_two_forwards_before_one_backward(graphs, monkeypatch):
    """A pair model encodes premise and hypothesis before one backward: each call keeps its own saved state."""
    model = encoder()
    rng = random.Random(3)
    first, second = ([random_tree(n, rng) for n in (7, 5, 3)] for _ in range(2))

    def twice():
        states = []
        inputs = []
        for seed, trees in enumerate((first, second)):
            tensors, mask = batch_trees(trees)
            x = torch.randn(len(trees), mask.size(1), 5, dtype=torch.float64,
                            generator=torch.Generator().manual_seed(seed)).requires_grad_()
            inputs.append(x)
            states.append(model.encode(x, mask, tensors).node_states)
        loss = states[0].tanh().sum() + (states[1].sigmoid() * 2).sum()
        return states, torch.autograd.grad(loss, [*inputs, *model.parameters()])

    expected = eager(monkeypatch, twice)
    got = twice()
    assert GRAPHS.captures == 2
    for a, b in zip(got[0] + list(got[1]), expected[0] + list(expected[1])):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=1e-10)


def test_no_grad_and_a_failed_capture(graphs, monkeypatch, caplog):
    model = encoder()
    trees = sst_trees()
    tensors, mask = batch_trees(trees)
    x = torch.randn(len(trees), mask.size(1), 5, dtype=torch.float64)
    with torch.no_grad():
        expected = eager(monkeypatch, lambda: model.encode(x, mask, tensors).node_states)
        torch.testing.assert_close(model.encode(x, mask, tensors).node_states, expected, atol=1e-12, rtol=0)
    assert GRAPHS.captures == 1  # the forward only

    def broken(*args):
        raise ValueError("not capturable")

    monkeypatch.setattr(GRAPHS, "cache", collections.OrderedDict())
    monkeypatch.setattr(GRAPHS, "forward", broken)
    expected_run = eager(monkeypatch, lambda: run(model, trees, seed=4))
    with caplog.at_level("WARNING", logger="memplugins.modules.fast_path.step_graphs"):
        for _ in range(2):
            assert_same(run(model, trees, seed=4), expected_run)
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1 and "capturing the tree_lstm loop's forward" in warnings[0], warnings
