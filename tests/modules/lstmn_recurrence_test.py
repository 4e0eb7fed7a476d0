"""
The LSTMN layer's fast path (`memplugins.modules.lstmn_recurrence`: one Function, hand-written backward) against its
plain autograd form `LstmnLayer.reference_forward`: outputs, attention and every gradient, with padding and with
the deep-fusion memory addend, under autocast, through a retained graph, and without a graph.
"""
import pytest
import torch

from memplugins.modules.lstmn import LstmnLayer
from memplugins.modules.lstmn_recurrence import lstmn_recurrence

LENGTHS = [6, 3, 1, 5]


def layer_and_batch(dtype=torch.float64, seed=0):
    torch.manual_seed(seed)
    layer = LstmnLayer(5, 4).to(dtype)
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.5)
    x = torch.randn(len(LENGTHS), max(LENGTHS), 5, dtype=dtype, requires_grad=True)
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]
    addend = torch.randn(len(LENGTHS), max(LENGTHS), 4, dtype=dtype, requires_grad=True)
    return layer, x, mask, addend


def outputs_and_gradients(forward, layer, x, mask, addend, seed=3):
    hidden, memory, attention = forward(x, mask, addend)
    generator = torch.Generator().manual_seed(seed)
    # a loss on both tapes, with weights at every position, so every gradient path is exercised
    loss = (hidden * torch.randn(hidden.shape, generator=generator, dtype=hidden.dtype)).sum() + (
        memory.tanh() * torch.randn(memory.shape, generator=generator, dtype=memory.dtype)
    ).sum()
    leaves = [x] + list(layer.parameters()) + ([addend] if addend is not None else [])
    return (hidden, memory, attention), torch.autograd.grad(loss, leaves)


@pytest.mark.parametrize("with_addend", [False, True])
@pytest.mark.parametrize("full", [False, True], ids=["padded", "unpadded"])
def test_fast_path_equals_reference_outputs_and_gradients(with_addend, full):
    layer, x, mask, addend = layer_and_batch()
    if full:
        mask = torch.ones_like(mask)
    addend = addend if with_addend else None
    fast, fast_grads = outputs_and_gradients(layer.forward, layer, x, mask, addend)
    reference, reference_grads = outputs_and_gradients(layer.reference_forward, layer, x, mask, addend)
    for got, expected in zip(fast, reference):
        torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)
    names = ["x"] + [n for n, _ in layer.named_parameters()] + (["addend"] if with_addend else [])
    for name, got, expected in zip(names, fast_grads, reference_grads):
        assert got.abs().sum() > 0, name  # every input and parameter gets a gradient
        torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10, msg=name)


def test_gradcheck():
    layer, x, mask, addend = layer_and_batch()
    weights = (layer.tape_key.weight, layer.scorer.weight[0], torch.cat([layer.weight_hh, layer.summary_query.weight]))
    query = torch.randn(4, 6, 4, dtype=torch.float64, requires_grad=True)
    gates = torch.randn(4, 6, 16, dtype=torch.float64, requires_grad=True)
    weights = tuple(w.detach().clone().requires_grad_() for w in weights)

    def run(query, gates, addend, *weights):
        return lstmn_recurrence(query, gates, addend, mask, *weights)[0]

    assert torch.autograd.gradcheck(run, (query, gates, addend, *weights))


def test_retained_graph_backward_twice_doubles_the_gradients():
    layer, x, mask, addend = layer_and_batch()
    hidden, memory, _ = layer(x, mask, addend)
    loss = hidden.square().sum() + memory.sum()
    loss.backward(retain_graph=True)
    once = [p.grad.clone() for p in layer.parameters()] + [x.grad.clone()]
    loss.backward()
    for first, total in zip(once, [p.grad for p in layer.parameters()] + [x.grad]):
        torch.testing.assert_close(total, 2 * first)


def test_double_backward_is_refused_clearly():
    layer, x, mask, _ = layer_and_batch()
    hidden, _, _ = layer(x, mask)
    with pytest.raises(RuntimeError, match="no double backward"):
        torch.autograd.grad(hidden.sum(), x, create_graph=True)


def test_no_grad_gives_the_same_outputs_and_keeps_no_graph():
    layer, x, mask, addend = layer_and_batch()
    with_graph = layer(x, mask, addend)
    with torch.no_grad():
        without = layer(x, mask, addend)
    for a, b in zip(with_graph, without):
        torch.testing.assert_close(a, b, atol=0, rtol=0)
        assert b.grad_fn is None


def test_bfloat16_autocast_runs_the_recurrence_in_float32():
    layer, x, mask, addend = layer_and_batch(torch.float32)
    expected, expected_grads = outputs_and_gradients(layer.forward, layer, x, mask, addend)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, got_grads = outputs_and_gradients(layer.forward, layer, x, mask, addend)
    assert got[0].dtype == torch.float32
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=0.05, rtol=0)  # only the batched input products are bfloat16
    for g, e, leaf in zip(got_grads, expected_grads, [x] + list(layer.parameters()) + [addend]):
        assert g.dtype == leaf.dtype
        assert (g - e).norm() / e.norm() < 0.05
