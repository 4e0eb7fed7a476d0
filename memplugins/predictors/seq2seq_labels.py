"""
AllenNLP's interpreters and attackers for sequence-to-sequence models (our NMT configs use allennlp-models'
`composed_seq2seq`, whose default predictor is allennlp-models' `seq2seq`). That predictor has no
`predictions_to_labeled_instances`, which every saliency interpreter and attacker calls to turn a prediction into a
target to differentiate, so interpreting a translation model failed. Added here: the labelled instance is the input
with `target_tokens` = the predicted translation (between the reader's start and end symbols), so the gradients
are those of the predicted translation's likelihood with respect to the source words (its input is checked by
`memplugins.predictors.checked_inputs`). Test: `tests/predictors/interpret_test.py`.
"""
from typing import Dict, List

import numpy
from allennlp.common.util import END_SYMBOL, START_SYMBOL
from allennlp.data import Instance, Token
from allennlp.data.fields import TextField
from allennlp_models.generation.predictors.seq2seq import Seq2SeqPredictor

from memplugins.compat.patching import PATCHED


def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
    reader = self._dataset_reader
    tokens = [Token(token) for token in outputs["predicted_tokens"]]
    start = reader._start_token or Token(START_SYMBOL)
    end = reader._end_token or Token(END_SYMBOL)
    if getattr(reader, "_target_add_start_token", True):
        tokens = [start] + tokens
    if getattr(reader, "_target_add_end_token", True):
        tokens = tokens + [end]
    new_instance = instance.duplicate()
    new_instance.add_field("target_tokens", TextField(tokens, reader._target_token_indexers), self._model.vocab)
    return [new_instance]


def apply() -> None:
    if "predictions_to_labeled_instances" not in vars(Seq2SeqPredictor):
        setattr(predictions_to_labeled_instances, PATCHED, None)
        Seq2SeqPredictor.predictions_to_labeled_instances = predictions_to_labeled_instances
