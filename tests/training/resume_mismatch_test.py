"""A checkpoint written for other parameters than the model built now (another code version or config) fails
`--recover` with an error that names the directory and the parameters, not torch's bare optimizer ValueError."""
import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError

from tests.conftest import REPO_ROOT, TEST_FIXTURES

CONFIG = str(TEST_FIXTURES / "lstmn_fusion.jsonnet")


def _train(directory, recover: bool = False, **overrides):
    # one epoch: recovering the finished run trains nothing but still restores the checkpoint, which is the test
    overrides = json.dumps({"trainer.num_epochs": 1, **overrides})
    return train_model_from_file(CONFIG, str(directory), overrides=overrides, recover=recover)


def test_resuming_a_checkpoint_from_before_the_lstmn_had_bias_ih_names_the_mismatch(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # the fixture's data path is relative to the repository
    run = tmp_path / "run"
    _train(run)
    [model_path] = run.glob("model_state_e*_b*.th")
    [state_path] = run.glob("training_state_e*_b*.th")
    # make the checkpoint one the LSTMN wrote before it had bias_ih: no bias_ih weights, no optimizer slots for them
    model_state = torch.load(model_path, map_location="cpu", weights_only=True)
    dropped = [name for name in model_state if name.endswith("bias_ih")]
    assert dropped, "the fixture's LSTMN has no bias_ih to drop"
    torch.save({name: value for name, value in model_state.items() if name not in dropped}, model_path)
    training_state = torch.load(state_path, map_location="cpu", weights_only=False)
    group = training_state["optimizer"]["param_groups"][0]
    for index in group["params"][-len(dropped):]:
        training_state["optimizer"]["state"].pop(index, None)
    group["params"] = group["params"][: -len(dropped)]
    torch.save(training_state, state_path)

    with pytest.raises(ConfigurationError) as error:
        _train(run, recover=True)
    message = str(error.value)
    assert str(run) in message and state_path.name in message
    for name in dropped:
        assert name in message
    assert "in the checkpoint only: none" in message
    assert "saved [" in message


def test_a_saved_optimizer_with_another_group_size_is_refused_before_torch_loads_it(tmp_path, monkeypatch):
    # every parameter name is in the checkpoint, but its optimizer was saved for one more trainable tensor (as if the
    # code that wrote it trained a tensor that is frozen now); the sizes are compared before torch's
    # load_state_dict runs, so the error does not depend on how torch words its own
    monkeypatch.chdir(REPO_ROOT)
    run = tmp_path / "run"
    _train(run)
    [state_path] = run.glob("training_state_e*_b*.th")
    training_state = torch.load(state_path, map_location="cpu", weights_only=False)
    group = training_state["optimizer"]["param_groups"][0]
    group["params"] = group["params"] + [max(group["params"]) + 1]
    torch.save(training_state, state_path)

    def torch_load_state_dict(self, state_dict):
        raise AssertionError("torch's Optimizer.load_state_dict was reached")

    monkeypatch.setattr(torch.optim.Optimizer, "load_state_dict", torch_load_state_dict)
    with pytest.raises(ConfigurationError) as error:
        _train(run, recover=True)
    message = str(error.value)
    assert str(run) in message and state_path.name in message
    assert "trained now but not in the checkpoint's model state: none; in the checkpoint only: none" in message
    assert f"saved [{len(group['params'])}], now [{len(group['params']) - 1}]" in message


def test_resuming_an_unchanged_checkpoint_still_works(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    run = tmp_path / "run"
    _train(run)
    _train(run, recover=True)
    assert json.loads((run / "metrics.json").read_text())["epoch"] == 0
