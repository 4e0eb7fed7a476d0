"""
Offline spaCy. AllenNLP's `get_spacy_model` downloads a missing spaCy model (`en_core_web_sm` by default), which
dies offline with a ConnectionError about `compatibility.json`. When only tokenization is needed, a trained pipeline
tokenizes with exactly the rules `spacy.blank(lang)` has, so we fall back to that and warn once. When POS tags, a
parse or entities are really requested, we fail with a message naming the model and how to install it; nothing
ever goes to the network. "Requested" POS tags means `SpacyTokenizer(pos_tags=True)` set explicitly: the parameter
defaults to True, and readers such as `snli` rely on that default without using the tags. Test:
`tests/compat/offline_spacy_test.py`.
"""
import contextvars
import logging
from typing import List, Optional

import spacy
from allennlp.common import util
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import spacy_tokenizer

from memplugins.compat.patching import patch

logger = logging.getLogger(__name__)

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
    if options in util.LOADED_SPACY_MODELS:
        if options in _fallback_options and needed:
            raise _missing_model_error(spacy_model_name, needed)
        return util.LOADED_SPACY_MODELS[options]
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
    util.LOADED_SPACY_MODELS[options] = model
    return model


def _spacy_tokenizer_init(original):
    def __init__(
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
            original(self, language, True if pos_tags is None else pos_tags, parse, ner, keep_spacy_tokens,
                     split_on_spaces, start_tokens, end_tokens)
        finally:
            _pos_tags_required.reset(token)

    return __init__


def apply() -> None:
    # `from allennlp.common.util import get_spacy_model` bound the function in several modules: rebind them all
    patch(util, "get_spacy_model", lambda original: get_spacy_model_offline, rebind=True)
    patch(spacy_tokenizer.SpacyTokenizer, "__init__", _spacy_tokenizer_init)
