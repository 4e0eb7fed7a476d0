"""compat.checkpoint_globals: `--recover` loads a training state with numpy scalars; other pickles stay refused."""
import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file

from tests.conftest import TEST_FIXTURES


def test_recover_resumes_from_checkpoint_with_numpy_scalars(tmp_path):
    run = tmp_path / "run"
    config = str(TEST_FIXTURES / "compat_recover.jsonnet")
    train_model_from_file(config, str(run))
    # make it look like the run died during its last epoch: drop that epoch's checkpoint and the final outputs
    states = sorted(run.glob("training_state_e*"), key=lambda path: path.stat().st_mtime)
    assert len(states) >= 2, [p.name for p in run.iterdir()]
    last_epoch = states[-1].name.split("_e")[1].split("_")[0]
    for path in list(run.glob(f"*_e{last_epoch}_*")) + [run / "model.tar.gz", run / "metrics.json", run / "best.th"]:
        path.unlink(missing_ok=True)
    training_state = states[-2]
    # the premise of the fix: this checkpoint really holds numpy objects outside torch's default allow-list
    allowed = torch.serialization.get_safe_globals()
    torch.serialization.clear_safe_globals()
    try:
        unsafe = torch.serialization.get_unsafe_globals_in_checkpoint(str(training_state))
    finally:
        torch.serialization.add_safe_globals(allowed)
    assert any(name.startswith("numpy") for name in unsafe), unsafe
    # the recovered run loads it and finishes instead of failing with UnpicklingError
    train_model_from_file(config, str(run), recover=True)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["epoch"] == 2
    assert (run / "model.tar.gz").exists()


def test_unknown_pickled_globals_are_still_refused(tmp_path):
    """The allow-list is narrow: arbitrary objects in a checkpoint are still rejected by weights_only loading."""
    path = tmp_path / "evil.th"
    torch.save({"x": pytest.approx(1.0)}, path)
    with pytest.raises(Exception, match="Weights only load failed"):
        torch.load(path)
