"""The deadline callback stops after a training batch with a checkpoint from which `--recover` continues exactly."""
import io
import json
import shutil
import tarfile
from typing import List, Optional

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback

from memplugins.training import deadline as deadline_module
from memplugins.training.deadline import DEADLINE_ENVIRONMENT_VARIABLE, DEADLINE_EXIT_CODE, DeadlineCallback
from tests.conftest import TEST_FIXTURES

CONFIG = str(TEST_FIXTURES / "rte_attention.jsonnet")
# 3 epochs of 4 shuffled batches with dropout: a resumed run that reseeded anything would differ
OVERRIDES = json.dumps({
    "data_loader.shuffle": True, "trainer.num_epochs": 3, "trainer.callbacks": [{"type": "deadline"}],
})
BATCHES_PER_EPOCH = 4


class BatchClock:
    """Stands in for `time` in the callback: the time is the number of training batches this process has done
    (the callback reads it once per training batch), so a deadline of k stops after the k-th batch."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        self.now += 1
        return self.now


def _train(directory, recover=False):
    return train_model_from_file(CONFIG, str(directory), overrides=OVERRIDES, recover=recover)


def _best_weights(directory):
    return torch.load(directory / "best.th", map_location="cpu")


@pytest.mark.parametrize("pieces", [[1], [3, 6]])
def test_stopped_and_resumed_training_equals_straight_training(tmp_path, monkeypatch, pieces):
    """Stopped after batch 1 (mid-epoch), or after batches 3 and 6 (the second piece crosses an epoch boundary):
    the resumed run ends on the same weights and validation metrics as the uninterrupted one, and every epoch's
    training loss and accuracy, the epochs split by a stop included, are the uninterrupted run's."""
    monkeypatch.delenv(DEADLINE_ENVIRONMENT_VARIABLE, raising=False)
    _train(tmp_path / "straight")
    straight = json.loads((tmp_path / "straight" / "metrics.json").read_text())
    assert json.loads((tmp_path / "straight" / "config.json").read_text())["trainer"]["optimizer"]["lr"] == 0.01

    out = tmp_path / "pieces"
    done = 0
    for number, stop_after in enumerate(pieces):
        monkeypatch.setattr(deadline_module, "time", BatchClock())
        monkeypatch.setenv(DEADLINE_ENVIRONMENT_VARIABLE, str(stop_after - done))
        with pytest.raises(SystemExit) as stopped:
            _train(out, recover=number > 0)
        assert stopped.value.code == DEADLINE_EXIT_CODE
        done = stop_after
        latest = max(out.glob("training_state_e*_b*.th"), key=lambda path: path.stat().st_mtime_ns)
        state = torch.load(latest, map_location="cpu", weights_only=False)
        assert state["epochs_completed"] * BATCHES_PER_EPOCH + state["batches_in_epoch_completed"] == stop_after
        assert not (out / "model.tar.gz").exists()

    monkeypatch.delenv(DEADLINE_ENVIRONMENT_VARIABLE)
    _train(out, recover=True)
    resumed = json.loads((out / "metrics.json").read_text())
    compared = [key for key in straight if key.startswith(("best_validation_", "validation_")) or key in ("best_epoch", "epoch")]
    assert "best_validation_loss" in compared
    for key in compared:
        assert resumed[key] == pytest.approx(straight[key], rel=1e-6, abs=1e-9), key
    for epoch in range(3):
        name = f"metrics_epoch_{epoch}.json"
        straight_epoch = json.loads((tmp_path / "straight" / name).read_text())
        resumed_epoch = json.loads((out / name).read_text())
        training = [
            key for key, value in straight_epoch.items()
            if key.startswith("training_") and isinstance(value, float) and not key.endswith("_MB")
        ]
        assert {"training_loss", "training_accuracy"} <= set(training)
        for key in training:
            assert resumed_epoch[key] == pytest.approx(straight_epoch[key], rel=1e-6, abs=1e-9), (name, key)
    weights, resumed_weights = _best_weights(tmp_path / "straight"), _best_weights(out)
    assert weights.keys() == resumed_weights.keys()
    for name, tensor in weights.items():
        assert torch.equal(resumed_weights[name], tensor), name


