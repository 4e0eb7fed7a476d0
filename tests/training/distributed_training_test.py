"""
AllenNLP's own distributed training (`"distributed": {"cuda_devices": [-1, -1]}`: two gloo processes on the CPU)
with our models; the fast paths' gradients under DDP are checked in `tests/modules/fast_path/contract_test.py`.
"""
import json
import math

from allennlp.commands.train import train_model_from_file

from tests.conftest import TEST_FIXTURES, free_port


def test_allennlp_distributed_training_of_nse_pair_classifier(tmp_path):
    """`"distributed": {"cuda_devices": [-1, -1]}`: AllenNLP's two-process training, gloo, on the MMA-NSE model."""
    overrides = json.dumps({"distributed": {"cuda_devices": [-1, -1], "master_port": free_port()},
                            "trainer": {"num_epochs": 2}})
    train_model_from_file(str(TEST_FIXTURES / "nse_pair_classifier.jsonnet"), str(tmp_path / "out"),
                          overrides=overrides, include_package=["memplugins"])
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["epoch"] == 1
    assert {"peak_worker_0_memory_MB", "peak_worker_1_memory_MB"} <= set(metrics)  # two processes trained
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["validation_loss"])
    assert (tmp_path / "out" / "model.tar.gz").exists()
