"""
Forward+backward time of memplugins' recurrent encoders against `torch.nn.LSTM` of the same size, measured in one
run (repetitions interleaved, medians reported) so that the ratio is meaningful on a noisy machine.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/encoders.py [--batch 32 --steps 40 --dim 300 --repeats 15]
        [--device cpu] [--amp [--amp-dtype bfloat16]] [--conditions quiet busy]
        [--encoders torch.nn.LSTM "nse deep" "nse deep (reference)" ...]

Prints a table per condition: encoder, median ms per forward+backward, ratio to torch.nn.LSTM, and on CUDA the
peak memory of one step, the kernels one forward+backward launches and the fraction of its wall time the GPU was
busy (benchmarks/speed/cuda_profile.py). `--amp` runs every step under autocast (float16 on CUDA unless `--amp-dtype`
says bfloat16), as `"use_amp": true` does. On CUDA the rows "lstmn (graphs)" and "nse (graphs)" run the same
encoders with `MEMPLUGINS_CUDA_GRAPHS=1` (`memplugins.modules.fast_path.step_graphs`: the step loops as CUDA graphs);
their capture happens in the warm-up.
`--conditions busy` runs the measurements while a second single-thread process (torch.nn.LSTM forward + backward
in a loop, `benchmarks/speed/load.py`) competes for the machine; the ratios are always measured within one condition.
"""
import argparse
import os
import statistics
import sys
import time

import torch

from memplugins.encoders import IramEncoder, LstmnEncoder, NseEncoder
from memplugins.modules.nse.reference import nse_reference_batch

try:
    from cuda_profile import profile_columns
    from load import conditions
except ImportError:  # run as a module from the repository root
    from benchmarks.cuda_profile import profile_columns
    from benchmarks.load import conditions


GRAPHS = " (graphs)"


