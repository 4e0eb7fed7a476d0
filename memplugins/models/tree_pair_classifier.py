from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import FeedForward, Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.encoders.tree_rnn import TreeRnnEncoder
from memplugins.models.pair_classifier import PairClassifier
from memplugins.modules.pair_encoding import matching_features


@Model.register("tree_pair_classifier")
class TreePairClassifier(PairClassifier):
    """
    Sentence-pair classification over binary parse trees (e.g. SNLI's, read by `snli_parsed` with
    `parse_trees: true`): one tree encoder (shared weights, e.g. `tree_lstm`) encodes the premise and the hypothesis
    over their trees; their root vectors p and h give the matching features [p; h; |p - h|; p * h], then
    `classifier_feedforward` and a softmax layer (dropout before the last layer).
    Outputs: `label_logits`, `label_probs`, `label` (readable), loss and accuracy.

    Registered as a `Model` with name "tree_pair_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2VecEncoder`
        A `tree_lstm`.
    classifier_feedforward : `FeedForward`
        Input 4 × the encoder's output size.
    dropout : `float`, optional (default = `0.0`)
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        classifier_feedforward: FeedForward,
        dropout: float = 0.0,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, label_namespace, **kwargs)
        if not isinstance(encoder, (TreeLstmEncoder, TreeRnnEncoder)):
            raise ConfigurationError(f"tree_pair_classifier needs a tree_lstm or tree_rnn encoder, got {type(encoder).__name__}")
        if classifier_feedforward.get_input_dim() != 4 * encoder.get_output_dim():
            raise ConfigurationError(
                f"tree_pair_classifier: classifier_feedforward input_dim must be {4 * encoder.get_output_dim()}"
            )
        self._text_field_embedder = text_field_embedder
        self._encoder = encoder
        self._classifier_feedforward = classifier_feedforward
        self._dropout = torch.nn.Dropout(dropout)
        self._output = torch.nn.Linear(classifier_feedforward.get_output_dim(), vocab.get_vocab_size(label_namespace))
        (initializer or InitializerApplicator())(self)

    def forward(  # type: ignore
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        premise_tree: Dict[str, torch.Tensor],
        hypothesis_tree: Dict[str, torch.Tensor],
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        p = self._encoder(self._text_field_embedder(premise), get_text_field_mask(premise), premise_tree)
        h = self._encoder(self._text_field_embedder(hypothesis), get_text_field_mask(hypothesis), hypothesis_tree)
        features = matching_features(p, h)
        label_logits = self._output(self._dropout(self._classifier_feedforward(features)))
        return self._classification_outputs({}, label_logits, label, metadata)
