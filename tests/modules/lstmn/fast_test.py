"""
The LSTMN fast path (`memplugins.modules.lstmn.fast`) against the literal per-example reference of eq. 4-9
(`memplugins.modules.lstmn.reference`): outputs, attention and every gradient, padded and unpadded, with and
without deep fusion's memory addend, with and without the recency score β; and `gradcheck` of the Function itself.
"""
import pytest
import torch

from memplugins.modules.lstmn.fast import lstmn_recurrence
from memplugins.modules.lstmn.reference import lstmn_reference_batch
from tests.modules.fast_path.cases import LENGTHS, lstmn_case


def outputs_and_gradients(forward, layer, x, mask, addend, seed=3):
    hidden, memory, attention = forward(layer, x, mask, addend)
    generator = torch.Generator().manual_seed(seed)
    # a loss on both tapes, with weights at every position, so every gradient path is exercised
    loss = (hidden * torch.randn(hidden.shape, generator=generator, dtype=hidden.dtype)).sum() + (
        memory.tanh() * torch.randn(memory.shape, generator=generator, dtype=memory.dtype)
    ).sum()
    leaves = [x] + list(layer.parameters()) + ([addend] if addend is not None else [])
    return (hidden, memory, attention), torch.autograd.grad(loss, leaves)


@pytest.mark.parametrize("recency_start", [None, 0.0], ids=["eq4", "recency"])
@pytest.mark.parametrize("with_addend", [False, True])
@pytest.mark.parametrize("full", [False, True], ids=["padded", "unpadded"])
def test_fast_path_equals_the_literal_reference(with_addend, full, recency_start):
    layer, _, leaves = lstmn_case(recency_start=recency_start)
    x, addend = leaves[0], leaves[1] if with_addend else None
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]
    if full:
        mask = torch.ones_like(mask)
    fast, fast_grads = outputs_and_gradients(lambda m, *a: m(*a), layer, x, mask, addend)
    reference, reference_grads = outputs_and_gradients(
            lambda layer, x, mask, addend: lstmn_reference_batch(x, mask, layer.weights(), addend), layer, x, mask, addend)
    for got, expected in zip(fast, reference):
        torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)
    names = ["x"] + [n for n, _ in layer.named_parameters()] + (["addend"] if with_addend else [])
    for name, got, expected in zip(names, fast_grads, reference_grads):
        assert got.abs().sum() > 0, name  # every input and parameter gets a gradient
        torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10, msg=name)


@pytest.mark.parametrize("recency_start", [None, 0.0], ids=["eq4", "recency"])
def test_gradcheck(recency_start):
    layer, _, leaves = lstmn_case(recency_start=recency_start)
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]
    weights = (layer.tape_key.weight, layer.scorer.weight[0], torch.cat([layer.weight_hh, layer.summary_query.weight]),
               layer.recency_score)
    weights = tuple(w.detach().clone().requires_grad_() if w is not None else None for w in weights)
    query = torch.randn(4, 6, 4, dtype=torch.float64, requires_grad=True)
    gates = torch.randn(4, 6, 16, dtype=torch.float64, requires_grad=True)

    def run(query, gates, addend, *weights):
        return lstmn_recurrence(query, gates, addend, mask, *weights)[0]

    assert torch.autograd.gradcheck(run, (query, gates, leaves[1], *weights))
