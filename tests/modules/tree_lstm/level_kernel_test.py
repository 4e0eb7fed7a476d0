"""
The Triton kernels of the tree LSTM's levels (`memplugins.modules.tree_lstm.level_kernel`), checked without a GPU:
under `TRITON_INTERPRET=1` they run on CPU tensors, so the encoder with them is compared with the literal recursive
reference of Le and Zuidema's equations, every node's output and every gradient, in float64, for each activation
g, with one- and two-layer leaf LSTMs below, and the launches are counted (two per level each way); then once
more through the CUDA graphs' padded layout (simulated capture). Triton reads
the variable when a kernel is defined, so the check runs in a fresh interpreter. On CUDA, `tests/gpu_test.py`
covers the kernels.
"""
import textwrap

import pytest

from tests.modules.fast_path.interpreter import run_under_interpreter

pytest.importorskip("triton")

CHECK = textwrap.dedent(
    """
    import torch
    import memplugins.modules.tree_lstm.level_kernel as kernel
    from memplugins.encoders.tree_lstm import TreeLstmEncoder
    from memplugins.fields import batch_trees
    from memplugins.modules.tree_lstm.reference import tree_lstm_reference_batch
    from memplugins.modules.tree_lstm.layout import nodes_per_tree, sided_levels
    from tests.modules.fast_path.cases import randomize, sst_trees
    from tests.modules.fast_path.interpreter import count_launches

    calls = count_launches([(kernel, name, name) for name in
                            ("gather_and_gates", "level_output", "output_backward", "gates_backward")])

    trees = sst_trees()
    tree, mask = batch_trees(trees)
    levels = sided_levels(mask, tree, nodes_per_tree("tree_lstm", mask, tree)).num_levels
    for activation in ("tanh", "softsign", "sigmoid"):
        for input_dim, leaf_layers in ((5, 1), (6, 2)):
            encoder = randomize(TreeLstmEncoder(input_dim, 5, activation, num_layers=leaf_layers).double(), seed=1)
            inputs = torch.randn(len(trees), mask.size(1), input_dim, dtype=torch.float64, requires_grad=True)
            probe = torch.randn(len(trees), 2 * mask.size(1) - 1, 5, dtype=torch.float64)
            before = dict(calls)
            fast = encoder.encode(inputs, mask, tree).node_states
            leaves = [inputs, *encoder.parameters()]
            fast_grads = torch.autograd.grad((fast * probe).sum(), leaves)
            for name in calls:  # one launch of each per level, forward and backward
                assert calls[name] - before[name] == levels, (calls, levels)
            reference = tree_lstm_reference_batch(encoder.weights(), encoder.leaves(inputs, mask), mask, tree)
            torch.testing.assert_close(fast, reference, atol=1e-12, rtol=1e-10)
            for got, expected in zip(fast_grads, torch.autograd.grad((reference * probe).sum(), leaves)):
                assert got.abs().sum() > 0
                torch.testing.assert_close(got, expected, atol=1e-11, rtol=1e-9)
    # the padded layout of a CUDA graph key (simulated capture): padding rows read and written by the kernels too
    import os
    from memplugins.modules.fast_path import step_graphs
    from memplugins.modules.tree_lstm.fast import _GRAPHS
    step_graphs.SIMULATE_ON_CPU = True
    os.environ["MEMPLUGINS_CUDA_GRAPHS"] = "1"
    encoder = randomize(TreeLstmEncoder(5, 5, "tanh").double(), seed=2)
    inputs = torch.randn(len(trees), mask.size(1), 5, dtype=torch.float64, requires_grad=True)
    probe = torch.randn(len(trees), 2 * mask.size(1) - 1, 5, dtype=torch.float64)
    leaves = [inputs, *encoder.parameters()]
    fast = encoder.encode(inputs, mask, tree).node_states
    fast_grads = torch.autograd.grad((fast * probe).sum(), leaves)
    assert _GRAPHS.captures == 2, _GRAPHS.captures
    reference = tree_lstm_reference_batch(encoder.weights(), encoder.leaves(inputs, mask), mask, tree)
    torch.testing.assert_close(fast, reference, atol=1e-12, rtol=1e-10)
    for got, expected in zip(fast_grads, torch.autograd.grad((reference * probe).sum(), leaves)):
        torch.testing.assert_close(got, expected, atol=1e-11, rtol=1e-9)
    print("kernels checked", calls, levels)
    """
)


def test_the_triton_levels_equal_the_recursive_reference_under_the_interpreter():
    run_under_interpreter(CHECK, timeout=600)
