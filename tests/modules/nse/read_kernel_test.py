"""
The Triton kernels of the NSE fast path, checked without a GPU: the memory access (`memplugins.modules.fast.
nse_read_kernel`), its backward (`nse_read_backward_kernel`), the write's backward (`nse_write_backward_kernel`)
and the write LSTM's forward and backward (`lstm_cell_kernel`). Under `TRITON_INTERPRET=1` the kernels run on CPU tensors,
so the NSE encoder with them is compared with the literal reference of eq. 1-15, outputs, keys, final memories
and every gradient, in float64, padded (and unpadded), with the own and extra memories written and read-only,
and, with the kernels' blocks cut to 4 slots or steps, over a memory and a history of several blocks. Triton reads
the variable when a kernel is defined, so the check runs in a fresh interpreter. On CUDA, `tests/gpu_test.py`
covers the kernels.
"""
import textwrap

import pytest

from tests.modules.fast_path.interpreter import run_under_interpreter

pytest.importorskip("triton")

CHECK = textwrap.dedent(
    """
    import torch
    import memplugins.modules.nse.read_kernel as kernel
    import memplugins.modules.nse.read_backward_kernel as backward_kernel
    from memplugins.encoders import NseEncoder
    from memplugins.modules.nse.reference import nse_reference_batch
    from tests.modules.fast_path.cases import padded, randomize
    from tests.modules.nse.fast_test import CASES, batch, run

    from tests.modules.fast_path.interpreter import count_launches

    import memplugins.modules.fast_path.cell_kernel as cell_kernel
    import memplugins.modules.nse.write_backward_kernel as write_kernel

    calls = count_launches([(kernel, "write_and_read", "forward"), (backward_kernel, "read_backward", "backward"),
                            (cell_kernel, "lstm_cell_backward_kernel", "cell"),
                            (cell_kernel, "lstm_cell_forward_kernel", "cell forward"),
                            (write_kernel, "write_backward", "write")])

    def compare(encoder, x, mask, extras, launches, written_launches):
        before = dict(calls)
        fast, fast_grads = run(encoder.encode(x, mask, extras), encoder, x, extras)
        for key in ("forward", "backward"):  # one launch per memory and step, each way
            assert calls[key] - before[key] == launches, (calls, launches)
        assert calls["cell"] - before["cell"] == x.size(1), calls  # the write LSTM's backward: one per step
        assert calls["cell forward"] - before["cell forward"] == x.size(1), calls  # and its forward
        assert calls["write"] - before["write"] == written_launches, calls  # a written memory's write, per step
        reference, reference_grads = run(nse_reference_batch(encoder.weights(), x, mask, extras), encoder, x, extras)
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
            written = int(encoder._write_memory) + (extras if encoder._write_extra_memories else 0)
            compare(encoder, x, mask, extra_memories, x.size(1) * (1 + extras), x.size(1) * written)
    # blocks of 4 slots or steps: a memory of 9 slots and a history of up to 8 values run over 3 blocks
    kernel.MAX_BLOCK = backward_kernel.MAX_BLOCK = write_kernel.MAX_BLOCK = 4
    encoder = randomize(NseEncoder(3, 4, num_extra_memories=1).double(), seed=5, scale=0.3)
    x, mask = padded([9, 6], 3, seed=7)
    extra, extra_mask = padded([9, 2], 4, seed=8, garbage=0.0)
    compare(encoder, x, mask, [(extra, extra_mask)], 2 * 9, 9 * (2 if encoder._write_extra_memories else 1))
    print("kernels checked", calls)
    """
)


def test_the_triton_memory_access_equals_the_literal_reference_under_the_interpreter():
    run_under_interpreter(CHECK, timeout=900)
