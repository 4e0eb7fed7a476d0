"""
`fused` and `foreach` for AllenNLP's `adam`, `adamw`, `adagrad` and `sgd` optimizers. AllenNLP 2.10 predates
torch 2's implementation switches and passes only the hyperparameters, so every step runs torch's default
per-parameter loop: on the CPU that is about ten passes over each parameter, and over a trainable embedding they
cost as much as a small batch's forward and backward (`benchmarks/speed/optimizer_step.py` measures it; docs/speed.md
has the current figures).

Each optimizer's `__init__` gets two more keyword arguments, torch's own, passed through unchanged:

* `fused` (bool, default None: torch's choice, which is the per-parameter loop on the CPU): one kernel per
  parameter for the whole update. The same update (torch's fused and loop implementations share the equations;
  results agree to float rounding, about 1e-7 relative, not bitwise). Needs dense gradients on the CPU or CUDA.
* `foreach` (bool, default None): torch's multi-tensor loop, between the two in speed.

The other parameters, their defaults and the `parameter_groups` mechanism are AllenNLP's, so every existing config
builds the optimizer it built before. Test: `tests/compat/optimizer_options_test.py`.

One warning is added: `adam` and `adagrad` with `weight_decay` on a trainable embedding table. Their L2 adds
weight_decay * w to every row's gradient, and both divide a gradient by its own running size, so every row that a
batch does not use moves by about lr towards 0 at every step, however small weight_decay is. Over a vocabulary
that is most rows at most steps: on the SST LSTMN (Adam 2e-3, batch 5) the GloVe vectors were gone within a few
hundred batches (median row norm 4.9 -> 0.09). The warning names the tables and the two ways out
(`parameter_groups` with weight_decay 0 for them, or `adamw`, whose decay is proportional to w).
"""
import inspect
import logging
from typing import Iterable, List, Optional, Tuple

import torch

from allennlp.training import optimizers
from allennlp.training.optimizers import make_parameter_groups

from memplugins.compat.patching import patch

logger = logging.getLogger(__name__)
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
        named = hyperparameters.pop("model_parameters")
        params = make_parameter_groups(named, hyperparameters.pop("parameter_groups"))
        torch_optimizer_class(type(self)).__init__(self, params=params, **options, **hyperparameters)
        if isinstance(self, (torch.optim.Adam, torch.optim.Adagrad)) and not isinstance(self, torch.optim.AdamW):
            _warn_about_l2_on_embeddings(type(self).__name__, named, self.param_groups)

    # from_params reads the constructor's signature: AllenNLP's parameters, then torch's two options
    __init__.__signature__ = signature.replace(parameters=[*signature.parameters.values(), *extra])
    __init__.__doc__ = original.__doc__
    return __init__


def decayed_embedding_tables(named_parameters: Iterable[Tuple[str, torch.nn.Parameter]],
                             param_groups: List[dict]) -> List[str]:
    """The trainable embedding tables (2-d parameters named like `*embed*.weight`) in a group with weight decay."""
    decay = {id(p): group.get("weight_decay", 0) for group in param_groups for p in group["params"]}
    return [name for name, p in named_parameters
            if p.requires_grad and p.dim() == 2 and "embed" in name and name.endswith("weight") and decay.get(id(p))]


def _warn_about_l2_on_embeddings(optimizer: str, named_parameters, param_groups: List[dict]) -> None:
    tables = decayed_embedding_tables(named_parameters, param_groups)
    if tables:
        logger.warning(
            "%s's weight_decay reaches the trainable embedding table(s) %s: it moves every row that a batch does not "
            "use by about lr towards 0 at every step, which erases pretrained vectors within a few hundred "
            "batches. Leave them out with \"parameter_groups\": [[[\"%s\"], {\"weight_decay\": 0}]], or use "
            "adamw.", optimizer, ", ".join(tables), "|".join(f"^{name.replace('.', '[.]')}$" for name in tables))


def apply() -> None:
    for optimizer_class in OPTIMIZERS:
        patch(optimizer_class, "__init__", _init_with_torch_options)


def torch_optimizer_class(optimizer_class: type) -> type:
    """The torch class an AllenNLP optimizer class wraps: the first torch.optim class in its MRO."""
    return next(base for base in optimizer_class.__mro__ if base.__module__.startswith("torch.optim"))
