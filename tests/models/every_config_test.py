"""
What every shipped config's model must do beyond its own tests (issue 13): a training step leaves nothing of its
graph alive, and forward + backward run under `torch.autocast` (CPU bfloat16 here; `tests/gpu_test.py` runs CUDA
float16) with results close to float32.
"""
import gc
import math

import pytest
import torch
from allennlp.common.testing import ModelTestCase

from tests.config_models import CONFIGS, build_config_model

# objects made for one forward pass (the fast paths' saved state, memplugins.modules.fast): once the step is over
# and its outputs are dropped, none may be alive. (A tensor output kept on a Function's ctx instead of going through
# save_for_backward makes a cycle through autograd's C++ nodes that Python's gc cannot break.)
PER_PASS = {"StepRead", "StepState", "Buffers", "Memory", "CellWeights", "SidedLevels"}

# bfloat16 keeps 8 mantissa bits (relative rounding 2^-9 ≈ 0.2% per operation); through embeddings, a recurrence
# and a classifier, measured on every shipped config: loss within 0.11%, probabilities within 0.001. Bounds:
LOSS_RTOL = 0.01
PROBABILITY_ATOL = 0.01


def _cpu_has_bfloat16_lstm() -> bool:
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            torch.nn.LSTM(2, 2)(torch.zeros(1, 1, 2))
        return True
    except RuntimeError:  # oneDNN: "could not create a primitive descriptor for the LSTM forward ..."
        return False


@pytest.fixture
def cpu_lstm_like_a_bfloat16_cpu(monkeypatch):
    """
    On processors without AVX512-BF16, torch.nn.LSTM can fail under CPU autocast (unpacked input, or a packed
    batch of one; a torch / oneDNN limit, not ours: `memplugins.modules.masked_lstm` runs our LSTMs in float32 there,
    tested in `tests/encoders/real_scale_test.py` without this fixture). AllenNLP's own `lstm` modules inside some
    configs (iwslt14_lstm_lstm, yelp13_nse_lstm) hit it with one unpadded instance; here such a processor's torch
    LSTM computes in float32, as it would on a processor with the kernel, so the rest of the model is still tested.
    """
    if _cpu_has_bfloat16_lstm():
        return
    original = torch.nn.LSTM.forward

    def forward(self, input, hx=None):
        if torch.is_autocast_enabled("cpu"):
            with torch.autocast("cpu", enabled=False):
                hx = None if hx is None else tuple(h.float() for h in hx)
                return original(self, input.float(), hx)
        return original(self, input, hx)

    monkeypatch.setattr(torch.nn.LSTM, "forward", forward)


def alive_per_pass_objects():
    gc.collect()
    return [
        type(o).__name__ for o in gc.get_objects()
        if type(o).__name__ in PER_PASS and type(o).__module__.startswith("memplugins")
    ]


@pytest.mark.parametrize("config", CONFIGS)
def test_a_training_step_leaves_nothing_of_its_graph_alive(config):
    built = build_config_model(config)
    model, tensors = built.model, built.batch()
    model.train()
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad])
    assert alive_per_pass_objects() == []
    for _ in range(2):
        output = model(**tensors)
        output["loss"].backward()
        optimizer.step()
        optimizer.zero_grad()
        del output
        assert alive_per_pass_objects() == []
    with torch.no_grad():  # prediction keeps nothing either
        model.eval()
        model.make_output_human_readable(model(**tensors))
    assert alive_per_pass_objects() == []


def _probabilities(output):
    for key in ("probs", "label_probs", "class_probabilities", "probability"):
        if key in output:
            return output[key].float()
    return None


def assert_autocast_close_to_float32(model, tensors, device: str, dtype: torch.dtype) -> None:
    """The eval-mode loss and probabilities under autocast within the stated bounds of float32's (leaves eval mode)."""
    model.eval()  # no dropout: float32 and autocast see the same network
    with torch.no_grad():
        reference = model(**tensors)
        with torch.autocast(device, dtype=dtype):
            mixed = model(**tensors)
    assert math.isfinite(mixed["loss"].item())
    assert mixed["loss"].item() == pytest.approx(reference["loss"].item(), rel=LOSS_RTOL)
    if _probabilities(reference) is not None:
        torch.testing.assert_close(_probabilities(mixed), _probabilities(reference), atol=PROBABILITY_ATOL, rtol=0)


@pytest.mark.parametrize("config", CONFIGS)
def test_forward_and_backward_under_cpu_bfloat16_autocast(config, cpu_lstm_like_a_bfloat16_cpu):
    built = build_config_model(config)
    model, tensors = built.model, built.batch()
    assert_autocast_close_to_float32(model, tensors, "cpu", torch.bfloat16)
    # one instance alone: nothing padded, which takes other paths (an unpacked LSTM, no masking)
    single = build_config_model(config, num_instances=1).batch()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        assert math.isfinite(model(**single)["loss"].item())
    # training under autocast: gradients reach the same parameters as in float32, all finite
    model.train()
    torch.manual_seed(0)
    model(**tensors)["loss"].backward()
    with_grad = {n for n, p in model.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
    model.zero_grad(set_to_none=True)
    torch.manual_seed(0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = model(**tensors)["loss"]
    loss.backward()
    mixed_grad = {n for n, p in model.named_parameters() if p.grad is not None and p.grad.abs().sum() > 0}
    assert mixed_grad == with_grad
    for name, parameter in model.named_parameters():
        if parameter.grad is not None:
            assert parameter.grad.dtype == parameter.dtype, name
            assert torch.isfinite(parameter.grad).all(), name


class _ConsistencyCase(ModelTestCase):
    """AllenNLP's own `ensure_batch_predictions_are_consistent`, on a model built from a shipped config."""


NMT_BEAM_CASES = [(c, "5") for c in CONFIGS if "iwslt14" in c]


@pytest.mark.parametrize("config, beam_size", [(c, "1") for c in CONFIGS] + NMT_BEAM_CASES)
def test_a_padded_batch_predicts_as_each_instance_alone(config, beam_size, monkeypatch):
    """Issue 16: every model, through AllenNLP's check (tolerance 1e-6; losses are skipped there); NMT greedy and
    with beam 5."""
    monkeypatch.setenv("BEAM_SIZE", beam_size)
    built = build_config_model(config)
    if "iwslt14" in config:
        assert built.model._decoder._beam_search.beam_size == int(beam_size)
    case = _ConsistencyCase()
    case.model, case.instances, case.vocab = built.model, built.instances, built.vocab
    for instance in case.instances:
        instance.index_fields(built.vocab)
    case.ensure_batch_predictions_are_consistent(keys_to_ignore=("batch_weight",))  # language_model: a count
