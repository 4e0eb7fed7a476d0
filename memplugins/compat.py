"""
Fixes for running AllenNLP 2.10.1 on torch 2.x, applied once when `memplugins` is imported.

`allennlp train ... --include-package memplugins` (or `.allennlp_plugins`) imports this package after AllenNLP's
own modules and before the command runs, so the patches below are in place for every command. Nothing in
site-packages is edited. Each fix is idempotent and covered by a test that fails without it.

1. `reduce_on_plateau`: AllenNLP passes `verbose=` to `torch.optim.lr_scheduler.ReduceLROnPlateau`, an argument
   torch 2.x removed (`TypeError: ... unexpected keyword argument 'verbose'`). We replace the wrapper's
   `__init__` with one that keeps the same signature (so configs that set `verbose` still parse) and logs LR
   reductions itself when `verbose` is true.
2. `torch.load` defaults to `weights_only=True` since torch 2.6, and AllenNLP's training-state checkpoints hold
   numpy scalars (metrics, the `cosine` scheduler's state), so `allennlp train --recover` fails with
   `UnpicklingError: Weights only load failed ... numpy._core.multiarray.scalar`. We allow-list exactly the numpy
   types such checkpoints contain with `torch.serialization.add_safe_globals`; arbitrary pickles stay refused.
3. Defaults for the `std.extVar` variables of our shipped configs (`CONFIG_DEFAULTS`), which jsonnet cannot express.
4. Offline spaCy: AllenNLP's `get_spacy_model` falls back to spaCy's rule-based tokenizer instead of downloading,
   and fails with a clear message when annotations that need a trained model are requested.
5. `allennlp.nn.util.tiny_value_of_dtype` knows float16 but not bfloat16 (`TypeError: Does not support dtype
   torch.bfloat16`), so sequence losses and masked log-softmaxes fail under CPU autocast (`torch.autocast("cpu")`
   computes in bfloat16). bfloat16 has float32's exponent range, so it gets float32's value, 1e-13.
6. `CnnEncoder` (the character CNN) masks by adding `min_value_of_dtype(activations.dtype)` and then zeroes the
   pooled values equal to that sentinel. Under autocast the activations are float16 / bfloat16 while the added
   mask is float32, so the sum is float32 and never equals the sentinel: padding tokens pool to about -3e38 (or
   -65504), which overflows the next layer to inf and the loss to NaN. Under autocast we run it in float32.
7. Crash-safe checkpoints and exact resume after a kill (atomic writes, complete checkpoints only, best.th relinked
   on recover, random-number states saved and restored); details at the fix below.
Tests: `tests/test_compat.py` (1-3, 5, 6), `tests/test_spacy_offline.py` (4), `tests/recover_test.py` (7, slow).
"""
import contextvars
import logging
import sys
from typing import List, Optional, Union

import numpy
import spacy
import torch
from torch.optim import Optimizer

from allennlp.common import params as _params
from allennlp.common import util as _util
from allennlp.common.checks import ConfigurationError
from allennlp.nn import util as _nn_util
from allennlp.modules.seq2vec_encoders.cnn_encoder import CnnEncoder
from allennlp.data.tokenizers import spacy_tokenizer as _spacy_tokenizer
from allennlp.training.learning_rate_schedulers.pytorch_lr_schedulers import ReduceOnPlateauLearningRateScheduler

from memplugins.modules.autocast import autocast_disabled, autocast_enabled

logger = logging.getLogger(__name__)


def _rebind_everywhere(name: str, original, replacement) -> None:
    """Replaces `original` by `replacement` in every loaded module that bound it as `name` (its own module and every
    `from ... import name`)."""
    for module in list(sys.modules.values()):
        if getattr(module, name, None) is original:
            setattr(module, name, replacement)


def _reduce_on_plateau_init(
    self,
    optimizer: Optimizer,
    mode: str = "min",
    factor: float = 0.1,
    patience: int = 10,
    verbose: bool = False,
    threshold_mode: str = "rel",
    threshold: float = 1e-4,
    cooldown: int = 0,
    min_lr: Union[float, List[float]] = 0,
    eps: float = 1e-8,
) -> None:
    lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer=optimizer,
        mode=mode,
        factor=factor,
        patience=patience,
        threshold_mode=threshold_mode,
        threshold=threshold,
        cooldown=cooldown,
        min_lr=min_lr,
        eps=eps,
    )
    super(ReduceOnPlateauLearningRateScheduler, self).__init__(lr_scheduler)
    self._memplugins_verbose = verbose


