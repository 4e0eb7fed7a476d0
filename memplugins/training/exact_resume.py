"""
Crash-safe checkpoints, and resumed training equal to uninterrupted training (a feature AllenNLP 2.10 lacks, applied
when memplugins is imported). AllenNLP writes every checkpoint, best.th and model.tar.gz in place, and its training
state holds no random-number state:

(a) a kill while `torch.save` writes `model_state_eN_b0.th` leaves a truncated file that `--recover` picks as the
    latest checkpoint and fails to load; a kill between the model-state and training-state files leaves a
    checkpoint without its training state. Each file is now written to `<name>.partial` and renamed into place
    (atomic on POSIX), and only checkpoints with both files count.
(b) best.th is refreshed after the checkpoint: a kill in between leaves best.th from an older epoch (or none), while
    the restored metric tracker says the checkpoint is the best, so the recovered run ends on the wrong weights. On
    recover from an end-of-epoch checkpoint that is the best so far, best.th is relinked to it.
(c) a resumed run reseeds every generator from the config, so its dropout masks (torch) and its batch order
    (Python's `random`, which the `bucket` sampler uses for the training and the validation loader) differ from the
    uninterrupted run's. The generator states (Python, numpy, torch CPU and CUDA) are saved in the training state and
    restored when the first epoch that really trains begins, after AllenNLP has replayed the data loader through the
    completed epochs. For a mid-epoch checkpoint (the `deadline` callback's), Python's state is the one at the start
    of that epoch, whose shuffle the replay repeats before skipping the completed batches.
(d) model.tar.gz is written to `model.tar.gz.partial` and renamed, so a kill while archiving never leaves a truncated
    archive that `allennlp predict` would be given.
(e) a run killed after its last epoch (while archiving) recovers with nothing left to train, and AllenNLP's trainer
    then returns only the best_* metrics, so metrics.json loses the epoch, training and validation metrics. The
    recovered run's metrics are now those of the last completed epoch (`metrics_epoch_N.json`, what the
    uninterrupted run returned), with the tracker's best_* on top.
(f) a checkpoint whose optimizer state was saved for other parameters than the model the config builds now (a
    checkpoint written by another version of the code or config, e.g. one from before the LSTMN had `bias_ih`,
    which its model-state loading fills with zeros) fails in torch's `Optimizer.load_state_dict` with a ValueError
    that names neither the directory nor the parameters. While the checkpoint is restored, the optimizer's
    `load_state_dict` first compares the saved parameter groups' sizes with the groups the config builds now (a
    structural check, not a match on torch's message text) and, where they differ, raises a ConfigurationError that
    names the serialization directory, the training-state file and the parameters on either side: resuming such a
    run would mix two models' training.
(g) AllenNLP starts every epoch's running training loss at 0 and the model's metrics afresh, so after a resume from
    a mid-epoch checkpoint, that epoch's training loss (the running sum over the batches after the resume, divided
    by all the epoch's batches) and training metrics (accuracy, MAP, ... over the batches after the resume) differ
    from the uninterrupted run's, in the progress bar, the callbacks and `metrics_epoch_N.json`. A mid-epoch
    checkpoint now also holds the running loss sums and the state of every `Metric` the model holds (its
    attributes, directly or in a dict, list or tuple, on any submodule); the resumed epoch restores the metrics'
    state before its first batch and adds the carried sums to the ones AllenNLP passes to `get_metrics`, so each
    epoch's training figures equal the uninterrupted run's (the loss up to float rounding: the sum is added in
    another order). A metric state that `torch.load(weights_only=True)`, which loads training states, would refuse
    (an object other than tensors, numbers, strings and plain containers) is not carried: a warning names the
    metric, and that epoch's training figures cover the batches after the resume, as before.
(h) the training state holds the best model's file as the path it had when it was written (`best_model_filename`,
    `<serialization dir>/best.th` as that run named its directory). A serialization directory moved or copied
    elsewhere (a run carried back from a lent GPU, scratch to home) and recovered there kept pointing at the old
    directory: when no later epoch beat the recorded best, training ended by loading that path, which failed after
    the whole run (FileNotFoundError, `benchmarks/replication/carry_runs.py`'s first carried row, 2026-11-27) or, where the old
    directory still existed, silently loaded the *other* run's best.th into this run's archive. AllenNLP only ever
    writes that file directly in the serialization directory, so on restore its name is re-rooted there.

Tests: `tests/training/exact_resume_test.py` (SIGKILL mid-epoch and during each checkpoint file's write; slow) and
`tests/training/deadline_test.py` (stopped and resumed mid-epoch and across an epoch boundary; (h): a run copied to
another directory and recovered there).
"""
import json
import logging
import os
import random
import types
from typing import Optional

