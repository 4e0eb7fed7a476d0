"""research/gradient_probe.py: the diagnostic callback stops at a non-finite gradient before the optimizer steps,
naming the parameters, and logs every batch otherwise."""
import json
import math
import sys
from types import SimpleNamespace

import pytest
import torch
from allennlp.common.checks import ConfigurationError

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
from gradient_probe import GradientProbe, NonFiniteGradient  # noqa: E402


def _trainer(**settings):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    return SimpleNamespace(**{"model": model, "_scaler": None, "_num_gradient_accumulation_steps": 1,
                              "_batches_in_epoch_completed": 4, **settings})


def test_a_non_finite_gradient_stops_before_the_step_and_is_named(tmp_path):
    trainer = _trainer()
    probe = GradientProbe(str(tmp_path))
    probe.on_start(trainer)
    x = torch.ones(3, 2)
    assert probe.on_backward(trainer, {"loss": trainer.model(x).sum()}, False) is True
    assert all(torch.isfinite(p.grad).all() for p in trainer.model.parameters())
    probe.on_batch(trainer, [{"tokens": torch.zeros(3, 7)}], [{"loss": torch.tensor(1.5)}], {}, 0, 50, True,
                   batch_grad_norm=0.25)
    record = json.loads((tmp_path / "probe.jsonl").read_text().splitlines()[0])
    assert record["shape"] == [3, 7] and record["grad_norm"] == 0.25 and len(record["largest"]) == 4

    trainer.model.zero_grad()
    before = [p.detach().clone() for p in trainer.model.parameters()]
    first = trainer.model[0]
    loss = (first.weight * torch.tensor([[math.inf, 1.0], [1.0, 1.0]])).sum() + trainer.model(x).sum()
    with pytest.raises(NonFiniteGradient, match=r"batch 5 .* of 0\.weight;"):
        probe.on_backward(trainer, {"loss": loss}, False)
    assert all(torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))
    assert json.loads((tmp_path / "probe.jsonl").read_text().splitlines()[-1])["nonfinite"] == ["0.weight"]


@pytest.mark.parametrize("settings", [{"_scaler": object()}, {"_num_gradient_accumulation_steps": 2}])
def test_it_refuses_what_would_change_the_backward(tmp_path, settings):
    with pytest.raises(ConfigurationError, match="backward pass itself"):
        GradientProbe(str(tmp_path)).on_start(_trainer(**settings))
