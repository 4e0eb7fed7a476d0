"""
A label the model has never seen (a rating of 6 in an evaluation file for a model trained on 1-5 stars) made
AllenNLP's `LabelField.index` raise a bare `KeyError: '6'` from the vocabulary. It is now a `ConfigurationError`
that names the label, the namespace and the labels the model knows. Test: `tests/readers/bad_values_test.py`.
"""
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.data.fields import LabelField

from memplugins.compat.patching import patch


def _index_naming_unseen_labels(original):
    def index(self, vocab: Vocabulary):
        try:
            return original(self, vocab)
        except KeyError:
            known = sorted(vocab.get_token_to_index_vocabulary(self._label_namespace))
            raise ConfigurationError(
                f"label {self.label!r} is not one the model was trained on (namespace {self._label_namespace!r}: "
                f"{', '.join(map(repr, known[:20]))}{', ...' if len(known) > 20 else ''})"
            ) from None

    return index


def apply() -> None:
    patch(LabelField, "index", _index_naming_unseen_labels)
