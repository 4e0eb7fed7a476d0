"""
A diagnostic `TrainerCallback`, "gradient_probe", for finding where a training run's NaN comes from (not part of the
package: `--include-package gradient_probe` with `research/` on PYTHONPATH, as `scripts/gpu_run_all.sh nan` runs
it). AllenNLP reports a NaN only as "nan loss encountered", one step after a non-finite gradient has already been
clipped into NaN and applied to every parameter. This callback takes the backward pass itself, checks every
gradient before the optimizer steps, and on a non-finite one stops with an error naming the epoch, the batch, its
shape and the parameters whose gradients are not finite, with the parameters unchanged (the run's last checkpoint
resumes with `--recover`). For every batch it appends to `probe.jsonl` in the serialization directory (or
`$PROBE_LOG_DIR`): the pre-clipping gradient norm, the batch's shape and loss, and every 50 batches the four
largest per-parameter gradient norms.

It runs the backward as AllenNLP would without callbacks, `loss.backward()`, so it refuses what would change
that: mixed precision (AllenNLP's scaler takes the backward then) and gradient accumulation (AllenNLP divides the
loss by the group's size first).
"""
import json
import math
import os
from typing import List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks.callback import TrainerCallback


class NonFiniteGradient(RuntimeError):
    pass


@TrainerCallback.register("gradient_probe")
class GradientProbe(TrainerCallback):
    def __init__(self, serialization_dir: str) -> None:
        super().__init__(serialization_dir)
        self._log = None
        self._largest: List = []
        self._epoch = 0

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        if getattr(trainer, "_scaler", None) is not None:
            raise ConfigurationError("gradient_probe takes the backward pass itself: not with use_amp")
        if getattr(trainer, "_num_gradient_accumulation_steps", 1) != 1:
            raise ConfigurationError("gradient_probe takes the backward pass itself: not with gradient accumulation")
        directory = os.environ.get("PROBE_LOG_DIR", self.serialization_dir)
        self._log = open(os.path.join(directory, "probe.jsonl"), "a")

    def on_epoch(self, trainer, metrics, epoch: int, is_primary: bool = True, **kwargs) -> None:
        self._epoch = epoch + 1

    def on_backward(self, trainer, batch_outputs, backward_called: bool, **kwargs) -> bool:
        if backward_called:
            raise ConfigurationError("gradient_probe must take the backward pass, but another callback took it")
        batch_outputs["loss"].backward()
        named = [(name, parameter.grad) for name, parameter in trainer.model.named_parameters()
                 if parameter.grad is not None]
        norms = torch.stack([gradient.detach().float().norm() for _, gradient in named]).tolist() if named else []
        bad = [name for (name, _), norm in zip(named, norms) if not math.isfinite(norm)]
        self._largest = sorted(zip(norms, (name for name, _ in named)), reverse=True)[:4]
        if bad:
            record = {"epoch": self._epoch, "batch": trainer._batches_in_epoch_completed + 1,
                      "loss": float(batch_outputs["loss"]), "nonfinite": bad}
            self._write(record)
            raise NonFiniteGradient(
                f"non-finite gradient in epoch {record['epoch']}, batch {record['batch']} (loss {record['loss']:.4f}) "
                f"of {', '.join(bad)}; the optimizer has not stepped, so the last checkpoint resumes with --recover")
        return True

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch: int, batch_number: int,
                 is_training: bool, is_primary: bool = True, batch_grad_norm: Optional[float] = None,
                 **kwargs) -> None:
        if not is_training:
            return
        self._epoch = epoch
        shapes = sorted({tuple(tensor.shape) for tensor in _tensors(batch_inputs)}, key=len, reverse=True)
        record = {"epoch": epoch, "batch": batch_number, "shape": list(shapes[0]) if shapes else None,
                  "grad_norm": None if batch_grad_norm is None else float(batch_grad_norm),
                  "loss": float(batch_outputs[0]["loss"])}
        if batch_number % 50 == 0:
            record["largest"] = [[name, norm] for norm, name in self._largest]
        self._write(record)

    def _write(self, record: dict) -> None:
        if self._log is not None:
            self._log.write(json.dumps(record) + "\n")
            self._log.flush()


def _tensors(value):
    """The tensors in a batch's nested dicts and lists (a batch group is a list of TensorDicts)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
