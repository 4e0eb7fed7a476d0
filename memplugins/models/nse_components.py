"""
NSE encoders as model components (issue 94): the pair models (`nse_pair_classifier`, `answer_selection`) take their
`nse` encoders as `Lazy[Seq2SeqEncoder]` config blocks, built inside the model's constructor at the point where the
0.1 form built them from flags, so both forms draw the same initial weights in the same order (and an archive of
either form loads). `input_size` defaults to the embedder's output size.
"""
from typing import Any, Dict, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.common.lazy import Lazy

from memplugins.encoders.nse import NseEncoder

VARIANTS = ("nse", "mma_nse", "mma_nse_attention")


def nse_component(encoder: Any, input_size: int, name: str) -> NseEncoder:
    """`encoder` (a `Lazy` config block, or an `NseEncoder` given in Python) as an `NseEncoder` over inputs of
    `input_size` features."""
    if isinstance(encoder, Lazy):
        encoder = encoder.construct(input_size=input_size)
    if not isinstance(encoder, NseEncoder):
        raise ConfigurationError(f"{name} must be an `nse` encoder (the model reads its memory and keys), got "
                                 f"{type(encoder).__name__}")
    if encoder.get_input_dim() != input_size:
        raise ConfigurationError(f"{name}: input_size is {encoder.get_input_dim()}, but the embedder gives "
                                 f"{input_size} features")
    return encoder


def lazy_nse(**options) -> Lazy:
    """A `Lazy` NSE built from keyword arguments (the 0.1 form's flags)."""
    return Lazy(lambda input_size: NseEncoder(input_size, **options))


def flag_encoders(hidden_size: Optional[int], variant: str, options: Dict[str, Any], write_extra_memories: bool,
                  compose: str) -> Tuple[Lazy, Optional[Lazy], bool]:
    """`nse_pair_classifier`'s 0.1 form: (premise encoder, hypothesis encoder or None for a shared one, whether the
    premise is blended by attention) from its flags."""
    if hidden_size is None:
        raise ConfigurationError("nse_pair_classifier: give premise_encoder (an `nse`), or the 0.1 form's hidden_size")
    if compose not in ("relu", "linear_wide"):
        raise ConfigurationError(f"nse_pair_classifier: compose must be 'relu' or 'linear_wide', got {compose!r}")
    if variant not in VARIANTS:
        raise ConfigurationError(f"nse_pair_classifier: variant must be one of {VARIANTS}, got {variant!r}")

    def compose_options(num_extra: int) -> dict:
        if compose == "relu":
            return {}
        return {"compose_size": (2 + num_extra) * hidden_size, "compose_activation": "linear"}

    premise = lazy_nse(hidden_size=hidden_size, **options, **compose_options(0))
    if variant == "nse":
        return premise, None, False
    hypothesis = lazy_nse(hidden_size=hidden_size, num_extra_memories=1, write_extra_memories=write_extra_memories,
                          **options, **compose_options(1))
    return premise, hypothesis, variant == "mma_nse_attention"
