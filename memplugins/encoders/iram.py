from typing import NamedTuple, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Highway
from allennlp.modules.seq2vec_encoders.seq2vec_encoder import Seq2VecEncoder
from allennlp.nn.util import masked_softmax, weighted_sum

from memplugins.encoders.checks import check_dropout, check_inputs, check_sizes
from memplugins.modules.auxiliary_loss import AuxiliaryLossMixin
from memplugins.modules.masked_lstm import run_masked_lstm


class IramOutput(NamedTuple):
    summary: torch.Tensor  # s^(T), (B, 2h)
    attention: torch.Tensor  # A, (B, T, N + T - 1): eq. 4 per sentence (its n tokens, its T - 1 summaries, zeros)
    overlap: torch.Tensor  # (1 / 2T) Σ_{i≠j} [A Aᵀ]_ij per example, (B,)


def attention_overlap(attention: torch.Tensor) -> torch.Tensor:
    """(1 / 2T) Σ_{i≠j} [A Aᵀ]_ij for each A `(B, T, columns)` (eq. 3 without γ); returns `(B,)`."""
    gram = attention @ attention.transpose(1, 2)
    off_diagonal = gram.sum((1, 2)) - gram.diagonal(dim1=1, dim2=2).sum(-1)
    return off_diagonal / (2 * attention.size(1))


def _lstm(input_size: int, hidden_size: int, num_layers: int, dropout: float) -> torch.nn.LSTM:
    lstm = torch.nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, bidirectional=True,
                         dropout=dropout if num_layers > 1 else 0.0)
    for name, parameter in lstm.named_parameters():
        if name.startswith("bias_ih"):  # forget-gate biases 1 (section 4.2); gate order i, f, g, o
            parameter.data[hidden_size : 2 * hidden_size].fill_(1.0)
    return lstm


