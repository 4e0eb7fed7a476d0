import torch

from memplugins.modules.nse.memory import memory_read, memory_write


def plain_read(memory, mask, query):
    """The read by autograd's generic backward: z = masked softmax(M o), m_r = z^T M."""
    scores = (memory * query.unsqueeze(1)).sum(-1).masked_fill(~mask, float("-inf"))
    keys = torch.nan_to_num(torch.softmax(scores, -1)) * mask
    return keys, (keys.unsqueeze(-1) * memory).sum(1)


def plain_write(memory, keys, value):
    return memory * (1 - keys.unsqueeze(-1)) + keys.unsqueeze(-1) * value.unsqueeze(1)


def make_inputs():
    torch.manual_seed(0)
    memory = torch.randn(3, 5, 4, dtype=torch.double, requires_grad=True)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.bool)
    query = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
    return memory, mask, query


def test_read_gradients_match_finite_differences():
    memory, mask, query = make_inputs()
    assert torch.autograd.gradcheck(lambda m, q: memory_read(m, mask, q), (memory, query))


def test_write_gradients_match_finite_differences():
    memory, _, value = make_inputs()
    keys = torch.rand(3, 5, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(memory_write, (memory, keys, value))


def test_read_and_write_equal_the_plain_expressions_and_their_gradients():
    memory, mask, query = make_inputs()
    value = torch.randn(3, 4, dtype=torch.double, requires_grad=True)
    weights = torch.randn(3, 5, 4, dtype=torch.double)

    def loss(read, write):
        keys, retrieved = read(memory, mask, query)
        new_memory = write(memory, keys, value + retrieved)
        return (new_memory * weights).sum() + (keys * weights[..., 0]).sum()

    fast = torch.autograd.grad(loss(memory_read, memory_write), (memory, query, value))
    slow = torch.autograd.grad(loss(plain_read, plain_write), (memory, query, value))
    for f, s in zip(fast, slow):
        assert torch.allclose(f, s, atol=1e-10)


def test_padding_slots_get_zero_weight_and_an_empty_memory_reads_zero():
    memory, mask, query = make_inputs()
    keys, retrieved = memory_read(memory, mask, query)
    assert (keys[~mask] == 0).all()
    assert torch.allclose(keys.sum(-1), torch.tensor([1.0, 1.0, 0.0], dtype=torch.double))
    assert (retrieved[2] == 0).all()
    new_memory = memory_write(memory, keys, torch.randn(3, 4, dtype=torch.double))
    assert torch.equal(new_memory[~mask], memory[~mask])
