"""
The Triton memory access of the NSE fast path (`memplugins.modules.fast.nse_read_kernel`), checked without a GPU:
under `TRITON_INTERPRET=1` its kernel runs on CPU tensors, so the NSE encoder with the kernel is compared with the
literal reference of eq. 1-15, outputs, keys, final memories and every gradient, in float64, padded (and unpadded),
with extra memories written and read-only, and, with the kernel's blocks cut to 4 slots or steps, over a memory and
a history of several blocks. Triton reads the variable when a kernel is defined, so the check runs in a fresh
interpreter. On CUDA, `tests/gpu_test.py` covers the kernel.
"""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("triton")
ROOT = Path(__file__).resolve().parents[3]

CHECK = textwrap.dedent(
    """
    import torch
    import memplugins.modules.fast.nse_read_kernel as kernel
    from memplugins.encoders import NseEncoder
    from memplugins.modules.reference.nse import nse_reference_batch
    from tests.modules.fast.cases import padded, randomize
    from tests.modules.fast.nse_test import CASES, batch, run

    calls = {"steps": 0}
    original = kernel.write_and_read
    def counted(*args):
        calls["steps"] += 1
        return original(*args)
    kernel.write_and_read = counted

    def compare(encoder, x, mask, extras, launches):
        before = calls["steps"]
        fast, fast_grads = run(encoder.encode(x, mask, extras), encoder, x, extras)
        assert calls["steps"] - before == launches, (calls, launches)  # one launch per memory and step
        reference, reference_grads = run(nse_reference_batch(encoder, x, mask, extras), encoder, x, extras)
        for got, expected in zip(fast, reference):
            torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)
        for got, expected in zip(fast_grads, reference_grads):
            assert got is not None and got.abs().sum() > 0
            torch.testing.assert_close(got, expected, atol=1e-11, rtol=1e-9)

    for name, options in CASES.items():
        options = dict(options)
        extras = options.pop("extras")
        for full in (False, True) if name == "mma_written" else (False,):
            encoder = randomize(NseEncoder(5, 4, num_extra_memories=extras, **options).double(), seed=2)
            x, mask, extra_memories = batch(extras, full)
            compare(encoder, x, mask, extra_memories, x.size(1) * (1 + extras))
    # blocks of 4 slots or steps: a memory of 9 slots and a history of up to 8 values run over 3 blocks
    kernel.MAX_BLOCK = 4
    encoder = randomize(NseEncoder(3, 4, num_extra_memories=1).double(), seed=5, scale=0.3)
    x, mask = padded([9, 6], 3, seed=7)
    extra, extra_mask = padded([9, 2], 4, seed=8, garbage=0.0)
    compare(encoder, x, mask, [(extra, extra_mask)], 2 * 9)
    print("kernel checked", calls)
    """
)


def test_the_triton_memory_access_equals_the_literal_reference_under_the_interpreter():
    environment = {**os.environ, "TRITON_INTERPRET": "1", "MEMPLUGINS_TRITON": "1",
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, env=environment, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "kernel checked" in result.stdout
