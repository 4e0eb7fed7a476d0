import os
import subprocess
import sys

import pytest
import torch

import memplugins  # noqa: F401  (importing it sets the mode)
from memplugins.training import flush_denormal

DENORMAL = 1e-39  # below float32's smallest normal, 1.2e-38

flushing_supported = torch.set_flush_denormal(False)
torch.set_flush_denormal(flush_denormal.requested())


def _product_of_a_denormal() -> float:
    return (torch.tensor([DENORMAL]) * 1.5).item()


@pytest.mark.skipif(not flushing_supported, reason="this CPU cannot flush denormals")
class TestFlushDenormal:
    def test_importing_memplugins_flushes_denormals(self):
        if not flush_denormal.requested():
            pytest.skip(f"{flush_denormal.ENVIRONMENT_VARIABLE} opts out in this environment")
        assert _product_of_a_denormal() == 0.0

    def test_the_environment_variable_keeps_them(self):
        code = "import memplugins, torch; print((torch.tensor([1e-39]) * 1.5).item())"
        environment = {**os.environ, flush_denormal.ENVIRONMENT_VARIABLE: "0"}
        kept = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                              check=True).stdout.split()[-1]
        assert float(kept) == pytest.approx(1.5e-39, rel=1e-3)

    def test_adam_steps_of_normal_entries_are_bit_identical(self):
        # an erased embedding table: half its entries (weights and Adam's moments) denormal, half normal (built
        # with gradual underflow on: under the flush even storing 1e-39 as float32 gives 0)
        torch.set_flush_denormal(False)
        torch.manual_seed(0)
        shape = (400, 50)
        denormal = torch.rand(shape) < 0.5
        weight = torch.where(denormal, torch.full(shape, DENORMAL), torch.randn(shape) * 0.1)
        exp_avg = torch.where(denormal, torch.full(shape, -3e-39), torch.randn(shape) * 1e-4)
        exp_avg_sq = torch.where(denormal, torch.full(shape, 2e-39), torch.rand(shape) * 1e-7 + 1e-9)
        gradient = torch.where(denormal, torch.zeros(shape), torch.randn(shape) * 1e-3)
        assert (weight[denormal] != 0).all()

        def step(flush: bool, fused: bool) -> torch.Tensor:
            torch.set_flush_denormal(flush)
            try:
                parameter = torch.nn.Parameter(weight.clone())
                optimizer = torch.optim.Adam([parameter], lr=2e-3, weight_decay=1e-4, fused=fused,
                                             foreach=False if not fused else None)
                optimizer.state[parameter] = {"step": torch.tensor(1000.0), "exp_avg": exp_avg.clone(),
                                              "exp_avg_sq": exp_avg_sq.clone()}
                parameter.grad = gradient.clone()
                optimizer.step()
                return parameter.detach().clone()
            finally:
                torch.set_flush_denormal(flush_denormal.requested())

        for fused in (True, False):
            kept, flushed = step(False, fused), step(True, fused)
            assert torch.equal(kept[~denormal], flushed[~denormal])
            # where the state was denormal, the step differs by at most Adam's step for such an entry (below 1e-27)
            assert (kept[denormal] - flushed[denormal]).abs().max() < 1e-27
            # and the two runs did differ there: gradual underflow moved those entries, flushing left them at 0
            assert (kept[denormal] != 0).all()
            assert (flushed[denormal] == 0).all()
