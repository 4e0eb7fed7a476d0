from typing import Optional, Tuple

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def run_masked_lstm(
    lstm: torch.nn.LSTM,
    inputs: torch.Tensor,
    mask: torch.BoolTensor,
    initial_state: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """
    Runs a `batch_first` `torch.nn.LSTM` over right-padded sequences so that padding never enters the recurrence:
    the outputs are zero at padded positions and the returned final `(h, c)` are those of each sequence's last real
    token. (A plain LSTM call would run on through the padding, so a padded batch would not match each sequence
    alone.) Sequences of length 0 are run for one step on their first (padding) position; callers mask them.

    inputs: `(batch, time, input_dim)`, mask: `(batch, time)`, initial_state: `(h_0, c_0)` each
    `(num_layers * directions, batch, hidden)`. Returns outputs `(batch, time, hidden * directions)` and `(h_n, c_n)`.

    Under CPU autocast the LSTM runs in float32: autocast sends an unpacked CPU LSTM to oneDNN in bfloat16, which
    fails ("could not create a primitive descriptor for the LSTM forward propagation primitive") on processors
    without AVX512-BF16, while the packed path already runs float32, so a batch with padding would work and one
    without would not. CUDA autocast is left alone (cuDNN's float16 LSTM).
    """
    if inputs.device.type == "cpu" and torch.is_autocast_enabled("cpu"):
        with torch.autocast("cpu", enabled=False):
            state = None if initial_state is None else tuple(s.float() for s in initial_state)
            return run_masked_lstm(lstm, inputs.float(), mask, state)
    lengths = mask.sum(dim=1).clamp(min=1).cpu()
    if bool((lengths == inputs.size(1)).all()):  # nothing padded: packing would only cost time
        return lstm(inputs, initial_state)
    packed = pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
    packed_outputs, final_state = lstm(packed, initial_state)
    outputs, _ = pad_packed_sequence(packed_outputs, batch_first=True, total_length=inputs.size(1))
    return outputs, final_state
