"""
The Triton kernels of the NSE fast path, checked without a GPU: the memory access (`memplugins.modules.fast.
nse_read_kernel`), its backward (`nse_read_backward_kernel`), the write's backward (`nse_write_backward_kernel`),
the write LSTM's forward (`fast_path.cell_kernel`) and its backward (`nse.cell_backward_kernel`). Under
`TRITON_INTERPRET=1` the kernels run on CPU tensors, so the NSE encoder with them is compared with the literal
reference of eq. 1-15, outputs, keys, final memories and every gradient, in float64, padded (and unpadded), with the
own and extra memories written and read-only, with dropout on h_t or on c_t (the masks drawn as the reference is
given them), with steps masked inside a sequence (against the sequence without them), with every step taken as
possibly padded (what a CUDA graph's capture records: `step_graphs.step_is_full`), and, with the kernels' blocks cut
to 4 slots or steps, over a memory and a history of several blocks. Triton reads
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
    import memplugins.modules.nse.backward as nse_backward
    import memplugins.modules.nse.cell_backward_kernel as cell_backward_kernel
    import memplugins.modules.nse.fast as nse_fast
    import memplugins.modules.nse.write_backward_kernel as write_kernel
    from tests.modules.nse import fast_test

    calls = count_launches([(kernel, "write_and_read", "forward"), (backward_kernel, "read_backward", "backward"),
                            (cell_backward_kernel, "cell_backward", "cell"),
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

    def compare_case(name, full):
        options = dict(CASES[name])
        extras = options.pop("extras")
        encoder = randomize(NseEncoder(5, 4, num_extra_memories=extras, **options).double(), seed=2)
        x, mask, extra_memories = batch(extras, full)
        written = int(encoder._write_memory) + (extras if encoder._write_extra_memories else 0)
        compare(encoder, x, mask, extra_memories, x.size(1) * (1 + extras), x.size(1) * written)

    for name in CASES:
        for full in (False, True) if name == "mma_written" else (False,):
            compare_case(name, full)

    def as_captured(mask):  # every step possibly padded: the masked path a capture records, on every step
        return [False] * mask.size(1)

    # dropout on h_t and on c_t (each test draws the masks the reference is given), then as captured
    for step_is_full in (nse_fast.step_is_full, as_captured):
        nse_fast.step_is_full = nse_backward.step_is_full = step_is_full
        before = dict(calls)
        fast_test.test_dropout_draws_one_mask_for_all_steps_and_matches_the_reference_given_it(1, {})
        for compose in ({}, dict(compose_size=12, compose_activation="linear")):
            fast_test.test_dropout_on_the_lstms_inputs_matches_the_reference_given_its_masks(1, compose)
        assert calls["cell"] - before["cell"] == 3 * max(fast_test.LENGTHS), calls
        # steps masked inside a sequence: the state they pass through (the kernels' kept adjoints)
        before = dict(calls)
        for compose in ("relu", "linear"):
            fast_test.check_steps_masked_inside_a_sequence_are_skipped(compose)
        assert calls["cell"] > before["cell"] and calls["backward"] > before["backward"], calls
    for name in ("nse", "mma_written", "linear_wide"):  # as captured: no step full, padded or not
        for full in (False, True):
            compare_case(name, full)
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
