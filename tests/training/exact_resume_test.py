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
