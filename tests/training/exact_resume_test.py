"""
Resumed training equals uninterrupted training (issue 16), with `allennlp train` run as users run it, in a
subprocess, killed with SIGKILL by `tests/training/recover_faults.py` and resumed with `--recover`:

* in the middle of an epoch, for every config under training_config/;
* for `snli_rte_conditional` and `snli_mma_nse`, also halfway through writing a checkpoint's model-state file and
  its training-state file, and between removing the old best.th and linking the new one.

After the resumed run, the final metrics (`metrics.json`, durations and memory aside) equal the uninterrupted run's
and so do the best weights, and the archive loads. Without `memplugins.training.exact_resume` the file-write kills fail
`--recover` outright (a truncated checkpoint is loaded), the best.th kill ends on another epoch's weights, and the
mid-epoch kill differs in every metric (dropout masks reseeded). The subprocess tests are marked slow: about 20
minutes on 2 cores. A kill after the last epoch (while archiving) recovers with every metric, not only best_*.
"""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import REPO_ROOT

CONFIGS = sorted(path.name for path in (REPO_ROOT / "training_config").glob("*.jsonnet"))
FILE_FAULTS = {
    # saves, in order: e1 model state, e1 training state, e2 model state, e2 training state, ...
    "model_state_write": {"KILL_AT_SAVE": "3"},
    "training_state_write": {"KILL_AT_SAVE": "4"},
    # the first link is epoch 1's best.th; the second is epoch 2's, if it improved (the test checks it ran)
    "best_link": {"KILL_AT_BEST_LINK": "2"},
    "archive_write": {"KILL_AT_ARCHIVE": "1"},  # after the last epoch: recover trains nothing
}
NUM_EPOCHS = "3"
VOLATILE_METRICS = ("duration", "memory", "_MB", "start_epoch")


def _train(config: str, serialization_dir: Path, faults: dict = None, recover: bool = False):
    command = [sys.executable, "-m", "allennlp", "train", str(REPO_ROOT / "training_config" / config),
               "-s", str(serialization_dir), "--include-package", "memplugins"]
    if faults:
        command += ["--include-package", "tests.training.recover_faults"]
    if recover:
        command.append("--recover")
    environment = {**os.environ, "NUM_EPOCHS": NUM_EPOCHS, "OMP_NUM_THREADS": "1", **(faults or {})}
    return subprocess.run(command, cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=1200)


def _final_metrics(serialization_dir: Path) -> dict:
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    return {key: value for key, value in metrics.items() if not any(part in key for part in VOLATILE_METRICS)}


def _assert_same_run(resumed: Path, uninterrupted: Path) -> None:
    expected, actual = _final_metrics(uninterrupted), _final_metrics(resumed)
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, rel=1e-5, abs=1e-6), key
    expected_weights = torch.load(uninterrupted / "best.th")
    actual_weights = torch.load(resumed / "best.th")
    assert actual_weights.keys() == expected_weights.keys()
    for name, value in expected_weights.items():
        torch.testing.assert_close(actual_weights[name], value, rtol=1e-5, atol=1e-6, msg=name)
    from allennlp.models.archival import load_archive

    load_archive(str(resumed / "model.tar.gz"))
    assert not list(resumed.glob("*.partial"))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    runs = {}

    def run(config: str) -> Path:
        if config not in runs:
            directory = tmp_path_factory.mktemp(config.split(".")[0]) / "uninterrupted"
            result = _train(config, directory)
            assert result.returncode == 0, result.stderr[-3000:]
            runs[config] = directory
        return runs[config]

    return run


def _kill_and_resume(config: str, directory: Path, faults: dict) -> None:
    killed = _train(config, directory, faults)
    assert killed.returncode == -signal.SIGKILL, (
        f"the fault {faults} never fired (exit {killed.returncode}): {killed.stderr[-2000:]}"
    )
    metrics = directory / "metrics.json"
    if "KILL_AT_ARCHIVE" in faults:
        # AllenNLP writes metrics.json before it archives; removed, so that the recovery must write it again, and
        # complete (exact_resume (e)), for the comparison with the uninterrupted run to test anything
        metrics.unlink()
    assert not metrics.exists()
    resumed = _train(config, directory, recover=True)
    assert resumed.returncode == 0, resumed.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_sigkill_mid_epoch_then_recover_equals_uninterrupted(config, uninterrupted, tmp_path):
    _kill_and_resume(config, tmp_path / "run", {"KILL_AT_EPOCH": "1"})
    _assert_same_run(tmp_path / "run", uninterrupted(config))


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FILE_FAULTS))
@pytest.mark.parametrize("config", ["snli_rte_conditional.jsonnet", "snli_mma_nse.jsonnet"])
def test_sigkill_while_writing_checkpoint_then_recover_equals_uninterrupted(config, fault, uninterrupted, tmp_path):
    _kill_and_resume(config, tmp_path / "run", FILE_FAULTS[fault])
    _assert_same_run(tmp_path / "run", uninterrupted(config))


