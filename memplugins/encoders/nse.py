import math
from typing import List, NamedTuple, Optional, Sequence, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.encoders.checks import check_dropout, check_inputs, check_sizes
from memplugins.modules.masked_lstm import run_masked_lstm
from memplugins.modules.nse.deep import nse_deep_write
from memplugins.modules.nse.fast import CellWeights, Memory, nse_recurrence
from memplugins.modules.nse.weights import COMPOSE_ACTIVATIONS, NseWeights
from memplugins.modules.reversal import reverse_padded

OUTPUTS = ("hidden", "memory")
INITIAL_MEMORIES = ("inputs", "read_states")
DROPOUT_PLACEMENTS = ("outputs", "inputs")


class NseOutput(NamedTuple):
    """Everything one NSE pass produces (see `NseEncoder.encode`)."""

    hidden: torch.Tensor  # h_t, (B, T, k); 0 at padding
    memory: torch.Tensor  # M_T, (B, T, k): the final encoding memory
    keys: torch.Tensor  # z_t over the own memory, (B, T, T): row t is step t's key; 0 at padding
    extra_memories: List[torch.Tensor]  # M^n_T for each extra memory (unchanged when write_extra_memories is false)
    extra_keys: List[torch.Tensor]  # z^n_t, (B, T, n_slots) each


