"""
Fault injection for `tests/training/exact_resume_test.py`: imported into an `allennlp train` subprocess with
`--include-package tests.training.recover_faults`, it kills that process with SIGKILL (no clean-up, no `finally`, exactly as
the OOM killer or a pre-empted cluster node does) at the point an environment variable names:

* `KILL_AT_EPOCH=e`: in the middle of epoch `e` (0-based), before the forward pass of its middle training batch
  (batch `n // 2` of `n`; the first batch when the epoch has only one);
* `KILL_AT_SAVE=n`: halfway through writing the n-th file that `torch.save` writes (1-based): the first half of
  the file's bytes are on disk, as when a process dies mid-write;
* `KILL_AT_BEST_LINK=n`: at the n-th time the trainer links a checkpoint to best.th, after it removed the old one.
* `KILL_AT_ARCHIVE=1`: halfway through writing `model.tar.gz.partial`, after the last epoch.

Nothing is patched when none is set, so the same config runs uninterrupted and faulty.
"""
import io
import os
import signal

import torch
from allennlp.training import gradient_descent_trainer


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _countdown(variable: str):
    remaining = int(os.environ.get(variable, "0"))

    def tick() -> bool:
        nonlocal remaining
        remaining -= 1
        return remaining == 0

    return tick if remaining > 0 else None


if os.environ.get("KILL_AT_EPOCH"):
    _kill_epoch = int(os.environ["KILL_AT_EPOCH"])
    _original_batch_outputs = gradient_descent_trainer.GradientDescentTrainer.batch_outputs

    def _batch_outputs(self, batch, for_training):
        if (
            for_training
            and self._epochs_completed == _kill_epoch
            and self._batches_in_epoch_completed == len(self.data_loader) // 2
        ):
            _die()
        return _original_batch_outputs(self, batch, for_training)

    gradient_descent_trainer.GradientDescentTrainer.batch_outputs = _batch_outputs

_save_tick = _countdown("KILL_AT_SAVE")
if _save_tick is not None:
    _original_save = torch.save

    def _save(obj, f, *args, **kwargs):
        if isinstance(f, (str, os.PathLike)) and _save_tick():
            buffer = io.BytesIO()
            _original_save(obj, buffer, *args, **kwargs)
            data = buffer.getvalue()
            with open(f, "wb") as handle:
                handle.write(data[: len(data) // 2])
                handle.flush()
                os.fsync(handle.fileno())
            _die()
        return _original_save(obj, f, *args, **kwargs)

    torch.save = _save

_link_tick = _countdown("KILL_AT_BEST_LINK")
if _link_tick is not None:
    _original_link = gradient_descent_trainer.hardlink_or_copy

    def _link(source, destination):
        if _link_tick():
            _die()
        return _original_link(source, destination)

    gradient_descent_trainer.hardlink_or_copy = _link

if os.environ.get("KILL_AT_ARCHIVE"):
    import tarfile

    from allennlp.commands import train as train_command

    _original_archive = train_command.archive_model

    def _archive(serialization_dir, *args, **kwargs):
        # what a kill mid-write leaves: half an archive under the .partial name, no model.tar.gz (metrics.json is
        # already written: AllenNLP writes it before archiving)
        partial = os.path.join(serialization_dir, "model.tar.gz.partial")
        with tarfile.open(partial, "w:gz") as archive:
            archive.add(os.path.join(serialization_dir, "config.json"), arcname="config.json")
        with open(partial, "r+b") as handle:
            handle.truncate(os.path.getsize(partial) // 2)
        _die()

    train_command.archive_model = _archive