def _reduce_on_plateau_step(self, metric: float = None) -> None:
    before = [group["lr"] for group in self.lr_scheduler.optimizer.param_groups]
    _original_step(self, metric)
    if self._memplugins_verbose:
        after = [group["lr"] for group in self.lr_scheduler.optimizer.param_groups]
        for index, (old, new) in enumerate(zip(before, after)):
            if new != old:
                logger.info("reduce_on_plateau: learning rate of group %d reduced from %.4e to %.4e", index, old, new)


def _numpy_checkpoint_globals() -> list:
    """The numpy objects a pickled numpy scalar / small array / dtype refers to."""
    core = getattr(numpy, "_core", None) or numpy.core  # numpy 2 renamed numpy.core to numpy._core
    safe = [core.multiarray.scalar, core.multiarray._reconstruct, numpy.ndarray, numpy.dtype]
    # numpy >= 1.25 pickles dtypes by their class (numpy.dtypes.Float64DType, ...)
    dtypes = getattr(numpy, "dtypes", None)
    if dtypes is not None:
        safe.extend(
            getattr(dtypes, name) for name in dir(dtypes) if name.endswith("DType") and isinstance(getattr(dtypes, name), type)
        )
    return safe


_original_step = ReduceOnPlateauLearningRateScheduler.step
if not getattr(ReduceOnPlateauLearningRateScheduler, "_memplugins_patched", False):
    ReduceOnPlateauLearningRateScheduler.__init__ = _reduce_on_plateau_init
    ReduceOnPlateauLearningRateScheduler.step = _reduce_on_plateau_step
    ReduceOnPlateauLearningRateScheduler._memplugins_patched = True

if hasattr(torch.serialization, "add_safe_globals"):
    torch.serialization.add_safe_globals(_numpy_checkpoint_globals())


# 3. Defaults for the `std.extVar` variables of our shipped configs. Jsonnet has no "extVar with default" and
#    AllenNLP passes exactly the environment as ext vars, so an unset variable is an error. We wrap AllenNLP's
#    `_environment_variables` so that each documented variable below falls back to the small real sample that the
#    repository ships under fixtures/ (paths relative to the repository root, where the configs are run from).
#    A variable set in the environment always wins. The sample paths are made absolute against the checkout that
#    holds this package (an editable install or a clone), so the configs run from any working directory; without a
#    fixtures/ folder beside the package (a plain `pip install`) they stay relative to the working directory.
CONFIG_DEFAULTS = {
    "SNLI_TRAIN": "fixtures/snli/snli_1.0_dev_sample_train.jsonl",
    "SNLI_VALIDATION": "fixtures/snli/snli_1.0_dev_sample_validation.jsonl",
    "GLOVE_PATH": "fixtures/glove/glove.6B.50d.snli_sample.txt.gz",
    "EMBEDDING_DIM": "50",
    "PTB_TRAIN": "fixtures/ptb_format/train.txt",
    "PTB_VALIDATION": "fixtures/ptb_format/valid.txt",
    "SST_TRAIN": "fixtures/sst/dev_sample.txt",
    "SST_VALIDATION": "fixtures/sst/dev_sample.txt",
    "SST_GRANULARITY": "5-class",
    "WIKIQA_TRAIN": "fixtures/wikiqa/WikiQA-train.sample.txt",
    "WIKIQA_VALIDATION": "fixtures/wikiqa/WikiQA-dev.sample.tsv",
    "LSTMN_LAYERS": "1",
    "LM_DROPOUT": "0.5",
    "IRAM_PENALTY": "0.0003",
    "IWSLT_TRAIN": "fixtures/iwslt14/sample.de-en",
    "IWSLT_VALIDATION": "fixtures/iwslt14/sample.de-en",
    "BEAM_SIZE": "1",
    "YELP_TRAIN": "fixtures/yelp13_format/sample.ss",
    "YELP_VALIDATION": "fixtures/yelp13_format/sample.ss",
    "NUM_EPOCHS": "10",
    "CUDA_DEVICE": "-1",
}

_CHECKOUT = __import__("pathlib").Path(__file__).resolve().parent.parent
if (_CHECKOUT / "fixtures").is_dir():
    CONFIG_DEFAULTS = {
        name: str(_CHECKOUT / value) if value.startswith("fixtures/") else value
        for name, value in CONFIG_DEFAULTS.items()
    }

if not getattr(_params._environment_variables, "_memplugins_patched", False):
    _original_environment_variables = _params._environment_variables

    def _environment_variables_with_defaults():
        return {**CONFIG_DEFAULTS, **_original_environment_variables()}

    _environment_variables_with_defaults._memplugins_patched = True
    _params._environment_variables = _environment_variables_with_defaults