import numpy
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import hardlink_or_copy
from allennlp.models import archival
from allennlp.training import checkpointer, gradient_descent_trainer
from allennlp.training import util as training_util

from memplugins.compat.patching import patch

logger = logging.getLogger(__name__)

RANDOM_STATE_KEY = "memplugins_rng_state"
EPOCH_PROGRESS_KEY = "memplugins_epoch_progress"  # (g): the running loss sums and the model's metric states


def atomic_torch_save(obj, path, *args, **kwargs) -> None:
    """`torch.save` to `path` through `<path>.partial` and a rename, so `path` is always absent or complete."""
    if not isinstance(path, (str, os.PathLike)):
        return torch.save(obj, path, *args, **kwargs)
    partial = f"{os.fspath(path)}.partial"
    torch.save(obj, partial, *args, **kwargs)
    os.replace(partial, path)


class _TorchWithAtomicSave(types.ModuleType):
    """`torch` as AllenNLP's checkpointer and trainer see it: everything is torch's, except `save`."""

    def __init__(self) -> None:
        super().__init__("torch")

    save = staticmethod(atomic_torch_save)

    def __getattr__(self, name):
        return getattr(torch, name)


def random_state(python_state) -> dict:
    numpy_state = numpy.random.get_state()
    return {
        "python": python_state,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        # numpy's state as tensors and ints: weights_only torch.load accepts those without any allow-listing
        "numpy": (numpy_state[0], torch.from_numpy(numpy_state[1].astype(numpy.int64)), *numpy_state[2:]),
    }


def set_random_state(state: dict) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(state["cuda"])
    name, keys, *rest = state["numpy"]
    numpy.random.set_state((name, keys.numpy().astype(numpy.uint32), *rest))


from memplugins.training.metric_states import (  # noqa: E402,F401  (also importable from here)
    metric_states, model_metrics, restore_metric_states,
)


class _EpochCarry:
    """(g): the resumed epoch's carried loss sums, and the running sums of the epoch in progress."""

    def __init__(self, model: torch.nn.Module, loss: float = 0.0, reg_loss: Optional[float] = None) -> None:
        self.model = model
        self.carried_loss, self.carried_reg_loss = loss, reg_loss
        self.total_loss: float = loss
        self.total_reg_loss: Optional[float] = reg_loss


_EPOCH_IN_PROGRESS: Optional[_EpochCarry] = None


def _get_metrics_with_carried_loss(original):
    def get_metrics(model, total_loss, total_reg_loss, batch_loss, batch_reg_loss, num_batches, reset=False):
        carry = _EPOCH_IN_PROGRESS
        if carry is not None and model is carry.model:
            total_loss = total_loss + carry.carried_loss
            if total_reg_loss is not None and carry.carried_reg_loss is not None:
                total_reg_loss = total_reg_loss + carry.carried_reg_loss
            carry.total_loss, carry.total_reg_loss = total_loss, total_reg_loss
        return original(model, total_loss, total_reg_loss, batch_loss, batch_reg_loss, num_batches, reset)

    return get_metrics


def _complete_checkpoints_only(original):
    def _find_all_checkpoints(self):
        return {point for point in original(self) if os.path.isfile(self._training_state_path(*point))}

    return _find_all_checkpoints


