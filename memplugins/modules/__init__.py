"""
The building blocks our encoders and models share. Three kinds, from the paper to the machine:

* paper layers (`lstmn`, `rte_attention`, `tape_attention`, `memory`): the equations as `torch.nn.Module`s and
  functions, with their docstrings' equation numbers;
* fast paths (`fast/`): the recurrences as autograd Functions with hand-written backward passes, and their
  literal per-example references (`reference/`), which the tests compare them with;
* utilities (`autocast`, `masked_lstm`, `reversal`, `tree_layout`, `pair_encoding`, `auxiliary_loss`).
"""
from memplugins.modules.masked_lstm import run_masked_lstm
from memplugins.modules.rte_attention import LastOutputAttention, WordByWordAttention
from memplugins.modules.tape_attention import additive_tape_read
from memplugins.modules.lstmn import LstmnInterAttention, LstmnLayer
from memplugins.modules.memory import memory_read, memory_write
from memplugins.modules.reversal import reverse_padded
