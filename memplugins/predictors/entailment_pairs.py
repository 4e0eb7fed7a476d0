import logging
from typing import Any, Dict, List, Tuple

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor
from allennlp_models.pair_classification.predictors.textual_entailment import TextualEntailmentPredictor

from memplugins.predictors.bounded import BoundedOutputs
from memplugins.predictors.inputs import InvalidInputError, input_text
from memplugins.predictors.tree_inputs import match_trees_to_tokens

# the inverse of the parse reader's unescaping, for tokens that would break a bracketed parse
PTB_ESCAPE = {"(": "-LRB-", ")": "-RRB-"}

logger = logging.getLogger(__name__)


@Predictor.register("entailment_pairs")
class EntailmentPairsPredictor(BoundedOutputs, TextualEntailmentPredictor):
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

    A reader with `parse_trees` (`snli_tree_lstm`) needs binary parses; when an input has none, the predictor gives
    each sentence the right-branching tree over the reader's tokens, (w_1 (w_2 (... w_n))), the tree the tree LSTM
    uses when it is given none, and warns once: the model was trained on parses, so expect lower accuracy.

    Registered as a `Predictor` with name "entailment_pairs".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    max_internal_entries : `int`, optional (default = `100000`)
        The largest array (in numbers) a prediction keeps; about 1 MB of JSON.
    """

    _warned_no_parse = False

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        premise = input_text(json_dict, ("premise", "sentence1"), "entailment_pairs")
        hypothesis = input_text(json_dict, ("hypothesis", "sentence2"), "entailment_pairs")
        parses = {}
        if "sentence1_binary_parse" in json_dict and "sentence2_binary_parse" in json_dict:
            parses = {
                "premise_binary_parse": input_text(json_dict, ("sentence1_binary_parse",), "entailment_pairs"),
                "hypothesis_binary_parse": input_text(json_dict, ("sentence2_binary_parse",), "entailment_pairs"),
            }
        if getattr(self._dataset_reader, "parse_trees", False):
            if not parses:
                parses = {
                    "premise_binary_parse": self._right_branching_parse(premise),
                    "hypothesis_binary_parse": self._right_branching_parse(hypothesis),
                }
            try:
                return self._dataset_reader.text_to_instance(premise, hypothesis, **parses)
            except ValueError as error:  # a malformed parse
                raise InvalidInputError(f"entailment_pairs: {error}") from None
        return self._dataset_reader.text_to_instance(premise, hypothesis)

    def get_gradients(self, instances: List[Instance]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """As `Predictor.get_gradients`; a tree model's parses first follow any words an attacker deleted
        (`tree_inputs.match_trees_to_tokens`)."""
        for instance in instances:
            match_trees_to_tokens(instance, [("premise", "premise_tree"), ("hypothesis", "hypothesis_tree")],
                                  self._model.vocab)
        return super().get_gradients(instances)

    def _right_branching_parse(self, sentence: str) -> str:
        if not self._warned_no_parse:
            logger.warning("entailment_pairs: input without binary parses; using right-branching trees over the "
                           "tokens (the model was trained on parses: expect lower accuracy)")
            self._warned_no_parse = True
        words = [PTB_ESCAPE.get(token.text, token.text) for token in self._dataset_reader._tokenizer.tokenize(sentence)]
        if not words:
            raise InvalidInputError(f"entailment_pairs: no tokens in {sentence!r}")
        parse = words[-1]
        for word in reversed(words[:-1]):
            parse = f"( {word} {parse} )"
        return parse
