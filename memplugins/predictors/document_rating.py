from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor

from memplugins.predictors.bounded import BoundedOutputs
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

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        document = json_dict.get("sentences", json_dict.get("text"))
        if not document:
            raise ConfigurationError(f"document_rating: each input needs 'text' or 'sentences'; got {sorted(json_dict)}")
        return self._dataset_reader.text_to_instance(document)
