"""
Every row of `benchmarks/replication_rows.py` builds: its config with the row's variables and `-o` overrides gives
a dataset reader, a model and an optimizer, on the configs' shipped fixtures in place of the row's data. A row that
would fail only when a worker (or a lent GPU's few minutes) starts it, e.g. a misspelt constructor argument in an
override, fails here.
"""
import json
import sys
from typing import List

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp.training.optimizers import Optimizer

from tests.conftest import REPO_ROOT
from tests.config_models import build_config_model

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
from replication_rows import FAMILIES, Row  # noqa: E402

ROWS: List[Row] = [row for rows in FAMILIES.values() for row in rows]


def _non_data_variables(row: Row) -> dict:
    """The row's variables but its data paths, which stay at the configs' shipped fixtures."""
    return {name: value for name, value in row.variables.items() if not value.startswith(("DATA/", "SLICE/"))}


def _set_variables(row: Row, monkeypatch) -> None:
    for name, value in _non_data_variables(row).items():
        monkeypatch.setenv(name, value)


def _settings(row: Row) -> str:
    """What of a row reaches its model: the config, the variables that are not data paths, the overrides."""
    variables = {name: value for name, value in _non_data_variables(row).items()
                 if name not in ("NUM_EPOCHS", "CUDA_DEVICE")}
    return json.dumps([row.config, variables, row.overrides], sort_keys=True, default=str)


# rows that differ only in data, epochs or seeds build the same model once
CASES = {}
for _row in ROWS:
    CASES.setdefault(_settings(_row), _row)


def test_row_names_are_unique():
    names = [row.name for row in ROWS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("row", list(CASES.values()), ids=lambda row: row.name)
def test_every_row_builds_its_reader_model_and_optimizer(row: Row, monkeypatch):
    _set_variables(row, monkeypatch)
    overrides = json.dumps(row.overrides)
    # enough of each fixture for every label to be seen (a model checks its output size against the labels)
    built = build_config_model(row.config, num_instances=5000, overrides=overrides)
    params = Params.from_file(str(REPO_ROOT / row.config), overrides)
    if "validation_dataset_reader" in params:
        DatasetReader.from_params(params.pop("validation_dataset_reader"))
    trainer = params.pop("trainer")
    parameters = [[name, parameter] for name, parameter in built.model.named_parameters() if parameter.requires_grad]
    Optimizer.from_params(model_parameters=parameters, params=trainer.pop("optimizer"))
    first = built._replace(instances=built.instances[:4])
    assert first.model(**first.batch())["loss"].isfinite()


def test_a_misspelt_override_fails_to_build(monkeypatch):
    row = next(row for row in ROWS if row.name == "ptb_lstmn_3layers_skip")
    _set_variables(row, monkeypatch)
    with pytest.raises(Exception, match="skip_conections"):
        build_config_model(row.config, num_instances=4,
                           overrides=json.dumps({"model.contextualizer.skip_conections": True}))
