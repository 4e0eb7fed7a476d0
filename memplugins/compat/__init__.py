"""
What AllenNLP 2.10.1 needs to run on Python 3.11 and torch 2.x, one module per concern, each applied by its
`apply()` from `memplugins/__init__.py` (through `apply()` below) before anything else is registered. Nothing in
site-packages is edited; every change goes through `patching.patch`, which is idempotent. `allennlp train ...
--include-package memplugins` (or `.allennlp_plugins`) imports memplugins after AllenNLP's own modules and before
the command runs, so the fixes are in place for every command.

* `reduce_on_plateau`: torch 2 removed the `verbose` argument AllenNLP passes.
* `checkpoint_globals`: torch >= 2.6 loads weights-only; AllenNLP's training states hold numpy scalars.
* `bfloat16_tiny_value`: AllenNLP's masked softmaxes have no tiny value for bfloat16 (CPU autocast).
* `cnn_encoder_autocast`: AllenNLP's character CNN lets padding through under autocast.
* `offline_spacy`: AllenNLP downloads spaCy models; offline, tokenization falls back to spaCy's rules.
* `optimizer_options`: AllenNLP's adam, adamw, adagrad and sgd take torch 2's `fused` and `foreach`.
* `config_defaults`: our configs' `std.extVar` variables default to the samples under `fixtures/`.

(Crash-safe, exact resume is a feature, not a fix: `memplugins.training.exact_resume`.)
"""
from memplugins.compat import (
    bfloat16_tiny_value, checkpoint_globals, cnn_encoder_autocast, config_defaults, offline_spacy, optimizer_options,
    reduce_on_plateau,
)
from memplugins.compat.config_defaults import CONFIG_DEFAULTS  # noqa: F401

FIXES = (reduce_on_plateau, checkpoint_globals, bfloat16_tiny_value, cnn_encoder_autocast, offline_spacy,
         optimizer_options, config_defaults)


def apply() -> None:
    for fix in FIXES:
        fix.apply()
