"""
The GPU path (issue 13), skipped without CUDA (AllenNLP's `requires_gpu`): every model family trains through
`allennlp train`'s own code on `cuda:0` with and without `"use_amp": true`; every shipped config's forward and
backward under CUDA float16 autocast stays close to float32; the NSE encoder's allocated GPU memory is the same
after 200 training steps as after 10.
"""
import gc
import json
import math

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.testing import requires_gpu

from tests.config_models import CONFIGS, build_config_model
from tests.models.every_config_test import assert_autocast_close_to_float32

FAMILIES = [
    "training_config/snli_mma_nse.jsonnet",  # NSE / MMA-NSE pair classifier
    "training_config/snli_lstmn_deep_fusion.jsonnet",  # LSTMN fusion
    "training_config/snli_rte_word_by_word.jsonnet",  # Rocktäschel et al.
    "training_config/snli_tree_lstm.jsonnet",  # tree LSTM pair model
    "training_config/sst2_tree_lstm.jsonnet",  # tree LSTM sentiment
    "training_config/sst2_iram_full.jsonnet",  # IRAM
    "training_config/sst_lstmn.jsonnet",  # LSTMN in basic_classifier
    "training_config/iwslt14_nse_nse.jsonnet",  # shared-memory NMT, nse DecoderNet
    "training_config/wikiqa_mma_nse_attention.jsonnet",  # answer selection
    "training_config/yelp13_nse_nse.jsonnet",  # hierarchical document classifier
    "training_config/ptb_lstmn_lm.jsonnet",  # LSTMN language model
]


@requires_gpu
@pytest.mark.parametrize("use_amp", [False, True], ids=["float32", "amp"])
@pytest.mark.parametrize("config", FAMILIES)
def test_every_family_trains_on_cuda(config, use_amp, tmp_path, monkeypatch):
    monkeypatch.setenv("NUM_EPOCHS", "2")
    overrides = json.dumps({"trainer": {"cuda_device": 0, "use_amp": use_amp}})
    train_model_from_file(config, str(tmp_path / "out"), overrides=overrides, include_package=["memplugins"])
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert math.isfinite(metrics["training_loss"])
    assert "peak_gpu_0_memory_MB" in metrics  # trained on the GPU
    if "validation_loss" in metrics:
        assert math.isfinite(metrics["validation_loss"])


@requires_gpu
@pytest.mark.parametrize("config", CONFIGS)
def test_cuda_float16_autocast_matches_float32(config):
    built = build_config_model(config)
    model, tensors = built.model.cuda(), built.batch("cuda")
    assert_autocast_close_to_float32(model, tensors, "cuda", torch.float16)
    model.train()
    # unscaled: a GradScaler's first scale (65,536) may overflow float16 gradients by design (it then skips the
    # step and lowers the scale); the trainer-level tests above run that loop
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(**tensors)["loss"]
    loss.backward()
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            assert parameter.grad.dtype == parameter.dtype, name
            assert torch.isfinite(parameter.grad).all(), name


@requires_gpu
@pytest.mark.parametrize("use_amp", [False, True], ids=["float32", "amp"])
def test_nse_gpu_memory_is_flat_over_training_steps(use_amp):
    from memplugins.encoders import NseEncoder

    torch.manual_seed(0)
    encoder = NseEncoder(300, 300).cuda()
    optimizer = torch.optim.Adam(encoder.parameters())
    inputs = torch.randn(128, 30, 300, device="cuda")
    mask = torch.ones(128, 30, dtype=torch.bool, device="cuda")
    mask[:40, 20:] = False
    for step in range(201):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = encoder(inputs, mask).float().square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        del loss
        if step == 10:
            gc.collect()
            start = torch.cuda.memory_allocated()
    gc.collect()
    assert torch.cuda.memory_allocated() - start < 2**20  # under 1 MB in 190 steps


@requires_gpu
@pytest.mark.parametrize("name", ["lstmn", "lstmn_recency", "nse", "tree_lstm", "memory"])
def test_fast_paths_on_cuda_match_the_cpu_in_float64(name):
    """The fast paths' hand-written forward and backward are device-agnostic: the same padded case, in float64, gives
    the CPU's outputs and every gradient on CUDA."""
    from tests.modules.fast_path.cases import CASES, loss_and_gradients

    cpu_outputs, _, cpu_grads = loss_and_gradients(CASES[name]())
    cuda_outputs, _, cuda_grads = loss_and_gradients(CASES[name](device="cuda"))
    for got, expected in zip(cuda_outputs + list(cuda_grads), cpu_outputs + list(cpu_grads)):
        assert got.device.type == "cuda"
        torch.testing.assert_close(got.cpu(), expected, atol=1e-10, rtol=1e-9)


