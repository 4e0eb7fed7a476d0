"""
Flush denormal floats to zero on the CPU when memplugins is imported (`torch.set_flush_denormal(True)`), unless
the environment sets `MEMPLUGINS_FLUSH_DENORMAL=0`.

Why: an L2 term on an embedding table drives every row a batch does not touch towards zero (Adam and AdaGrad divide
the L2's gradient by its own running size, docs/results.md "Adam's (and AdaGrad's) L2"), so after an epoch a large
part of the table and of its optimizer state sits below float32's smallest normal number (1.2e-38). x86 CPUs
compute with such denormal numbers through a microcode assist, tens of times slower than with normal ones. Measured
on `sst5_lstmn_l2_on_embeddings` (the LSTMN with the paper's L2 on all of θ) after one epoch: 47 % of the table's
weights and 48 % of Adam's first moment were denormal; the fused Adam step on that table (23,160 x 50) took 20-40 ms
with them and 1.7-1.9 ms with them flushed (one thread), and the whole run trained at 30-38 batches/s against
50-58 for the same model without the L2 beside it. The tree LSTM configs' Adagrad L2 does the same: 29 % of the
binary tree LSTM's table was denormal at its best epoch, 35 % after 20. Without any L2 on the table, Adam's first
moment of its untouched rows decays by 0.9 a step through the same range: 54 % of it in `sst5_lstmn` after two
epochs. `benchmarks/denormal_optimizer_step.py`
measures the step.

What it changes: a float32 value below 1.2e-38 (float64: 2.2e-308), as an operand or a result, reads as 0. No
value in our models that matters is that small: Adam's step for such an entry is m / (sqrt(v) + 1e-8) with m below
1e-38, at most 1e-30, and a weight of 1e-38 adds nothing to a sum of normal numbers. Entries whose computation
meets no denormal number are bit-identical either way (tests/training/flush_denormal_test.py). Set
`MEMPLUGINS_FLUSH_DENORMAL=0` for IEEE-754's gradual underflow.

Limit: torch sets the mode for the calling thread (the main thread, which runs every op at one intra-op thread, as
`benchmarks/replicate.py --threads 1` trains). An op that torch splits over several intra-op threads still meets
denormals in the other threads' share. GPUs are unaffected: their arithmetic handles denormals at full speed.
"""
import logging
import os

import torch

logger = logging.getLogger(__name__)

ENVIRONMENT_VARIABLE = "MEMPLUGINS_FLUSH_DENORMAL"


def requested() -> bool:
    return os.environ.get(ENVIRONMENT_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")


def apply() -> bool:
    """Returns whether denormals are now flushed (False where opted out or where the CPU has no such mode)."""
    if not requested():
        return False
    flushed = torch.set_flush_denormal(True)
    if not flushed:
        logger.debug("this CPU cannot flush denormal floats to zero; training keeps IEEE gradual underflow")
    return flushed
