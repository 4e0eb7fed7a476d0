"""An NSE's weights and options as plain tensors and values: what the literal reference (`reference.py`) and the
deeper write network's loop (`deep.py`) take, so that neither reads an encoder object. `NseEncoder.weights()` makes
one."""
from typing import NamedTuple, Optional, Tuple

import torch

# torch's LSTM layer / LSTMCell weights: (weight_ih (4k, in), weight_hh (4k, k), bias_ih, bias_hh), biases None
# without biases; gates in torch's order (i, f, g, o)
LstmWeights = Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor]]


class NseWeights(NamedTuple):
    read_layers: Tuple[LstmWeights, ...]  # f_r, eq. 1, layer by layer
    write_layers: Tuple[LstmWeights, ...]  # f_w, eq. 5 / 13, layer by layer
    compose_weight: torch.Tensor  # f_c, eq. 4 / 12: ((2 + n) k -> c)
    compose_bias: Optional[torch.Tensor]
    compose_activation: str  # "relu" or "linear"
    memory_projection: Optional[torch.Tensor]  # (k, d_in) when M_0 holds projected inputs, else None
    key_strength_weight: Optional[torch.Tensor]  # w_β (1, k) of eq. 2', or None (the paper's keys)
    key_strength_bias: Optional[torch.Tensor]  # b_β (1,)
    initial_memory: str  # "inputs" (the paper's M_0) or "read_states"
    write_memory: bool  # eq. 6 (True: the paper's)
    write_extra_memories: bool  # eq. 15 (True: the paper's)

    @property
    def hidden_size(self) -> int:
        return self.read_layers[0][1].size(1)


# f_c's activations by name
COMPOSE_ACTIVATIONS = {"relu": torch.relu, "linear": lambda x: x}
