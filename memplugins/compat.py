"""
Fixes for running AllenNLP 2.10.1 on torch 2.x, applied once when `memplugins` is imported.

`allennlp train ... --include-package memplugins` (or `.allennlp_plugins`) imports this package after AllenNLP's
own modules and before the command runs, so the patches below are in place for every command. Nothing in
site-packages is edited. Each fix is idempotent and covered by a test in `tests/test_compat.py` that fails without it.

1. `reduce_on_plateau`: AllenNLP passes `verbose=` to `torch.optim.lr_scheduler.ReduceLROnPlateau`, an argument
   torch 2.x removed (`TypeError: ... unexpected keyword argument 'verbose'`). We replace the wrapper's
   `__init__` with one that keeps the same signature (so configs that set `verbose` still parse) and logs LR
   reductions itself when `verbose` is true.
2. `torch.load` defaults to `weights_only=True` since torch 2.6, and AllenNLP's training-state checkpoints hold
   numpy scalars (metrics, the `cosine` scheduler's state), so `allennlp train --recover` fails with
   `UnpicklingError: Weights only load failed ... numpy._core.multiarray.scalar`. We allow-list exactly the numpy
   types such checkpoints contain with `torch.serialization.add_safe_globals`; arbitrary pickles stay refused.
"""
import logging
from typing import List, Union

import numpy
import torch
from torch.optim import Optimizer

from allennlp.training.learning_rate_schedulers.pytorch_lr_schedulers import ReduceOnPlateauLearningRateScheduler

logger = logging.getLogger(__name__)


def _reduce_on_plateau_init(
    self,
    optimizer: Optimizer,
    mode: str = "min",
    factor: float = 0.1,
    patience: int = 10,
    verbose: bool = False,
    threshold_mode: str = "rel",
    threshold: float = 1e-4,
    cooldown: int = 0,
    min_lr: Union[float, List[float]] = 0,
    eps: float = 1e-8,
) -> None:
    lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer=optimizer,
        mode=mode,
        factor=factor,
        patience=patience,
        threshold_mode=threshold_mode,
        threshold=threshold,
        cooldown=cooldown,
        min_lr=min_lr,
        eps=eps,
    )
    super(ReduceOnPlateauLearningRateScheduler, self).__init__(lr_scheduler)
    self._memplugins_verbose = verbose


def _reduce_on_plateau_step(self, metric: float = None) -> None:
    before = [group["lr"] for group in self.lr_scheduler.optimizer.param_groups]
    _original_step(self, metric)
    if self._memplugins_verbose:
        after = [group["lr"] for group in self.lr_scheduler.optimizer.param_groups]
        for index, (old, new) in enumerate(zip(before, after)):
            if new != old:
                logger.info("reduce_on_plateau: learning rate of group %d reduced from %.4e to %.4e", index, old, new)


def _numpy_checkpoint_globals() -> list:
    """The numpy objects a pickled numpy scalar / small array / dtype refers to."""
    core = getattr(numpy, "_core", None) or numpy.core  # numpy 2 renamed numpy.core to numpy._core
    safe = [core.multiarray.scalar, core.multiarray._reconstruct, numpy.ndarray, numpy.dtype]
    # numpy >= 1.25 pickles dtypes by their class (numpy.dtypes.Float64DType, ...)
    dtypes = getattr(numpy, "dtypes", None)
    if dtypes is not None:
        safe.extend(
            getattr(dtypes, name) for name in dir(dtypes) if name.endswith("DType") and isinstance(getattr(dtypes, name), type)
        )
    return safe


_original_step = ReduceOnPlateauLearningRateScheduler.step
if not getattr(ReduceOnPlateauLearningRateScheduler, "_memplugins_patched", False):
    ReduceOnPlateauLearningRateScheduler.__init__ = _reduce_on_plateau_init
    ReduceOnPlateauLearningRateScheduler.step = _reduce_on_plateau_step
    ReduceOnPlateauLearningRateScheduler._memplugins_patched = True

if hasattr(torch.serialization, "add_safe_globals"):
    torch.serialization.add_safe_globals(_numpy_checkpoint_globals())


# 3. Defaults for the `std.extVar` variables of our shipped configs. Jsonnet has no "extVar with default" and
#    AllenNLP passes exactly the environment as ext vars, so an unset variable is an error. We wrap AllenNLP's
#    `_environment_variables` so that each documented variable below falls back to the small real sample that the
#    repository ships under fixtures/ (paths relative to the repository root, where the configs are run from).
#    A variable set in the environment always wins.
CONFIG_DEFAULTS = {
    "SNLI_TRAIN": "fixtures/snli/snli_1.0_dev_sample_train.jsonl",
    "SNLI_VALIDATION": "fixtures/snli/snli_1.0_dev_sample_validation.jsonl",
    "GLOVE_PATH": "fixtures/glove/glove.6B.50d.snli_sample.txt.gz",
    "EMBEDDING_DIM": "50",
    "NUM_EPOCHS": "10",
    "CUDA_DEVICE": "-1",
}

from allennlp.common import params as _params  # noqa: E402

if not getattr(_params._environment_variables, "_memplugins_patched", False):
    _original_environment_variables = _params._environment_variables

    def _environment_variables_with_defaults():
        return {**CONFIG_DEFAULTS, **_original_environment_variables()}

    _environment_variables_with_defaults._memplugins_patched = True
    _params._environment_variables = _environment_variables_with_defaults
