from typing import Any, Dict, List, Optional

import torch
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import CategoricalAccuracy

from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.encoders.tree_rnn import TreeRnnEncoder


def compact_node_order(mask: torch.BoolTensor, num_nodes: int) -> torch.LongTensor:
    """
    `(B, num_nodes)` indices into the node buffer (leaves at 0..max_leaves-1, internal nodes from max_leaves) that
    list each sentence's n leaves, then its n-1 internal nodes, then padding (which points at the last buffer row).
    """
    max_leaves = mask.size(1)
    lengths = mask.sum(1, keepdim=True)
    positions = torch.arange(num_nodes, device=mask.device).unsqueeze(0)
    index = torch.where(positions < lengths, positions, max_leaves + positions - lengths)
    return torch.where(positions < 2 * lengths - 1, index, torch.full_like(index, num_nodes - 1))


@Model.register("tree_classifier")
class TreeClassifier(Model):
    """
    Tree-structured sentiment classification (Le and Zuidema 2015, section 4): word embeddings at the leaves, a
    tree encoder (`tree_lstm`) over the sentence's binary tree, and a softmax layer on top of every node,
    Pr(c | p) = softmax(W_s p + b_s) (eq. 1). The loss is the paper's objective without its L2 term (give that as
    the optimizer's weight decay): the sum of the cross-entropies of all labelled nodes of a sentence, averaged over
    the sentences of the batch. A reader with `root_only` gives sentence-level supervision.

    Metrics: `accuracy`, of the root (sentence) label, the figure papers report; `node_accuracy`, over every
    labelled node (phrases and words).

    Outputs: `logits` / `probs` of the root; `node_logits` `(B, 2n-1, classes)` and `node_mask` list each sentence's
    nodes in its own tree's order (its n leaves, then its internal nodes bottom-up, then padding). Readable
    predictions: `label` of the root, and for every node its `node_spans` (`[start, end)` over `tokens`) and
    `node_labels`.

    Registered as a `Model` with name "tree_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds the leaves (`tokens`).
    encoder : `Seq2VecEncoder`
        A `tree_lstm` or `tree_rnn` (it must offer `encode(inputs, mask, tree)` returning node states).
    dropout : `float`, optional (default = `0.0`)
        Dropout on the node states before the softmax layer (the paper reports dropout did not help the LSTM-RNN).
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "sentence_classifier"

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        encoder: Seq2VecEncoder,
        dropout: float = 0.0,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if not isinstance(encoder, (TreeLstmEncoder, TreeRnnEncoder)):
            raise ValueError(f"tree_classifier needs a tree_lstm or tree_rnn encoder, got {type(encoder).__name__}")
        self._text_field_embedder = text_field_embedder
        self._encoder = encoder
        self._dropout = torch.nn.Dropout(dropout)
        self._label_namespace = label_namespace
        self._classifier = torch.nn.Linear(encoder.get_output_dim(), vocab.get_vocab_size(label_namespace))
        self._accuracy = CategoricalAccuracy()
        self._node_accuracy = CategoricalAccuracy()
        initializer(self)

    def forward(  # type: ignore
        self,
        tokens: TextFieldTensors,
        tree: Dict[str, torch.Tensor],
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        mask = util.get_text_field_mask(tokens)
        encoded = self._encoder.encode(self._text_field_embedder(tokens), mask, tree)
        node_logits = self._classifier(self._dropout(encoded.node_states))  # eq. 1 at every node
        batch = torch.arange(node_logits.size(0), device=node_logits.device)
        root_logits = node_logits[batch, tree["root"]]
        # outputs list each sentence's nodes in its own tree's order (its leaves, then its internal nodes), so that
        # node i is the same node whatever the batch's padding; the buffer interleaves padding after the leaves
        compact = compact_node_order(mask, encoded.node_mask.size(1))
        output = {"node_logits": node_logits[batch.unsqueeze(1), compact],
                  "node_mask": encoded.node_mask[batch.unsqueeze(1), compact],
                  "logits": root_logits, "probs": torch.softmax(root_logits, dim=-1)}
        if "labels" in tree:
            labels = tree["labels"]
            labelled = labels >= 0
            losses = torch.nn.functional.cross_entropy(
                node_logits.transpose(1, 2), labels.clamp(min=0), reduction="none"
            )
            output["loss"] = (losses * labelled).sum() / node_logits.size(0)
            self._node_accuracy(node_logits, labels.clamp(min=0), labelled)
            root_labels = labels[batch, tree["root"]]
            self._accuracy(root_logits, root_labels.clamp(min=0), root_labels >= 0)
        if metadata is not None:
            output["tokens"] = [item["tokens"] for item in metadata]
            output["trees"] = [item["tree"] for item in metadata]
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        labels = self.vocab.get_index_to_token_vocabulary(self._label_namespace)
        output_dict["label"] = [labels[int(i)] for i in output_dict["probs"].argmax(-1)]
        if "trees" in output_dict:
            spans, node_labels, node_probs = [], [], []
            for tree, logits in zip(output_dict.pop("trees"), output_dict["node_logits"]):
                nodes = logits[: 2 * len(tree.leaves) - 1]
                spans.append([list(span) for span in tree.spans()])
                node_labels.append([labels[int(i)] for i in nodes.argmax(-1)])
                node_probs.append(torch.softmax(torch.as_tensor(nodes), dim=-1).tolist())
            output_dict["node_spans"] = spans
            output_dict["node_labels"] = node_labels
            output_dict["node_probs"] = node_probs  # per node (phrase), per class: attention-map draws it
            output_dict["label_names"] = [[labels[i] for i in range(len(labels))]] * len(spans)
            del output_dict["node_logits"], output_dict["node_mask"]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self._accuracy.get_metric(reset), "node_accuracy": self._node_accuracy.get_metric(reset)}
