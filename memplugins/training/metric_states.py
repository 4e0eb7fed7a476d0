"""
(g) of `exact_resume`: the model's metric states. A run stopped inside an epoch resumes with the running metrics of
the batches it had seen, so the resumed epoch reports what the uninterrupted one would. Every `Metric` a model holds
is found by path and its state copied as tensors that torch's `weights_only` loader accepts.
"""
import io
import logging
from typing import Any, Dict, Optional

import torch
from allennlp.training.metrics.metric import Metric

logger = logging.getLogger(__name__)

def model_metrics(model: torch.nn.Module) -> Dict[str, Metric]:
    """(g): every `Metric` the model holds, by a path of submodule, attribute and container keys."""
    found: Dict[str, Metric] = {}

    def visit(value: Any, path: str, depth: int) -> None:
        if isinstance(value, Metric):
            found.setdefault(path, value)
        elif depth < 3 and isinstance(value, dict):
            for key, item in value.items():
                visit(item, f"{path}[{key!r}]", depth + 1)
        elif depth < 3 and isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                visit(item, f"{path}[{index}]", depth + 1)

    for module_name, module in model.named_modules():
        for attribute, value in vars(module).items():
            if attribute not in ("_parameters", "_buffers", "_modules"):
                visit(value, f"{module_name}.{attribute}" if module_name else attribute, 0)
    return found


def _weights_only_copy(payload: Any) -> Optional[Any]:
    """`payload` saved and loaded back as a training state is (`torch.load(weights_only=True)`): that copy, or None
    if the loading refuses it."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    buffer.seek(0)
    try:
        return torch.load(buffer, weights_only=True)
    except Exception:  # torch's UnpicklingError, or whatever a custom class's reduction raises
        return None


def metric_states(model: torch.nn.Module) -> Optional[Dict[str, Dict[str, Any]]]:
    """(g): a copy of every metric's attributes, or None (with a warning) if one would not load weights-only."""
    states = {path: _weights_only_copy(vars(metric)) for path, metric in model_metrics(model).items()}
    refused = [path for path, state in states.items() if state is None]
    if refused:
        logger.warning(
            "The state of the metric(s) %s holds objects that torch.load(weights_only=True) refuses, so this "
            "mid-epoch checkpoint does not carry the model's metrics: after a resume from it, the training metrics "
            "of this epoch cover only the batches after the resume.", ", ".join(refused),
        )
        return None
    return states


def _on_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return type(value)((key, _on_device(item, device)) for key, item in value.items())
    if type(value) in (list, tuple):  # not a namedtuple, whose constructor takes fields
        return type(value)(_on_device(item, device) for item in value)
    return value


def restore_metric_states(model: torch.nn.Module, states: Dict[str, Dict[str, Any]], device: torch.device) -> bool:
    """(g): puts the carried states back into the model's metrics; False (nothing restored) if they do not match."""
    metrics = model_metrics(model)
    if set(metrics) != set(states):
        logger.warning(
            "The mid-epoch checkpoint carries states for the metrics %s, but the model holds %s: the training "
            "metrics of the resumed epoch cover only the batches after the resume.", sorted(states), sorted(metrics),
        )
        return False
    for path, metric in metrics.items():
        vars(metric).update(_on_device(states[path], device))
    return True
