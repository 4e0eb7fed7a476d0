import torch

from memplugins.modules.step_linear import StepLinear


def recurrence(weight, inputs, linear_factory):
    """A small recurrence whose steps use the same weight; some steps' outputs are unused."""
    linear = linear_factory(weight)
    state = torch.zeros(inputs.size(0), weight.size(0), dtype=weight.dtype)
    outputs = []
    for t, x_t in enumerate(inputs.unbind(1)):
        y_t = linear(torch.cat([x_t, state], -1))
        if t == 1:
            continue  # a step whose output nothing uses: its gradient never arrives
        state = torch.tanh(y_t)
        outputs.append(state)
    return torch.stack(outputs, 1)


def test_step_linear_gradients_equal_autograd_of_the_plain_product():
    torch.manual_seed(0)
    inputs = torch.randn(3, 5, 4, dtype=torch.double, requires_grad=True)
    weight = torch.randn(6, 10, dtype=torch.double, requires_grad=True)
    probe = torch.randn(3, 4, 6, dtype=torch.double)
    fast = torch.autograd.grad((recurrence(weight, inputs, StepLinear) * probe).sum(), (weight, inputs))
    plain = lambda w: (lambda x: x.mm(w.t()))  # noqa: E731
    slow = torch.autograd.grad((recurrence(weight, inputs, plain) * probe).sum(), (weight, inputs))
    for f, s in zip(fast, slow):
        assert torch.allclose(f, s, atol=1e-12)


def test_step_linear_gradients_pass_through_a_derived_weight():
    torch.manual_seed(0)
    inputs = torch.randn(3, 5, 4, dtype=torch.double)
    first = torch.randn(6, 4, dtype=torch.double, requires_grad=True)
    second = torch.randn(6, 6, dtype=torch.double, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda a, b: recurrence(torch.cat([a, b], 1), inputs, StepLinear), (first, second)
    )


def test_step_linear_without_gradients_is_the_plain_product():
    weight = torch.randn(6, 10)
    inputs = torch.randn(3, 10)
    with torch.no_grad():
        assert torch.allclose(StepLinear(weight)(inputs), inputs @ weight.t())
    assert StepLinear(weight)(inputs).grad_fn is None  # frozen weight, input without grad: nothing recorded
