import logging
from typing import List

import numpy
from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor
from allennlp_models.pair_classification.predictors.textual_entailment import TextualEntailmentPredictor

logger = logging.getLogger(__name__)


@Predictor.register("entailment_pairs")
class EntailmentPairsPredictor(TextualEntailmentPredictor):
    """
    `allennlp predict` for sentence-pair models (the default predictor of `rte_attention`). Each input line is
    either `{"premise": ..., "hypothesis": ...}` (allennlp-models' `textual_entailment` format) or an SNLI record
    (`{"sentence1": ..., "sentence2": ..., "sentence1_binary_parse": ..., ...}`), so the SNLI files themselves can
    be given to `allennlp predict`. Binary parses are passed on when present (readers with `parse_trees` need
    them). The output is the model's (human-readable) output: `label`, `label_probs`, and attention weights
    when the model produces them.

    Internals grow with the square of the input (the NSE keys of a T-token premise are T x T; a 3,000-token
    premise's `premise_keys` alone is 9M numbers, over 200 MB of JSON). Any output array with more than
    `max_internal_entries` numbers is therefore left out of the prediction, and `dropped_internals` gives its key and
    shape, so the output stays proportional to the input. Sentences of SNLI's lengths are far below the default.
    Raise it with `--predictor-args '{"max_internal_entries": 10000000}'` to keep everything.

    Registered as a `Predictor` with name "entailment_pairs".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    max_internal_entries : `int`, optional (default = `100000`)
        The largest array (in numbers) a prediction keeps; about 1 MB of JSON.
    """

    def __init__(
        self, model: Model, dataset_reader: DatasetReader, frozen: bool = True, max_internal_entries: int = 100_000
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._max_internal_entries = max_internal_entries

    def predict_instance(self, instance: Instance) -> JsonDict:
        self._dataset_reader.apply_token_indexers(instance)
        return sanitize(self._bounded(self._model.forward_on_instance(instance)))

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        return [sanitize(self._bounded(output)) for output in self._model.forward_on_instances(instances)]

    def _bounded(self, output: dict) -> dict:
        """Leaves out arrays (of two or more axes) larger than `max_internal_entries`, before they become JSON."""
        dropped = {}
        for key, value in list(output.items()):
            shape = tuple(getattr(value, "shape", ()))  # numpy arrays, or tensors the model trimmed per instance
            if len(shape) >= 2 and int(numpy.prod(shape)) > self._max_internal_entries:
                dropped[key] = list(shape)
                del output[key]
        if dropped:
            logger.warning("entailment_pairs: left out internals larger than max_internal_entries=%d: %s",
                           self._max_internal_entries, dropped)
            output["dropped_internals"] = dropped
        return output

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        premise = json_dict.get("premise", json_dict.get("sentence1"))
        hypothesis = json_dict.get("hypothesis", json_dict.get("sentence2"))
        if premise is None or hypothesis is None:
            raise ConfigurationError(
                f"entailment_pairs: each input needs 'premise' and 'hypothesis' (or SNLI's 'sentence1' and "
                f"'sentence2'); got keys {sorted(json_dict)}"
            )
        parses = {}
        if "sentence1_binary_parse" in json_dict and "sentence2_binary_parse" in json_dict:
            parses = {
                "premise_binary_parse": json_dict["sentence1_binary_parse"],
                "hypothesis_binary_parse": json_dict["sentence2_binary_parse"],
            }
        if parses and getattr(self._dataset_reader, "parse_trees", False):
            return self._dataset_reader.text_to_instance(premise, hypothesis, **parses)
        return self._dataset_reader.text_to_instance(premise, hypothesis)
