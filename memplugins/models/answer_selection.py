from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import FeedForward, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask
from allennlp.training.metrics import BooleanAccuracy

from memplugins.encoders.nse import NseEncoder
from memplugins.metrics.ranking import MapMrr
from memplugins.modules.pair_encoding import encode_nse_pair
from memplugins.modules.rte_attention import LastOutputAttention


@Model.register("answer_selection")
class AnswerSelection(Model):
    """
    Answer sentence selection with MMA-NSE attention (Munkhdalai and Yu 2017, section 4.2): an NSE encodes the
    candidate answer first; a second NSE encodes the question while reading (and writing) its own memory and the
    answer's final memory (eq. 7-15); the answer outputs h^a_t are blended by attention with respect to the final
    question state (Rocktäschel et al. 2016 eq. 7-9); [h_a; h_q; |h_a - h_q|; h_a * h_q] go through
    `classifier_feedforward` to one logit o^QA, and p(y = 1 | q, a) = sigmoid(o^QA) (eq. 16), trained with sigmoid
    cross-entropy. Metrics: MAP and MRR over questions (`map_mrr`; questions without a correct answer excluded)
    and accuracy of p > 0.5.

    Outputs: `logit`, `probability`, `loss`, and for inspection `answer_keys`, `question_keys`,
    `question_answer_keys` (each question step's key over the answer memory) and `answer_attention`.

    Registered as a `Model` with name "answer_selection".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        The paper: fixed 300d GloVe with a linear map to 512 (use the embedding's `projection_dim`).
    hidden_size : `int`
        The NSE size k.
    classifier_feedforward : `FeedForward`
        Input 4k; its output goes to a linear layer with one unit.
    num_read_layers : `int`, optional (default = `2`)
        The paper uses two-layer read/write LSTMs for this task.
    num_write_layers : `int`, optional (default = `2`)
    dropout : `float`, optional (default = `0.4`)
        After the word embeddings (the paper: 40%).
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "answer_ranking"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        hidden_size: int,
        classifier_feedforward: FeedForward,
        num_read_layers: int = 2,
        num_write_layers: int = 2,
        dropout: float = 0.4,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim()
        layers = dict(num_read_layers=num_read_layers, num_write_layers=num_write_layers)
        self._answer_encoder = NseEncoder(embedding_dim, hidden_size, **layers)
        self._question_encoder = NseEncoder(embedding_dim, hidden_size, num_extra_memories=1, **layers)
        self._attention = LastOutputAttention(hidden_size)
        self.attention_axes = {  # what `attention-map` draws, and the tokens of each axis
            "question_answer_keys": ("question", "answer"),
            "answer_attention": ("answer",),
            "question_keys": ("question", "question"),
            "answer_keys": ("answer", "answer"),
        }
        self._classifier_feedforward = classifier_feedforward
        self._output = torch.nn.Linear(classifier_feedforward.get_output_dim(), 1)
        self._dropout = torch.nn.Dropout(dropout)
        self._loss = torch.nn.BCEWithLogitsLoss()
        self._ranking = MapMrr()
        self._accuracy = BooleanAccuracy()
        (initializer or InitializerApplicator())(self)

    def forward(  # type: ignore
        self,
        question: TextFieldTensors,
        answer: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        question_mask = get_text_field_mask(question)
        answer_mask = get_text_field_mask(answer)
        features, output_dict = encode_nse_pair(
            self._answer_encoder, self._question_encoder, self._attention,
            self._dropout(self._text_field_embedder(answer)), answer_mask,
            self._dropout(self._text_field_embedder(question)), question_mask,
            names=("answer", "question"),
        )
        logit = self._output(self._classifier_feedforward(features)).squeeze(-1)  # o^QA
        probability = torch.sigmoid(logit)  # (16)
        output_dict.update(logit=logit, probability=probability)
        if label is not None:
            output_dict["loss"] = self._loss(logit, label.float().view(-1))
            self._accuracy((probability > 0.5).long(), label.view(-1))
            if metadata is not None:
                self._ranking(probability, label, [item["question_id"] for item in metadata])
        if metadata is not None:
            output_dict["question_tokens"] = [item["question_tokens"] for item in metadata]
            output_dict["answer_tokens"] = [item["answer_tokens"] for item in metadata]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {**self._ranking.get_metric(reset), "accuracy": self._accuracy.get_metric(reset)}
