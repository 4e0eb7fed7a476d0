"""compat.bfloat16_tiny_value: masked log-softmaxes work in bfloat16 (CPU autocast)."""
import torch


def test_bfloat16_has_a_tiny_value_for_masked_softmaxes_under_cpu_autocast():
    from allennlp.nn import util

    assert util.tiny_value_of_dtype(torch.bfloat16) == util.tiny_value_of_dtype(torch.float32)
    assert util.tiny_value_of_dtype(torch.half) == 1e-4  # unchanged
    logits = torch.randn(2, 5, dtype=torch.bfloat16)
    mask = torch.tensor([[True, True, False, True, True], [True] * 5])
    assert torch.isfinite(util.masked_log_softmax(logits, mask)[mask]).all()
