from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import FeedForward, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask

from memplugins.encoders.nse import NseEncoder
from memplugins.models.pair_classifier import PairClassifier
from memplugins.modules.pair_encoding import encode_nse_pair
from memplugins.modules.rte_attention import LastOutputAttention

VARIANTS = ("nse", "mma_nse", "mma_nse_attention")


@Model.register("nse_pair_classifier")
class NsePairClassifier(PairClassifier):
    """
    Sentence-pair classification with Neural Semantic Encoders (Munkhdalai and Yu 2017, section 4.1):

    * `variant="nse"`: one NSE (shared weights) encodes each sentence with its own memory;
    * `variant="mma_nse"`: an NSE encodes the premise; a second NSE (MMA-NSE, eq. 7-15) encodes the hypothesis
      while reading, and writing, the premise's final memory as an extra memory;
    * `variant="mma_nse_attention"`: as "mma_nse", and the premise representation is an attentively blended
      vector of the premise outputs h^p_t with respect to the final hypothesis state (the attention of
      Rocktäschel et al. 2016, eq. 7-9, `memplugins.modules.rte_attention.LastOutputAttention`).

    A sentence representation is the NSE output h_T at the sentence's last token (or, for the premise of the
    attention variant, the blended vector r). Features [h_p; h_h; |h_p - h_h|; h_p * h_h] go to
    `classifier_feedforward` (the paper: one 1024-unit ReLU layer) and a softmax layer; dropout before the last
    layer. Outputs also carry the NSE key vectors z_t: `premise_keys` `(B, m, m)`, `hypothesis_keys` `(B, n, n)`
    and, for the MMA variants, `hypothesis_premise_keys` `(B, n, m)` (the hypothesis steps' keys over the premise
    memory), plus `premise_attention` `(B, m)` for the attention variant.

    Registered as a `Model` with name "nse_pair_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        The paper: fixed GloVe vectors.
    hidden_size : `int`
        The NSE size k (the paper: 300).
    classifier_feedforward : `FeedForward`
        Input 4k; the paper: 1024 ReLU units.
    variant : `str`, optional (default = `"mma_nse"`)
    num_read_layers : `int`, optional (default = `1`)
    num_write_layers : `int`, optional (default = `1`)
    write_extra_memories : `bool`, optional (default = `True`)
        MMA variants: whether the hypothesis NSE writes into the premise memory (eq. 15).
    dropout : `float`, optional (default = `0.0`)
        Inside the NSEs (read/write outputs) and before the softmax layer (the paper: 0.3).
    compose : `str`, optional (default = `"relu"`)
        The NSEs' f_c: "relu", one ReLU layer of size k, or "linear_wide", the authors' released code: one linear
        layer that keeps its input's size (2 + n) k (n extra memories), read by f_w. "linear_wide" gives the
        paper's parameter counts (3.4M / 6.3M / 6.5M at k = 300; see `NseEncoder`).
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        hidden_size: int,
        classifier_feedforward: FeedForward,
        variant: str = "mma_nse",
        num_read_layers: int = 1,
        num_write_layers: int = 1,
        write_extra_memories: bool = True,
        dropout: float = 0.0,
        compose: str = "relu",
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, label_namespace, **kwargs)
        if compose not in ("relu", "linear_wide"):
            raise ConfigurationError(f"nse_pair_classifier: compose must be 'relu' or 'linear_wide', got {compose!r}")
        if variant not in VARIANTS:
            raise ConfigurationError(f"nse_pair_classifier: variant must be one of {VARIANTS}, got {variant!r}")
        if classifier_feedforward.get_input_dim() != 4 * hidden_size:
            raise ConfigurationError(f"nse_pair_classifier: classifier_feedforward input_dim must be {4 * hidden_size}")
        self._text_field_embedder = text_field_embedder
        self._variant = variant
        embedding_dim = text_field_embedder.get_output_dim()
        nse_options = dict(num_read_layers=num_read_layers, num_write_layers=num_write_layers, dropout=dropout)

        def compose_options(num_extra: int) -> dict:
            if compose == "relu":
                return {}
            return {"compose_size": (2 + num_extra) * hidden_size, "compose_activation": "linear"}

        self._premise_encoder = NseEncoder(embedding_dim, hidden_size, **nse_options, **compose_options(0))
        if variant == "nse":
            self._hypothesis_encoder = self._premise_encoder
        else:
            self._hypothesis_encoder = NseEncoder(
                embedding_dim, hidden_size, num_extra_memories=1, write_extra_memories=write_extra_memories,
                **nse_options, **compose_options(1)
            )
        self._attention = LastOutputAttention(hidden_size) if variant == "mma_nse_attention" else None
        self.attention_axes = {
            "premise_keys": ("premise", "premise"),
            "hypothesis_keys": ("hypothesis", "hypothesis"),
            "hypothesis_premise_keys": ("hypothesis", "premise"),
            "premise_attention": ("premise",),
        }
        self._classifier_feedforward = classifier_feedforward
        self._dropout = torch.nn.Dropout(dropout)
        self._output = torch.nn.Linear(classifier_feedforward.get_output_dim(), vocab.get_vocab_size(label_namespace))
        (initializer or InitializerApplicator())(self)

    def forward(  # type: ignore
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        premise_mask = get_text_field_mask(premise)
        hypothesis_mask = get_text_field_mask(hypothesis)
        features, output_dict = encode_nse_pair(
            self._premise_encoder, self._hypothesis_encoder, self._attention,
            self._text_field_embedder(premise), premise_mask, self._text_field_embedder(hypothesis), hypothesis_mask,
            names=("premise", "hypothesis"),
        )
        label_logits = self._output(self._dropout(self._classifier_feedforward(features)))
        return self._classification_outputs(output_dict, label_logits, label, metadata)
