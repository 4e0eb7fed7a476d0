"""
No behaviour change (issue 94, item 6): archives trained at d9dfc83, the commit before the consolidation, one per
family (`tests/fixtures/old_archives/`, made by its `make.py`), load with today's code and predict what they
predicted then: every key they output then, with the same strings and numbers equal to float32 rounding.
"""
import json
import math
from pathlib import Path

import pytest
from allennlp.predictors import Predictor

FIXTURES = Path(__file__).parent / "fixtures" / "old_archives"
NAMES = sorted(path.name[: -len(".expected.json")] for path in FIXTURES.glob("*.expected.json"))


def differences(expected, actual, where="output"):
    """Where `actual` differs from `expected` (numbers within 1e-6 absolute or 1e-5 relative)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object"]
        found = []
        for key, value in expected.items():
            found += differences(value, actual[key], f"{where}.{key}") if key in actual else [f"{where}.{key}: missing"]
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected a list of {len(expected)}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in differences(e, a, f"{where}[{i}]")]
    if isinstance(expected, float) or isinstance(actual, float):
        close = math.isclose(float(expected), float(actual), rel_tol=1e-5, abs_tol=1e-6)
        return [] if close else [f"{where}: {expected} then, {actual} now"]
    return [] if expected == actual else [f"{where}: {expected!r} then, {actual!r} now"]


def test_there_is_an_archive_per_family():
    assert len(NAMES) >= 10 and all((FIXTURES / f"{name}.tar.gz").exists() for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_an_old_archive_loads_and_predicts_as_it_did(name):
    recorded = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    predictor = Predictor.from_path(str(FIXTURES / f"{name}.tar.gz"))
    for example, expected in zip(recorded["inputs"], recorded["outputs"]):
        found = differences(expected, json.loads(json.dumps(predictor.predict_json(example))))
        assert not found, f"{name} ({recorded['commit']}): {found[:10]}"
