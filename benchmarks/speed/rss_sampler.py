"""A trainer callback for the soak benchmark: the process's resident memory every N training batches, to a file."""
import json
from typing import Any, Dict, List

from allennlp.training.callbacks.callback import TrainerCallback


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


@TrainerCallback.register("rss_sampler")
class RssSampler(TrainerCallback):
    """Appends `[batch, rss_mb, cuda_allocated_mb]` to `path` (one JSON list per line) every `every` batches."""

    def __init__(self, serialization_dir: str, path: str, every: int = 50) -> None:
        super().__init__(serialization_dir)
        self._path = path
        self._every = every
        self._batches = 0

    def on_batch(self, trainer, batch_inputs: List[Dict[str, Any]], batch_outputs: List[Dict[str, Any]],
                 batch_metrics: Dict[str, Any], epoch: int, batch_number: int, is_training: bool,
                 is_primary: bool = True, batch_grad_norm=None, **kwargs) -> None:
        if not is_training:
            return
        self._batches += 1
        if self._batches % self._every == 0:
            import gc

            import torch

            gc.collect()
            cuda_mb = torch.cuda.memory_allocated() / 2**20 if torch.cuda.is_available() else 0.0
            with open(self._path, "a") as out:
                out.write(json.dumps([self._batches, rss_mb(), cuda_mb]) + "\n")
