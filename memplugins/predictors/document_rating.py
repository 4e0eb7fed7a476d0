from typing import Any, Dict, List, Tuple

import numpy
import torch
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField, MetadataField, TensorField, TextField
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from memplugins.predictors.bounded import BoundedOutputs
from memplugins.predictors.inputs import InvalidInputError, input_text, input_texts
from memplugins.predictors.internals import EncoderInternals
from memplugins.predictors.tree_inputs import kept_positions


@Predictor.register("document_rating")
class DocumentRatingPredictor(BoundedOutputs, Predictor):
    """
    `allennlp predict` for `hierarchical_classifier` (Yelp-style documents; its default predictor). Input lines:
    `{"text": "first sentence . <sssss> second sentence ."}` (the corpus format, sentences already tokenized), or
    `{"sentences": ["...", "..."]}`. Output: `label` (the rating), `probs`, and in `encoder_internals` the document
    encoder's sentence-level internals when it is an NSE or LSTMN (`keys` / `attention`, one row and column per
    sentence; `tokens` are the sentence numbers "0".."n-1"), bounded by `max_internal_entries`.

    The model is given the document as its words in one `tokens` field with each word's sentence
    (`flat_document`; the same outputs as the reader's list of sentences), so AllenNLP's attackers work on it with
    their default field name: `InputReduction(predictor).attack_from_json({"text": ...})` removes words, `Hotflip`
    flips them; saliency is per word.

    Registered as a `Predictor` with name "document_rating".

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    max_internal_entries : `int`, optional (default = `100000`)
    frozen : `bool`, optional (default = `True`)
    """

    def __init__(self, model: Model, dataset_reader: DatasetReader, **kwargs) -> None:
        super().__init__(model, dataset_reader, **kwargs)
        self._internals = EncoderInternals(model)

    def predictions_to_labeled_instances(self, instance: Instance, outputs: Dict[str, numpy.ndarray]) -> List[Instance]:
        """For AllenNLP's interpreters: the document labelled with the predicted rating."""
        new_instance = instance.duplicate()
        rating = self._model.vocab.get_token_from_index(int(numpy.argmax(outputs["probs"])), "labels")
        new_instance.add_field("label", LabelField(rating), self._model.vocab)
        return [new_instance]

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if isinstance(json_dict, dict) and "sentences" in json_dict:
            document = input_texts(json_dict, "sentences", "document_rating")
        else:
            document = input_text(json_dict, ("text",), "document_rating")
        try:
            instance = self._dataset_reader.text_to_instance(document)
        except ValueError as error:  # e.g. a text of sentence separators only
            raise InvalidInputError(f"document_rating: {error}") from None
        return flat_document(instance)

    def get_gradients(self, instances: List[Instance]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """As `Predictor.get_gradients`, after each word's sentence follows any words an attacker deleted."""
        for instance in instances:
            words = [token.text for token in instance["tokens"].tokens]
            layout = instance["metadata"].metadata
            kept = range(len(words)) if len(words) == len(layout["words"]) else kept_positions(layout["words"], words)
            instance.fields["sentence_index"] = TensorField(
                torch.tensor([layout["sentence_index"][k] for k in kept], dtype=torch.long), padding_value=-1)
        return super().get_gradients(instances)


def flat_document(instance: Instance) -> Instance:
    """The reader's instance (a `ListField` of sentences) as the words of the document in one `tokens` field and
    each word's sentence in `sentence_index`, which `hierarchical_classifier` takes in place of `sentences` with
    the same outputs: AllenNLP's attackers edit one text field, by default the one named `tokens`, so the
    hierarchical classifier is attacked on its words without a field name. The metadata keeps the words and their
    sentences as they were, so that `get_gradients` can follow deletions."""
    sentences = instance["sentences"].field_list
    words = [token for sentence in sentences for token in sentence.tokens]
    index = [number for number, sentence in enumerate(sentences) for _ in sentence.tokens]
    metadata = dict(instance["metadata"].metadata, words=[token.text for token in words], sentence_index=index)
    fields = {"tokens": TextField(words, sentences[0]._token_indexers),
              "sentence_index": TensorField(torch.tensor(index, dtype=torch.long), padding_value=-1),
              "metadata": MetadataField(metadata)}
    if "label" in instance.fields:
        fields["label"] = instance["label"]
    return Instance(fields)
