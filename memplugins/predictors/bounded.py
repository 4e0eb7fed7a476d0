import logging
from typing import Any, Dict, List

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model

from memplugins.predictors.inputs import JsonObjectLines
from memplugins.readers.truncation import take_cuts

logger = logging.getLogger(__name__)

DEFAULT_MAX_INTERNAL_ENTRIES = 100_000


def bound_output(output: Dict[str, Any], max_entries: int, predictor: str) -> Dict[str, Any]:
    """
    Leaves out of one prediction every array (two or more axes; also inside `encoder_internals`) with more than
    `max_entries` numbers, before it becomes JSON, and lists what was left out in `dropped_internals` (key: shape).
    Internals grow with the square of the input (an NSE's keys and an LSTMN's intra-attention are T x T), so this
    keeps `allennlp predict`'s output proportional to its input.
    """
    dropped = {}

    def visit(mapping: Dict[str, Any], prefix: str) -> None:
        for key, value in list(mapping.items()):
            if isinstance(value, dict):
                visit(value, f"{prefix}{key}.")
                continue
            shape = tuple(getattr(value, "shape", ()))  # numpy arrays, or tensors trimmed per instance
            if len(shape) >= 2 and int(numpy.prod(shape)) > max_entries:
                dropped[prefix + key] = list(shape)
                del mapping[key]

    visit(output, "")
    if dropped:
        logger.warning("%s: left out internals larger than max_internal_entries=%d: %s", predictor, max_entries, dropped)
        output["dropped_internals"] = dropped
    return output


def predict_noting_cuts(predictor, inputs: List[JsonDict]) -> List[JsonDict]:
    """`predictor.predict_batch_json(inputs)`, each output saying under `truncated` what the reader's limits cut of
    its input (`NotesTruncation`)."""
    instances, cuts = [], []
    for item in inputs:
        take_cuts(predictor._dataset_reader)  # anything left from reading a file is not this input's
        instances.append(predictor._json_to_instance(item))
        cuts.append(take_cuts(predictor._dataset_reader))
    outputs = predictor.predict_batch_instance(instances)
    return [note_cuts(predictor, output, cut) for output, cut in zip(outputs, cuts)]


def note_cuts(predictor, output: JsonDict, cuts: List[Dict[str, Any]]) -> JsonDict:
    """`output` with `truncated` = `cuts` when there are any; the first time, a warning in the log."""
    if cuts:
        output["truncated"] = cuts
        if not getattr(predictor, "_memplugins_warned_truncation", False):
            predictor._memplugins_warned_truncation = True
            first = cuts[0]
            logger.warning(
                "%s: %s=%d cut an input of %d tokens to %d (each output that was cut says so under 'truncated'; to "
                "keep whole inputs, override the reader's limit, e.g. --overrides '{\"dataset_reader.%s\": null}')",
                type(predictor).__name__, first["option"], first["limit"], first["length"], first["limit"],
                first["option"])
    return output


class NotesTruncation:
    """
    Mixin for a `Predictor` (listed before it): when the reader's `max_tokens` (or another `TruncationCount` limit,
    such as `max_sentences`) cut an input, its output says so under `truncated` (`[{"option": "max_tokens",
    "limit": 200, "length": 3000}]`: one entry per text cut, with its length before the cut), and the log says so
    once per predictor. (allennlp-models' `text_classifier` and `seq2seq` get the same from
    `memplugins.predictors.checked_inputs`.)
    """

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return predict_noting_cuts(self, [inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return predict_noting_cuts(self, inputs)

    def note_cuts(self, output: JsonDict, cuts: List[Dict[str, Any]]) -> JsonDict:
        return note_cuts(self, output, cuts)


class BoundedOutputs(NotesTruncation, JsonObjectLines):
    """
    Mixin for a `Predictor` (listed before it): takes `max_internal_entries`, and `predict_instance` /
    `predict_batch_instance` bound each output with `bound_output` and add the internals that `self._internals` (an
    `EncoderInternals`, or None) collected from our encoders inside the model.
    """

    _internals = None

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True,
                 max_internal_entries: int = DEFAULT_MAX_INTERNAL_ENTRIES) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._max_internal_entries = max_internal_entries

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        if self._internals is None:
            outputs = self._model.forward_on_instances(instances)
        else:
            with self._internals.collecting(instances) as collected:
                outputs = self._model.forward_on_instances(instances)
            for output, internals in zip(outputs, collected):
                if internals:
                    output["encoder_internals"] = internals
        name = type(self).__name__
        return [sanitize(bound_output(output, self._max_internal_entries, name)) for output in outputs]