@Seq2VecEncoder.register("iram")
class IramEncoder(Seq2VecEncoder, AuxiliaryLossMixin):
    """
    Iterative recursive attention (IRAM; Tutek and Šnajder 2018, "Iterative Recursive Attention Model for
    Interpretable Sequence Classification"), with its own contextualising BiLSTM so that it takes embedded tokens
    and composes as a plain `Seq2VecEncoder` (e.g. `basic_classifier`'s `seq2vec_encoder`, or `iram_classifier`).
    The paper's equations are garbled in the PDF extraction we have; our reading of sections 3.1-3.4:

    Encoding (3.3 vanilla / 3.4 full):
        x  = Highway^{L_e}(embeddings)                        full: 2 highway layers fine-tune the embeddings
        H  = BiLSTM_ctx(x) = [h_1 .. h_N]                     the l_ctx lower layers: contextualised tokens (2h each)
        x̂ = [c→_N ; c←_1] of the last BiLSTM layer           vanilla: the context BiLSTM's own last cell states;
                                                               full: an l_query-layer BiLSTM over H (the upper layers
                                                               of the paper's single (l_ctx + l_query)-layer BiLSTM)
        q_0 = Highway(x̂) (full) or x̂ (vanilla)
    Attention, t = 1 .. T (3.1), with H_t = [h_1 .. h_N, s^(1) .. s^(t-1)]:
        a^(t) = softmax(q_{t-1} W H_tᵀ)                       (1)  bilinear, masked (padding gets exactly 0)
        ŝ^(t) = Σ_i a_i^(t) H_t,i                              (2)
        s^(t) = Highway(ŝ^(t))                                 one highway layer, shared by all iterations
        q_t   = GRU(s^(t), q_{t-1})                            the controller (its input is the transformed summary)
    Output: s^(T). The attention matrix A (eq. 4) has row t = [a_1..a_N, a_N+1..a_N+t-1, 0 ...], T × (N + T - 1).

    Regulariser (3.2, eq. 3): L_attn = γ / (2T) Σ_{i≠j} [A Aᵀ]_ij, averaged over the batch, is contributed as the
    auxiliary loss `attention_penalty` when γ > 0 (see `memplugins.modules.auxiliary_loss`; `iram_classifier` adds
    it to the training loss and reports it); the γ-free `attention_overlap` is always reported, so runs with and
    without the regulariser can be compared. `encode` returns the summary, A, and the per-example overlap.

    With padding, each sentence's A is laid out as eq. 4 for its own n tokens (n + T - 1 columns) followed by zero
    columns up to the batch's N + T - 1. The paper's
    character n-gram vectors are not available offline; use AllenNLP's character CNN (`character_encoding`) token
    embedder beside the word vectors instead (see README).

    A drop-in for the `lstm` Seq2VecEncoder: it also takes `lstm`'s names `input_size` (for `input_dim`),
    `num_layers` (for `num_context_layers`) and `bidirectional`. The paper's BiLSTM is always bidirectional;
    `bidirectional` only sets how `hidden_size` is read, so that the output size is what the replaced `lstm`'s was:
    `true`: h = `hidden_size` per direction, output 2h; `false` (the default, as `lstm`'s): h = `hidden_size / 2`
    per direction, output `hidden_size`. The paper's configs set `true`.

    Registered as a `Seq2VecEncoder` with name "iram".

    # Parameters

    input_dim : `int`
        Size of the token embeddings (or `input_size`).
    hidden_size : `int`
        h, per direction, of every BiLSTM layer; H, the queries and the summaries have size 2h (but see
        `bidirectional`).
    num_iterations : `int`, optional (default = `3`)
        T. 0 is the paper's baseline without attention (section 4.1, "a maxout classifier over the last hidden state
        of the encoder BiLSTM"): the output is the last BiLSTM layer's final hidden states [h→_N; h←_1], and A is
        empty (no penalty).
    num_context_layers : `int`, optional (default = `1`)
        l_ctx (the paper's full model: 2).
    num_query_layers : `int`, optional (default = `0`)
        l_query; 0 is the vanilla encoder (the query is the context BiLSTM's cell state; the full model: 1).
    embedding_highway_layers : `int`, optional (default = `0`)
        Highway layers fine-tuning the embeddings (the full model: 2).
    query_highway : `bool`, optional (default = `False`)
        A highway layer from x̂ to the initial query (the full model: true).
    attention_penalty : `float`, optional (default = `0.0`)
        γ of eq. 3 (the paper: 0.0003).
    dropout : `float`, optional (default = `0.0`)
        Dropout on the embeddings and between BiLSTM layers.
    input_size : `int`, optional
        `lstm`'s name for `input_dim`.
    num_layers : `int`, optional
        `lstm`'s name for `num_context_layers`.
    bidirectional : `bool`, optional (default = `False`)
        `false`: `hidden_size` is the output size (2h), as for a unidirectional `lstm` (it must be even); `true`:
        `hidden_size` is h per direction, as for a bidirectional `lstm`.
    bias : `bool`, optional (default = `True`)
        `lstm`'s: only `true` (the BiLSTMs, highways and GRU controller have biases).
    """

    def __init__(
        self,
        input_dim: Optional[int] = None,
        hidden_size: int = None,
        num_iterations: int = 3,
        num_context_layers: Optional[int] = None,
        num_query_layers: int = 0,
        embedding_highway_layers: int = 0,
        query_highway: bool = False,
        attention_penalty: float = 0.0,
        dropout: float = 0.0,
        input_size: Optional[int] = None,
        num_layers: Optional[int] = None,
        bidirectional: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        input_dim = input_dim if input_dim is not None else input_size
        num_context_layers = num_context_layers if num_context_layers is not None else (num_layers or 1)
        if input_dim is None or hidden_size is None:
            raise ConfigurationError("iram: input_dim (or input_size) and hidden_size are required")
        check_sizes("iram", input_dim=input_dim, hidden_size=hidden_size, num_context_layers=num_context_layers)
        if not bias:
            raise ConfigurationError("iram: bias=False is not supported (the paper's BiLSTMs and GRU have biases)")
        check_dropout("iram", dropout)
        if not bidirectional:
            if hidden_size % 2:
                raise ConfigurationError(f"iram: with bidirectional: false, hidden_size ({hidden_size}) is the output "
                                         "size 2h and must be even")
            hidden_size //= 2
        if num_iterations < 0 or num_query_layers < 0 or embedding_highway_layers < 0:
            raise ConfigurationError("iram: num_iterations, num_query_layers and embedding_highway_layers must be 0 or more")
        self._input_dim = input_dim
        self._size = 2 * hidden_size
        self._num_iterations = num_iterations
        self._attention_penalty = attention_penalty
        self._dropout = torch.nn.Dropout(dropout)
        self.embedding_highway = Highway(input_dim, embedding_highway_layers) if embedding_highway_layers else None
        self.context_lstm = _lstm(input_dim, hidden_size, num_context_layers, dropout)
        self.query_lstm = _lstm(self._size, hidden_size, num_query_layers, dropout) if num_query_layers else None
        self.query_highway = Highway(self._size, 1) if query_highway else None
        self.attention_weight = torch.nn.Parameter(torch.empty(self._size, self._size))  # W of eq. 1
        torch.nn.init.xavier_uniform_(self.attention_weight)
        self.summary_highway = Highway(self._size, 1)
        self.controller = torch.nn.GRUCell(self._size, self._size)

    def get_input_dim(self) -> int:
        return self._input_dim

    def get_output_dim(self) -> int:
        return self._size

    def forward(self, tokens: torch.Tensor, mask: Optional[torch.BoolTensor] = None) -> torch.Tensor:
        return self.encode(tokens, mask).summary

    def encode(self, tokens: torch.Tensor, mask: Optional[torch.BoolTensor] = None) -> IramOutput:
        check_inputs("iram", tokens, self._input_dim)
        if mask is None:
            mask = tokens.new_ones(tokens.shape[:2], dtype=torch.bool)
        inputs = self._dropout(tokens)
        if self.embedding_highway is not None:
            inputs = self.embedding_highway(inputs)
        hidden, (final_hidden, cells) = run_masked_lstm(self.context_lstm, inputs, mask)
        hidden = hidden * mask.unsqueeze(-1)
        if self._num_iterations == 0:  # the baseline: no attention
            summary = torch.cat([final_hidden[-2], final_hidden[-1]], dim=-1)
            empty = hidden.new_zeros(hidden.size(0), 0, max(hidden.size(1) - 1, 0))
            return IramOutput(summary=summary, attention=empty, overlap=hidden.new_zeros(hidden.size(0)))
        if self.query_lstm is not None:
            _, (_, cells) = run_masked_lstm(self.query_lstm, self._dropout(hidden), mask)
        query = torch.cat([cells[-2], cells[-1]], dim=-1)  # x̂: the last layer's forward and backward cell states
        if self.query_highway is not None:
            query = self.query_highway(query)
        batch_size, num_tokens, _ = hidden.size()
        steps = self._num_iterations
        memory, memory_mask = hidden, mask
        rows = []
        for t in range(steps):
            weights = masked_softmax(((query @ self.attention_weight).unsqueeze(1) * memory).sum(-1), memory_mask)  # (1)
            summary = self.summary_highway(weighted_sum(memory, weights))  # (2), then the highway
            rows.append(torch.nn.functional.pad(weights, (0, num_tokens + steps - 1 - weights.size(1))))
            if t + 1 < steps:
                memory = torch.cat([memory, summary.unsqueeze(1)], dim=1)
                memory_mask = torch.cat([memory_mask, mask.new_ones(batch_size, 1)], dim=1)
                query = self.controller(summary, query)
        # eq. 4 per sentence: its n tokens, then the summaries, then zeros (padding columns moved to the end, so
        # that A is the same whatever the batch's padding)
        lengths = mask.sum(1, keepdim=True)
        positions = torch.arange(num_tokens + steps - 1, device=mask.device).unsqueeze(0)
        columns = torch.where(positions < lengths, positions, num_tokens + positions - lengths)
        columns = columns.clamp(max=num_tokens + steps - 2)  # past n + T - 1: a padding column (all zero)
        attention = torch.stack(rows, dim=1).gather(2, columns.unsqueeze(1).expand(-1, steps, -1))
        attention = attention * (positions < lengths + steps - 1).unsqueeze(1)
        overlap = attention_overlap(attention)
        self.add_auxiliary_metric("attention_overlap", overlap.mean())
        if self._attention_penalty > 0:
            self.add_auxiliary_loss("attention_penalty", self._attention_penalty * overlap.mean())
        return IramOutput(summary=summary, attention=attention, overlap=overlap)