def build(name: str, dim: int) -> torch.nn.Module:
    name = name.replace(GRAPHS, "")
    if name == "torch.nn.LSTM":
        return torch.nn.LSTM(dim, dim, batch_first=True)
    if name == "lstmn":
        return LstmnEncoder(dim, dim)
    if name == "lstmn recency":  # the opt-in score β on the most recent slot (memplugins.modules.lstmn)
        return LstmnEncoder(dim, dim, recency_start=5.0)
    if name == "nse":
        return NseEncoder(dim, dim)
    if name == "nse deep":  # answer selection's NSE: two read and two write LSTM layers (memplugins/modules/nse/deep.py)
        return NseEncoder(dim, dim, num_read_layers=2, num_write_layers=2)
    if name == "nse deep (reference)":  # the same, through the literal per-example reference that it ran before
        return _Reference(NseEncoder(dim, dim, num_read_layers=2, num_write_layers=2))
    if name == "iram":  # the full encoder's shape: l_ctx = 2 + l_query = 1 BiLSTM layers (h = d / 2), T = 3
        return IramEncoder(dim, dim // 2, num_context_layers=2, num_query_layers=1, embedding_highway_layers=2,
                           bidirectional=True,
                           query_highway=True, attention_penalty=0.0003)
    if name == "bilstm x3":  # what IRAM's BiLSTM costs alone
        return torch.nn.LSTM(dim, dim // 2, num_layers=3, bidirectional=True, batch_first=True)
    raise ValueError(name)


class _Reference(torch.nn.Module):
    def __init__(self, encoder: NseEncoder) -> None:
        super().__init__()
        self.encoder = encoder

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return nse_reference_batch(self.encoder.weights(), x, mask)[0]


def step(name: str, module: torch.nn.Module, x: torch.Tensor, mask: torch.Tensor, amp: bool = False,
         amp_dtype: str = "float16") -> None:
    module.zero_grad(set_to_none=True)
    os.environ["MEMPLUGINS_CUDA_GRAPHS"] = "1" if name.endswith(GRAPHS) else "0"
    with torch.autocast(x.device.type, dtype=getattr(torch, amp_dtype), enabled=amp):
        output = module(x)[0] if name in ("torch.nn.LSTM", "bilstm x3") else module(x, mask)
    output.float().sum().backward()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--amp", action="store_true", help="every step under autocast (CUDA only)")
    parser.add_argument("--amp-dtype", choices=["float16", "bfloat16"], default="float16")
    parser.add_argument("--encoders", nargs="*", default=None,
                        help="default: torch.nn.LSTM lstmn nse iram 'bilstm x3', and on CUDA 'lstmn (graphs)' "
                             "'nse (graphs)'")
    parser.add_argument("--conditions", nargs="*", default=["quiet"], help="quiet and/or busy (benchmarks/speed/load.py)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="instead of timing, print torch.profiler's top N operators (self CPU time) per encoder")
    args = parser.parse_args()
    device = torch.device(args.device)
    if args.encoders is None:
        args.encoders = ["torch.nn.LSTM", "lstmn", "nse", "iram", "bilstm x3"]
        if device.type == "cuda":
            args.encoders[3:3] = ["lstmn" + GRAPHS, "nse" + GRAPHS]
    if args.amp and device.type == "cpu":
        parser.error("--amp is for CUDA: torch.nn.LSTM (the baseline) has no bfloat16 CPU kernel without AVX512-BF16")
    torch.manual_seed(0)
    x = torch.randn(args.batch, args.steps, args.dim, device=device, requires_grad=True)
    mask = torch.ones(args.batch, args.steps, dtype=torch.bool, device=device)
    modules = {name: build(name, args.dim).to(device) for name in args.encoders}
    for name, module in modules.items():  # warm-up
        for _ in range(2):
            step(name, module, x, mask, args.amp, args.amp_dtype)
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        for name, module in modules.items():
            with profile(activities=[ProfilerActivity.CPU]) as profiler:
                for _ in range(3):
                    step(name, module, x, mask, args.amp, args.amp_dtype)
            table = profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.profile)
            print(f"\n{name}: 3 forward+backward passes, B={args.batch} T={args.steps} d={args.dim}\n{table}")
        return
    peak_mb, profiled = {}, {}
    if device.type == "cuda":
        for name, module in modules.items():
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            before = torch.cuda.memory_allocated()
            step(name, module, x, mask, args.amp, args.amp_dtype)
            torch.cuda.synchronize()
            peak_mb[name] = (torch.cuda.max_memory_allocated() - before) / 2**20
            profiled[name] = profile_columns(lambda: step(name, module, x, mask, args.amp, args.amp_dtype))
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu, threads={torch.get_num_threads()}"
    for condition in conditions(args.conditions):
        times = {name: [] for name in modules}
        for _ in range(args.repeats):
            for name, module in modules.items():
                if device.type == "cuda":
                    torch.cuda.synchronize()
                started = time.perf_counter()
                step(name, module, x, mask, args.amp, args.amp_dtype)
                if device.type == "cuda":
                    torch.cuda.synchronize()
                times[name].append(time.perf_counter() - started)
        baseline = statistics.median(times["torch.nn.LSTM"])
        amp = args.amp_dtype if args.amp else "off"
        print(f"\n{condition}: forward+backward, B={args.batch} T={args.steps} d={args.dim}, {where}, amp={amp}, "
              f"torch {torch.__version__}, median of {args.repeats}")
        cuda = " peak MB of a step | kernels | GPU busy % |" if peak_mb else ""
        print("| encoder | ms | ratio to torch.nn.LSTM |" + cuda)
        print("|---|---:|---:|" + ("---:|---:|---:|" if peak_mb else ""))
        for name in modules:
            median = statistics.median(times[name])
            extra = f" {peak_mb[name]:.0f} |{profiled[name]}" if peak_mb else ""
            print(f"| {name} | {median * 1000:.1f} | {median / baseline:.2f} |{extra}")


if __name__ == "__main__":
    main()
