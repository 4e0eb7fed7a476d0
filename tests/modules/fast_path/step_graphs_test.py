"""
CUDA graphs over the fast paths' step loops (`memplugins.modules.fast_path.step_graphs`), checked on the CPU with the
module's simulated capture: a replay re-runs the recorded function into the captured static buffers, so every copy
in and out, the cloning of a call's saved state, the bucket padding and the cache are what a real graph runs. Each
test compares the graphed path with the eager fast path: outputs and every gradient. `tests/gpu_test.py` captures
real graphs on CUDA.
"""
import collections

import pytest
import torch

from memplugins.encoders import NseEncoder
from memplugins.modules import LstmnLayer
from memplugins.modules.fast import lstmn as fast_lstmn
from memplugins.modules.fast import nse as fast_nse
from memplugins.modules.fast import step_graphs
from tests.modules.fast_path.cases import lstmn_case, loss_and_gradients, nse_case, padded, randomize

GRAPHS = {"lstmn": fast_lstmn._GRAPHS, "nse": fast_nse._GRAPHS}
CASES = {"lstmn": lstmn_case, "nse": nse_case, "lstmn_recency": lambda: lstmn_case(recency_start=0.0)}


@pytest.fixture
def graphs(monkeypatch):
    """Graphs on (simulated), with empty caches; yields a function that turns them off again."""
    monkeypatch.setattr(step_graphs, "SIMULATE_ON_CPU", True)
    for graph in GRAPHS.values():
        monkeypatch.setattr(graph, "cache", collections.OrderedDict())
        monkeypatch.setattr(graph, "captures", 0)
        monkeypatch.setattr(graph, "failed", None)
    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPHS", "1")
    yield lambda: monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPHS", "0")


def eager(monkeypatch, function):
    with monkeypatch.context() as patch:
        patch.setenv("MEMPLUGINS_CUDA_GRAPHS", "0")
        return function()


