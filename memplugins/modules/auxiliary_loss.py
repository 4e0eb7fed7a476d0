"""
Auxiliary losses computed from activations (e.g. IRAM's attention regulariser), which AllenNLP has no place for:
its `Model` returns one `loss`, and its regularizers see only parameters.

An encoder (any module) that inherits `AuxiliaryLossMixin` calls `self.add_auxiliary_loss(name, value)` in its
`forward`; a model calls `add_auxiliary_losses(self, output_dict, tracker)` at the end of its `forward`, which adds
every submodule's pending auxiliary losses to `output_dict["loss"]` (when there is one, i.e. in training and
evaluation) and records them, with any auxiliary metrics, in `tracker` for `get_metrics`. So the penalty reaches
the optimiser in `allennlp train` and appears in the training log, whatever encoder contributes it.
"""
from typing import Any, Dict

import torch
from allennlp.training.metrics import Average


class AuxiliaryLossMixin:
    """For modules that contribute a loss term (and, optionally, metrics that are not loss terms)."""

    def add_auxiliary_loss(self, name: str, value: torch.Tensor) -> None:
        self.__dict__.setdefault("_pending_auxiliary_losses", {})[name] = value

    def add_auxiliary_metric(self, name: str, value: torch.Tensor) -> None:
        self.__dict__.setdefault("_pending_auxiliary_metrics", {})[name] = value

    def pop_auxiliary(self) -> tuple:
        return self.__dict__.pop("_pending_auxiliary_losses", {}), self.__dict__.pop("_pending_auxiliary_metrics", {})


class AuxiliaryTracker:
    """Running averages of auxiliary losses and metrics, for a model's `get_metrics`."""

    def __init__(self) -> None:
        self._averages: Dict[str, Average] = {}

    def __call__(self, name: str, value: torch.Tensor) -> None:
        self._averages.setdefault(name, Average())(value.detach())

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {name: float(average.get_metric(reset)) for name, average in self._averages.items()}


def add_auxiliary_losses(model: torch.nn.Module, output_dict: Dict[str, Any], tracker: AuxiliaryTracker) -> None:
    """Adds the pending auxiliary losses of `model`'s submodules to `output_dict["loss"]` and tracks them."""
    for module in model.modules():
        if isinstance(module, AuxiliaryLossMixin):
            losses, metrics = module.pop_auxiliary()
            for name, value in losses.items():
                tracker(name, value)
                if "loss" in output_dict:
                    output_dict["loss"] = output_dict["loss"] + value
            for name, value in metrics.items():
                tracker(name, value)
