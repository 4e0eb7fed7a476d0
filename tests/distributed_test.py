"""
Our custom autograd Functions under `DistributedDataParallel` (issue 13): two gloo processes on the CPU here
(`tests/gpu_test.py` repeats the model run on CUDA where a GPU exists). DDP all-reduces each parameter's gradient
when autograd accumulates it; the deferred weight gradients of `StepLinear` / the NSE memory and the LSTMN
recurrence's hand-written backward arrive there as one product after all steps, so this checks that they are
reduced, and reduced once.
"""
import json
import math
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from allennlp.commands.train import train_model_from_file

from tests.conftest import TEST_FIXTURES

WORLD_SIZE = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _encoders():
    from memplugins.encoders import LstmnEncoder, NseEncoder, TreeLstmEncoder

    torch.manual_seed(0)
    return {"nse": NseEncoder(7, 6, num_write_layers=2), "tree_lstm": TreeLstmEncoder(6, 5),
            "lstmn": LstmnEncoder(7, 6, num_layers=2)}


def _batch(name: str):
    torch.manual_seed(1)
    dim = 6 if name == "tree_lstm" else 7
    inputs = torch.randn(4, 5, dim)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], dtype=torch.bool)
    return inputs, mask


def _loss(module, inputs, mask):
    return module(inputs, mask).square().mean()


def _worker(rank: int, port: int, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    try:
        for name, module in _encoders().items():
            inputs, mask = _batch(name)
            shard = slice(rank * 2, rank * 2 + 2)  # each rank takes half of the batch
            model = torch.nn.parallel.DistributedDataParallel(module)
            for _ in range(2):  # a second iteration: DDP's hooks must fire again, once each
                model.zero_grad()
                _loss(model, inputs[shard], mask[shard]).backward()
            results[(name, rank)] = {n: p.grad.clone() for n, p in module.named_parameters()}
    finally:
        dist.destroy_process_group()


def test_ddp_gradients_equal_single_process_gradients():
    manager = mp.Manager()
    results = manager.dict()
    mp.spawn(_worker, args=(_free_port(), results), nprocs=WORLD_SIZE, join=True)
    for name, module in _encoders().items():
        inputs, mask = _batch(name)
        # DDP averages the ranks' gradients: the mean of the two half-batch losses' gradients
        halves = [_loss(module, inputs[i * 2 : i * 2 + 2], mask[i * 2 : i * 2 + 2]) for i in range(WORLD_SIZE)]
        (sum(halves) / WORLD_SIZE).backward()
        for parameter_name, parameter in module.named_parameters():
            for rank in range(WORLD_SIZE):
                torch.testing.assert_close(results[(name, rank)][parameter_name], parameter.grad,
                                           atol=1e-6, rtol=1e-5, msg=f"{name} {parameter_name} rank {rank}")


def test_allennlp_distributed_training_of_nse_pair_classifier(tmp_path):
    """`"distributed": {"cuda_devices": [-1, -1]}`: AllenNLP's two-process training, gloo, on the MMA-NSE model."""
    overrides = json.dumps({"distributed": {"cuda_devices": [-1, -1]}, "trainer": {"num_epochs": 2}})
    train_model_from_file(str(TEST_FIXTURES / "nse_pair_classifier.jsonnet"), str(tmp_path / "out"),
                          overrides=overrides, include_package=["memplugins"])
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["epoch"] == 1
    assert {"peak_worker_0_memory_MB", "peak_worker_1_memory_MB"} <= set(metrics)  # two processes trained
    assert math.isfinite(metrics["training_loss"]) and math.isfinite(metrics["validation_loss"])
    assert (tmp_path / "out" / "model.tar.gz").exists()
