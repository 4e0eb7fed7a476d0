import logging
from typing import Any, Dict, List

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model

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


class BoundedOutputs:
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
