"""The checks every encoder makes of its sizes at construction and of its inputs at the first batch, so that a
wrong config fails with a message that names the setting (not a `ZeroDivisionError` or a shape error deep inside)."""
import math

import torch
from allennlp.common.checks import ConfigurationError


def check_sizes(encoder: str, **sizes) -> None:
    """Each given size (None: not given) must be a positive whole number."""
    for name, value in sizes.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ConfigurationError(f"{encoder}: {name} must be a positive whole number, got {value!r}")


def check_finite_or_none(owner: str, name: str, value) -> None:
    """A number option that `None` turns off (e.g. `recency_start`) must otherwise be finite: an inf or NaN start
    would make every loss NaN at the first step."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                              or not math.isfinite(value)):
        raise ConfigurationError(f"{owner}: {name} must be a finite number or null, not {value!r}")


def check_dropout(encoder: str, dropout: float) -> None:
    if not 0 <= dropout < 1:
        raise ConfigurationError(f"{encoder}: dropout must be in [0, 1), got {dropout!r}")


def check_inputs(encoder: str, inputs: torch.Tensor, input_size: int) -> None:
    """`inputs` must be `(batch, tokens, input_size)`: the size the encoder was built for."""
    if inputs.dim() != 3 or inputs.size(-1) != input_size:
        raise ConfigurationError(
            f"{encoder} was built for input_size {input_size}, but its inputs have shape {tuple(inputs.shape)} "
            f"({inputs.size(-1)} features per token): set the encoder's input size to what feeds it (e.g. the text "
            "field embedder's output size)"
        )
