from typing import Any, Dict, List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import FeedForward, TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_text_field_mask, masked_mean

from memplugins.encoders.checks import check_finite_or_none
from memplugins.models.pair_classifier import PairClassifier
from memplugins.modules.lstmn import LstmnInterAttention, LstmnLayer

FUSIONS = ("none", "shallow", "deep")


@Model.register("lstmn_fusion")
class LstmnFusion(PairClassifier):
    """
    Natural language inference with LSTMN attention fusion (Cheng, Dong and Lapata 2016, sections 4 and 5.3): an
    LSTMN encoder reads the premise (source) with intra-attention; an LSTMN decoder reads the hypothesis (target)
    with intra-attention plus inter-attention over the premise's hidden and memory tapes (eq. 11-13,
    `memplugins.modules.lstmn.LstmnInterAttention`):

    * `fusion="shallow"`: the inter-attention sits beside the LSTMN, as in an attentional encoder-decoder: the
      attended premise summary γ~_t is given to the decoder with its input, x'_t = [x_t; γ~_t].
    * `fusion="deep"`: the attended premise memory is written into the decoder's memory through a gate,
      r_t = σ(W_r [γ~_t, x_t] + b_r) (eq. 14), c_t = r_t ⊙ α~_t + f_t ⊙ c~_t + i_t ⊙ c^_t (eq. 15),
      h_t = o_t ⊙ tanh(c_t) (eq. 16).
    * `fusion="none"`: no inter-attention; two LSTMNs read premise and hypothesis independently (the paper's
      "LSTMN" row of Table 3, its baseline for the fusions). `inter_attention` is then absent from the outputs.

    Both hidden tapes are average-pooled over their real tokens, concatenated, and classified by a 2-layer ReLU
    network (`classifier_feedforward`) and a final linear layer (section 5.3).

    Notes: eq. 15 as printed adds `i_t ⊙ c~_t`; we read it as eq. 8's `i_t ⊙ c^_t` (the new input), which is what
    the text says ("the new input information"). The paper gives r_t no bias; we add one, like eq. 7's gates. Both
    fusions query the premise with eq. 11 (x_t and γ~_{t-1}), not with the decoder's state.

    Outputs: `label_logits`, `label_probs`, `loss`, `premise_intra_attention` `(B, m, m)`,
    `hypothesis_intra_attention` `(B, n, n)`, `inter_attention` `(B, n, m)`, and the tokens for display.

    Registered as a `Model` with name "lstmn_fusion".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
    hidden_size : `int`
        The LSTMN hidden/memory size h (the paper: 100, 300, 450).
    classifier_feedforward : `FeedForward`
        The 2-layer ReLU network over [avg(premise tape); avg(hypothesis tape)] (input 2h).
    fusion : `str`, optional (default = `"deep"`)
        "none", "shallow" or "deep".
    dropout : `float`, optional (default = `0.0`)
        Dropout on the embedded inputs and on the pooled features (the paper selects it from 0.1-0.4).
    recency_start : `float`, optional (default = `None`)
        Not the paper's: the `lstmn` encoder's option of the same name for both LSTMNs, premise and hypothesis (each
        gets its own learned score β, `recency_score`, started here and added to the most recent slot's score in
        eq. 4). `None` is the paper's eq. 4; the inter-attention (eq. 11) is unchanged. `memplugins.modules.lstmn`
        says what it is for.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        hidden_size: int,
        classifier_feedforward: FeedForward,
        fusion: str = "deep",
        dropout: float = 0.0,
        recency_start: Optional[float] = None,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, label_namespace, **kwargs)
        if fusion not in FUSIONS:
            raise ConfigurationError(f"lstmn_fusion: fusion must be one of {FUSIONS}, got {fusion!r}")
        check_finite_or_none("lstmn_fusion", "recency_start", recency_start)
        if classifier_feedforward.get_input_dim() != 2 * hidden_size:
            raise ConfigurationError(
                f"lstmn_fusion: classifier_feedforward input_dim must be 2 * hidden_size = {2 * hidden_size}"
            )
        self._text_field_embedder = text_field_embedder
        self._fusion = fusion
        self.attention_axes = {
            "premise_intra_attention": ("premise", "premise"),
            "hypothesis_intra_attention": ("hypothesis", "hypothesis"),
            "inter_attention": ("hypothesis", "premise"),
        }
        embedding_dim = text_field_embedder.get_output_dim()
        self._encoder = LstmnLayer(embedding_dim, hidden_size, recency_start=recency_start)
        self._inter_attention = LstmnInterAttention(embedding_dim, hidden_size) if fusion != "none" else None
        if fusion == "none":
            del self.attention_axes["inter_attention"]
        # shallow fusion reads x'_t = [x_t; γ~_t]
        decoder_input_size = embedding_dim + hidden_size if fusion == "shallow" else embedding_dim
        self._decoder = LstmnLayer(decoder_input_size, hidden_size, recency_start=recency_start)
        self._fusion_gate = (  # W_r (eq. 14)
            torch.nn.Linear(hidden_size + embedding_dim, hidden_size) if fusion == "deep" else None
        )
        self._dropout = torch.nn.Dropout(dropout)
        self._classifier_feedforward = classifier_feedforward
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
        x_premise = self._dropout(self._text_field_embedder(premise))
        x_hypothesis = self._dropout(self._text_field_embedder(hypothesis))

        source_hidden, source_memory, premise_intra = self._encoder(x_premise, premise_mask)
        output_dict: Dict[str, Any] = {"premise_intra_attention": premise_intra}
        if self._fusion == "none":
            target_hidden, _, hypothesis_intra = self._decoder(x_hypothesis, hypothesis_mask)
        else:
            attended_hidden, attended_memory, output_dict["inter_attention"] = self._inter_attention(  # (11)-(13)
                x_hypothesis, hypothesis_mask, source_hidden, source_memory, premise_mask
            )
        if self._fusion == "shallow":
            target_hidden, _, hypothesis_intra = self._decoder(
                torch.cat([x_hypothesis, attended_hidden], dim=-1), hypothesis_mask
            )
        elif self._fusion == "deep":
            gate = torch.sigmoid(self._fusion_gate(torch.cat([attended_hidden, x_hypothesis], dim=-1)))  # (14)
            target_hidden, _, hypothesis_intra = self._decoder(
                x_hypothesis, hypothesis_mask, memory_addend=gate * attended_memory  # (15), (16)
            )

        features = torch.cat(
            [masked_mean(source_hidden, premise_mask.unsqueeze(-1), dim=1),
             masked_mean(target_hidden, hypothesis_mask.unsqueeze(-1), dim=1)],
            dim=-1,
        )
        label_logits = self._output(self._classifier_feedforward(self._dropout(features)))
        output_dict["hypothesis_intra_attention"] = hypothesis_intra
        return self._classification_outputs(output_dict, label_logits, label, metadata)
