"""
The fast-path contract (`memplugins.modules.fast_path.contract`), one parametrised test per clause, for every fast path:
a retained graph backpropagates twice, `no_grad` gives the same outputs and keeps no graph, autocast runs the
recurrence in float32, `create_graph=True` is refused with a clear error (a hand-written backward has no graph of
its own), and DDP reduces the hand-written gradients exactly once.
"""
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from tests.conftest import free_port
from tests.modules.fast_path.cases import CASES, ENCODERS, loss_and_gradients


@pytest.mark.parametrize("name", list(CASES))
def test_a_retained_graph_backpropagates_twice(name):
    case = CASES[name]()
    _, loss, first = loss_and_gradients(case, retain_graph=True)
    second = torch.autograd.grad(loss, case.leaves)
    for a, b in zip(first, second):
        torch.testing.assert_close(a, b, atol=0, rtol=0)


@pytest.mark.parametrize("name", list(CASES))
def test_no_grad_gives_the_same_outputs_and_keeps_no_graph(name):
    case = CASES[name]()
    with_graph = case.run()
    with torch.no_grad():
        without = case.run()
    for a, b in zip(with_graph, without):
        torch.testing.assert_close(a, b, atol=0, rtol=0)
        assert b.grad_fn is None


@pytest.mark.parametrize("name", list(CASES))
def test_bfloat16_autocast_runs_the_recurrence_in_float32(name):
    case = CASES[name](torch.float32)
    expected, _, expected_grads = loss_and_gradients(case)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, _, got_grads = loss_and_gradients(case)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g.float(), e, atol=0.05, rtol=0)  # only products outside the recurrence are bfloat16
    for g, e, leaf in zip(got_grads, expected_grads, case.leaves):
        assert g.dtype == leaf.dtype
        assert (g - e).norm() <= 0.05 * e.norm() + 1e-6


@pytest.mark.parametrize("name", list(CASES))
def test_create_graph_is_refused_clearly(name):
    case = CASES[name]()
    with pytest.raises(RuntimeError, match="no double backward"):
        loss_and_gradients(case, create_graph=True)


# ----- DDP: two gloo processes on the CPU (tests/gpu_test.py repeats a model run on CUDA where one exists)

WORLD_SIZE = 2


def _batch(seed: int = 1):
    torch.manual_seed(seed)
    inputs = torch.randn(4, 5, 7)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], dtype=torch.bool)
    return inputs, mask


def _encoders():
    torch.manual_seed(0)
    return {name: build() for name, build in ENCODERS.items()}


def _loss(module, inputs, mask):
    return module(inputs, mask).square().mean()


def _worker(rank: int, port: int, results, graphs: bool = False):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if graphs:  # the step loops through `step_graphs`, with its CPU simulation of the capture
        from memplugins.modules.fast import step_graphs

        os.environ["MEMPLUGINS_CUDA_GRAPHS"] = "1"
        step_graphs.SIMULATE_ON_CPU = True
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    try:
        inputs, mask = _batch()
        shard = slice(rank * 2, rank * 2 + 2)  # each rank takes half of the batch
        for name, module in _encoders().items():
            model = torch.nn.parallel.DistributedDataParallel(module)
            for _ in range(2):  # a second iteration: DDP's hooks must fire again, once each
                model.zero_grad()
                _loss(model, inputs[shard], mask[shard]).backward()
            results[(name, rank)] = {n: p.grad.clone() for n, p in module.named_parameters()}
        if graphs:
            from memplugins.modules.fast import lstmn, nse

            results[("captures", rank)] = (lstmn._GRAPHS.captures, nse._GRAPHS.captures)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("graphs", [False, True], ids=["eager", "step_graphs"])
def test_ddp_gradients_equal_single_process_gradients(graphs):
    """DDP all-reduces a parameter's gradient when autograd accumulates it; the fast paths' weight gradients arrive
    as one product after all steps, so this checks that they are reduced, and reduced once. Also with the step loops
    as (simulated) CUDA graphs, whose backward returns its gradients from a replay."""
    port = free_port()
    results = mp.Manager().dict()
    mp.spawn(_worker, args=(port, results, graphs), nprocs=WORLD_SIZE, join=True)
    if graphs:  # forward and backward graphs of both LSTMN layers (one bucket) and of the NSE
        assert all(results[("captures", rank)] == (2, 2) for rank in range(WORLD_SIZE))
    inputs, mask = _batch()
    for name, module in _encoders().items():
        # DDP averages the ranks' gradients: the mean of the two half-batch losses' gradients
        halves = [_loss(module, inputs[i * 2 : i * 2 + 2], mask[i * 2 : i * 2 + 2]) for i in range(WORLD_SIZE)]
        (sum(halves) / WORLD_SIZE).backward()
        for parameter_name, parameter in module.named_parameters():
            for rank in range(WORLD_SIZE):
                torch.testing.assert_close(results[(name, rank)][parameter_name], parameter.grad,
                                           atol=1e-6, rtol=1e-5, msg=f"{name} {parameter_name} rank {rank}")