# 4. Offline spaCy. AllenNLP's `get_spacy_model` downloads a missing spaCy model (`en_core_web_sm` by default), which
#    dies offline with a ConnectionError about `compatibility.json`. When only tokenization is needed, a trained
#    pipeline tokenizes with exactly the rules `spacy.blank(lang)` has, so we fall back to that and warn once. When
#    POS tags, a parse or entities are really requested, we fail with a message naming the model and how to install
#    it; nothing ever goes to the network. "Requested" POS tags means `SpacyTokenizer(pos_tags=True)` set explicitly:
#    the parameter defaults to True, and readers such as `snli` rely on that default without using the tags.
_pos_tags_required = contextvars.ContextVar("memplugins_pos_tags_required", default=False)
_warned_fallbacks: set = set()


def _blank_language(spacy_model_name: str) -> str:
    language = spacy_model_name.split("_", 1)[0]
    try:
        spacy.util.get_lang_class(language)
    except Exception:
        raise ConfigurationError(
            f"spaCy model {spacy_model_name!r} is not installed, and {language!r} is not a language spaCy has "
            f"tokenizer rules for. Install the model (`python -m spacy download {spacy_model_name}`)."
        ) from None
    return language


def _missing_model_error(spacy_model_name: str, needed: List[str]) -> ConfigurationError:
    return ConfigurationError(
        f"spaCy model {spacy_model_name!r} is not installed, but {' and '.join(needed)} "
        f"{'was' if len(needed) == 1 else 'were'} requested, which only a trained model provides (memplugins never "
        f"downloads). Install it where a network is available: `python -m spacy download {spacy_model_name}` "
        f"(or `pip install` its wheel), or drop the request to tokenize with spaCy's rule-based tokenizer."
    )


_fallback_options: set = set()  # cache keys of LOADED_SPACY_MODELS that hold a spacy.blank stand-in


def get_spacy_model_offline(spacy_model_name: str, pos_tags: bool = True, parse: bool = False, ner: bool = False):
    options = (spacy_model_name, pos_tags, parse, ner)
    needed = [what for what, wanted in (("POS tagging", _pos_tags_required.get()), ("a dependency parse", parse),
                                        ("named entities", ner)) if wanted]
    if options in _util.LOADED_SPACY_MODELS:
        if options in _fallback_options and needed:
            raise _missing_model_error(spacy_model_name, needed)
        return _util.LOADED_SPACY_MODELS[options]
    disable = ["vectors", "textcat"] + [
        pipe for pipe, wanted in (("tagger", pos_tags), ("parser", parse), ("ner", ner)) if not wanted
    ]
    try:
        model = spacy.load(spacy_model_name, disable=disable)
    except OSError:
        if needed:
            raise _missing_model_error(spacy_model_name, needed) from None
        language = _blank_language(spacy_model_name)
        if spacy_model_name not in _warned_fallbacks:
            _warned_fallbacks.add(spacy_model_name)
            logger.warning(
                "spaCy model %r is not installed; tokenizing with spaCy's rule-based %r tokenizer "
                "(spacy.blank(%r)), which splits text as the model's tokenizer does. Tokens carry no POS tags, "
                "lemmas, parses or entities. memplugins does not download models.",
                spacy_model_name, language, language,
            )
        model = spacy.blank(language)
        _fallback_options.add(options)
    _util.LOADED_SPACY_MODELS[options] = model
    return model


_original_spacy_tokenizer_init = _spacy_tokenizer.SpacyTokenizer.__init__


def _spacy_tokenizer_init(
    self,
    language: str = "en_core_web_sm",
    pos_tags: Optional[bool] = None,
    parse: bool = False,
    ner: bool = False,
    keep_spacy_tokens: bool = False,
    split_on_spaces: bool = False,
    start_tokens: Optional[List[str]] = None,
    end_tokens: Optional[List[str]] = None,
) -> None:
    # `pos_tags=None` is "not given": the original default (True) applies, but the tags are not required.
    token = _pos_tags_required.set(bool(pos_tags))
    try:
        _original_spacy_tokenizer_init(
            self, language, True if pos_tags is None else pos_tags, parse, ner, keep_spacy_tokens, split_on_spaces,
            start_tokens, end_tokens,
        )
    finally:
        _pos_tags_required.reset(token)


if not getattr(_util.get_spacy_model, "_memplugins_patched", False):
    _original_get_spacy_model = _util.get_spacy_model
    get_spacy_model_offline._memplugins_patched = True
    # `from allennlp.common.util import get_spacy_model` bound the function in several modules: rebind them all.
    _rebind_everywhere("get_spacy_model", _original_get_spacy_model, get_spacy_model_offline)
    _spacy_tokenizer.SpacyTokenizer.__init__ = _spacy_tokenizer_init


