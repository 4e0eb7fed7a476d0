"""
The tree LSTM's fast path (`memplugins.modules.tree_lstm.fast`, level by level over the batch) against the literal
recursive reference of Le and Zuidema's equations (`memplugins.modules.tree_lstm.reference`, one tree at a time):
every node's output and every gradient, for each activation, with d_w = d and d_w != d, with a leaf LSTM below.
"""
import pytest
import torch

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields import batch_trees
from memplugins.modules.tree_lstm.reference import tree_lstm_reference_batch
from tests.modules.fast_path.cases import randomize, sst_trees


@pytest.mark.parametrize("activation", ["tanh", "softsign", "sigmoid"])
@pytest.mark.parametrize("input_dim, num_layers", [(5, 1), (6, 1), (6, 2)])
def test_fast_path_equals_the_recursive_reference(activation, input_dim, num_layers):
    encoder = randomize(TreeLstmEncoder(input_dim, 5, activation, num_layers=num_layers).double(), seed=1)
    trees = sst_trees()
    tensors, mask = batch_trees(trees)
    inputs = torch.randn(len(trees), mask.size(1), input_dim, dtype=torch.float64, requires_grad=True)
    probe = torch.randn(len(trees), 2 * mask.size(1) - 1, 5, dtype=torch.float64)
    results = []
    for encode in (lambda: encoder.encode(inputs, mask, tensors).node_states,
                   lambda: tree_lstm_reference_batch(encoder.weights(), encoder.leaves(inputs, mask), mask, tensors)):
        states = encode()
        results.append((states, torch.autograd.grad((states * probe).sum(), [inputs, *encoder.parameters()])))
    (fast, fast_grads), (reference, reference_grads) = results
    torch.testing.assert_close(fast, reference, atol=1e-12, rtol=1e-10)
    for (name, _), f, r in zip([("inputs", None), *encoder.named_parameters()], fast_grads, reference_grads):
        assert f.abs().sum() > 0, name
        torch.testing.assert_close(f, r, atol=1e-11, rtol=1e-9, msg=name)
