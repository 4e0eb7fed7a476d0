from typing import Dict, List

import numpy
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from memplugins.predictors.bounded import BoundedOutputs
from memplugins.predictors.inputs import InvalidInputError, input_text, input_texts
from memplugins.predictors.internals import EncoderInternals


@Predictor.register("document_rating")
class DocumentRatingPredictor(BoundedOutputs, Predictor):
    """
    `allennlp predict` for `hierarchical_classifier` (Yelp-style documents; its default predictor). Input lines:
    `{"text": "first sentence . <sssss> second sentence ."}` (the corpus format, sentences already tokenized), or
    `{"sentences": ["...", "..."]}`. Output: `label` (the rating), `probs`, and in `encoder_internals` the document
    encoder's sentence-level internals when it is an NSE or LSTMN (`keys` / `attention`, one row and column per
    sentence; `tokens` are the sentence numbers "0".."n-1"), bounded by `max_internal_entries`.

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
            return self._dataset_reader.text_to_instance(document)
        except ValueError as error:  # e.g. a text of sentence separators only
            raise InvalidInputError(f"document_rating: {error}") from None