@Seq2SeqEncoder.register("nse")
class NseEncoder(Seq2SeqEncoder):
    """
    Neural Semantic Encoder (Munkhdalai and Yu 2017, "Neural Semantic Encoders", EACL), with multiple memory access
    (MMA-NSE, section 3.2): read LSTM, key over the memory slots, compose, write LSTM, erase-and-write (eq. 1-6; extra
    memories eq. 7-15). The equations, the ablation options (`write_memory`, `initial_memory`, `key_strength`), the
    masking the authors' code lacked and why the fast path equals them are written out in `memplugins.modules.nse`.

    As a `Seq2SeqEncoder`, `forward(inputs, mask)` returns h_t per token (`output="hidden"`) or the final memory
    M_T (`output="memory"`, one slot per token, the same shape). Models that need more call `encode(...)`, which
    returns an `NseOutput` with the final memory and the keys z_t, and which takes extra memories for MMA-NSE. The
    last `forward`'s `NseOutput` is also kept, detached, in `last_output` (for visualisation of z_t from any config;
    detached so that it never keeps a finished step's graph alive into the next step). `weights()` gives the weights
    as plain tensors (`memplugins.modules.nse.weights.NseWeights`), for the literal reference. A drop-in for `"lstm"`: it also takes `lstm`'s `num_layers` (the layers of both f_r and f_w, unless
    `num_read_layers` / `num_write_layers` are given) and `bidirectional`. The paper's NSE reads left to right;
    `bidirectional=True` (not in the paper; for configs written for a bidirectional `lstm`) adds a second,
    independent NSE of the same shape that reads each sequence right to left, and `forward` returns
    `[left-to-right; right-to-left]` per token (`2 * hidden_size`, as `lstm`'s). `last_output` is the left-to-right
    pass's; `backward_encoder.last_output` is the right-to-left one's, in reversed token order. `encode` (for models
    that use the memory and keys) stays left to right and refuses a bidirectional encoder.

    Registered as a `Seq2SeqEncoder` with name "nse".

    # Parameters

    input_size : `int`
        Size of x_t.
    hidden_size : `int`
        k: size of o_t, h_t and of every memory slot (extra memories must have slots of this size too).
    num_read_layers : `int`, optional (default = `1`)
        Layers of the read LSTM f_r.
    num_write_layers : `int`, optional (default = `1`)
        Layers of the write LSTM f_w.
    num_extra_memories : `int`, optional (default = `0`)
        How many extra memories `encode` is given (MMA-NSE); fixes the compose MLP's input size (2 + n) k.
    write_extra_memories : `bool`, optional (default = `True`)
        Write h_t back into the extra memories (eq. 15, the paper's behaviour); if false they are only read.
    write_memory : `bool`, optional (default = `True`)
        Write h_t into the encoding memory (eq. 6, the paper's behaviour); if false it stays M_0 and is only read
        (then `output="memory"` returns M_0).
    initial_memory : `str`, optional (default = `"inputs"`)
        What M_0's slot t holds: "inputs", x_t (projected to k when `input_size != hidden_size`; the paper's), or
        "read_states", the read LSTM's o_t (see above; no projection then). With `dropout_placement="inputs"`,
        o_t is computed from the dropped x_t, as the queries are.
    key_strength : `bool`, optional (default = `False`)
        Scale each step's scores by β_t = softplus(w_β^T o_t + b_β), a learned key strength (see above; β_t = 1 at
        the start). Adds w_β and b_β (`key_strength`, a `Linear(k, 1)` with a bias even when `bias=False`, since
        b_β sets β's start) to the parameters; archives trained without it load unchanged.
    output : `str`, optional (default = `"hidden"`)
        What `forward` returns: "hidden" (h_t) or "memory" (M_T).
    dropout : `float`, optional (default = `0.0`)
        Dropout on the read and write networks (the paper: "the write/read neural nets ... were regularized by
        dropouts", without saying where), placed by `dropout_placement`.
    dropout_placement : `str`, optional (default = `"outputs"`)
        "outputs": on the read LSTM's output o_t (so on the query of eq. 2 and the o_t of eq. 4) and on the write
        LSTM's output h_t (so on what eq. 6 writes and what `forward` returns). "inputs": on what the two LSTMs read,
        x_t before f_r (M_0 keeps the undropped x) and c_t before f_w, as the authors' released SNLI code places it;
        the keys, the memory and the outputs are then undropped. With deeper f_w, "inputs" drops c_t before its first
        layer only. Each mask is drawn once for all steps.
    num_layers : `int`, optional (default = `None`)
        `lstm`'s name: the default of `num_read_layers` and `num_write_layers`.
    compose_size : `int`, optional (default = `hidden_size`)
        Output size of f_c, and input size of f_w (the authors' code: the compose input's size, (2 + n) k).
    compose_activation : `str`, optional (default = `"relu"`)
        f_c's activation: "relu" or "linear" (the authors' code).
    bidirectional : `bool`, optional (default = `False`)
        Add a right-to-left NSE and concatenate the outputs (see above).
    bias : `bool`, optional (default = `True`)
        `lstm`'s: the biases of the read and write LSTMs and of f_c; `false` leaves them out.
    stateful : `bool`, optional (default = `False`)
        `lstm`'s: only `false` (an NSE's memory is initialised from each sequence's own inputs).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_read_layers: Optional[int] = None,
        num_write_layers: Optional[int] = None,
        num_extra_memories: int = 0,
        write_extra_memories: bool = True,
        write_memory: bool = True,
        initial_memory: str = "inputs",
        key_strength: bool = False,
        output: str = "hidden",
        dropout: float = 0.0,
        dropout_placement: str = "outputs",
        num_layers: Optional[int] = None,
        bidirectional: bool = False,
        compose_size: Optional[int] = None,
        compose_activation: str = "relu",
        bias: bool = True,
        stateful: bool = False,
    ) -> None:
        super().__init__(stateful=False)
        if stateful:
            raise ConfigurationError("nse: stateful=True is not supported: an NSE's memory is initialised from each "
                                     "sequence's own inputs")
        if compose_activation not in COMPOSE_ACTIVATIONS:
            raise ConfigurationError(f"nse: compose_activation must be one of {list(COMPOSE_ACTIVATIONS)}")
        compose_size = compose_size or hidden_size
        self._compose_activation_name = compose_activation
        check_sizes("nse", input_size=input_size, hidden_size=hidden_size, num_read_layers=num_read_layers,
                    num_write_layers=num_write_layers, num_layers=num_layers, compose_size=compose_size)
        check_dropout("nse", dropout)
        if dropout_placement not in DROPOUT_PLACEMENTS:
            raise ConfigurationError(f"nse: dropout_placement must be one of {DROPOUT_PLACEMENTS}, got "
                                     f"{dropout_placement!r}")
        self._dropout_placement = dropout_placement
        if isinstance(num_extra_memories, bool) or not isinstance(num_extra_memories, int) or num_extra_memories < 0:
            raise ConfigurationError(f"nse: num_extra_memories must be 0 or more, got {num_extra_memories!r}")
        num_read_layers = num_read_layers or num_layers or 1
        num_write_layers = num_write_layers or num_layers or 1
        if output not in OUTPUTS:
            raise ConfigurationError(f"nse: output must be one of {OUTPUTS}, got {output!r}")
        if initial_memory not in INITIAL_MEMORIES:
            raise ConfigurationError(f"nse: initial_memory must be one of {INITIAL_MEMORIES}, got {initial_memory!r}")
        self._input_size = input_size
        self.hidden_size = hidden_size
        self._num_extra_memories = num_extra_memories
        self._write_extra_memories = write_extra_memories
        self._write_memory = write_memory
        self._initial_memory = initial_memory
        self._output = output
        self.memory_projection = (  # read states already have k features
            torch.nn.Linear(input_size, hidden_size, bias=False)
            if input_size != hidden_size and initial_memory == "inputs"
            else None
        )
        self.read_lstm = torch.nn.LSTM(input_size, hidden_size, num_layers=num_read_layers, bias=bias,  # f_r
                                       batch_first=True)
        self.key_strength = torch.nn.Linear(hidden_size, 1) if key_strength else None  # w_β, b_β of (2')
        if self.key_strength is not None:  # β_t = softplus(log(e - 1)) = 1 at the start: the paper's keys
            torch.nn.init.zeros_(self.key_strength.weight)
            torch.nn.init.constant_(self.key_strength.bias, math.log(math.e - 1))
        self.compose = torch.nn.Linear((2 + num_extra_memories) * hidden_size, compose_size, bias=bias)  # f_c
        self.write_cells = torch.nn.ModuleList(  # f_w, stepped
            torch.nn.LSTMCell(compose_size if layer == 0 else hidden_size, hidden_size, bias=bias)
            for layer in range(num_write_layers)
        )
        self._dropout = torch.nn.Dropout(dropout)
        self.backward_encoder = (
            NseEncoder(input_size, hidden_size, num_read_layers, num_write_layers, write_memory=write_memory,
                       initial_memory=initial_memory, key_strength=key_strength, output=output, dropout=dropout,
                       dropout_placement=dropout_placement, compose_size=compose_size,
                       compose_activation=compose_activation, bias=bias)
            if bidirectional
            else None
        )
        if bidirectional and num_extra_memories:
            raise ConfigurationError("nse: bidirectional encoders have no extra memories (encode is left to right)")
        self.last_output: Optional[NseOutput] = None

    def get_input_dim(self) -> int:
        return self._input_size

    def get_output_dim(self) -> int:
        return self.hidden_size * (2 if self.backward_encoder is not None else 1)

    def is_bidirectional(self) -> bool:
        return self.backward_encoder is not None

    def weights(self) -> NseWeights:
        """This NSE's weights and options as plain tensors and values (its left-to-right pass's)."""
        def lstm_layer(prefix: str, module) -> tuple:
            return tuple(getattr(module, f"{name}{prefix}", None) for name in ("weight_ih", "weight_hh", "bias_ih",
                                                                                "bias_hh"))

        return NseWeights(
            read_layers=tuple(lstm_layer(f"_l{layer}", self.read_lstm) for layer in range(self.read_lstm.num_layers)),
            write_layers=tuple(lstm_layer("", cell) for cell in self.write_cells),
            compose_weight=self.compose.weight, compose_bias=self.compose.bias,
            compose_activation=self._compose_activation_name,
            memory_projection=self.memory_projection.weight if self.memory_projection is not None else None,
            key_strength_weight=self.key_strength.weight if self.key_strength is not None else None,
            key_strength_bias=self.key_strength.bias if self.key_strength is not None else None,
            initial_memory=self._initial_memory, write_memory=self._write_memory,
            write_extra_memories=self._write_extra_memories)

    @property
    def num_extra_memories(self) -> int:
        """How many extra memories `encode` takes (0 for a plain NSE)."""
        return self._num_extra_memories

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        if self._num_extra_memories:
            raise ConfigurationError("nse with num_extra_memories > 0 needs the memories: call encode(...)")
        if mask is None:
            mask = inputs.new_ones(inputs.shape[:2], dtype=torch.bool)
        output = self._encode(inputs, mask)
        self.last_output = NseOutput(
            hidden=output.hidden.detach(),
            memory=output.memory.detach(),
            keys=output.keys.detach(),
            extra_memories=[m.detach() for m in output.extra_memories],
            extra_keys=[z.detach() for z in output.extra_keys],
        )
        encoded = output.hidden if self._output == "hidden" else output.memory
        if self.backward_encoder is None:
            return encoded
        backward = reverse_padded(self.backward_encoder(reverse_padded(inputs, mask), mask), mask)
        return torch.cat([encoded, backward], dim=-1)

    def initial_memory(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, read_outputs: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        """M_0, zero at padding: the inputs (projected to k if needed), or with `initial_memory="read_states"` the
        read LSTM's outputs o_t, `read_outputs` `(B, T, k)` (undropped) if the caller has them, else run here."""
        if self._initial_memory == "read_states":
            memory = read_outputs if read_outputs is not None else run_masked_lstm(self.read_lstm, inputs, mask)[0]
        else:
            memory = self.memory_projection(inputs) if self.memory_projection is not None else inputs
        return memory * mask.unsqueeze(-1)

    def _read_and_initial_memory(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, input_dropout: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Eq. 1 for all t at once, o_t `(B, T, k)` over x_t (times `input_dropout`, if given), and M_0 (before any
        dropout on o_t): what the fast path and the deep loop (`nse_deep_write`) both start from."""
        read_inputs = inputs if input_dropout is None else inputs * input_dropout
        read_outputs, _ = run_masked_lstm(self.read_lstm, read_inputs, mask)  # (1), fused over all t
        return read_outputs, self.initial_memory(inputs, mask, read_outputs)

    def key_strengths(self, read_outputs: torch.Tensor) -> Optional[torch.Tensor]:
        """β_t = softplus(w_β^T o_t + b_β) `(B, T, 1)` (eq. 2') for the queries o_t `read_outputs`, or None without
        `key_strength`."""
        if self.key_strength is None:
            return None
        return torch.nn.functional.softplus(self.key_strength(read_outputs))

    def key_queries(self, read_outputs: torch.Tensor) -> torch.Tensor:
        """What eq. 2 and 10 multiply with each memory's slots, `(B, T, k)`: the queries o_t `read_outputs` (after
        their dropout), or β_t o_t with `key_strength` (eq. 2')."""
        strengths = self.key_strengths(read_outputs)
        return read_outputs if strengths is None else read_outputs * strengths

    def encode(
        self,
        inputs: torch.Tensor,
        mask: torch.BoolTensor,
        extra_memories: Sequence[Tuple[torch.Tensor, torch.BoolTensor]] = (),
    ) -> NseOutput:
        """
        inputs `(B, T, input_size)`, mask `(B, T)`, extra_memories: `num_extra_memories` pairs of a memory
        `(B, n_slots, k)` and its mask `(B, n_slots)` (e.g. another NSE's `NseOutput.memory` and its mask).
        """
        if self.backward_encoder is not None:
            raise ConfigurationError("nse: encode(...) is left to right; this model needs bidirectional: false")
        return self._encode(inputs, mask, extra_memories)

    def _dropout_mask(self, inputs: torch.Tensor, size: Optional[int] = None) -> Optional[torch.Tensor]:
        """A scaled dropout mask `(B, T, size)` (default size k) for all steps at once, or None when dropout is
        off."""
        if not (self.training and self._dropout.p > 0):
            return None
        return self._dropout(inputs.new_ones(*inputs.shape[:2], size or self.hidden_size))

    def _input_dropout_masks(self, inputs: torch.Tensor) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
        """`dropout_placement="inputs"`'s masks, drawn in this order: x_t's `(B, T, input_size)` and c_t's
        `(B, T, c)`."""
        return self._dropout_mask(inputs, self._input_size), self._dropout_mask(inputs, self.compose.out_features)

    def _encode(
        self,
        inputs: torch.Tensor,
        mask: torch.BoolTensor,
        extra_memories: Sequence[Tuple[torch.Tensor, torch.BoolTensor]] = (),
    ) -> NseOutput:
        if len(extra_memories) != self._num_extra_memories:
            raise ConfigurationError(
                f"nse was built for {self._num_extra_memories} extra memories, got {len(extra_memories)}"
            )
        check_inputs("nse", inputs, self._input_size)
        for extra, _ in extra_memories:
            if extra.size(-1) != self.hidden_size:
                raise ConfigurationError(f"nse: an extra memory's slots have {extra.size(-1)} features; they must have "
                                         f"hidden_size = {self.hidden_size}")
        on_inputs = self._dropout_placement == "inputs"
        if len(self.write_cells) > 1:  # the fast path has one write-LSTM layer: deeper f_w runs the batched step loop
            if on_inputs:
                input_dropout, compose_dropout = self._input_dropout_masks(inputs)
                read_outputs, initial = self._read_and_initial_memory(inputs, mask, input_dropout)
                return NseOutput(*nse_deep_write(self.weights(), read_outputs, initial, mask, extra_memories,
                                                 compose_dropout=compose_dropout))
            read_dropout, value_dropout = self._dropout_mask(inputs), self._dropout_mask(inputs)
            read_outputs, initial = self._read_and_initial_memory(inputs, mask)
            return NseOutput(*nse_deep_write(self.weights(), read_outputs, initial, mask, extra_memories,
                                             read_dropout, value_dropout))
        # "inputs": on x_t and c_t, o_t and h_t undropped; "outputs": on o_t and h_t
        input_dropout, compose_dropout = self._input_dropout_masks(inputs) if on_inputs else (None, None)
        read_outputs, initial = self._read_and_initial_memory(inputs, mask, input_dropout)
        dropout_mask = None
        if not on_inputs:
            read_outputs = self._dropout(read_outputs)
            dropout_mask = self._dropout_mask(inputs)  # on h_t: drawn for all steps at once
        k = self.hidden_size
        queries = self.key_queries(read_outputs)  # o_t, or β_t o_t (2'): the loop reads with these
        memories = [(initial, mask, self._write_memory)]
        memories += [(extra, extra_mask, self._write_extra_memories) for extra, extra_mask in extra_memories]
        # M_0 o_t (β_t o_t) for all t, and the o_t half of (4) with its bias, as batched products outside the loop
        memories = [Memory(torch.bmm(initial, queries.transpose(1, 2)), initial, slots, written)
                    for initial, slots, written in memories]
        composed_reads = torch.nn.functional.linear(read_outputs, self.compose.weight[:, :k], self.compose.bias)
        cell = self.write_cells[0]
        values, keys, decays, write_weights = nse_recurrence(  # (2)-(6), (10)-(15)
            queries, composed_reads, mask, dropout_mask, memories,
            CellWeights(self.compose.weight[:, k:], cell.weight_ih, cell.weight_hh,
                        cell.bias_ih + cell.bias_hh if cell.bias else cell.weight_ih.new_zeros(4 * k)),
            self._compose_activation_name, compose_dropout,
        )
        finals, written_index = [], 0
        for memory in memories:  # M_T = diag(a_T) M_0 + W_T H_T
            if memory.written:
                decay, weights = decays[written_index], write_weights[written_index]
                finals.append(memory.initial * decay.unsqueeze(-1) + torch.bmm(weights, values))
                written_index += 1
            else:
                finals.append(memory.initial)
        return NseOutput(hidden=values, memory=finals[0], keys=keys[0], extra_memories=finals[1:],
                         extra_keys=keys[1:])
