"""
The Triton read of the LSTMN tape (`memplugins.modules.lstmn.tape_read_kernel`) and the LSTM cell's forward and
backward (`lstm_cell_kernel`), checked without a GPU: under `TRITON_INTERPRET=1` the kernels run on CPU tensors,
so the LSTMN layer with the kernels (forward and backward) is compared with the literal reference of eq. 4-9,
outputs, attention and every gradient, in float64, padded, with deep fusion's addend, with the recency score β, and
over a tape longer than one block of the kernels' loops. Triton reads the variable when a kernel is defined, so the
check runs in a fresh interpreter. On CUDA, `tests/gpu_test.py` covers the kernels.
"""
import textwrap

import pytest

from tests.modules.fast_path.interpreter import run_under_interpreter

pytest.importorskip("triton")

CHECK = textwrap.dedent(
    """
    import torch
    import memplugins.modules.lstmn.tape_read_kernel as kernel
    from memplugins.modules import LstmnLayer
    from memplugins.modules.lstmn.reference import lstmn_reference_batch
    from tests.modules.fast_path.cases import padded, randomize
    from tests.modules.lstmn.fast_test import outputs_and_gradients

    from tests.modules.fast_path.interpreter import count_launches

    import memplugins.modules.fast_path.cell_kernel as cell_kernel

    calls = count_launches([(kernel, "tape_read_forward", "forward"), (kernel, "tape_read_backward", "backward"),
                            (cell_kernel, "lstm_cell_backward_kernel", "cell"),
                            (cell_kernel, "lstm_cell_forward_kernel", "cell forward")])

    # (lengths, input size, hidden size, with the addend, recency_start): the last two have two blocks of 64 slots
    # (β's slot t-1 in either block)
    for lengths, size, hidden, with_addend, recency in [([6, 3, 1, 5], 5, 4, False, None),
                                                        ([6, 3, 1, 5], 5, 4, True, None),
                                                        ([6, 3, 1, 5], 5, 4, False, 0.0),
                                                        ([70, 33], 3, 4, True, None), ([70, 66], 3, 4, False, 0.0)]:
        layer = randomize(LstmnLayer(size, hidden, recency_start=recency).double())
        x, mask = padded(lengths, size, seed=1)
        addend = torch.randn(len(lengths), max(lengths), hidden, dtype=torch.float64,
                             generator=torch.Generator().manual_seed(2)).requires_grad_() if with_addend else None
        before = dict(calls)
        fast, fast_grads = outputs_and_gradients(lambda m, *a: m(*a), layer, x, mask, addend)
        assert calls["forward"] - before["forward"] == max(lengths) - 1, calls  # one launch per step that reads
        assert calls["backward"] - before["backward"] == max(lengths) - 1, calls
        assert calls["cell"] - before["cell"] == max(lengths), calls  # the cell's backward: one launch per step
        assert calls["cell forward"] - before["cell forward"] == max(lengths), calls  # and its forward
        reference, reference_grads = outputs_and_gradients(
            lambda layer, x, mask, addend: lstmn_reference_batch(x, mask, layer.weights(), addend), layer, x, mask, addend)
        for got, expected in zip(list(fast) + list(fast_grads), list(reference) + list(reference_grads)):
            assert got.abs().sum() > 0
            torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)
        with torch.no_grad():
            for got, expected in zip(layer(x, mask, addend)[:2], fast[:2]):
                torch.testing.assert_close(got, expected, atol=0, rtol=0)
    print("kernels checked", calls)
    """
)


def test_the_triton_read_equals_the_literal_reference_under_the_interpreter():
    run_under_interpreter(CHECK, timeout=600)