def assert_all_equal(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        torch.testing.assert_close(a, b, atol=1e-13, rtol=0)


@pytest.mark.parametrize("name", ["lstmn", "nse", "lstmn_recency"])
def test_graphed_loop_equals_the_eager_fast_path(name, graphs, monkeypatch):
    case = CASES[name]()
    graph = GRAPHS[name.split("_")[0]]
    expected_outputs, _, expected_grads = eager(monkeypatch, lambda: loss_and_gradients(case))
    for call in range(3):
        outputs, _, grads = loss_and_gradients(case)
        assert_all_equal(outputs, expected_outputs)
        assert_all_equal(grads, expected_grads)
        # captured once (forward and backward), replayed after
        assert graph.captures == 2 and len(graph.cache) == 1


@pytest.mark.parametrize("name", ["lstmn", "nse"])
def test_two_forwards_before_one_backward(name, graphs, monkeypatch):
    """A pair model runs the encoder twice before its backward: each call's saved state must outlive the next
    replay, which overwrites the static buffers."""
    def twice():
        # two modules (one cache per fast path, so one graph entry) with different weights and inputs
        first, second = CASES[name](), CASES[name]()
        randomize(second.module, seed=7)
        with torch.no_grad():
            second.leaves[0].mul_(-0.5).add_(0.25)
        first_outputs, second_outputs = first.run(), second.run()
        loss = sum((t.tanh() * (n + 1)).sum() for n, t in enumerate(first_outputs)) + sum(
            (t.sigmoid() * (n + 2)).sum() for n, t in enumerate(second_outputs))
        return first_outputs + second_outputs, torch.autograd.grad(loss, first.leaves + second.leaves)

    expected_outputs, expected_grads = eager(monkeypatch, twice)
    outputs, grads = twice()
    assert GRAPHS[name].captures == 2
    assert_all_equal(outputs, expected_outputs)
    assert_all_equal(grads, expected_grads)


@pytest.mark.parametrize("name", ["lstmn", "nse"])
def test_a_retained_graph_backpropagates_twice(name, graphs, monkeypatch):
    case = CASES[name]()
    _, _, expected = eager(monkeypatch, lambda: loss_and_gradients(case))
    _, loss, first = loss_and_gradients(case, retain_graph=True)
    second = torch.autograd.grad(loss, case.leaves)
    assert_all_equal(first, expected)
    assert_all_equal(second, expected)


@pytest.mark.parametrize("name", ["lstmn", "nse"])
def test_no_grad_replays_the_forward_only(name, graphs, monkeypatch):
    case = CASES[name]()
    with torch.no_grad():
        expected = eager(monkeypatch, case.run)
        got = case.run()
    assert_all_equal(got, expected)
    assert GRAPHS[name].captures == 1  # no backward graph
    assert all(not t.requires_grad for t in got)


def test_lengths_share_a_bucket_and_are_cut_back(graphs, monkeypatch):
    """T = 7 and then 5 replay the graphs of T = 8 (padded with masked steps), T = 9 captures those of 16; each equals
    its eager run, padding included (lengths 1..T in one batch)."""
    layer = randomize(LstmnLayer(5, 4).double())
    for num_steps, entries in [(7, 1), (5, 1), (9, 2), (8, 2)]:
        lengths = [num_steps, 1, num_steps - 2]
        x, mask = padded(lengths, 5, seed=num_steps)

        def run():
            hidden, memory, attention = layer(x, mask)
            loss = (hidden.sin() + 2 * memory.cos()).sum()
            return [hidden, memory, attention], torch.autograd.grad(loss, [x, *layer.parameters()])

        expected_outputs, expected_grads = eager(monkeypatch, run)
        outputs, grads = run()
        assert [o.size() for o in outputs] == [o.size() for o in expected_outputs]
        assert_all_equal(outputs, expected_outputs)
        assert_all_equal(grads, expected_grads)
        assert len(GRAPHS["lstmn"].cache) == entries


@pytest.mark.parametrize("written", [True, False], ids=["written", "read-only"])
def test_nse_steps_and_memory_slots_share_buckets(written, graphs, monkeypatch):
    """The NSE pads T and each memory's slots (an MMA-NSE extra memory, written or read-only) to their buckets."""
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=1, write_extra_memories=written).double(), seed=2)
    for (num_steps, slots), entries in [((7, 3), 1), ((5, 8), 1), ((9, 3), 2), ((2, 11), 3)]:
        x, mask = padded([num_steps, 1, max(num_steps - 2, 1)], 5, seed=num_steps)
        extra, extra_mask = padded([slots, max(slots - 3, 1), 1], 4, seed=slots, garbage=0.0)

        def run():
            output = encoder.encode(x, mask, [(extra, extra_mask)])
            outputs = [output.hidden, output.memory, output.keys, output.extra_memories[0], output.extra_keys[0]]
            loss = sum((t.tanh() * (n + 1)).sum() for n, t in enumerate(outputs))
            return outputs, torch.autograd.grad(loss, [x, extra, *encoder.parameters()])

        expected_outputs, expected_grads = eager(monkeypatch, run)
        outputs, grads = run()
        assert_all_equal(outputs, expected_outputs)
        assert_all_equal(grads, expected_grads)
        assert len(GRAPHS["nse"].cache) == entries


def test_the_cache_keeps_the_most_recent_keys(graphs, monkeypatch):
    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPH_CACHE", "1")
    layer = randomize(LstmnLayer(3, 2).double())
    for num_steps in [3, 12, 3]:
        x, mask = padded([num_steps, 2], 3, seed=1)
        with torch.no_grad():
            got = layer(x, mask)
            expected = eager(monkeypatch, lambda: layer(x, mask))
        assert_all_equal(got, expected)
        assert len(GRAPHS["lstmn"].cache) == 1
    assert GRAPHS["lstmn"].captures == 3  # the first bucket was evicted by the second and captured again


