"""
Property-based fuzzing of every reader the shipped configs use and every predictor input they take
(`tests/fuzz/targets.py`), derandomized with a fixed example budget, so the default run is repeatable. The long
mode, `pytest -m fuzz tests/fuzz` (`long_run_test.py`), draws fresh examples for as many minutes as
`MEMPLUGINS_FUZZ_MINUTES` says.
"""
import pytest

from tests.fuzz.targets import READERS, TARGETS, fuzz

EXAMPLES = {"reader": 40, "predictor": 20}


@pytest.mark.parametrize("name", TARGETS)
def test_bad_input_gives_a_result_a_skip_or_a_named_error(name, tmp_path):
    fuzz(name, tmp_path, EXAMPLES[name.split()[0]])


def test_every_reader_of_a_shipped_config_is_fuzzed():
    import glob
    import re

    from tests.conftest import REPO_ROOT

    used = set()
    for path in glob.glob(str(REPO_ROOT / "training_config" / "*sonnet")):
        used |= set(re.findall(r"type: '([a-z_]+)'", open(path, encoding="utf-8").read()))
    readers = {name.split(" ")[0] for name in READERS}
    from allennlp.data import DatasetReader

    assert {name for name in used if name in DatasetReader.list_available()} <= readers