@requires_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nse_kernels_on_cuda_match_the_torch_path_after_other_cuda_work(dtype, monkeypatch):
    """The NSE's Triton kernels against its torch operations on CUDA, outputs and every gradient, after the caching
    allocator's free blocks were filled with garbage: on an H100 the float64 backward kernels failed only in
    processes that had run other CUDA work (so float64 on CUDA now takes the torch backward, `nse_backward`)."""
    from memplugins.modules.fast import nse_read_backward_kernel, nse_read_kernel
    from tests.modules.fast_path.cases import CASES, loss_and_gradients
    from tests.modules.fast_path.interpreter import count_launches

    for _ in range(3):  # blocks of the sizes the case allocates, freed full of NaN
        garbage = [torch.full((n,), math.nan, dtype=dtype, device="cuda") for n in (64, 256, 1024, 4096)]
        del garbage
    monkeypatch.setenv("MEMPLUGINS_TRITON", "0")
    torch_outputs, _, torch_grads = loss_and_gradients(CASES["nse"](dtype=dtype, device="cuda"))
    monkeypatch.setenv("MEMPLUGINS_TRITON", "1")
    counted = [(nse_read_kernel, "write_and_read", "forward"), (nse_read_backward_kernel, "read_backward", "backward")]
    for module, name, _ in counted:  # monkeypatch puts the originals back afterwards
        monkeypatch.setattr(module, name, getattr(module, name))
    calls = count_launches(counted)
    kernel_outputs, _, kernel_grads = loss_and_gradients(CASES["nse"](dtype=dtype, device="cuda"))
    assert calls["forward"] > 0 and (calls["backward"] > 0) == (dtype == torch.float32), calls
    tolerance = dict(atol=1e-5, rtol=1e-4) if dtype == torch.float32 else dict(atol=1e-10, rtol=1e-9)
    for got, expected in zip(kernel_outputs + list(kernel_grads), torch_outputs + list(torch_grads)):
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, expected, **tolerance)


@requires_gpu
@pytest.mark.parametrize("name", ["lstmn", "nse", "tree_lstm"])
def test_cuda_graphs_equal_the_eager_loop(name, monkeypatch):
    """The default graphs backend (`memplugins.modules.fast_path.step_graphs`) captures the step loops, and the tree
    LSTM's padded levels, as CUDA graphs: the same padded float32 case gives the eager loop's outputs and gradients,
    also when two calls run before one backward, and replays after the first capture."""
    import collections

    from memplugins.modules.fast import lstmn, nse
    from memplugins.modules.tree_lstm import fast as tree_lstm
    from tests.modules.fast_path.cases import CASES

    graphs = {"lstmn": lstmn._GRAPHS, "nse": nse._GRAPHS, "tree_lstm": tree_lstm._GRAPHS}[name]
    monkeypatch.setattr(graphs, "cache", collections.OrderedDict())
    monkeypatch.setattr(graphs, "captures", 0)
    first, second = CASES[name](dtype=torch.float32, device="cuda"), CASES[name](dtype=torch.float32, device="cuda")
    with torch.no_grad():
        second.leaves[0].mul_(-0.5)

    def both():
        outputs = first.run() + second.run()
        loss = sum((t.tanh() * (n + 1)).sum() for n, t in enumerate(outputs))
        return outputs, torch.autograd.grad(loss, first.leaves + second.leaves)

    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPHS", "0")
    expected_outputs, expected_grads = both()
    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPHS", "1")
    for _ in range(3):
        outputs, grads = both()
        for got, expected in zip(outputs + list(grads), expected_outputs + list(expected_grads)):
            torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    assert graphs.captures == 2 and len(graphs.cache) == 1


@requires_gpu
@pytest.mark.parametrize("case", ["tape read", "lstmn layer", "recency lstmn layer", "mma-nse encoder", "tree lstm"])
def test_triton_kernels_are_repeatable_at_training_sizes(case):
    """The Triton kernels at training sizes, run 50 times on the same inputs, give the same bits every time and no
    inf or NaN (benchmarks/speed/kernel_races.py, whose scores sit near -90). Until 2026-11-26 the tape read and the NSE
    read stored over values other warps of the program still had to load: on an H200 every one of 1,000 runs of
    the tape read differed from the first and held inf, and every one of 300 runs of the MMA-NSE encoder differed
    (docs/research/ptb_lm.md, "NaN on the GPU")."""
    import sys

    from tests.conftest import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "speed"))
    import kernel_races

    [(name, make)] = [(name, make) for name, make in kernel_races.CASES.items() if name.startswith(case)]
    _, runs, differing, nonfinite, largest, against_torch, _ = kernel_races.measure(name, make, runs=50)
    assert (differing, nonfinite) == (0, 0), (name, largest)
    assert against_torch < (1e-2 if case != "mma-nse encoder" else 0.1), (name, against_torch)
