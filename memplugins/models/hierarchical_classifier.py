from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2SeqEncoder, Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask
from allennlp.training.metrics import CategoricalAccuracy


@Model.register("hierarchical_classifier")
class HierarchicalClassifier(Model):
    """
    Document classification with stacked encoders (Munkhdalai and Yu 2017, section 4.4: NSE-NSE and NSE-LSTM):
    a sentence encoder (e.g. `nse`) and pooler (e.g. the last state: `cls_pooler` with `cls_is_last_token`) turn
    every sentence into a vector; a document encoder (`nse` or `lstm`) and pooler over the sentence vectors give
    the document vector; dropout, then a softmax layer over the ratings. Sentences of a document are independent
    inputs to the sentence encoder (the whole batch's sentences are encoded together); padded sentences are masked
    out of the document encoder.

    Metrics: `accuracy`, and `mse`, the mean squared error between the predicted and the gold rating, where a
    rating is the label's integer value (the labels must be integers, as the `hierarchical_documents` reader's
    ratings are), as Tang et al. (2015) and the paper report.

    Registered as a `Model` with name "hierarchical_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    sentence_encoder : `Seq2SeqEncoder`
    sentence_pooler : `Seq2VecEncoder`
    document_encoder : `Seq2SeqEncoder`
    document_pooler : `Seq2VecEncoder`
    dropout : `float`, optional (default = `0.0`)
        Before the softmax layer (the paper: 0.2).
    document_dropout : `float`, optional (default = `0.0`)
        On the document encoder's outputs, before pooling: the paper's 15% on the document LSTM of NSE-LSTM (a
        document NSE has its own `dropout` inside).
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "document_rating"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        sentence_encoder: Seq2SeqEncoder,
        sentence_pooler: Seq2VecEncoder,
        document_encoder: Seq2SeqEncoder,
        document_pooler: Seq2VecEncoder,
        dropout: float = 0.0,
        document_dropout: float = 0.0,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        self._text_field_embedder = text_field_embedder
        self._sentence_encoder = sentence_encoder
        self._sentence_pooler = sentence_pooler
        self._document_encoder = document_encoder
        self._document_pooler = document_pooler
        self._dropout = torch.nn.Dropout(dropout)
        self._document_dropout = torch.nn.Dropout(document_dropout)
        self._label_namespace = label_namespace
        num_labels = vocab.get_vocab_size(label_namespace)
        self._output = torch.nn.Linear(document_pooler.get_output_dim(), num_labels)
        labels = vocab.get_index_to_token_vocabulary(label_namespace)
        try:  # the rating each label index stands for, for the MSE
            ratings = [float(labels[i]) for i in range(num_labels)]
        except ValueError:
            ratings = None
        self.register_buffer("_ratings", torch.tensor(ratings) if ratings else None, persistent=False)
        self._accuracy = CategoricalAccuracy()
        self._squared_error = 0.0
        self._count = 0
        (initializer or InitializerApplicator())(self)

    def forward(  # type: ignore
        self,
        sentences: Optional[TextFieldTensors] = None,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
        tokens: Optional[TextFieldTensors] = None,
        sentence_index: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """`sentences` (the reader's: a list of sentences per document), or `tokens` with `sentence_index` (the
        `document_rating` predictor's: the document's words in one sequence and each word's sentence, so that
        AllenNLP's attackers, which edit one flat text field, reach the words); both give the same outputs."""
        if tokens is not None:
            embedded, token_mask = self._sentences_of(tokens, sentence_index)
        else:
            embedded = self._text_field_embedder(sentences, num_wrapping_dims=1)  # (B, S, W, d)
            token_mask = get_text_field_mask(sentences, num_wrapping_dims=1)  # (B, S, W)
        batch_size, num_sentences, num_words, _ = embedded.size()
        sentence_mask = token_mask.any(-1)  # (B, S)
        # encode the real sentences only (padding sentences have no token for a pooler to take)
        real = sentence_mask.view(-1)
        flat_mask = token_mask.view(batch_size * num_sentences, num_words)[real]
        encoded = self._sentence_encoder(embedded.view(batch_size * num_sentences, num_words, -1)[real], flat_mask)
        pooled = self._sentence_pooler(encoded, flat_mask)
        sentence_vectors = pooled.new_zeros(batch_size * num_sentences, pooled.size(-1)).index_put(
            (real.nonzero().squeeze(1),), pooled
        ).view(batch_size, num_sentences, -1)
        encoded_document = self._document_dropout(self._document_encoder(sentence_vectors, sentence_mask))
        document = self._document_pooler(encoded_document, sentence_mask)
        logits = self._output(self._dropout(document))
        output = {"logits": logits, "probs": torch.softmax(logits, -1)}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label.long().view(-1))
            self._accuracy(logits, label)
            if self._ratings is not None:
                predicted, gold = self._ratings[logits.argmax(-1)], self._ratings[label.long().view(-1)]
                self._squared_error += float(((predicted - gold) ** 2).sum())
                self._count += int(gold.numel())
        return output

    def _sentences_of(self, tokens: TextFieldTensors, sentence_index: torch.LongTensor):
        """The flat document as the sentences path's `(B, S, W, d)` embeddings and `(B, S, W)` mask: word n goes to
        sentence `sentence_index[n]` (-1: padding), at its position among that sentence's words. The embedding runs
        on the flat words (so an attacker's gradients are per word) and is scattered, differentiably."""
        flat = self._text_field_embedder(tokens)  # (B, N, d)
        index = sentence_index.long().masked_fill(~get_text_field_mask(tokens), -1)
        real = index >= 0
        num_sentences = int(index.max()) + 1 if bool(real.any()) else 1
        same = (index.unsqueeze(-1) == torch.arange(num_sentences, device=index.device))  # (B, N, S)
        position = (same.long().cumsum(1) * same).sum(-1) - 1  # each word's place in its sentence
        num_words = int(position.max()) + 1 if bool(real.any()) else 1
        rows, columns = real.nonzero(as_tuple=True)
        where = (rows, index[rows, columns], position[rows, columns])
        embedded = flat.new_zeros(flat.size(0), num_sentences, num_words, flat.size(-1)).index_put(
            where, flat[rows, columns])
        mask = real.new_zeros(flat.size(0), num_sentences, num_words).index_put(where, real[rows, columns])
        return embedded, mask

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        labels = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        output_dict["label"] = [labels[int(i)] for i in output_dict["probs"].argmax(-1)]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"accuracy": self._accuracy.get_metric(reset)}
        if self._ratings is not None:
            metrics["mse"] = self._squared_error / self._count if self._count else 0.0
            if reset:
                self._squared_error, self._count = 0.0, 0
        return metrics
