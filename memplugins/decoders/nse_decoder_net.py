from typing import Dict, Optional, Tuple

import torch
from allennlp_models.generation.modules.decoder_nets.decoder_net import DecoderNet

from memplugins.modules.nse.memory import memory_read, memory_write


@DecoderNet.register("nse")
class NseDecoderNet(DecoderNet):
    """
    The decoder NSE of Munkhdalai and Yu's (2017, section 4.5) NSE-NSE translation model, as a `DecoderNet` for
    allennlp-models' `auto_regressive_seq_decoder`: the encoder NSE's final memory (the `nse` encoder with
    `output: "memory"`, so that `composed_seq2seq` hands it over as `encoder_outputs`) is the memory the decoder
    reads and writes at every target step — encoder and decoder share it. For the previous target word's
    embedding y_{t-1}, with the source mask for the memory slots:

        o_t = f_r^LSTM(y_{t-1})                       (1)  read LSTM (a cell: decoding is step by step)
        z_t = softmax(o_t^T M_{t-1})                   (2)  masked: source padding is never read
        m_t = z_t^T M_{t-1}                            (3)
        c_t = ReLU(W [o_t; m_t] + b)                   (4)
        h_t = f_w^LSTM(c_t)                            (5)  the decoder output, projected to the vocabulary
        M_t = M_{t-1} ⊙ (1 - z_t e_k^T) + z_t h_t^T    (6)  source padding is never written

    The memory and both LSTM states live in the decoder state (`nse_memory`, `nse_read_h`, ...), batch first, so
    beam search reorders each beam's memory with its hypothesis. The LSTM states start at zero (the paper does not
    say how the decoder NSE is initialised beyond the shared memory). The memory operations are those of the `nse`
    encoder (`memplugins.modules.nse.memory`).

    Registered as a `DecoderNet` with name "nse".

    # Parameters

    decoding_dim : `int`
        k: the size of the memory slots (the encoder's hidden size), of o_t and h_t.
    target_embedding_dim : `int`
        Size of the target word embeddings.
    dropout : `float`, optional (default = `0.0`)
        Dropout on o_t and h_t.
    """

    def __init__(self, decoding_dim: int, target_embedding_dim: int, dropout: float = 0.0) -> None:
        super().__init__(decoding_dim=decoding_dim, target_embedding_dim=target_embedding_dim, decodes_parallel=False)
        self.read_cell = torch.nn.LSTMCell(target_embedding_dim, decoding_dim)  # f_r
        self.compose = torch.nn.Linear(2 * decoding_dim, decoding_dim)  # f_c
        self.write_cell = torch.nn.LSTMCell(decoding_dim, decoding_dim)  # f_w
        self._dropout = torch.nn.Dropout(dropout)

    def init_decoder_state(self, encoder_out: Dict[str, torch.LongTensor]) -> Dict[str, torch.Tensor]:
        memory = encoder_out["encoder_outputs"]
        if memory.size(-1) != self.decoding_dim:
            raise ValueError(f"nse decoder: the encoder's memory slots have size {memory.size(-1)}, expected "
                             f"decoding_dim {self.decoding_dim} (use the nse encoder with output 'memory')")
        zeros = memory.new_zeros(memory.size(0), self.decoding_dim)
        return {"nse_memory": memory, "nse_read_h": zeros, "nse_read_c": zeros, "nse_write_h": zeros,
                "nse_write_c": zeros}

    def forward(
        self,
        previous_state: Dict[str, torch.Tensor],
        encoder_outputs: torch.Tensor,
        source_mask: torch.BoolTensor,
        previous_steps_predictions: torch.Tensor,
        previous_steps_mask: Optional[torch.BoolTensor] = None,
    ) -> Tuple[Dict[str, torch.Tensor], torch.Tensor]:
        previous_word = previous_steps_predictions[:, -1]
        read_h, read_c = self.read_cell(previous_word, (previous_state["nse_read_h"], previous_state["nse_read_c"]))
        o_t = self._dropout(read_h)  # (1)
        memory = previous_state["nse_memory"]
        z_t, m_t = memory_read(memory, source_mask, o_t)  # (2), (3)
        c_t = torch.relu(self.compose(torch.cat([o_t, m_t], dim=-1)))  # (4)
        write_h, write_c = self.write_cell(c_t, (previous_state["nse_write_h"], previous_state["nse_write_c"]))  # (5)
        h_t = self._dropout(write_h)
        state = {"nse_memory": memory_write(memory, z_t, h_t), "nse_read_h": read_h, "nse_read_c": read_c,
                 "nse_write_h": write_h, "nse_write_c": write_c}  # (6)
        return state, h_t
