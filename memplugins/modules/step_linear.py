"""
Linear maps applied once per time step inside a Python recurrence, with the weight gradient computed once for all
steps.

Autograd's backward of `x_t @ W^T` at every step t makes two matrix products per step: the input gradient (needed
at once, the recurrence depends on it) and the weight gradient g_t^T x_t, a product whose inner dimension is only
the batch size. Summed over steps, the weight gradient is one product G^T X over the stacked steps, which a BLAS
does several times faster than T small ones. `StepLinear` defers it: each step's backward returns only the input
gradient and records g_t; a node that every step depends on (the weight "alias" made when the `StepLinear` is
created) runs after all of them in the backward pass and returns G^T X as the weight's gradient.

    linear = StepLinear(weight)          # once per forward pass, before the loop
    for t in ...: y_t = linear(x_t)      # y_t = x_t W^T
"""
from typing import Dict, List, Optional

import torch


class _CollectWeightGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight: torch.Tensor, step_linear: "StepLinear") -> torch.Tensor:
        ctx.step_linear = step_linear
        ctx.set_materialize_grads(False)
        return weight.detach()  # a new graph node every step depends on; no copy of the data

    @staticmethod
    def backward(ctx, _unused: Optional[torch.Tensor]):
        step_linear: StepLinear = ctx.step_linear
        steps = sorted(step_linear.output_grads)
        if not steps:
            return None, None
        grads = torch.cat([step_linear.output_grads[s] for s in steps])
        inputs = torch.cat([step_linear.inputs[s] for s in steps])
        step_linear.output_grads.clear()
        return grads.t().mm(inputs), None


class _StepLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs: torch.Tensor, weight: torch.Tensor, step_linear: "StepLinear", step: int) -> torch.Tensor:
        ctx.save_for_backward(weight)
        ctx.step_linear, ctx.step = step_linear, step
        return inputs.mm(weight.t())

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        (weight,) = ctx.saved_tensors
        ctx.step_linear.output_grads[ctx.step] = grad_output
        return grad_output.mm(weight), None, None, None


class StepLinear:
    """`x_t ↦ x_t W^T` for the steps of one forward pass; W's gradient is computed once (see the module doc)."""

    def __init__(self, weight: torch.Tensor) -> None:
        self._defer = weight.requires_grad and torch.is_grad_enabled()
        self.weight = _CollectWeightGradient.apply(weight, self) if self._defer else weight
        self.inputs: List[torch.Tensor] = []
        self.output_grads: Dict[int, torch.Tensor] = {}

    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self._defer:
            return inputs.mm(self.weight.t())
        self.inputs.append(inputs.detach())
        return _StepLinearFunction.apply(inputs, self.weight, self, len(self.inputs) - 1)
