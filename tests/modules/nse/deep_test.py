"""
The batched step loop for NSEs with more than one write-LSTM layer (`memplugins.modules.nse.deep`) against the
literal per-example reference of eq. 1-15 (`memplugins.modules.nse.reference`): hidden states, keys, final memories
and every gradient, padded (with an empty sequence) and unpadded, with the own and extra memories written or read-only,
M_0 from the inputs or from the read LSTM's states, a deeper read LSTM, the linear compose and a learned key strength.
Dropout given the same masks: `nse_test.py`'s dropout tests, for one write layer and two.
"""
import pytest
import torch

from memplugins.encoders import NseEncoder
from memplugins.modules.fast import nse_deep
from memplugins.modules.nse.reference import nse_reference_batch
from tests.modules.fast_path.cases import EXTRA_LENGTHS, LENGTHS, padded, randomize
from tests.modules.nse.fast_test import assert_equal_to_reference, batch, run

CASES = {
    "nse_2": dict(extras=0, num_write_layers=2),
    "mma_written_3": dict(extras=2, num_write_layers=3, write_extra_memories=True),
    "mma_read_only_2": dict(extras=1, num_write_layers=2, num_read_layers=2, write_extra_memories=False),
    "linear_wide_2": dict(extras=1, num_write_layers=2, compose_size=12, compose_activation="linear"),
    "read_only_2": dict(extras=1, num_write_layers=2, write_memory=False),
    "read_states_2": dict(extras=1, num_write_layers=2, num_read_layers=2, initial_memory="read_states"),
    "key_strength_2": dict(extras=1, num_write_layers=2, key_strength=True),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("lengths", [LENGTHS, [6, 6, 6, 6], [6, 0, 3, 1]], ids=["padded", "unpadded", "empty"])
def test_the_step_loop_equals_the_literal_reference(case, lengths):
    options = dict(CASES[case])
    extras = options.pop("extras")
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=extras, **options).double(), seed=2)
    x, mask, extra_memories = batch(extras, lengths=lengths)
    got, got_grads = run(encoder.encode(x, mask, extra_memories), encoder, x, extra_memories)
    expected, expected_grads = run(nse_reference_batch(encoder.weights(), x, mask, extra_memories), encoder, x, extra_memories)
    names = ["x"] + [f"extra {i}" for i in range(extras)] + [n for n, _ in encoder.named_parameters()]
    if 0 in lengths:  # the empty sequence: no output, and no gradient reaches its inputs
        torch.testing.assert_close(got[0][1], torch.zeros_like(got[0][1]), atol=0, rtol=0)
        torch.testing.assert_close(got_grads[0][1], torch.zeros_like(got_grads[0][1]), atol=0, rtol=0)
    assert_equal_to_reference(got, got_grads, expected, expected_grads, names)


def test_the_encoder_runs_the_step_loop_for_deeper_write_layers_only(monkeypatch):
    calls = []
    original = nse_deep.nse_deep_write
    monkeypatch.setattr("memplugins.encoders.nse.nse_deep_write",
                        lambda *args, **kwargs: calls.append(1) or original(*args, **kwargs))
    x, mask, _ = batch(0)
    NseEncoder(5, 4)(x.detach().float(), mask)
    assert not calls
    NseEncoder(5, 4, num_write_layers=2)(x.detach().float(), mask)
    assert calls == [1]


def test_bfloat16_autocast_runs_the_loop_in_float32():
    encoder = randomize(NseEncoder(5, 4, num_write_layers=2, num_extra_memories=1), seed=5)
    x, mask = padded(LENGTHS, 5, seed=1, dtype=torch.float32)
    extra, extra_mask = padded(EXTRA_LENGTHS, 4, seed=10, dtype=torch.float32, garbage=0.0)
    expected = encoder.encode(x, mask, [(extra, extra_mask)])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = encoder.encode(x, mask, [(extra, extra_mask)])
    assert got.hidden.dtype == got.memory.dtype == torch.float32
    # only the read LSTM and M_0's projection (none here) are outside the float32 loop
    torch.testing.assert_close(got.hidden, expected.hidden, atol=0.02, rtol=0)
    got.hidden.sum().backward()
    assert all(p.grad is not None for p in encoder.parameters())


def test_create_graph_is_refused_clearly():
    encoder = randomize(NseEncoder(5, 4, num_write_layers=2).double(), seed=6)
    x, mask, _ = batch(0)
    loss = encoder.encode(x, mask).hidden.tanh().sum()
    with pytest.raises(RuntimeError, match="no double backward"):
        torch.autograd.grad(loss, [x], create_graph=True)
