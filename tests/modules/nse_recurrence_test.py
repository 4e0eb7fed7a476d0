"""
The NSE encoder's fast path (`memplugins.modules.nse_recurrence`: one Function, hand-written backward) against its
autograd form `NseEncoder.reference_encode` (the factored memory, itself tested against eq. 2-3 / 6 step by step):
hidden states, keys, final memories and every gradient, with padding, extra memories written or read-only, both
compose settings, dropout, under autocast, through a retained graph, and without a graph.
"""
import pytest
import torch

from memplugins.encoders import NseEncoder

LENGTHS = [6, 3, 1, 5]
EXTRA_LENGTHS = [4, 2, 3, 1]


def randomize(module, seed=0):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=parameter.dtype) * 0.5)
    return module


def batch(dtype=torch.float64, input_size=5, hidden=4, seed=1, extras=0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(len(LENGTHS), max(LENGTHS), input_size, generator=generator, dtype=dtype).requires_grad_()
    mask = torch.arange(max(LENGTHS))[None, :] < torch.tensor(LENGTHS)[:, None]
    extra_memories = []
    for _ in range(extras):
        extra_mask = torch.arange(max(EXTRA_LENGTHS))[None, :] < torch.tensor(EXTRA_LENGTHS)[:, None]
        memory = torch.randn(len(LENGTHS), max(EXTRA_LENGTHS), hidden, generator=generator, dtype=dtype)
        extra_memories.append(((memory * extra_mask.unsqueeze(-1)).requires_grad_(), extra_mask))
    return x, mask, extra_memories


def run(encode, encoder, x, mask, extras, seed=3):
    output = encode(x, mask, extras)
    generator = torch.Generator().manual_seed(seed)
    tensors = [output.hidden, output.memory, output.keys, *output.extra_memories, *output.extra_keys]
    loss = sum((t.tanh() * torch.randn(t.shape, generator=generator, dtype=t.dtype)).sum() for t in tensors)
    leaves = [x, *[m for m, _ in extras], *encoder.parameters()]
    return tensors, torch.autograd.grad(loss, leaves, allow_unused=True)


CASES = {
    "nse": dict(extras=0),
    "mma_written": dict(extras=2, write_extra_memories=True),
    "mma_read_only": dict(extras=1, write_extra_memories=False),
    "linear_wide": dict(extras=1, compose_size=12, compose_activation="linear"),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("full", [False, True], ids=["padded", "unpadded"])
def test_fast_path_equals_reference(case, full):
    options = dict(CASES[case])
    extras = options.pop("extras")
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=extras, **options).double(), seed=2)
    x, mask, extra_memories = batch(extras=extras)
    if full:
        mask = torch.ones_like(mask)
    fast, fast_grads = run(encoder.encode, encoder, x, mask, extra_memories)
    reference, reference_grads = run(encoder.reference_encode, encoder, x, mask, extra_memories)
    for got, expected in zip(fast, reference):
        torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)
    names = ["x"] + [f"extra {i}" for i in range(extras)] + [n for n, _ in encoder.named_parameters()]
    for name, got, expected in zip(names, fast_grads, reference_grads):
        assert got is not None and got.abs().sum() > 0, name
        torch.testing.assert_close(got, expected, atol=1e-11, rtol=1e-9, msg=name)


def test_dropout_draws_one_mask_and_matches_the_reference_given_it():
    encoder = randomize(NseEncoder(5, 4, dropout=0.3).double(), seed=4).train()
    x, mask, _ = batch()
    torch.manual_seed(0)
    hidden = encoder(x, mask)
    dropped = (hidden == 0) & mask.unsqueeze(-1)
    assert 0.1 < dropped.double().mean() < 0.5  # about 30% of the real units, plus the read dropout's effect
    hidden.sum().backward()
    assert all(p.grad is not None for p in encoder.parameters())


def test_retained_graph_backward_twice_doubles_the_gradients():
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=1).double(), seed=5)
    x, mask, extras = batch(extras=1)
    output = encoder.encode(x, mask, extras)
    loss = output.hidden.square().sum() + output.memory.sum() + output.extra_memories[0].sum()
    loss.backward(retain_graph=True)
    once = [p.grad.clone() for p in encoder.parameters()]
    loss.backward()
    for first, parameter in zip(once, encoder.parameters()):
        torch.testing.assert_close(parameter.grad, 2 * first)


def test_double_backward_is_refused_clearly():
    encoder = randomize(NseEncoder(5, 4).double())
    x, mask, _ = batch()
    with pytest.raises(RuntimeError, match="no double backward"):
        torch.autograd.grad(encoder(x, mask).sum(), x, create_graph=True)


def test_no_grad_gives_the_same_outputs():
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=1).double()).eval()
    x, mask, extras = batch(extras=1)
    with_graph = encoder.encode(x, mask, extras)
    with torch.no_grad():
        without = encoder.encode(x, mask, extras)
    for a, b in zip(with_graph[:3], without[:3]):
        torch.testing.assert_close(a, b, atol=0, rtol=0)
        assert b.grad_fn is None


def test_bfloat16_autocast_runs_the_loop_in_float32():
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=1), seed=6)
    x, mask, extras = batch(torch.float32, extras=1)
    expected, expected_grads = run(encoder.encode, encoder, x, mask, extras)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, got_grads = run(encoder.encode, encoder, x, mask, extras)
    assert got[0].dtype == torch.float32
    for g, e in zip(got, expected):
        torch.testing.assert_close(g.float(), e, atol=0.05, rtol=0)
    for g, e in zip(got_grads, expected_grads):
        assert (g - e).norm() / e.norm() < 0.05
