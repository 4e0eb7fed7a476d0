"""
Products with one weight applied once per time step inside a Python recurrence, with the weight's gradient computed
once for all steps.

Autograd's backward of `x_t @ W^T` at every step t makes two matrix products per step: the input gradient (needed
at once, the recurrence depends on it) and the weight gradient g_t^T x_t, a product whose inner dimension is only
the batch size. Summed over steps, the weight gradient is one product G^T X over the stacked steps, which a BLAS
does several times faster than T small ones. `DeferredStepProduct` defers it: each step's backward returns only the
input gradient and records g_t; a node that every step depends on (the weight "alias" made when the product is
created) runs after all of them in the backward pass and returns the weight's gradient from all recorded steps.

`StepLinear` is the linear map; `memplugins.modules.factored_memory.StepMatrixReader` the batched vector-matrix
product u_t^T M of the NSE encoder.

    linear = StepLinear(weight)          # once per forward pass, before the loop
    for t in ...: y_t = linear(x_t)      # y_t = x_t W^T
"""
from typing import Dict, List, Optional

import torch


class _CollectDeferredGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight: torch.Tensor, owner: "DeferredStepProduct") -> torch.Tensor:
        ctx.owner = owner
        ctx.set_materialize_grads(False)
        return weight.detach()  # a new graph node every step depends on; no copy of the data

    @staticmethod
    def backward(ctx, _unused: Optional[torch.Tensor]):
        return ctx.owner.collected_weight_gradient(), None


class _StepProductFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs: torch.Tensor, weight: torch.Tensor, owner: "DeferredStepProduct", step: int):
        ctx.save_for_backward(weight)
        ctx.owner, ctx.step = owner, step
        return owner.product(inputs, weight)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        (weight,) = ctx.saved_tensors
        ctx.owner.output_grads[ctx.step] = grad_output
        return ctx.owner.input_gradient(grad_output, weight), None, None, None


class DeferredStepProduct:
    """
    `x_t ↦ product(x_t, W)` for the steps of one forward pass, W's gradient formed once (see the module doc).
    Subclasses define `product`, its `input_gradient` and the `weight_gradient` of all recorded steps.
    """

    def __init__(self, weight: torch.Tensor) -> None:
        self._defer = weight.requires_grad and torch.is_grad_enabled()
        self.weight = _CollectDeferredGradient.apply(weight, self) if self._defer else weight
        self.inputs: List[torch.Tensor] = []
        self.output_grads: Dict[int, torch.Tensor] = {}

    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self._defer:
            return self.product(inputs, self.weight)
        self.inputs.append(inputs.detach())
        return _StepProductFunction.apply(inputs, self.weight, self, len(self.inputs) - 1)

    def collected_weight_gradient(self) -> Optional[torch.Tensor]:
        steps = sorted(self.output_grads)  # steps whose output got no gradient are left out
        if not steps:
            return None
        gradient = self.weight_gradient([self.inputs[s] for s in steps], [self.output_grads[s] for s in steps])
        self.output_grads.clear()
        return gradient

    @staticmethod
    def product(inputs: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def input_gradient(grad_output: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def weight_gradient(inputs: List[torch.Tensor], grad_outputs: List[torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError


class StepLinear(DeferredStepProduct):
    """`x_t ↦ x_t W^T`; W's gradient is G^T X over all steps."""

    @staticmethod
    def product(inputs: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return inputs.mm(weight.t())

    @staticmethod
    def input_gradient(grad_output: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return grad_output.mm(weight)

    @staticmethod
    def weight_gradient(inputs: List[torch.Tensor], grad_outputs: List[torch.Tensor]) -> torch.Tensor:
        return torch.cat(grad_outputs).t().mm(torch.cat(inputs))
