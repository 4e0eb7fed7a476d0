"""
`fused` and `foreach` for AllenNLP's `adam`, `adamw`, `adagrad` and `sgd` optimizers. AllenNLP 2.10 predates
torch 2's implementation switches and passes only the hyperparameters, so every step runs torch's default
per-parameter loop: on the CPU that is about ten passes over each parameter, and over a trainable embedding they
cost as much as a small batch's forward and backward. Measured by `benchmarks/optimizer_step.py` (docs/speed.md,
"The optimizer step"): on the SST LSTMN at its batch of 5, Adam's step took 13.7 ms against 33.9 ms for forward and
backward, and 2.3 ms fused; the SST tree LSTM's Adagrad took 30.2 ms against 22.1 ms, and 22.4 ms fused.

Each optimizer's `__init__` gets two more keyword arguments, torch's own, passed through unchanged:

* `fused` (bool, default None: torch's choice, which is the per-parameter loop on the CPU): one kernel per
  parameter for the whole update. The same update (torch's fused and loop implementations share the equations;
  results agree to float rounding, about 1e-7 relative, not bitwise). Needs dense gradients on the CPU or CUDA.
* `foreach` (bool, default None): torch's multi-tensor loop, between the two in speed.

The other parameters, their defaults and the `parameter_groups` mechanism are AllenNLP's, so every existing config
builds the optimizer it built before. Test: `tests/compat/optimizer_options_test.py`.
"""
import inspect
from typing import Optional

from allennlp.training import optimizers
from allennlp.training.optimizers import make_parameter_groups

from memplugins.compat.patching import patch

TORCH_OPTIONS = ("foreach", "fused")
OPTIMIZERS = (
    optimizers.AdamOptimizer, optimizers.AdamWOptimizer, optimizers.AdagradOptimizer, optimizers.SgdOptimizer,
)


def _init_with_torch_options(original):
    signature = inspect.signature(original)
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Optional[bool])
        for name in TORCH_OPTIONS
    ]

    def __init__(self, *args, **kwargs) -> None:
        options = {name: kwargs.pop(name, None) for name in TORCH_OPTIONS}
        # AllenNLP's own arguments, with its defaults (not torch's), exactly as its constructor would pass them
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        hyperparameters = dict(bound.arguments)
        hyperparameters.pop("self")
        params = make_parameter_groups(hyperparameters.pop("model_parameters"), hyperparameters.pop("parameter_groups"))
        torch_optimizer_class(type(self)).__init__(self, params=params, **options, **hyperparameters)

    # from_params reads the constructor's signature: AllenNLP's parameters, then torch's two options
    __init__.__signature__ = signature.replace(parameters=[*signature.parameters.values(), *extra])
    __init__.__doc__ = original.__doc__
    return __init__


def apply() -> None:
    for optimizer_class in OPTIMIZERS:
        patch(optimizer_class, "__init__", _init_with_torch_options)


def torch_optimizer_class(optimizer_class: type) -> type:
    """The torch class an AllenNLP optimizer class wraps: the first torch.optim class in its MRO."""
    return next(base for base in optimizer_class.__mro__ if base.__module__.startswith("torch.optim"))
