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

Memory: the graph nodes keep only a `_StepRecord` (the steps' detached inputs and recorded output gradients), never
the `DeferredStepProduct` that holds the alias tensor. A node whose context refers back to a tensor of its own graph
is a reference cycle through autograd's C++ nodes, which Python's garbage collector cannot see: the whole graph of
the pass, with every activation it saved, would never be freed (13 MB a step for the NSE encoder at B=32, T=20).
`tests/models/every_config_test.py` checks that a finished pass leaves nothing alive, `tests/encoders/
real_scale_test.py` that resident memory stays flat over training steps.

Mixed precision: the products run in float32 under autocast (`memplugins.modules.autocast`).
"""
from typing import Dict, List, Optional, Type

import torch

from memplugins.modules.autocast import float32_under_autocast


class _StepRecord:
    """The state a pass's backward shares: each step's input (detached) and the gradient of each step's output."""

    def __init__(self, product_type: Type["DeferredStepProduct"]) -> None:
        self.product_type = product_type
        self.inputs: List[torch.Tensor] = []
        self.output_grads: Dict[int, torch.Tensor] = {}

    def collected_weight_gradient(self) -> Optional[torch.Tensor]:
        steps = sorted(self.output_grads)  # steps whose output got no gradient are left out
        if not steps:
            return None
        gradient = self.product_type.weight_gradient(
            [self.inputs[s] for s in steps], [self.output_grads[s] for s in steps]
        )
        self.output_grads.clear()  # a retained graph run again records afresh
        return gradient


class _CollectDeferredGradient(torch.autograd.Function):
    @staticmethod
    @float32_under_autocast
    def forward(ctx, weight: torch.Tensor, record: _StepRecord) -> torch.Tensor:
        ctx.record = record
        ctx.set_materialize_grads(False)
        return weight.detach()  # a new graph node every step depends on; no copy of the data

    @staticmethod
    def backward(ctx, _unused: Optional[torch.Tensor]):
        return ctx.record.collected_weight_gradient(), None


class _StepProductFunction(torch.autograd.Function):
    @staticmethod
    @float32_under_autocast
    def forward(ctx, inputs: torch.Tensor, weight: torch.Tensor, record: _StepRecord, step: int):
        ctx.save_for_backward(weight)
        ctx.record, ctx.step = record, step
        record.inputs.append(inputs.detach())
        return record.product_type.product(inputs, weight)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        (weight,) = ctx.saved_tensors
        ctx.record.output_grads[ctx.step] = grad_output
        return ctx.record.product_type.input_gradient(grad_output, weight), None, None, None


class DeferredStepProduct:
    """
    `x_t ↦ product(x_t, W)` for the steps of one forward pass, W's gradient formed once (see the module doc).
    Subclasses define `product`, its `input_gradient` and the `weight_gradient` of all recorded steps.
    """

    def __init__(self, weight: torch.Tensor) -> None:
        self._defer = weight.requires_grad and torch.is_grad_enabled()
        self._record = _StepRecord(type(self))
        self.weight = _CollectDeferredGradient.apply(weight, self._record) if self._defer else weight

    def __call__(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self._defer:
            return self.product(inputs, self.weight)  # no backward: autocast applies as to any product
        step = len(self._record.inputs)  # the forward records this step's input
        return _StepProductFunction.apply(inputs, self.weight, self._record, step)

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
