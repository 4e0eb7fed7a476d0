from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.data import Vocabulary
from allennlp.models.model import Model
from allennlp.training.metrics import CategoricalAccuracy


class PairClassifier(Model):
    """
    What our sentence-pair classifiers share after their encoders: label probabilities, cross-entropy loss and
    accuracy, the tokens for display, and `make_output_human_readable`, which adds the label string and cuts every
    attention matrix down to its example's own tokens. A subclass sets `attention_axes`: for each attention output,
    which sentence ("premise" / "hypothesis") each of its per-example dimensions runs over.
    Not registered itself.
    """

    default_predictor = "entailment_pairs"

    def __init__(self, vocab: Vocabulary, label_namespace: str = "labels", **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self._label_namespace = label_namespace
        self._accuracy = CategoricalAccuracy()
        self._loss = torch.nn.CrossEntropyLoss()
        self.attention_axes: Dict[str, Tuple[str, ...]] = {}

    def _classification_outputs(
        self,
        output_dict: Dict[str, Any],
        label_logits: torch.Tensor,
        label: Optional[torch.IntTensor],
        metadata: Optional[List[Dict[str, Any]]],
    ) -> Dict[str, Any]:
        output_dict["label_logits"] = label_logits
        output_dict["label_probs"] = torch.softmax(label_logits, dim=-1)
        if label is not None:
            output_dict["loss"] = self._loss(label_logits, label.long().view(-1))
            self._accuracy(label_logits, label)
        if metadata is not None:
            output_dict["premise_tokens"] = [item["premise_tokens"] for item in metadata]
            output_dict["hypothesis_tokens"] = [item["hypothesis_tokens"] for item in metadata]
        return output_dict

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        labels = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        output_dict["label"] = [labels[int(index)] for index in output_dict["label_probs"].argmax(dim=-1)]
        if "premise_tokens" in output_dict:
            lengths = [
                {"premise": len(premise), "hypothesis": len(hypothesis)}
                for premise, hypothesis in zip(output_dict["premise_tokens"], output_dict["hypothesis_tokens"])
            ]
            for key, axes in self.attention_axes.items():
                if key in output_dict:
                    output_dict[key] = [
                        weights[tuple(slice(0, length[axis]) for axis in axes)]
                        for weights, length in zip(output_dict[key], lengths)
                    ]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset)}
