import torch
from allennlp.modules.seq2seq_encoders.pytorch_seq2seq_wrapper import PytorchSeq2SeqWrapper
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from memplugins.encoders.checks import check_dropout, check_inputs, check_sizes


@Seq2SeqEncoder.register("skip_lstm")
class SkipLstmEncoder(Seq2SeqEncoder):
    """
    A stacked, left-to-right LSTM whose layers above the first also read the input: layer k + 1 reads
    [dropout(h_t^k); x_t] (Graves 2013's skip connections from the input). It is the baseline of the
    `lstmn` with `skip_connections: true`, which stacks its layers the same way (the same dropout, applied before the
    concatenation, so x_t reaches every layer undropped): with the LSTMN's tape read replaced by an LSTM's cell, the
    two encoders are the same stack. allennlp's `lstm` stacks layers on h_t^k alone, so it is that LSTMN's baseline
    only without skip connections. Each layer is one cuDNN `torch.nn.LSTM` in AllenNLP's `PytorchSeq2SeqWrapper`,
    which packs the padded batch: padding never reaches a real step, and padded outputs are zero.

    Registered as a `Seq2SeqEncoder` with name "skip_lstm".

    # Parameters

    input_size : `int`
        Size of x_t.
    hidden_size : `int`
        Size of h_t^k in every layer.
    num_layers : `int`, optional (default = `1`)
        Stacked layers; with 1 this is `lstm` of one layer.
    dropout : `float`, optional (default = `0.0`)
        Dropout on the outputs of every layer but the last, before x_t is joined to them (as `lstm`'s and
        `lstmn`'s `dropout`).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, dropout: float = 0.0) -> None:
        super().__init__()
        check_sizes("skip_lstm", input_size=input_size, hidden_size=hidden_size, num_layers=num_layers)
        check_dropout("skip_lstm", dropout=dropout)
        self._input_size = input_size
        self._hidden_size = hidden_size
        self.layers = torch.nn.ModuleList(
            PytorchSeq2SeqWrapper(torch.nn.LSTM(input_size + (hidden_size if k > 0 else 0), hidden_size,
                                                batch_first=True))
            for k in range(num_layers)
        )
        self._dropout = torch.nn.Dropout(dropout)

    def get_input_dim(self) -> int:
        return self._input_size

    def get_output_dim(self) -> int:
        return self._hidden_size

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor = None) -> torch.Tensor:
        check_inputs("skip_lstm", inputs, self._input_size)
        if mask is None:
            mask = inputs.new_ones(inputs.shape[:2], dtype=torch.bool)
        layer_input = inputs
        for k, layer in enumerate(self.layers):
            if k > 0:
                layer_input = torch.cat([self._dropout(layer_input), inputs], dim=-1)
            layer_input = layer(layer_input, mask)
        return layer_input
