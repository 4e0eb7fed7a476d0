from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.common.lazy import Lazy
from allennlp.modules import FeedForward, Seq2SeqEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask

from memplugins.models.nse_components import flag_encoders, nse_component
from memplugins.models.pair_classifier import PairClassifier
from memplugins.modules.pair_encoding import encode_nse_pair
from memplugins.modules.rte_attention import LastOutputAttention


@Model.register("nse_pair_classifier")
class NsePairClassifier(PairClassifier):
    """
    Sentence-pair classification with Neural Semantic Encoders (Munkhdalai and Yu 2017, section 4.1). The model takes
    its encoders as components, as allennlp-models' `esim` does:

    * `premise_encoder` alone: one NSE (shared weights) encodes each sentence with its own memory (the paper's NSE);
    * and `hypothesis_encoder` an `nse` with `num_extra_memories: 1`: MMA-NSE (eq. 7-15), the hypothesis NSE reads,
      and writes, the premise's final memory as an extra memory;
    * and `premise_attention: true`: the premise representation is an attentively blended vector of the premise
      outputs h^p_t with respect to the final hypothesis state (Rocktäschel et al. 2016, eq. 7-9,
      `memplugins.modules.rte_attention.LastOutputAttention`): the paper's MMA-NSE with attention.

    Each encoder's `input_size` defaults to the embedder's output size. A sentence representation is the NSE output
    h_T at the sentence's last token (or, for the premise with attention, the blended vector r). Features
    [h_p; h_h; |h_p - h_h|; h_p * h_h] go to `classifier_feedforward` (the paper: one 1024-unit ReLU layer) and a
    softmax layer, with `dropout` before it. Outputs also carry the NSE key vectors z_t: `premise_keys` `(B, m, m)`,
    `hypothesis_keys` `(B, n, n)` and, for MMA-NSE, `hypothesis_premise_keys` `(B, n, m)` (the hypothesis steps' keys
    over the premise memory), plus `premise_attention` `(B, m)` with attention.

    The 0.1 form, which builds the NSEs from flags (`hidden_size`, `variant`, `num_read_layers`,
    `num_write_layers`, `write_extra_memories`, `compose`, and `dropout` inside the NSEs too), is still read, so
    archives trained with it load; both forms build the same parameters in the same order.

    Registered as a `Model` with name "nse_pair_classifier".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        The paper: fixed GloVe vectors.
    classifier_feedforward : `FeedForward`
        Input 4k; the paper: 1024 ReLU units.
    premise_encoder : `Seq2SeqEncoder`, optional
        An `nse` (built after the feedforward, as the 0.1 form built it). Required unless `hidden_size` is given.
    hypothesis_encoder : `Seq2SeqEncoder`, optional (default = the premise encoder)
        An `nse`; with `num_extra_memories: 1` it reads the premise's memory (MMA-NSE).
    premise_attention : `bool`, optional (default = `False`)
        Blend the premise outputs by attention (the paper's MMA-NSE attention model).
    dropout : `float`, optional (default = `0.0`)
        Before the softmax layer (the paper: 0.3); in the 0.1 form, inside the NSEs as well.
    hidden_size, variant, num_read_layers, num_write_layers, write_extra_memories, compose : optional
        The 0.1 form (above): k; "nse", "mma_nse" or "mma_nse_attention"; the layers of f_r and f_w; eq. 15; "relu"
        (one ReLU layer of size k) or "linear_wide" (the authors' released code).
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        classifier_feedforward: FeedForward,
        premise_encoder: Optional[Lazy[Seq2SeqEncoder]] = None,
        hypothesis_encoder: Optional[Lazy[Seq2SeqEncoder]] = None,
        premise_attention: bool = False,
        dropout: float = 0.0,
        hidden_size: Optional[int] = None,
        variant: Optional[str] = None,
        num_read_layers: int = 1,
        num_write_layers: int = 1,
        write_extra_memories: bool = True,
        compose: str = "relu",
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, label_namespace, **kwargs)
        self._text_field_embedder = text_field_embedder
        embedding_dim = text_field_embedder.get_output_dim()
        if premise_encoder is None:
            premise_encoder, hypothesis_encoder, premise_attention = flag_encoders(
                hidden_size, variant or "mma_nse", dict(num_read_layers=num_read_layers,
                                                        num_write_layers=num_write_layers, dropout=dropout),
                write_extra_memories, compose)
        elif hidden_size is not None or variant is not None:
            raise ConfigurationError("nse_pair_classifier: give premise_encoder (and hypothesis_encoder) or the 0.1 "
                                     "form's hidden_size and variant, not both")
        self._premise_encoder = nse_component(premise_encoder, embedding_dim, "premise_encoder")
        self._hypothesis_encoder = (nse_component(hypothesis_encoder, embedding_dim, "hypothesis_encoder")
                                    if hypothesis_encoder is not None else self._premise_encoder)
        hidden = self._premise_encoder.get_output_dim()
        if self._hypothesis_encoder.num_extra_memories > 1 or self._premise_encoder.num_extra_memories:
            raise ConfigurationError("nse_pair_classifier: the premise encoder has no extra memories and the "
                                     "hypothesis encoder at most one (the premise's)")
        if classifier_feedforward.get_input_dim() != 4 * hidden:
            raise ConfigurationError(f"nse_pair_classifier: classifier_feedforward input_dim must be {4 * hidden}")
        self._attention = LastOutputAttention(hidden) if premise_attention else None
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