def test_recovering_a_finished_run_keeps_every_metric(tmp_path):
    """A kill while the archive is written (the slow test does it with SIGKILL) leaves every epoch's checkpoint but
    no metrics.json; `--recover` then trains nothing, and AllenNLP's trainer returned only the best_* metrics."""
    from allennlp.commands.train import train_model_from_file

    from tests.conftest import TEST_FIXTURES

    config, run = str(TEST_FIXTURES / "rte_attention.jsonnet"), tmp_path / "run"
    train_model_from_file(config, str(run))
    uninterrupted = _final_metrics(run)
    for name in ("model.tar.gz", "metrics.json"):
        (run / name).unlink()
    train_model_from_file(config, str(run), recover=True)
    assert _final_metrics(run) == uninterrupted and "epoch" in uninterrupted


class _Holder(torch.nn.Module):
    """Metrics where models keep them: an attribute, a dict of them, and one on a submodule."""

    def __init__(self, inner=None) -> None:
        super().__init__()
        from allennlp.training.metrics import Average, CategoricalAccuracy

        from memplugins.metrics import MapMrr

        self._accuracy = CategoricalAccuracy()
        self._metrics = {"map_mrr": MapMrr(), "loss": Average()}
        self.inner = inner if inner is not None else torch.nn.Linear(1, 1)


def _feed(holder: "_Holder") -> None:
    holder._accuracy(torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]]), torch.tensor([1, 1, 1]))
    holder._metrics["map_mrr"](torch.tensor([0.9, 0.2, 0.4]), torch.tensor([0, 1, 1]), ["q1", "q1", "q2"])
    holder._metrics["loss"](torch.tensor(0.5))
    holder.inner._accuracy(torch.tensor([[0.1, 0.9]]), torch.tensor([0]))


def _values(holder: "_Holder") -> list:
    return [holder._accuracy.get_metric(), holder._metrics["map_mrr"].get_metric(),
            holder._metrics["loss"].get_metric(), holder.inner._accuracy.get_metric()]


def test_metric_states_round_trip_through_a_weights_only_training_state(tmp_path):
    """(g) of memplugins.training.exact_resume: the states a mid-epoch checkpoint carries are found on submodules
    and in containers, load with torch.load(weights_only=True) as AllenNLP loads training states, and give the
    metrics back their values in a fresh model (the resumed process)."""
    from memplugins.training.exact_resume import metric_states, model_metrics, restore_metric_states

    holder = _Holder(inner=_Holder())
    assert set(model_metrics(holder)) == {
        "_accuracy", "_metrics['map_mrr']", "_metrics['loss']",
        "inner._accuracy", "inner._metrics['map_mrr']", "inner._metrics['loss']",
    }
    _feed(holder)
    torch.save({"memplugins_epoch_progress": metric_states(holder)}, tmp_path / "state.th")
    states = torch.load(tmp_path / "state.th", weights_only=True)["memplugins_epoch_progress"]
    fresh = _Holder(inner=_Holder())
    assert _values(fresh) != _values(holder)
    assert restore_metric_states(fresh, states, torch.device("cpu"))
    assert _values(fresh) == _values(holder)
    _feed(holder), _feed(fresh)  # and they go on accumulating alike
    assert _values(fresh) == _values(holder)


def test_a_metric_state_that_would_not_load_is_left_out_with_a_warning(caplog):
    from collections import defaultdict

    from memplugins.training.exact_resume import metric_states, restore_metric_states

    holder = _Holder()
    holder._metrics["map_mrr"]._candidates = defaultdict(list)  # weights-only loading refuses defaultdicts
    assert metric_states(holder) is None
    assert "_metrics['map_mrr']" in caplog.text and "weights_only" in caplog.text
    caplog.clear()
    states = metric_states(_Holder())
    assert not restore_metric_states(_Holder(inner=_Holder()), states, torch.device("cpu"))  # another model
    assert "cover only the batches after the resume" in caplog.text