# 5. bfloat16 in allennlp.nn.util.tiny_value_of_dtype (CPU autocast).
if not getattr(_nn_util.tiny_value_of_dtype, "_memplugins_patched", False):
    _original_tiny_value_of_dtype = _nn_util.tiny_value_of_dtype

    def tiny_value_of_dtype(dtype: torch.dtype):
        if dtype == torch.bfloat16:
            return 1e-13  # float32's exponent range
        return _original_tiny_value_of_dtype(dtype)

    tiny_value_of_dtype._memplugins_patched = True
    _rebind_everywhere("tiny_value_of_dtype", _original_tiny_value_of_dtype, tiny_value_of_dtype)


# 6. CnnEncoder in float32 under autocast.
if not getattr(CnnEncoder.forward, "_memplugins_patched", False):
    _original_cnn_forward = CnnEncoder.forward

    def _cnn_encoder_forward(self, tokens: torch.Tensor, mask: torch.BoolTensor):
        if not autocast_enabled():
            return _original_cnn_forward(self, tokens, mask)
        with autocast_disabled():
            return _original_cnn_forward(self, tokens.float(), mask)

    _cnn_encoder_forward._memplugins_patched = True
    CnnEncoder.forward = _cnn_encoder_forward


# 7. Crash-safe checkpoints, and resumed training equal to uninterrupted training. AllenNLP 2.10 writes every
#    checkpoint, best.th and model.tar.gz in place, and its training state holds no random-number state:
#    (a) a kill while `torch.save` writes `model_state_eN_b0.th` leaves a truncated file that `--recover` picks as the
#        latest checkpoint and fails to load; a kill between the model-state and training-state files leaves a
#        checkpoint without its training state. Each file is now written to `<name>.partial` and renamed into place
#        (atomic on POSIX), and only checkpoints with both files count.
#    (b) best.th is refreshed after the checkpoint: a kill in between leaves best.th from an older epoch (or none),
#        while the restored metric tracker says the checkpoint is the best, so the recovered run ends on the wrong
#        weights. On recover from an end-of-epoch checkpoint that is the best so far, best.th is relinked to it.
#    (c) a resumed run reseeds every generator from the config, so its dropout masks (torch) and its batch order
#        (Python's `random`, which the `bucket` sampler uses for the training and the validation loader) differ
#        from the uninterrupted run's. The generator states (Python, numpy, torch CPU and CUDA) are now saved in the
#        training state and restored when the first epoch that really trains begins, after AllenNLP has replayed
#        the data loader through the completed epochs. For a mid-epoch checkpoint, Python's state is the one at
#        the start of that epoch, whose shuffle the replay repeats before skipping the completed batches.
#    (d) model.tar.gz is written to `model.tar.gz.partial` and renamed, so a kill while archiving never leaves a
#        truncated archive that `allennlp predict` would be given.
#    Test: tests/recover_test.py (SIGKILL mid-epoch and during each checkpoint file's write; marked slow).
import os as _os
import random as _random
import types as _types

from allennlp.common.file_utils import hardlink_or_copy as _hardlink_or_copy
from allennlp.models import archival as _archival
from allennlp.training import checkpointer as _checkpointer
from allennlp.training import gradient_descent_trainer as _gdt

_RNG_STATE_KEY = "memplugins_rng_state"


def atomic_torch_save(obj, path, *args, **kwargs) -> None:
    """`torch.save` to `path` through `<path>.partial` and a rename, so `path` is always absent or complete."""
    if not isinstance(path, (str, _os.PathLike)):
        return torch.save(obj, path, *args, **kwargs)
    partial = f"{_os.fspath(path)}.partial"
    torch.save(obj, partial, *args, **kwargs)
    _os.replace(partial, path)


class _TorchWithAtomicSave(_types.ModuleType):
    """`torch` as seen by AllenNLP's checkpointer and trainer: everything is torch's, except `save`."""

    def __init__(self) -> None:
        super().__init__("torch")

    save = staticmethod(atomic_torch_save)

    def __getattr__(self, name):
        return getattr(torch, name)


def _random_state(python_state) -> dict:
    numpy_state = numpy.random.get_state()
    return {
        "python": python_state,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        # numpy's state as tensors and ints: weights_only torch.load accepts those without any allow-listing
        "numpy": (numpy_state[0], torch.from_numpy(numpy_state[1].astype(numpy.int64)), *numpy_state[2:]),
    }


