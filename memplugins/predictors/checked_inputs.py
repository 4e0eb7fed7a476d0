"""
The inputs of the allennlp-models predictors that shipped configs use, checked as our own predictors' are
(`memplugins.predictors.inputs`): `text_classifier` (the default of `basic_classifier`: `sst_lstmn`, the SST NSE
configs) takes `sentence`, `seq2seq` (the default of `composed_seq2seq`: the IWSLT configs) takes `source`. A missing
key, a value that is not text, empty text or an unpaired surrogate is an `InvalidInputError` saying which key and
why, instead of a `KeyError` or spaCy's `ValueError` about a `NoneType`. Valid inputs go on unchanged. And when
the reader's `max_tokens` cut an input, the output says so under `truncated`, as our predictors' do
(`memplugins.predictors.bounded.NotesTruncation`). Tests: `tests/fuzz/`, `tests/commands/refusal_table_test.py`.
"""
from typing import List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.text_classifier import TextClassifierPredictor
from allennlp_models.generation.predictors.seq2seq import Seq2SeqPredictor

from memplugins.compat.patching import patch
from memplugins.predictors.bounded import predict_noting_cuts
from memplugins.predictors.inputs import input_object, input_text


def _checked(key: str, predictor: str):
    def make(original):
        def _json_to_instance(self, json_dict: JsonDict) -> Instance:
            checked = input_object(json_dict, predictor)
            return original(self, {**checked, key: input_text(checked, (key,), predictor)})

        return _json_to_instance

    return make


def _noting_cuts_of_batch(original):
    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return predict_noting_cuts(self, inputs)

    return predict_batch_json


def _noting_cuts_of_one(original):
    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return predict_noting_cuts(self, [inputs])[0]

    return predict_json


def apply() -> None:
    for predictor, key, name in ((TextClassifierPredictor, "sentence", "text_classifier"),
                                 (Seq2SeqPredictor, "source", "seq2seq")):
        patch(predictor, "_json_to_instance", _checked(key, name))
        patch(predictor, "predict_json", _noting_cuts_of_one)
        patch(predictor, "predict_batch_json", _noting_cuts_of_batch)
