"""
AllenNLP's `CnnEncoder` (the character CNN) under autocast: it masks by adding `min_value_of_dtype(activations.dtype)`
and then zeroes the pooled values equal to that sentinel. Under autocast the activations are float16 / bfloat16
while the added mask is float32, so the sum is float32 and never equals the sentinel: padding tokens pool to about
-3e38 (or -65504), which overflows the next layer to inf and the loss to NaN. Under autocast it runs in float32.
Test: `tests/compat/cnn_encoder_autocast_test.py`.
"""
import torch
from allennlp.modules.seq2vec_encoders.cnn_encoder import CnnEncoder

from memplugins.compat.patching import patch
from memplugins.modules.fast_path.autocast import autocast_disabled, autocast_enabled


def _forward(original):
    def forward(self, tokens: torch.Tensor, mask: torch.BoolTensor):
        if not autocast_enabled():
            return original(self, tokens, mask)
        with autocast_disabled():
            return original(self, tokens.float(), mask)

    return forward


def apply() -> None:
    patch(CnnEncoder, "forward", _forward)