def test_bfloat16_autocast_runs_the_graphs_in_float32(graphs, monkeypatch):
    case = lstmn_case(dtype=torch.float32)

    def run():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return loss_and_gradients(case)

    expected_outputs, _, expected_grads = eager(monkeypatch, run)
    outputs, _, grads = run()
    assert GRAPHS["lstmn"].captures == 2
    assert [o.dtype for o in outputs] == [o.dtype for o in expected_outputs]
    assert_all_equal(outputs, expected_outputs)
    assert_all_equal(grads, expected_grads)


def test_on_by_default_off_with_the_variable_and_off_cuda(monkeypatch):
    from memplugins.modules.fast_path import backend

    monkeypatch.delenv("MEMPLUGINS_CUDA_GRAPHS", raising=False)
    monkeypatch.delenv("MEMPLUGINS_BACKEND", raising=False)
    assert backend.current().level == "graphs" and step_graphs.enabled()
    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPHS", "0")
    assert backend.current().level == "triton" and not step_graphs.enabled()
    monkeypatch.delenv("MEMPLUGINS_CUDA_GRAPHS")
    case = lstmn_case()
    monkeypatch.setattr(fast_lstmn._GRAPHS, "cache", collections.OrderedDict())
    loss_and_gradients(case)  # on by default, but these are CPU tensors (no simulation)
    assert not fast_lstmn._GRAPHS.cache


def test_inference_mode_runs_the_eager_loop(graphs, monkeypatch):
    """Static buffers made under inference_mode could not be written outside it: such calls are not graphed, and
    training afterwards still is."""
    case = lstmn_case()
    with torch.inference_mode():
        got = case.run()
    assert not GRAPHS["lstmn"].cache
    with torch.no_grad():
        expected = eager(monkeypatch, case.run)
    assert_all_equal(got, expected)
    loss_and_gradients(case)
    assert GRAPHS["lstmn"].captures == 2


@pytest.mark.parametrize("what", ["forward", "backward"])
def test_a_failed_capture_falls_back_to_the_eager_loop_with_one_warning(what, graphs, monkeypatch, caplog):
    """Graphs are the default, so a loop they cannot capture must still train: the eager loop's values, one
    warning that names the loop, the pass and the reason, and no further capture attempts."""
    def broken(*args):
        raise ValueError("not capturable")

    case = lstmn_case()
    expected, _, expected_grads = eager(monkeypatch, lambda: loss_and_gradients(case))
    monkeypatch.setattr(GRAPHS["lstmn"], what, broken)
    with caplog.at_level("WARNING", logger="memplugins.modules.fast_path.step_graphs"):
        for _ in range(3):
            got, _, grads = loss_and_gradients(case)
            assert_all_equal(got, expected)
            assert_all_equal(grads, expected_grads)
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1, warnings
    assert (f"capturing the lstmn loop's {what} as a CUDA graph failed (ValueError: not capturable)" in warnings[0]
            and "runs the lstmn loop eagerly" in warnings[0] and "MEMPLUGINS_BACKEND=triton" in warnings[0])
    assert GRAPHS["lstmn"].failed and not GRAPHS["lstmn"].cache


def test_a_bad_bucket_size_is_refused_by_name(graphs, monkeypatch):
    monkeypatch.setenv("MEMPLUGINS_CUDA_GRAPH_BUCKET", "0")
    with pytest.raises(ValueError, match="MEMPLUGINS_CUDA_GRAPH_BUCKET='0'"):
        loss_and_gradients(lstmn_case())


def test_step_is_full_reports_every_step_padded_while_capturing(monkeypatch):
    mask = torch.tensor([[True, True, False], [True, False, False]])
    assert step_graphs.step_is_full(mask) == [True, False, False]
    monkeypatch.setattr(step_graphs._state, "capturing", True, raising=False)
    assert step_graphs.step_is_full(mask) == [False, False, False]