def _load_checkpoint_and_random_state(original):
    def load_checkpoint(self):
        state = original(self)
        if state is not None and RANDOM_STATE_KEY in state[1]:
            self._memplugins_random_state = state[1].pop(RANDOM_STATE_KEY)  # the trainer restores it, see below
        if state is not None and EPOCH_PROGRESS_KEY in state[1]:
            self._memplugins_epoch_progress = state[1].pop(EPOCH_PROGRESS_KEY)  # (g), restored with the random state
        return state

    return load_checkpoint


def _checkpoint_state_with_random_state(original):
    def get_checkpoint_state(self):
        checkpoint = original(self)
        if checkpoint is not None:
            mid_epoch = self._batches_in_epoch_completed > 0
            python_state = self._memplugins_epoch_start_random if mid_epoch else random.getstate()
            checkpoint.trainer_state[RANDOM_STATE_KEY] = random_state(python_state)
            carry = _EPOCH_IN_PROGRESS
            if mid_epoch and carry is not None and carry.model is self.model and not self._distributed:
                states = metric_states(self.model)
                if states is not None:
                    checkpoint.trainer_state[EPOCH_PROGRESS_KEY] = {
                        "loss": carry.total_loss, "reg_loss": carry.total_reg_loss, "metrics": states,
                    }
        return checkpoint

    return get_checkpoint_state


def _train_epoch_from_resumed_state(original):
    def _train_epoch(self, epoch: int):
        global _EPOCH_IN_PROGRESS
        resumed = self._epochs_completed == self._start_after_epochs_completed
        pending = getattr(self, "_memplugins_pending_random_state", None)
        if pending is not None and resumed:
            set_random_state(pending)
            self._memplugins_pending_random_state = None
        self._memplugins_epoch_start_random = random.getstate()
        carry = _EpochCarry(self.model)
        progress = getattr(self, "_memplugins_pending_epoch_progress", None)
        # AllenNLP calls _train_epoch for the completed epochs too (it replays their data): wait for the resumed one
        if progress is not None and resumed:
            self._memplugins_pending_epoch_progress = None
            if self._start_after_batches_in_epoch_completed > 0 and restore_metric_states(
                self.model, progress["metrics"], self.cuda_device
            ):
                carry = _EpochCarry(self.model, progress["loss"], progress["reg_loss"])
        _EPOCH_IN_PROGRESS = carry
        try:
            return original(self, epoch)
        finally:
            _EPOCH_IN_PROGRESS = None

    return _train_epoch


def _restore_checkpoint_and_best(original):
    def _maybe_restore_checkpoint(self) -> None:
        optimizer = self.optimizer
        checked = self._checkpointer is not None and isinstance(getattr(optimizer, "param_groups", None), list)
        if checked:
            optimizer.load_state_dict = _checked_optimizer_load(self, optimizer.load_state_dict)
        try:
            original(self)
        finally:
            if checked:
                del optimizer.load_state_dict  # the class's method again
        recorded = self._best_model_filename
        if isinstance(recorded, str) and self._serialization_dir:
            # (h): where the training state was written is not necessarily here
            self._best_model_filename = os.path.join(self._serialization_dir, os.path.basename(recorded))
        if self._checkpointer is not None:
            self._memplugins_pending_random_state = self._checkpointer.__dict__.pop("_memplugins_random_state", None)
            progress = self._checkpointer.__dict__.pop("_memplugins_epoch_progress", None)
            self._memplugins_pending_epoch_progress = progress
        if (
            self._start_after_epochs_completed > 0
            and self._start_after_batches_in_epoch_completed == 0
            and self._validation_data_loader is not None
            and self._serialization_dir
            and self._primary
            and self._moving_average is None
            and self._metric_tracker.is_best_so_far()
        ):
            _relink_best(self)

    return _maybe_restore_checkpoint


def _checked_optimizer_load(trainer, load_state_dict):
    """(f): the optimizer's `load_state_dict`, refusing a state saved for other parameter groups than it has now."""

    def checked_load_state_dict(state_dict) -> None:
        saved_groups = state_dict.get("param_groups") if isinstance(state_dict, dict) else None
        if isinstance(saved_groups, list) and all(isinstance(group, dict) for group in saved_groups):
            saved = [len(group.get("params", ())) for group in saved_groups]
            now = [len(group["params"]) for group in trainer.optimizer.param_groups]
            if saved != now:
                raise ConfigurationError(_optimizer_mismatch_message(trainer, saved, now))
        return load_state_dict(state_dict)

    return checked_load_state_dict


