import tempfile

import pytest
from allennlp.commands.train import train_model_from_file

from tests.conftest import TEST_FIXTURES


@pytest.fixture(scope="module")
def good_archive(tmp_path_factory):
    """A real archive (`allennlp train` of a small rte_attention, one epoch) to craft the attacks from."""
    out = tmp_path_factory.mktemp("trained")
    train_model_from_file(str(TEST_FIXTURES / "rte_attention.jsonnet"), str(out / "run"),
                          overrides='{"trainer.num_epochs": 1}')
    return out / "run" / "model.tar.gz"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Extraction goes to `tmp_path/tmp/...` (tempfile's folder), so a write outside it lands in `tmp_path`."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path
