"""
Stop `allennlp train` at a wall-clock deadline with a checkpoint that `--recover` continues from exactly.

A cluster's job limit, a lent GPU's 10-minute window, a laptop lid: long training rarely runs in one piece. With this
callback a run trains until its deadline, saves a checkpoint after the batch in progress, and exits with status 75
(`EX_TEMPFAIL`, "try again"). `allennlp train CONFIG -s DIR --recover` with the same config then continues from that
batch: memplugins' exact-resume fix restores the random-number states, so the weights, the validation metrics and the
test metrics equal an uninterrupted run's (`tests/training/deadline_test.py`), and it carries the running training
loss and the model's metric states across the stop, so the training figures of an epoch that spans two pieces are
the uninterrupted run's too (`memplugins.training.exact_resume`, (g)).

The deadline is `minutes` after training starts (each piece gets the same allowance) or the Unix time in the
environment variable `MEMPLUGINS_TRAIN_DEADLINE`, whichever comes first. The variable lets a driver such as
`benchmarks/replication/replicate.py` give each piece a different allowance while the config, which `--recover` requires to be
unchanged, stays the same.
"""
import logging
import os
import time
from typing import Any, Dict, List, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks.callback import TrainerCallback

logger = logging.getLogger(__name__)

DEADLINE_ENVIRONMENT_VARIABLE = "MEMPLUGINS_TRAIN_DEADLINE"
DEADLINE_EXIT_CODE = 75  # EX_TEMPFAIL from sysexits.h: stopped on purpose, resume later


@TrainerCallback.register("deadline")
class DeadlineCallback(TrainerCallback):
    """
    Registered as a `TrainerCallback` with name `deadline`.

    # Parameters

    serialization_dir : `str`
        Supplied by the trainer.
    minutes : `float`, optional (default = `None`)
        Train for at most this many minutes after training (re)starts. `None` leaves only the environment variable
        `MEMPLUGINS_TRAIN_DEADLINE` (a Unix time); with neither, the callback does nothing.
    """

    def __init__(self, serialization_dir: str, minutes: Optional[float] = None) -> None:
        super().__init__(serialization_dir)
        if minutes is not None and minutes <= 0:
            raise ConfigurationError(f"deadline: minutes must be positive, got {minutes}")
        self._minutes = minutes
        self._deadline: Optional[float] = None

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        deadlines = []
        if self._minutes is not None:
            deadlines.append(time.time() + 60 * self._minutes)
        value = os.environ.get(DEADLINE_ENVIRONMENT_VARIABLE)
        if value:
            try:
                deadlines.append(float(value))
            except ValueError:
                raise ConfigurationError(
                    f"{DEADLINE_ENVIRONMENT_VARIABLE}={value!r} is not a Unix time in seconds"
                ) from None
        self._deadline = min(deadlines) if deadlines else None
        if self._deadline is None:
            return
        if getattr(trainer, "_checkpointer", None) is None:
            raise ConfigurationError("the deadline callback needs the trainer's checkpointer to save a resumable state")
        if getattr(trainer, "_distributed", False):
            # each worker would stop after a different batch, and the others would wait for it forever
            raise ConfigurationError("the deadline callback supports single-process training only")

    def on_batch(
        self,
        trainer,
        batch_inputs: List[Any],
        batch_outputs: List[Dict[str, Any]],
        batch_metrics: Dict[str, Any],
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        batch_grad_norm: Optional[float] = None,
        **kwargs,
    ) -> None:
        # Training batches only: the trainer's counters there describe a state a checkpoint can resume from.
        if not is_training or self._deadline is None or time.time() < self._deadline:
            return
        trainer._checkpointer.save_checkpoint(trainer)
        logger.info(
            "Deadline reached after batch %d of epoch %d: checkpoint saved; `allennlp train ... --recover` with the "
            "same config continues from here.", batch_number, epoch,
        )
        raise SystemExit(DEADLINE_EXIT_CODE)
