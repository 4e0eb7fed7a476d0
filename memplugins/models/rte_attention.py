from typing import Any, Dict, List, Optional, Tuple

import torch

from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import TextFieldEmbedder
from allennlp.nn import InitializerApplicator
from allennlp.nn.util import get_final_encoder_states, get_text_field_mask

from memplugins.models.pair_classifier import PairClassifier
from memplugins.modules import LastOutputAttention, WordByWordAttention, run_masked_lstm

MODES = ("conditional", "attention", "word_by_word")


@Model.register("rte_attention")
class RteAttention(PairClassifier):
    """
    The recognising-textual-entailment models of Rocktäschel et al. (2016), "Reasoning about Entailment with Neural
    Attention" (ICLR), in one class:

    * inputs: word vectors projected by a linear layer to the hidden size k, x_i = W e_i + b (section 2.2.1);
    * conditional encoding (2.2.1): an LSTM reads the premise; a second LSTM reads the hypothesis with its memory
      cell initialised to the premise LSTM's last cell state (h_0 = 0, as the paper conditions only the cell);
    * `mode="conditional"`: h* = tanh(W^x h_N), the non-linear projection of the last hypothesis output;
    * `mode="attention"`: r, α by eq. 7-9 over the premise outputs, conditioned on h_N, then
      h* = tanh(W^p r + W^x h_N) (eq. 10);
    * `mode="word_by_word"`: r_t, α_t by eq. 11-13 for every hypothesis token, r_t carried across steps, then
      h* = tanh(W^p r_N + W^x h_N) (eq. 14);
    * `two_way=True` (2.5): the same weights also read the pair swapped (attend over the hypothesis conditioned on
      the premise); the two h* are concatenated;
    * a softmax layer over h*, trained with cross-entropy.

    The attention layers live in `memplugins.modules.rte_attention` (with the equation for each line).

    Deviations from the paper, all deliberate:

    * Padding is masked everywhere (the paper processes one unpadded pair at a time): LSTMs run on packed
      sequences, so h_N / c_L are each sequence's last real token; attention gives padded premise slots weight 0
      and padded hypothesis steps leave r unchanged. A padded batch gives the same outputs as each pair alone.
    * No delimiter token is read between premise and hypothesis: with separate LSTMs (or a packed shared one) the
      boundary is already explicit. A reader can add one with `start_tokens` on its tokenizer.
    * The paper keeps word2vec vectors fixed and trains only out-of-vocabulary vectors. With AllenNLP's
      `Embedding(trainable=false)` all vectors are fixed, OOV ones at their random initialisation (the paper's
      treatment of OOV words at test time).
    * Dropout (the paper's grid: 0, 0.1, 0.2) is applied to the projected inputs and to h*.

    Outputs: `label_logits`, `label_probs`, `loss` (with a gold label), `premise_attention` (`(B, L)` for
    "attention", `(B, N, L)` for "word_by_word": one row per hypothesis token), with `two_way` also
    `hypothesis_attention` (the swapped direction), and the tokens from `metadata` for display.

    Registered as a `Model` with name "rte_attention".

    # Parameters

    vocab : `Vocabulary`
    text_field_embedder : `TextFieldEmbedder`
        Embeds `premise` and `hypothesis` (the paper: fixed pretrained vectors).
    hidden_size : `int`
        k, the size of the projected inputs, the LSTM states and h*.
    mode : `str`, optional (default = `"word_by_word"`)
        "conditional", "attention" or "word_by_word".
    two_way : `bool`, optional (default = `False`)
        Also run the model with premise and hypothesis swapped and concatenate both representations.
    shared_encoders : `bool`, optional (default = `False`)
        Use one LSTM for premise and hypothesis (the paper's "conditional encoding, shared").
    dropout : `float`, optional (default = `0.0`)
        Dropout on the projected inputs and on h*.
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional (default = `InitializerApplicator()`)
    """

    def __init__(
        self,
        vocab: Vocabulary,
        text_field_embedder: TextFieldEmbedder,
        hidden_size: int,
        mode: str = "word_by_word",
        two_way: bool = False,
        shared_encoders: bool = False,
        dropout: float = 0.0,
        label_namespace: str = "labels",
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, label_namespace, **kwargs)
        if mode not in MODES:
            raise ConfigurationError(f"rte_attention: mode must be one of {MODES}, got {mode!r}")
        self._text_field_embedder = text_field_embedder
        self._mode = mode
        self._two_way = two_way
        if mode == "attention":
            self.attention_axes = {"premise_attention": ("premise",), "hypothesis_attention": ("hypothesis",)}
        elif mode == "word_by_word":  # one row per token of the sentence being read
            self.attention_axes = {
                "premise_attention": ("hypothesis", "premise"),
                "hypothesis_attention": ("premise", "hypothesis"),
            }
        self._input_projection = torch.nn.Linear(text_field_embedder.get_output_dim(), hidden_size)
        self._premise_lstm = torch.nn.LSTM(hidden_size, hidden_size, batch_first=True)
        self._hypothesis_lstm = (
            self._premise_lstm if shared_encoders else torch.nn.LSTM(hidden_size, hidden_size, batch_first=True)
        )
        self._attention: Optional[torch.nn.Module] = None
        if mode == "attention":
            self._attention = LastOutputAttention(hidden_size)
        elif mode == "word_by_word":
            self._attention = WordByWordAttention(hidden_size)
        self._output_projection = torch.nn.Linear(hidden_size, hidden_size, bias=False)  # W^x (eq. 10, 14)
        self._attention_projection = (
            torch.nn.Linear(hidden_size, hidden_size, bias=False) if self._attention is not None else None
        )  # W^p
        self._dropout = torch.nn.Dropout(dropout)
        num_labels = vocab.get_vocab_size(label_namespace)
        self._classifier = torch.nn.Linear(hidden_size * (2 if two_way else 1), num_labels)
        (initializer or InitializerApplicator())(self)

    def _read_pair(
        self, first: torch.Tensor, first_mask: torch.BoolTensor, second: torch.Tensor, second_mask: torch.BoolTensor
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Reads `first` (the premise, in the forward direction), then `second` conditioned on it; returns h*, α."""
        first_outputs, (_, first_cell) = run_masked_lstm(self._premise_lstm, first, first_mask)
        initial_state = (torch.zeros_like(first_cell), first_cell)  # conditional encoding: c_0 = c_L, h_0 = 0
        second_outputs, _ = run_masked_lstm(self._hypothesis_lstm, second, second_mask, initial_state)
        last_output = get_final_encoder_states(second_outputs, second_mask)  # h_N
        attention = None
        if self._mode == "conditional":
            pair = self._output_projection(last_output)
        elif self._mode == "attention":
            r, attention = self._attention(first_outputs, first_mask, last_output)
            pair = self._attention_projection(r) + self._output_projection(last_output)
        else:
            r, attention = self._attention(first_outputs, first_mask, second_outputs, second_mask)
            pair = self._attention_projection(r) + self._output_projection(last_output)
        return torch.tanh(pair), attention  # eq. 10 / 14

    def forward(  # type: ignore
        self,
        premise: TextFieldTensors,
        hypothesis: TextFieldTensors,
        label: Optional[torch.IntTensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        premise_mask = get_text_field_mask(premise)
        hypothesis_mask = get_text_field_mask(hypothesis)
        embedded_premise = self._dropout(self._input_projection(self._text_field_embedder(premise)))
        embedded_hypothesis = self._dropout(self._input_projection(self._text_field_embedder(hypothesis)))

        pair, premise_attention = self._read_pair(embedded_premise, premise_mask, embedded_hypothesis, hypothesis_mask)
        output_dict: Dict[str, Any] = {}
        if self._two_way:
            swapped, hypothesis_attention = self._read_pair(
                embedded_hypothesis, hypothesis_mask, embedded_premise, premise_mask
            )
            pair = torch.cat([pair, swapped], dim=-1)
            if hypothesis_attention is not None:
                output_dict["hypothesis_attention"] = hypothesis_attention
        if premise_attention is not None:
            output_dict["premise_attention"] = premise_attention

        label_logits = self._classifier(self._dropout(pair))
        return self._classification_outputs(output_dict, label_logits, label, metadata)
