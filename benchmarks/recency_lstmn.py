"""
A measuring instrument for replicate.py's SST and SNLI rows, not a model of the package: our `lstmn` (Cheng et al. 2016,
eq. 4-9) with one learned score β per layer added to the most recent slot's in eq. 4:

    a_i^t = v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1}) + β [i = t-1],   i = 1 .. t-1    (4), plus β on slot t-1
    s^t   = softmax(a^t)                                                                (5)

and eq. 6-9 unchanged. β = 0 is the `lstmn`; as β grows s^t goes to 1 on slot t-1, and the layer to an LSTM with
eq. 7's weights (h~_t = h_{t-1}, c~_t = c_{t-1}). β starts at `recency_start` and is trained with the rest.

Why: at its start the `lstmn`'s scores are small (v and the W's Xavier-drawn), so s^t is near uniform and
c~_t near the mean of every earlier cell; the model starts far from an LSTM and must learn to read recent slots.
Read over the last one or two slots only (`windowed_lstmn`), it learns more from SST's phrase labels. Started near an
LSTM (β large) with the whole tape still in reach, does it stay there, or learn to read back, and does it then
learn as the windowed model or as the `lstmn`? On SST training hardly moves β (5 stays 4.98-5.14, 2 stays 2.1-2.2),
so in effect β holds each layer's weight on slot t-1 where it starts (docs/results.md, "Where its attention is
held").

Parameters, their names (β is each layer's `recency_score`) and start are the `lstmn`'s, draw for draw
(`windowed_lstmn.copies_of`); the forward is `windowed_lstmn.layer_steps` over the whole tape (eq. 4-9 step by step,
plain autograd). Right-padded batches only; left to right only; no memory addend.

The same model is now the package's `lstmn` with its opt-in `recency_start` (fast path, hand-written backward,
kernels); this instrument stays as the plain-autograd check the tests compare that option with, and for the rows
trained with it.

Registered as a `Seq2SeqEncoder` with name "recency_lstmn" when this module is imported (replicate.py's rows name it
in `packages`; the run analyses import it with the plugins).
"""
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.encoders.lstmn import LstmnEncoder
from windowed_lstmn import WindowedLstmnLayer, copies_of


class RecencyLstmnLayer(WindowedLstmnLayer):
    """A whole-tape `WindowedLstmnLayer` with the learned score β (`recency_score`) on slot t-1 (module doc)."""

    def __init__(self, input_size: int, hidden_size: int, recency_start: float, bias: bool = True) -> None:
        super().__init__(input_size, hidden_size, window=None, bias=bias)
        self.recency_score = torch.nn.Parameter(torch.tensor(float(recency_start)))


@Seq2SeqEncoder.register("recency_lstmn")
class RecencyLstmnEncoder(LstmnEncoder):
    """
    `lstmn` with a learned score β added to the most recent slot's in eq. 4 (module doc).

    # Parameters

    input_size, hidden_size, num_layers, skip_connections, dropout, bias : as `lstmn`'s.
    recency_start : `float`
        β's start in every layer (0: the `lstmn`'s start; 5: about 0.9 of s^t on slot t-1 at t = 20 while the other
        scores are near 0).
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        recency_start: float,
        num_layers: int = 1,
        skip_connections: bool = False,
        dropout: float = 0.0,
        bias: bool = True,
    ) -> None:
        if not torch.isfinite(torch.tensor(float(recency_start))):
            raise ConfigurationError(f"recency_lstmn: recency_start must be finite, not {recency_start}")
        super().__init__(input_size, hidden_size, num_layers, skip_connections, dropout, bias=bias)
        self.layers = copies_of(
            self.layers,
            lambda layer: RecencyLstmnLayer(layer.input_size, hidden_size, recency_start, bias=bias))