def _optimizer_mismatch_message(trainer, saved_sizes, sizes_now) -> str:
    """(f): which parameters the model has now and the checkpoint's model state lacks, and the reverse."""
    latest = trainer._checkpointer.find_latest_checkpoint()
    where = trainer._serialization_dir
    now = {name for name, parameter in trainer._pytorch_model.named_parameters() if parameter.requires_grad}
    saved = set(torch.load(latest[0], map_location="cpu", weights_only=True)) if latest else set()
    only_now, only_saved = sorted(now - saved), sorted(saved - set(trainer._pytorch_model.state_dict()))
    return (
        f"Cannot resume the training in {where}: the optimizer state in {latest[1] if latest else 'its checkpoint'} "
        f"was saved for other parameters than the model this config builds now "
        f"(trained now but not in the checkpoint's model state: {only_now or 'none'}; "
        f"in the checkpoint only: {only_saved or 'none'}; parameters per optimizer group saved {saved_sizes}, "
        f"now {sizes_now}). The checkpoint was written by another version of the "
        f"code or the config; resume it with the version that wrote it, or train into a new directory."
    )


def _relink_best(trainer) -> None:
    """(b): best.th becomes the recovered end-of-epoch checkpoint, which the metric tracker says is the best."""
    latest = trainer._checkpointer.find_latest_checkpoint()
    if latest is None or (trainer._ddp_wrapped_model is not None and trainer._ddp_wrapped_model.is_sharded):
        return
    best = os.path.join(trainer._serialization_dir, "best.th")
    if not (os.path.exists(best) and os.path.samefile(best, latest[0])):
        partial = best + ".partial"
        if os.path.exists(partial):
            os.remove(partial)
        hardlink_or_copy(latest[0], partial)
        os.replace(partial, best)  # (a no-op if both were links to one file, hence the check above)
    trainer._best_model_filename = best


def _metrics_of_a_finished_run(original):
    def _try_train(self):
        metrics, epoch = original(self)
        completed = self._start_after_epochs_completed
        if "epoch" not in metrics and completed > 0 and self._serialization_dir:
            last = os.path.join(self._serialization_dir, f"metrics_epoch_{completed - 1}.json")
            if os.path.exists(last):
                with open(last) as handle:
                    metrics = {**json.load(handle), **metrics}
        return metrics, epoch

    return _try_train


def _archive_atomically(original):
    def archive_model(serialization_dir, weights=archival._DEFAULT_WEIGHTS, archive_path=None, include_in_archive=None):
        if archive_path is None:
            final = os.path.join(serialization_dir, "model.tar.gz")
        elif os.path.isdir(archive_path):
            final = os.path.join(archive_path, "model.tar.gz")
        else:
            final = os.fspath(archive_path)
        original(serialization_dir, weights, final + ".partial", include_in_archive)
        os.replace(final + ".partial", final)
        return final

    return archive_model


def apply() -> None:
    if not isinstance(checkpointer.torch, _TorchWithAtomicSave):
        checkpointer.torch = gradient_descent_trainer.torch = _TorchWithAtomicSave()
    patch(checkpointer.Checkpointer, "_find_all_checkpoints", _complete_checkpoints_only)
    patch(checkpointer.Checkpointer, "load_checkpoint", _load_checkpoint_and_random_state)
    trainer = gradient_descent_trainer.GradientDescentTrainer
    patch(trainer, "get_checkpoint_state", _checkpoint_state_with_random_state)
    patch(trainer, "_maybe_restore_checkpoint", _restore_checkpoint_and_best)
    patch(trainer, "_train_epoch", _train_epoch_from_resumed_state)
    patch(trainer, "_try_train", _metrics_of_a_finished_run)
    patch(training_util, "get_metrics", _get_metrics_with_carried_loss)
    patch(archival, "archive_model", _archive_atomically, rebind=True)
