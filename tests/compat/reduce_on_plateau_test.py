"""compat.reduce_on_plateau: a `reduce_on_plateau` config trains on torch 2 (it failed on the `verbose` argument)."""
import json

from allennlp.commands.train import train_model_from_file

from tests.conftest import TEST_FIXTURES


def test_reduce_on_plateau_config_trains(tmp_path, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="memplugins.compat.reduce_on_plateau"):
        train_model_from_file(str(TEST_FIXTURES / "compat_reduce_on_plateau.jsonnet"), str(tmp_path / "run"))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["epoch"] == 2
    assert (tmp_path / "run" / "model.tar.gz").exists()
