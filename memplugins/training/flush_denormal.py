"""
Flush denormal floats to zero on the CPU when memplugins is imported (`torch.set_flush_denormal(True)`), unless
the environment sets `MEMPLUGINS_FLUSH_DENORMAL=0`.

Why: an L2 term on an embedding table drives every row a batch does not touch towards zero (Adam and AdaGrad divide
the L2's gradient by its own running size), so after an epoch a large part of the table and of its optimizer state
sits below float32's smallest normal number (1.2e-38); without any L2, Adam's first moment of untouched rows decays
through the same range. x86 CPUs compute with such denormal numbers through a microcode assist, tens of times slower
than with normal ones, so an optimizer step over such a table slows by an order of magnitude
(`benchmarks/speed/denormal_optimizer_step.py` measures it; docs/speed.md has the current figures).

What it changes: a float32 value below 1.2e-38 (float64: 2.2e-308), as an operand or a result, reads as 0. No
value in our models that matters is that small: Adam's step for such an entry is m / (sqrt(v) + 1e-8) with m below
1e-38, at most 1e-30, and a weight of 1e-38 adds nothing to a sum of normal numbers. Entries whose computation
meets no denormal number are bit-identical either way (tests/training/flush_denormal_test.py). Set
`MEMPLUGINS_FLUSH_DENORMAL=0` for IEEE-754's gradual underflow.

Limit: torch sets the mode for the calling thread (the main thread, which runs every op at one intra-op thread, as
`benchmarks/replication/replicate.py --threads 1` trains). An op that torch splits over several intra-op threads still meets
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
