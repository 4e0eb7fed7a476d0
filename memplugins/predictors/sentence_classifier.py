from typing import Any, Dict, List, Tuple

import numpy
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor
from allennlp.predictors.text_classifier import TextClassifierPredictor

from memplugins.fields.binary_tree_field import BinaryTree, BinaryTreeField
from memplugins.predictors.bounded import NotesTruncation
from memplugins.predictors.tree_inputs import match_trees_to_tokens
from memplugins.predictors.inputs import InvalidInputError, JsonObjectLines, input_text


@Predictor.register("sentence_classifier")
class SentenceClassifierPredictor(NotesTruncation, JsonObjectLines, TextClassifierPredictor):
    """
    `allennlp predict` and AllenNLP's interpreters for our sentence classifiers (the default predictor of
    `tree_classifier` and `iram_classifier`): allennlp-models' `text_classifier` with its input checked (a
    `{"sentence": "..."}` object with non-empty, encodable text; `memplugins.predictors.inputs`), and labelled instances
    that fit each model. `text_classifier` adds a `label` field, which `iram_classifier` takes; a `tree_classifier`
    is supervised at the tree's nodes instead, so there the predicted class becomes the root's label (the other
    nodes unlabelled): the loss the interpreters differentiate is the root prediction's, as for a flat classifier.

    A sentence of more than `max_tokens` tokens is refused (the IRAM's cost grows with the square of the length;
    readers with their own `max_tokens`, such as `sst_trees`, cut before this is reached).

    Registered as a `Predictor` with name "sentence_classifier".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    max_tokens : `int`, optional (default = `1000`)
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, frozen: bool = True, max_tokens: int = 1000) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._max_tokens = max_tokens

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentence = input_text(json_dict, ("sentence",), "sentence_classifier")
        try:
            instance = super()._json_to_instance({"sentence": sentence})
        except ValueError as error:  # the reader's: e.g. a malformed tree
            raise InvalidInputError(f"sentence_classifier: {error}") from None
        if len(instance["tokens"]) > self._max_tokens:
            raise InvalidInputError(f"sentence_classifier: the sentence has {len(instance['tokens'])} tokens; at most "
                                    f"max_tokens={self._max_tokens} (--predictor-args to raise it)")
        return instance

    def get_gradients(self, instances: List[Instance]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """As `Predictor.get_gradients`, after `_match_tree_to_tokens` (an attacker may have removed tokens)."""
        for instance in instances:
            self._match_tree_to_tokens(instance)
        return super().get_gradients(instances)

    def _match_tree_to_tokens(self, instance: Instance) -> None:
        """InputReduction deletes tokens from `tokens` and leaves the tree: the tree becomes the parse restricted to
        the remaining words (`tree_inputs`), keeping the root's label."""
        if match_trees_to_tokens(instance, [("tokens", "tree")], self._model.vocab) and "metadata" in instance.fields:
            tree = instance["tree"].tree
            instance["metadata"].metadata.update(tokens=list(tree.leaves), tree=tree)

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        if "tree" not in instance.fields:
            return super().predictions_to_labeled_instances(instance, outputs)
        new_instance = instance.duplicate()
        tree: BinaryTree = new_instance["tree"].tree
        label = self._model.vocab.get_token_from_index(int(numpy.argmax(outputs["probs"])), "labels")
        labels = [None] * (len(tree.leaves) + len(tree.children) - 1) + [label]
        field = BinaryTreeField(BinaryTree(tree.leaves, tree.children, labels))
        field.index(self._model.vocab)  # (the duplicate counts as indexed: a batch would not index a new field)
        new_instance.fields["tree"] = field
        return [new_instance]
