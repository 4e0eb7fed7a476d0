"""compat.config_defaults: the configs' data variables default to the shipped samples; the environment wins."""
from tests.conftest import REPO_ROOT


def test_config_defaults_point_at_shipped_fixtures(monkeypatch):
    from allennlp.common import Params

    monkeypatch.delenv("SNLI_TRAIN", raising=False)
    params = Params.from_file("training_config/snli_rte_word_by_word.jsonnet")
    assert params["train_data_path"] == str(REPO_ROOT / "fixtures/snli/snli_1.0_dev_sample_train.jsonl")
    monkeypatch.setenv("SNLI_TRAIN", "/data/snli_1.0_train.jsonl")
    params = Params.from_file("training_config/snli_rte_word_by_word.jsonnet")
    assert params["train_data_path"] == "/data/snli_1.0_train.jsonl"
