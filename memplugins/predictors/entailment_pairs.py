from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor
from allennlp_models.pair_classification.predictors.textual_entailment import TextualEntailmentPredictor


@Predictor.register("entailment_pairs")
class EntailmentPairsPredictor(TextualEntailmentPredictor):
    """
    `allennlp predict` for sentence-pair models (the default predictor of `rte_attention`). Each input line is
    either `{"premise": ..., "hypothesis": ...}` (allennlp-models' `textual_entailment` format) or an SNLI record
    (`{"sentence1": ..., "sentence2": ..., "sentence1_binary_parse": ..., ...}`), so the SNLI files themselves can
    be given to `allennlp predict`. Binary parses are passed on when present (readers with `parse_trees` need
    them). The output is the model's (human-readable) output: `label`, `label_probs`, and attention weights
    when the model produces them.

    Registered as a `Predictor` with name "entailment_pairs".
    """

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
