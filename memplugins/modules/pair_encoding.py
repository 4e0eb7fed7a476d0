"""
Encoding a pair of sentences, shared by our pair models: the matching features of two sentence vectors, and the
NSE / MMA-NSE pair encoding (Munkhdalai and Yu 2017, section 4.1 / 4.2) that `nse_pair_classifier` (premise,
hypothesis) and `answer_selection` (answer, question) both run.
"""
from typing import TYPE_CHECKING, Dict, Optional, Tuple

import torch
from allennlp.nn.util import get_final_encoder_states

from memplugins.modules.rte_attention import LastOutputAttention

if TYPE_CHECKING:  # the encoders build on this module, never the other way round
    from memplugins.encoders.nse import NseEncoder


def matching_features(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """[u; v; |u - v|; u ⊙ v] of two sentence vectors `(B, d)` each (Mou et al. 2016's heuristic matching)."""
    return torch.cat([first, second, (first - second).abs(), first * second], dim=-1)


def encode_nse_pair(
    first_encoder: "NseEncoder",
    second_encoder: "NseEncoder",
    attention: Optional[LastOutputAttention],
    first: torch.Tensor,
    first_mask: torch.BoolTensor,
    second: torch.Tensor,
    second_mask: torch.BoolTensor,
    names: Tuple[str, str],
) -> Tuple[torch.Tensor, Dict[str, torch.Tensor]]:
    """
    Encodes `first` with its own memory, then `second` (reading, with MMA, the first's final memory when
    `second_encoder` has an extra memory); the first's representation is its last output, or with `attention`
    the blend of its outputs attended by the second's last output. Returns the matching features
    [h_1; h_2; |h_1 - h_2|; h_1 * h_2] and the inspection outputs, named after `names = (first, second)`:
    `{first}_keys`, `{second}_keys`, `{second}_{first}_keys` (MMA) and `{first}_attention` (with attention).
    """
    first_name, second_name = names
    first_encoding = first_encoder.encode(first, first_mask)
    extra = [(first_encoding.memory, first_mask)] if second_encoder.num_extra_memories else []
    second_encoding = second_encoder.encode(second, second_mask, extra)
    h_first = get_final_encoder_states(first_encoding.hidden, first_mask)
    h_second = get_final_encoder_states(second_encoding.hidden, second_mask)
    inspection = {f"{first_name}_keys": first_encoding.keys, f"{second_name}_keys": second_encoding.keys}
    if extra:
        inspection[f"{second_name}_{first_name}_keys"] = second_encoding.extra_keys[0]
    if attention is not None:
        h_first, inspection[f"{first_name}_attention"] = attention(first_encoding.hidden, first_mask, h_second)
    return matching_features(h_first, h_second), inspection
