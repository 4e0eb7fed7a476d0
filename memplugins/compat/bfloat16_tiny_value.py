"""
`allennlp.nn.util.tiny_value_of_dtype` knows float16 but not bfloat16 (`TypeError: Does not support dtype
torch.bfloat16`), so sequence losses and masked log-softmaxes fail under CPU autocast (bfloat16). bfloat16 has
float32's exponent range, so it gets float32's value, 1e-13. Test: `tests/compat/bfloat16_tiny_value_test.py`.
"""
import torch
from allennlp.nn import util

from memplugins.compat.patching import patch


def _tiny_value_of_dtype(original):
    def tiny_value_of_dtype(dtype: torch.dtype):
        return 1e-13 if dtype == torch.bfloat16 else original(dtype)

    return tiny_value_of_dtype


def apply() -> None:
    # `from allennlp.nn.util import tiny_value_of_dtype` bound it in other modules: rebind them all
    patch(util, "tiny_value_of_dtype", _tiny_value_of_dtype, rebind=True)
