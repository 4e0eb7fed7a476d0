"""
`reduce_on_plateau` on torch 2: AllenNLP passes `verbose=` to `torch.optim.lr_scheduler.ReduceLROnPlateau`, an
argument torch 2 removed (`TypeError: ... unexpected keyword argument 'verbose'`). The wrapper's `__init__` keeps
its signature (so configs that set `verbose` still parse) and `step` logs learning-rate reductions itself when
`verbose` is true. Test: `tests/compat/reduce_on_plateau_test.py`.
"""
import logging
from typing import List, Union

import torch
from torch.optim import Optimizer
from allennlp.training.learning_rate_schedulers.pytorch_lr_schedulers import ReduceOnPlateauLearningRateScheduler

from memplugins.compat.patching import patch

logger = logging.getLogger(__name__)


def _init(_original):
    def __init__(
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
            optimizer=optimizer, mode=mode, factor=factor, patience=patience, threshold_mode=threshold_mode,
            threshold=threshold, cooldown=cooldown, min_lr=min_lr, eps=eps,
        )
        super(ReduceOnPlateauLearningRateScheduler, self).__init__(lr_scheduler)
        self._memplugins_verbose = verbose

    return __init__


def _step(original):
    def step(self, metric: float = None) -> None:
        before = [group["lr"] for group in self.lr_scheduler.optimizer.param_groups]
        original(self, metric)
        if self._memplugins_verbose:
            after = [group["lr"] for group in self.lr_scheduler.optimizer.param_groups]
            for index, (old, new) in enumerate(zip(before, after)):
                if new != old:
                    logger.info("reduce_on_plateau: learning rate of group %d reduced from %.4e to %.4e", index, old, new)

    return step


def apply() -> None:
    patch(ReduceOnPlateauLearningRateScheduler, "__init__", _init)
    patch(ReduceOnPlateauLearningRateScheduler, "step", _step)
