from typing import List, Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.encoders.checks import check_dropout, check_finite_or_none, check_inputs, check_sizes
from memplugins.modules.lstmn import LstmnLayer
from memplugins.modules.reversal import reverse_padded


@Seq2SeqEncoder.register("lstmn")
class LstmnEncoder(Seq2SeqEncoder):
    """
    The Long Short-Term Memory-Network of Cheng, Dong and Lapata (2016): an LSTM whose single memory cell is replaced
    by tapes of all previous hidden and memory states, read with intra-attention at every step (eq. 4-9, one
    `memplugins.modules.lstmn.LstmnLayer` per layer; see its docstring for every equation, the first step, and the
    padding treatment). Layers are stacked as in eq. 10: layer k+1 reads h_t^k (and, with `skip_connections`, also
    x_t, Graves 2013). Causal: h_t depends on x_1..x_t only, so it also serves as a language-model contextualizer.

    A drop-in for `"lstm"` in any config that takes a `Seq2SeqEncoder`: it takes `lstm`'s parameters (`input_size`,
    `hidden_size`, `num_layers`, `bidirectional`, `dropout`), and its eq. 7 weights are named like
    `torch.nn.LSTM`'s (`weight_ih`, `weight_hh`, `bias_hh`), so LSTM initializer regexes (e.g. esim's) reach them.
    After each forward, `last_attention` holds the intra-attention weights `(batch, num_layers, T, T)` (row t: the
    distribution over steps i < t) and `last_memory` the memory tape of the top layer, for models that report or
    visualise them (detached: they never keep a finished step's graph alive).

    It does not start as torch's LSTM: eq. 7's weights are Xavier-uniform and b is zero but the forget gate's 1
    (`LstmnLayer.reset_parameters`), where torch draws every weight and bias uniform in +-1/sqrt(hidden_size). A
    config that wants torch's start says so with an initializer regex, e.g. for decomposable attention's
    `premise_encoder` of hidden size 200: `["_premise_encoder.layers.0.(weight|bias)_.h$", {"type": "uniform",
    "a": -0.0707, "b": 0.0707}]`.

    The paper's LSTMN reads left to right. `bidirectional=True` (not in the paper; for configs written for a
    bidirectional `lstm`) adds a second, independent LSTMN of the same shape that reads each sequence right to left;
    the output is `[left-to-right; right-to-left]` per token (`2 * hidden_size`, as `lstm`'s), `last_attention` gets
    the right-to-left layers after the left-to-right ones (`2 * num_layers`, re-indexed to the original token order:
    row t is then a distribution over steps i > t), and `last_memory` is the concatenation of both top layers.

    Registered as a `Seq2SeqEncoder` with name "lstmn".

    # Parameters

    input_size : `int`
        Size of x_t.
    hidden_size : `int`
        Size of h_t and c_t (the paper's "memory size": 300 for language modelling, 168 for SST, 100/300 for SNLI).
    num_layers : `int`, optional (default = `1`)
        Stacked LSTMN layers (eq. 10).
    skip_connections : `bool`, optional (default = `False`)
        Feed x_t to every layer above the first, beside h_t^k.
    dropout : `float`, optional (default = `0.0`)
        Dropout on the outputs of every layer but the last (between layers).
    bidirectional : `bool`, optional (default = `False`)
        Add a right-to-left LSTMN and concatenate the outputs (see above).
    bias : `bool`, optional (default = `True`)
        `lstm`'s: the bias b of eq. 7 (`bias_ih + bias_hh`, as torch's LSTM has it); `false` leaves it out.
    stateful : `bool`, optional (default = `False`)
        `lstm`'s: only `false`. A stateful LSTM carries its state across batches; an LSTMN's state is its tape of
        the sequence's own steps, which starts empty, so `true` is a ConfigurationError.
    recency_start : `float`, optional (default = `None`)
        Not the paper's: adds a learned score β (each layer's `recency_score`, started at this value) to the most
        recent slot's score in eq. 4, which holds the attention near slot t-1 with the whole tape in reach (`None`:
        the paper's eq. 4; 0 starts there; 5 puts about 0.9 of the weight on slot t-1 at first;
        `memplugins.modules.lstmn` says what it is for).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        skip_connections: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        bias: bool = True,
        stateful: bool = False,
        recency_start: Optional[float] = None,
    ) -> None:
        super().__init__(stateful=False)
        if stateful:
            raise ConfigurationError("lstmn: stateful=True is not supported: an LSTMN's state is the tape of the "
                                     "sequence's own steps, which starts empty for every sequence")
        check_sizes("lstmn", input_size=input_size, hidden_size=hidden_size, num_layers=num_layers)
        check_dropout("lstmn", dropout)
        check_finite_or_none("lstmn", "recency_start", recency_start)
        self._input_size = input_size
        self._hidden_size = hidden_size
        self._skip_connections = skip_connections
        self.layers = torch.nn.ModuleList(
            LstmnLayer(input_size if k == 0 else hidden_size + (input_size if skip_connections else 0), hidden_size,
                       bias=bias, recency_start=recency_start)
            for k in range(num_layers)
        )
        self._dropout = torch.nn.Dropout(dropout)
        self.backward_encoder = (
            LstmnEncoder(input_size, hidden_size, num_layers, skip_connections, dropout, bias=bias,
                         recency_start=recency_start)
            if bidirectional else None
        )
        self.last_attention: Optional[torch.Tensor] = None
        self.last_memory: Optional[torch.Tensor] = None

    def get_input_dim(self) -> int:
        return self._input_size

    def get_output_dim(self) -> int:
        return self._hidden_size * (2 if self.backward_encoder is not None else 1)

    def is_bidirectional(self) -> bool:
        return self.backward_encoder is not None

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        check_inputs("lstmn", inputs, self._input_size)
        if mask is None:
            mask = inputs.new_ones(inputs.shape[:2], dtype=torch.bool)
        hidden = self._left_to_right(inputs, mask)
        if self.backward_encoder is None:
            return hidden
        backward = self.backward_encoder
        backward_hidden = reverse_padded(backward(reverse_padded(inputs, mask), mask), mask)
        backward_attention = reverse_padded(backward.last_attention, mask, dims=(2, 3))
        self.last_attention = torch.cat([self.last_attention, backward_attention], dim=1)
        self.last_memory = torch.cat([self.last_memory, reverse_padded(backward.last_memory, mask)], dim=-1)
        return torch.cat([hidden, backward_hidden], dim=-1)

    def _left_to_right(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        layer_input = inputs
        attention: List[torch.Tensor] = []
        for k, layer in enumerate(self.layers):
            if k > 0:
                layer_input = self._dropout(layer_input)
                if self._skip_connections:
                    layer_input = torch.cat([layer_input, inputs], dim=-1)
            hidden, memory, weights = layer(layer_input, mask)
            attention.append(weights)
            layer_input = hidden
        self.last_attention = torch.stack(attention, dim=1).detach()
        self.last_memory = memory.detach()
        return hidden
