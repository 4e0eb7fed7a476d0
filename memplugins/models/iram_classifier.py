from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Maxout, Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask
from allennlp.training.metrics import CategoricalAccuracy

from memplugins.encoders.iram import IramEncoder
from memplugins.modules.auxiliary_loss import AuxiliaryTracker, add_auxiliary_losses


@Model.register("iram_classifier")
class IramClassifier(Model):
    """
    Sentence classification with IRAM (Tutek and Šnajder 2018, section 3.5): the last summary s^(T) of an `iram`
    encoder goes through a maxout network (the paper: two 200-d layers, pool size 4; AllenNLP's `Maxout`) and a
    softmax layer. The loss is the cross-entropy plus every auxiliary loss the encoder contributes (IRAM's attention
    regulariser when γ > 0); metrics: `accuracy`, `attention_overlap` (always) and `attention_penalty` (γ > 0).

    Outputs, for interpretation: `attention`, IRAM's T × (N + T - 1) matrix A (eq. 4) per sentence, and, in readable
    predictions, `attention_columns` (the sentence's tokens, then `s1` .. `s{T-1}` for the summaries) and
    `attention_rows` (`t1` .. `tT`); `allennlp attention-map` renders it.

    Registered as a `Model` with name "iram_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    encoder : `Seq2VecEncoder`
        An `iram` encoder.
    maxout : `Maxout`
        Input size = the encoder's output size.
    dropout : `float`, optional (default = `0.0`)
        Before the maxout network.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "sentence_classifier"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        maxout: Maxout,
        dropout: float = 0.0,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if not isinstance(encoder, IramEncoder):
            raise ConfigurationError(f"iram_classifier needs an iram encoder, got {type(encoder).__name__}")
        if maxout.get_input_dim() != encoder.get_output_dim():
            raise ConfigurationError(f"iram_classifier: maxout input_dim must be {encoder.get_output_dim()}")
        self._text_field_embedder = text_field_embedder
        self._encoder = encoder
        self._maxout = maxout
        self._dropout = torch.nn.Dropout(dropout)
        self._label_namespace = label_namespace
        self._output = torch.nn.Linear(maxout.get_output_dim(), vocab.get_vocab_size(label_namespace))
        self._accuracy = CategoricalAccuracy()
        self._auxiliary = AuxiliaryTracker()
        (initializer or InitializerApplicator())(self)

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        mask = get_text_field_mask(tokens)
        encoded = self._encoder.encode(self._text_field_embedder(tokens), mask)
        logits = self._output(self._maxout(self._dropout(encoded.summary)))
        output: Dict[str, Any] = {"logits": logits, "probs": torch.softmax(logits, -1), "attention": encoded.attention,
                                  "lengths": mask.sum(-1)}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label.long().view(-1))
            self._accuracy(logits, label)
        add_auxiliary_losses(self, output, self._auxiliary)
        if metadata is not None:
            output["tokens"] = [item["tokens"] for item in metadata]
        elif "tokens" in tokens and "tokens" in tokens["tokens"]:
            output["token_ids"] = tokens["tokens"]["tokens"]  # to label the attention columns from the vocabulary
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        labels = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        output_dict["label"] = [labels[int(i)] for i in output_dict["probs"].argmax(-1)]
        steps = output_dict["attention"].size(1)
        trimmed, columns = [], []
        for b, (weights, length) in enumerate(zip(output_dict["attention"], output_dict["lengths"].tolist())):
            trimmed.append(weights[:, : length + steps - 1])
            if "tokens" in output_dict:
                tokens = output_dict["tokens"][b]
            elif "token_ids" in output_dict:
                ids = output_dict["token_ids"][b][:length].tolist()
                tokens = [self.vocab.get_token_from_index(i, "tokens") for i in ids]
            else:
                tokens = [f"w{i + 1}" for i in range(length)]
            columns.append([str(token) for token in tokens] + [f"s{i + 1}" for i in range(steps - 1)])
        output_dict["attention"] = trimmed
        output_dict["attention_columns"] = columns
        output_dict["attention_rows"] = [[f"t{i + 1}" for i in range(steps)] for _ in columns]
        output_dict.pop("token_ids", None)
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset), **self._auxiliary.get_metrics(reset)}
