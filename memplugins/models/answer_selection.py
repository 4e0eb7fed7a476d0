from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.common.lazy import Lazy
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask
from allennlp.training.metrics import BooleanAccuracy

from memplugins.metrics.ranking import MapMrr
from memplugins.models.nse_components import lazy_nse, nse_component
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

    The encoders are components (`nse` blocks; `input_size` defaults to the embedder's output size), as
    allennlp-models' `esim` takes its own. The 0.1 form, `hidden_size` with `num_read_layers` / `num_write_layers`,
    is still read (archives trained with it load) and builds the same parameters in the same order.

    Registered as a `Model` with name "answer_selection".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        The paper: fixed 300d GloVe with a linear map to 512 (use the embedding's `projection_dim`).
    classifier_feedforward : `FeedForward`
        Input 4k; its output goes to a linear layer with one unit.
    answer_encoder : `Seq2SeqEncoder`, optional
        An `nse` (the paper: two-layer read and write LSTMs for this task). Required unless `hidden_size` is given.
    question_encoder : `Seq2SeqEncoder`, optional
        An `nse` with `num_extra_memories: 1` (it reads and writes the answer's memory).
    dropout : `float`, optional (default = `0.4`)
        After the word embeddings (the paper: 40%).
    hidden_size, num_read_layers, num_write_layers : optional
        The 0.1 form: k, and the layers of f_r and f_w (default 2 each).
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "answer_ranking"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        classifier_feedforward: FeedForward,
        answer_encoder: Optional[Lazy[Seq2SeqEncoder]] = None,
        question_encoder: Optional[Lazy[Seq2SeqEncoder]] = None,
        dropout: float = 0.4,
        hidden_size: Optional[int] = None,
        num_read_layers: int = 2,
        num_write_layers: int = 2,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim()
        if answer_encoder is None and question_encoder is None:
            if hidden_size is None:
                raise ConfigurationError("answer_selection: give answer_encoder and question_encoder (`nse` blocks), "
                                         "or the 0.1 form's hidden_size")
            layers = dict(hidden_size=hidden_size, num_read_layers=num_read_layers, num_write_layers=num_write_layers)
            answer_encoder, question_encoder = lazy_nse(**layers), lazy_nse(num_extra_memories=1, **layers)
        elif answer_encoder is None or question_encoder is None or hidden_size is not None:
            raise ConfigurationError("answer_selection: give both answer_encoder and question_encoder, or the 0.1 "
                                     "form's hidden_size, not both")
        self._answer_encoder = nse_component(answer_encoder, embedding_dim, "answer_encoder")
        self._question_encoder = nse_component(question_encoder, embedding_dim, "question_encoder")
        if self._question_encoder.num_extra_memories != 1 or self._answer_encoder.num_extra_memories:
            raise ConfigurationError("answer_selection: the question encoder reads the answer's memory "
                                     "(num_extra_memories: 1); the answer encoder has none")
        hidden_size = self._answer_encoder.get_output_dim()
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