def _set_random_state(state: dict) -> None:
    _random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(state["cuda"])
    name, keys, *rest = state["numpy"]
    numpy.random.set_state((name, keys.numpy().astype(numpy.uint32), *rest))


if not getattr(_checkpointer.Checkpointer, "_memplugins_patched", False):
    _checkpointer.torch = _TorchWithAtomicSave()
    _gdt.torch = _checkpointer.torch
    _original_find_all_checkpoints = _checkpointer.Checkpointer._find_all_checkpoints
    _original_load_checkpoint = _checkpointer.Checkpointer.load_checkpoint
    _original_get_checkpoint_state = _gdt.GradientDescentTrainer.get_checkpoint_state
    _original_maybe_restore_checkpoint = _gdt.GradientDescentTrainer._maybe_restore_checkpoint
    _original_train_epoch = _gdt.GradientDescentTrainer._train_epoch
    _original_archive_model = _archival.archive_model

    def _find_complete_checkpoints(self):
        return {
            point for point in _original_find_all_checkpoints(self)
            if _os.path.isfile(self._training_state_path(*point))
        }

    def _load_checkpoint_and_random_state(self):
        state = _original_load_checkpoint(self)
        if state is not None and _RNG_STATE_KEY in state[1]:
            self._memplugins_random_state = state[1].pop(_RNG_STATE_KEY)  # the trainer restores it, see below
        return state

    def _get_checkpoint_state_with_random_state(self):
        checkpoint = _original_get_checkpoint_state(self)
        if checkpoint is not None:
            mid_epoch = self._batches_in_epoch_completed > 0
            python_state = self._memplugins_epoch_start_random if mid_epoch else _random.getstate()
            checkpoint.trainer_state[_RNG_STATE_KEY] = _random_state(python_state)
        return checkpoint

    def _train_epoch_from_random_state(self, epoch: int):
        pending = getattr(self, "_memplugins_pending_random_state", None)
        if pending is not None and self._epochs_completed == self._start_after_epochs_completed:
            _set_random_state(pending)
            self._memplugins_pending_random_state = None
        self._memplugins_epoch_start_random = _random.getstate()
        return _original_train_epoch(self, epoch)

    def _maybe_restore_checkpoint_and_best(self) -> None:
        _original_maybe_restore_checkpoint(self)
        if self._checkpointer is not None:
            self._memplugins_pending_random_state = self._checkpointer.__dict__.pop("_memplugins_random_state", None)
        if (
            self._start_after_epochs_completed > 0
            and self._start_after_batches_in_epoch_completed == 0
            and self._validation_data_loader is not None
            and self._serialization_dir
            and self._primary
            and self._moving_average is None
            and self._metric_tracker.is_best_so_far()
        ):
            latest = self._checkpointer.find_latest_checkpoint()
            if latest is not None and not (self._ddp_wrapped_model is not None and self._ddp_wrapped_model.is_sharded):
                best = _os.path.join(self._serialization_dir, "best.th")
                if not (_os.path.exists(best) and _os.path.samefile(best, latest[0])):
                    partial = best + ".partial"
                    if _os.path.exists(partial):
                        _os.remove(partial)
                    _hardlink_or_copy(latest[0], partial)
                    _os.replace(partial, best)  # (a no-op if both were links to one file, hence the check above)
                self._best_model_filename = best

    def archive_model_atomically(serialization_dir, weights=_archival._DEFAULT_WEIGHTS, archive_path=None,
                                 include_in_archive=None) -> str:
        if archive_path is None:
            final = _os.path.join(serialization_dir, "model.tar.gz")
        elif _os.path.isdir(archive_path):
            final = _os.path.join(archive_path, "model.tar.gz")
        else:
            final = _os.fspath(archive_path)
        _original_archive_model(serialization_dir, weights, final + ".partial", include_in_archive)
        _os.replace(final + ".partial", final)
        return final

    _checkpointer.Checkpointer._find_all_checkpoints = _find_complete_checkpoints
    _checkpointer.Checkpointer.load_checkpoint = _load_checkpoint_and_random_state
    _gdt.GradientDescentTrainer.get_checkpoint_state = _get_checkpoint_state_with_random_state
    _gdt.GradientDescentTrainer._maybe_restore_checkpoint = _maybe_restore_checkpoint_and_best
    _gdt.GradientDescentTrainer._train_epoch = _train_epoch_from_random_state
    archive_model_atomically._memplugins_patched = True
    _rebind_everywhere("archive_model", _original_archive_model, archive_model_atomically)
    _checkpointer.Checkpointer._memplugins_patched = True
