"""
A `TrainerCallback` for benchmarks that give models the same CPU time: once `minutes` have passed, it stops
training at the end of the current epoch (the second at the earliest) by raising `KeyboardInterrupt`, which `allennlp train` answers by archiving
the best epoch so far (so `allennlp evaluate` can score it). Load with
`PYTHONPATH=benchmarks allennlp train ... --include-package time_budget`.
"""
import time
from typing import Any, Dict

from allennlp.training.callbacks.callback import TrainerCallback


@TrainerCallback.register("time_budget")
class TimeBudgetCallback(TrainerCallback):
    def __init__(self, serialization_dir: str, minutes: float) -> None:
        super().__init__(serialization_dir)
        self._seconds = minutes * 60
        self._started = time.monotonic()

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        self._started = time.monotonic()

    def on_epoch(self, trainer, metrics: Dict[str, Any], epoch: int, is_primary: bool = True, **kwargs) -> None:
        # never after epoch 0: AllenNLP saves the first checkpoint after the epoch callbacks, so an interrupt there
        # would leave no weights to archive
        if epoch >= 1 and time.monotonic() - self._started > self._seconds:
            raise KeyboardInterrupt(f"time budget of {self._seconds / 60:.1f} minutes used after epoch {epoch}")
