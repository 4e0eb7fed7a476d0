"""compat.optimizer_options: AllenNLP's adam, adamw, adagrad and sgd take torch's `fused` and `foreach`, make the same
updates as without them, keep AllenNLP's defaults and parameter groups, and resume from their state dicts."""
import copy
import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training.optimizers import Optimizer

import memplugins  # noqa: F401  (applies the compat fixes)

CONFIGS = {
    "adam": {"type": "adam", "lr": 0.01, "betas": [0.8, 0.99], "weight_decay": 0.001, "amsgrad": True},
    "adamw": {"type": "adamw", "lr": 0.01},
    "adagrad": {"type": "adagrad", "lr": 0.05, "weight_decay": 0.001, "initial_accumulator_value": 0.1},
    "sgd": {"type": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.001},
}


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(0)
        self.embedding = torch.nn.Embedding(40, 6)
        self.output = torch.nn.Linear(6, 3)
        with torch.no_grad():
            for parameter in self.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=generator))

    def loss(self, step: int) -> torch.Tensor:
        tokens = torch.arange(step, step + 12).remainder(40).view(3, 4)
        return torch.nn.functional.cross_entropy(self.output(self.embedding(tokens).mean(1)), torch.tensor([0, 1, 2]))


def _optimizer(model: torch.nn.Module, config: dict) -> Optimizer:
    return Optimizer.from_params(model_parameters=list(model.named_parameters()), params=Params(copy.deepcopy(config)))


def _train(model: Tiny, optimizer: Optimizer, steps: range) -> None:
    for step in steps:
        optimizer.zero_grad()
        model.loss(step).backward()
        optimizer.step()


@pytest.mark.parametrize("option", ["fused", "foreach"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_option_reaches_torch_and_makes_the_same_updates(name, option):
    plain, switched = Tiny(), Tiny()
    plain_optimizer = _optimizer(plain, CONFIGS[name])
    switched_optimizer = _optimizer(switched, {**CONFIGS[name], option: True})
    assert all(group[option] is True for group in switched_optimizer.param_groups)
    assert all(not group.get(option) for group in plain_optimizer.param_groups)
    for key, value in plain_optimizer.defaults.items():  # every hyperparameter as AllenNLP passed it
        if key not in ("fused", "foreach"):
            assert switched_optimizer.defaults[key] == value, key
    _train(plain, plain_optimizer, range(8))
    _train(switched, switched_optimizer, range(8))
    moved = False
    for (parameter_name, expected), actual in zip(plain.named_parameters(), switched.parameters()):
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6, msg=parameter_name)
        moved = moved or not torch.equal(expected, Tiny().state_dict()[parameter_name])
    assert moved


def test_allennlp_defaults_and_errors_are_unchanged():
    model = Tiny()
    assert _optimizer(model, {"type": "adamw"}).defaults["weight_decay"] == 0.01  # AllenNLP's default, also torch's
    assert _optimizer(model, {"type": "adagrad"}).defaults["lr"] == 0.01
    with pytest.raises(ConfigurationError, match="fusd"):
        _optimizer(model, {"type": "adam", "fusd": True})
    with pytest.raises(ConfigurationError):
        _optimizer(model, {"type": "sgd"})  # AllenNLP's sgd requires lr


def test_parameter_groups_keep_their_settings_when_fused():
    optimizer = _optimizer(Tiny(), {
        "type": "adam", "lr": 0.01, "fused": True, "parameter_groups": [[["^embedding"], {"lr": 0.1}]],
    })
    assert [(group["lr"], group["fused"], len(group["params"])) for group in optimizer.param_groups] == [
        (0.1, True, 1), (0.01, True, 2)
    ]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_fused_optimizer_resumes_from_its_state_dict(name):
    """What `--recover` does: a new optimizer loads the saved state and continues as the uninterrupted one."""
    config = {**CONFIGS[name], "fused": True}
    straight = Tiny()
    _train(straight, _optimizer(straight, config), range(10))
    first = Tiny()
    first_optimizer = _optimizer(first, config)
    _train(first, first_optimizer, range(5))
    resumed = Tiny()
    resumed.load_state_dict(first.state_dict())
    resumed_optimizer = _optimizer(resumed, config)
    resumed_optimizer.load_state_dict(copy.deepcopy(first_optimizer.state_dict()))
    _train(resumed, resumed_optimizer, range(5, 10))
    for expected, actual in zip(straight.parameters(), resumed.parameters()):
        assert torch.equal(actual, expected)


def _l2_warnings(caplog, config: dict) -> list:
    caplog.clear()
    with caplog.at_level("WARNING", logger="memplugins.compat.optimizer_options"):
        _optimizer(Tiny(), config)
    return [record.getMessage() for record in caplog.records if "weight_decay reaches" in record.getMessage()]


@pytest.mark.parametrize("name", ["adam", "adagrad"])
def test_adaptive_l2_on_an_embedding_table_is_warned_about_with_a_fix_that_works(caplog, name):
    warnings = _l2_warnings(caplog, CONFIGS[name])
    assert len(warnings) == 1 and "embedding.weight" in warnings[0] and "output.weight" not in warnings[0]
    # the parameter_groups the message proposes leave the table out, and silence it
    proposed = warnings[0].split('"parameter_groups": ')[1].split(", or use")[0]
    config = {**CONFIGS[name], "parameter_groups": json.loads(proposed)}
    assert _l2_warnings(caplog, config) == []
    optimizer = _optimizer(Tiny(), config)
    assert sorted(group["weight_decay"] for group in optimizer.param_groups) == [0, CONFIGS[name]["weight_decay"]]


@pytest.mark.parametrize("config", [
    {"type": "adam", "lr": 0.01},  # no weight decay
    {"type": "adamw", "lr": 0.01, "weight_decay": 0.01},  # decoupled: proportional to w
    CONFIGS["sgd"],  # plain SGD's L2 is proportional to w too
    {"type": "adam", "lr": 0.01, "weight_decay": 0.001, "parameter_groups": [[["^embedding"], {"requires_grad": False}]]},
])
def test_no_warning_where_the_l2_cannot_erase_a_table(caplog, config):
    assert _l2_warnings(caplog, config) == []


def test_adam_l2_moves_an_unused_row_by_about_lr_per_step():
    """The fact behind the warning: the row no batch uses loses ~lr per step whatever weight_decay is."""
    model = Tiny()
    unused = 39  # Tiny.loss with steps 0..7 reads tokens 0..18
    optimizer = _optimizer(model, {"type": "adam", "lr": 0.01, "weight_decay": 1e-4})
    before = model.embedding.weight[unused].detach().abs().clone()
    _train(model, optimizer, range(8))
    shrink = before - model.embedding.weight[unused].detach().abs()
    torch.testing.assert_close(shrink, torch.full_like(shrink, 8 * 0.01), rtol=0.02, atol=0)
