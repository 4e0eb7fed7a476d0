"""`FactoredMemory` + `WriteHistory` against the step-by-step memory of eq. 2-3 / 6 (`modules/memory.py`)."""
import pytest
import torch

from memplugins.modules.factored_memory import FactoredMemory, WriteHistory, read_memories
from memplugins.modules.memory import memory_read, memory_write


def recurrence(initials, masks, written, queries, step_mask, factored: bool):
    """h_t = tanh(o_t + Σ_n m^n_t) written into the written memories; returns outputs to compare."""
    steps = queries.size(1)
    if factored:
        memories = [FactoredMemory(m, mask, queries, w) for m, mask, w in zip(initials, masks, written)]
        history = WriteHistory(queries, num_reads=sum(written))
    else:
        memories = list(initials)
    hidden, all_keys = [], []
    for t in range(steps):
        o_t = queries[:, t]
        if factored:
            keys, retrieved = read_memories(t, o_t, memories, history)
        else:
            reads = [memory_read(m, mask, o_t) for m, mask in zip(memories, masks)]
            keys, retrieved = [z for z, _ in reads], [m for _, m in reads]
        h_t = torch.tanh(o_t + sum(retrieved)) * step_mask[:, t : t + 1]
        keys = [z * step_mask[:, t : t + 1] for z in keys]
        for n, z in enumerate(keys):
            if written[n]:
                if factored:
                    memories[n].write(z)
                else:
                    memories[n] = memory_write(memories[n], z, h_t)
        if factored and t + 1 < steps:
            history.write(t, h_t)
        hidden.append(h_t)
        all_keys += keys
    hidden = torch.stack(hidden, 1)
    finals = [m.final(hidden) for m in memories] if factored else memories
    return [hidden, *finals, *all_keys]


@pytest.mark.parametrize("written", [(True,), (True, False), (True, True, False)])
def test_factored_memory_equals_step_by_step_memory_with_gradients(written):
    torch.manual_seed(0)
    batch, steps, k = 3, 5, 4
    sizes = [5, 3, 6][: len(written)]
    initials = [torch.randn(batch, l, k, dtype=torch.double, requires_grad=True) for l in sizes]
    masks = [torch.rand(batch, l) < 0.8 for l in sizes]
    masks[0][1] = False  # a memory with no real slot: z = 0, m = 0
    queries = torch.randn(batch, steps, k, dtype=torch.double, requires_grad=True)
    step_mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 1, 0]], dtype=torch.double)
    inputs = [*initials, queries]
    fast = recurrence(initials, masks, written, queries, step_mask, factored=True)
    slow = recurrence(initials, masks, written, queries, step_mask, factored=False)
    probes = [torch.randn_like(s) for s in slow]
    for f, s in zip(fast, slow):
        torch.testing.assert_close(f, s, atol=1e-12, rtol=0)
    loss = lambda outputs: sum((o * p).sum() for o, p in zip(outputs, probes))  # noqa: E731
    fast_grads = torch.autograd.grad(loss(fast), inputs)
    slow_grads = torch.autograd.grad(loss(slow), inputs)
    for f, s in zip(fast_grads, slow_grads):
        torch.testing.assert_close(f, s, atol=1e-12, rtol=0)


def test_factored_memory_gradcheck_and_a_second_backward():
    torch.manual_seed(1)
    initial = torch.randn(2, 4, 3, dtype=torch.double, requires_grad=True)
    queries = torch.randn(2, 4, 3, dtype=torch.double, requires_grad=True)
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    step_mask = torch.ones(2, 4, dtype=torch.double)

    def outputs(m, q):
        return tuple(recurrence([m], [mask], (True,), q, step_mask, factored=True))

    assert torch.autograd.gradcheck(outputs, (initial, queries))
    # the stored per-step gradients are rewritten, not accumulated, when a retained graph runs again
    loss = sum(o.sum() for o in outputs(initial, queries))
    first = torch.autograd.grad(loss, (initial, queries), retain_graph=True)
    second = torch.autograd.grad(loss, (initial, queries))
    for a, b in zip(first, second):
        torch.testing.assert_close(a, b, atol=0, rtol=0)