@TrainerCallback.register("test_record_best_model_filename", exist_ok=True)
class RecordBestModelFilename(TrainerCallback):
    """Records, when training starts (after a recovered checkpoint is restored), the file the trainer will take the
    best model's weights from at the end."""

    seen: List[Optional[str]] = []

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        RecordBestModelFilename.seen.append(trainer._best_model_filename)


def test_a_run_moved_to_another_directory_resumes_with_its_own_best_model(tmp_path, monkeypatch):
    """exact_resume (h): the training state names best.th by the path it had when written; a run copied elsewhere
    and recovered there takes its own best.th, not the old directory's (there replaced by other weights)."""
    overrides = json.loads(OVERRIDES)
    overrides["trainer.callbacks"] = [{"type": "deadline"}, {"type": "test_record_best_model_filename"}]
    overrides = json.dumps(overrides)
    monkeypatch.setattr(deadline_module, "time", BatchClock())
    monkeypatch.setenv(DEADLINE_ENVIRONMENT_VARIABLE, str(BATCHES_PER_EPOCH + 1))  # epoch 0 validated: best.th
    first, moved = tmp_path / "first", tmp_path / "moved"
    with pytest.raises(SystemExit):
        train_model_from_file(CONFIG, str(first), overrides=overrides)
    assert (first / "best.th").exists()
    shutil.copytree(first, moved)
    (first / "best.th").unlink()
    torch.save({name: torch.zeros_like(value) for name, value in _best_weights(moved).items()}, first / "best.th")

    monkeypatch.delenv(DEADLINE_ENVIRONMENT_VARIABLE)
    RecordBestModelFilename.seen.clear()
    train_model_from_file(CONFIG, str(moved), overrides=overrides, recover=True)
    assert RecordBestModelFilename.seen == [str(moved / "best.th")]
    archived = torch.load(io.BytesIO(tarfile.open(moved / "model.tar.gz").extractfile("weights.th").read()),
                          map_location="cpu")
    assert any(tensor.abs().sum() > 0 for tensor in archived.values())
    assert {name: tensor.tolist() for name, tensor in archived.items()} == {
        name: tensor.tolist() for name, tensor in _best_weights(moved).items()}


def test_without_a_deadline_training_runs_through(tmp_path, monkeypatch):
    monkeypatch.delenv(DEADLINE_ENVIRONMENT_VARIABLE, raising=False)
    _train(tmp_path / "run")
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["epoch"] == 2


def test_minutes_stop_training(tmp_path, monkeypatch):
    """`minutes` counts from the start of training: with a clock that moves a minute per batch, 2.5 minutes stop
    after the third batch."""
    monkeypatch.delenv(DEADLINE_ENVIRONMENT_VARIABLE, raising=False)
    clock = BatchClock()
    monkeypatch.setattr(deadline_module, "time", type("MinuteClock", (), {"time": staticmethod(lambda: 60 * clock.time())}))
    overrides = json.loads(OVERRIDES)
    overrides["trainer.callbacks"] = [{"type": "deadline", "minutes": 2.5}]
    with pytest.raises(SystemExit):
        train_model_from_file(CONFIG, str(tmp_path), overrides=json.dumps(overrides))
    assert (tmp_path / "training_state_e0_b3.th").exists()


def test_bad_settings_are_configuration_errors(tmp_path, monkeypatch):
    with pytest.raises(ConfigurationError, match="minutes must be positive"):
        DeadlineCallback(str(tmp_path), minutes=0)
    monkeypatch.setenv(DEADLINE_ENVIRONMENT_VARIABLE, "tomorrow")
    with pytest.raises(ConfigurationError, match="not a Unix time"):
        DeadlineCallback(str(tmp_path)).on_start(trainer=object())
    monkeypatch.setenv(DEADLINE_ENVIRONMENT_VARIABLE, "1e12")
    with pytest.raises(ConfigurationError, match="checkpointer"):
        DeadlineCallback(str(tmp_path)).on_start(trainer=object())
