"""
The building blocks our encoders and models share.

* One folder per recurrent encoder, each holding its equations (the package docstring), fast path, Triton kernels
  and literal reference: `lstmn/` (Cheng et al. 2016), `nse/` (Munkhdalai and Yu 2017), `tree_lstm/` (Le and
  Zuidema 2015). The registered encoders (`memplugins.encoders`) are thin `Seq2SeqEncoder` / `Seq2VecEncoder`
  wrappers over them.
* `fast_path/`: what every fast path shares: the contract, the one backend setting (eager, Triton, CUDA graphs), the
  step graphs, the LSTM cell kernel, autocast helpers.
* Other paper layers and utilities: `rte_attention` (Rocktäschel et al. 2016), `tape_attention` (an additive read of
  a tape), `pair_encoding`, `masked_lstm`, `reversal`, `auxiliary_loss`.

`fast/`, `reference/`, and the module names `autocast`, `memory`, `tree_layout` are aliases of the 0.1 layout, kept for
one release.
"""
import importlib as _importlib
import sys as _sys

from memplugins.modules.masked_lstm import run_masked_lstm
from memplugins.modules.rte_attention import LastOutputAttention, WordByWordAttention
from memplugins.modules.tape_attention import additive_tape_read
from memplugins.modules.lstmn import LstmnInterAttention, LstmnLayer
from memplugins.modules.nse.memory import memory_read, memory_write
from memplugins.modules.reversal import reverse_padded

for _old, _new in (("autocast", "memplugins.modules.fast_path.autocast"), ("memory", "memplugins.modules.nse.memory"),
                   ("tree_layout", "memplugins.modules.tree_lstm.layout")):
    _sys.modules[f"{__name__}.{_old}"] = _importlib.import_module(_new)
