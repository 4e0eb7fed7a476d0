"""Each torch-2 fix in memplugins.compat, exercised the way users hit the failure."""
import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file

from tests.conftest import REPO_ROOT, TEST_FIXTURES


def test_reduce_on_plateau_config_trains(tmp_path, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="memplugins.compat"):
        train_model_from_file(str(TEST_FIXTURES / "compat_reduce_on_plateau.jsonnet"), str(tmp_path / "run"))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["epoch"] == 2
    assert (tmp_path / "run" / "model.tar.gz").exists()


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


def test_config_defaults_point_at_shipped_fixtures(monkeypatch):
    from allennlp.common import Params

    monkeypatch.delenv("SNLI_TRAIN", raising=False)
    params = Params.from_file("training_config/snli_rte_word_by_word.jsonnet")
    assert params["train_data_path"] == str(REPO_ROOT / "fixtures/snli/snli_1.0_dev_sample_train.jsonl")
    monkeypatch.setenv("SNLI_TRAIN", "/data/snli_1.0_train.jsonl")
    params = Params.from_file("training_config/snli_rte_word_by_word.jsonnet")
    assert params["train_data_path"] == "/data/snli_1.0_train.jsonl"


def test_bfloat16_has_a_tiny_value_for_masked_softmaxes_under_cpu_autocast():
    from allennlp.nn import util

    assert util.tiny_value_of_dtype(torch.bfloat16) == util.tiny_value_of_dtype(torch.float32)
    assert util.tiny_value_of_dtype(torch.half) == 1e-4  # unchanged
    logits = torch.randn(2, 5, dtype=torch.bfloat16)
    mask = torch.tensor([[True, True, False, True, True], [True] * 5])
    assert torch.isfinite(util.masked_log_softmax(logits, mask)[mask]).all()


def test_character_cnn_ignores_padding_under_autocast():
    from allennlp.modules.seq2vec_encoders import CnnEncoder

    torch.manual_seed(0)
    encoder = CnnEncoder(embedding_dim=4, num_filters=3, ngram_filter_sizes=(2, 3), output_dim=5)
    tokens = torch.randn(3, 6, 4)
    mask = torch.tensor([[True] * 6, [True, True, False, False, False, False], [False] * 6])  # last: a padding token
    reference = encoder(tokens, mask)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = encoder(tokens, mask)
    torch.testing.assert_close(mixed.float(), reference, atol=2e-2, rtol=0)
