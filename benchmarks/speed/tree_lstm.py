"""
Forward+backward time of the level-batched `tree_lstm` on real SST batches, against (a) the recursive one-tree-at-a-
time reference of the same equations (memplugins.modules.tree_lstm.reference; how the common PyTorch tree LSTMs
work) and (b) `torch.nn.LSTM` of the same size over the same sentences (as a padded batch). All three are timed in
one run, interleaved, over the same batches (consecutive sentences of the file, `--batch` each); medians reported.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/tree_lstm.py --trees ../shared/data/sst/trees/train.txt
        [--input-dim 50 --hidden-dim 50] [--conditions quiet busy] [--no-recursive] [--device cuda [--amp float16]]

`--conditions busy` measures while a second single-thread process competes for the machine (`benchmarks/speed/load.py`);
`--no-recursive` leaves out the slow recursive reference. On CUDA the table adds the kernels one forward+backward
launches and the GPU's busy fraction (benchmarks/speed/cuda_profile.py); `--amp` runs all three under autocast.
"""
import argparse
import statistics
import time
from pathlib import Path

import torch

from cuda_profile import profile_columns  # benchmarks/speed/: this file's folder
from load import conditions
from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields import batch_trees
from memplugins.modules.tree_lstm.reference import tree_lstm_reference
from memplugins.readers import parse_sst_tree

ROOT = Path(__file__).resolve().parents[2]


def batches(path: str, batch_size: int, count: int, device: torch.device):
    lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
    for start in range(0, min(len(lines), batch_size * count), batch_size):
        trees = [parse_sst_tree(line) for line in lines[start : start + batch_size]]
        tensors, mask = batch_trees(trees)
        yield trees, {key: value.to(device) for key, value in tensors.items()}, mask.to(device)


def build_runners(encoder, lstm, device: torch.device, amp, no_recursive: bool):
    """The three implementations as functions of a batch, under autocast if `amp`, synchronised on CUDA."""
    autocast = torch.autocast(device.type, dtype=getattr(torch, amp or "float32"), enabled=bool(amp))

    def level_batched(trees, tensors, mask, inputs):
        with autocast:
            states = encoder.encode(inputs, mask, tensors).node_states
        states.float().sum().backward()

    def recursive(trees, tensors, mask, inputs):
        total = 0
        with autocast:
            for b, tree in enumerate(trees):
                total = total + torch.stack(tree_lstm_reference(encoder.weights(), inputs[b, : len(tree.leaves)], tree)).sum()
        total.float().backward()

    def sequential_lstm(trees, tensors, mask, inputs):
        with autocast:
            states = lstm(inputs)[0]
        states.float().sum().backward()

    def synchronised(run):
        def timed(*batch):
            run(*batch)
            if device.type == "cuda":
                torch.cuda.synchronize()
        return timed

    runners = {"tree_lstm (level-batched)": level_batched, "recursive reference": recursive,
               "torch.nn.LSTM": sequential_lstm}
    if no_recursive:
        del runners["recursive reference"]
    return {name: synchronised(run) for name, run in runners.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", default=str(ROOT.parent / "shared" / "data" / "sst" / "trees" / "train.txt"))
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--input-dim", type=int, default=50)
    parser.add_argument("--hidden-dim", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--conditions", nargs="*", default=["quiet"], help="quiet and/or busy (benchmarks/speed/load.py)")
    parser.add_argument("--no-recursive", action="store_true", help="leave out the recursive reference")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--amp", choices=["float16", "bfloat16"], help="autocast in this dtype (CUDA)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="instead of timing, print torch.profiler's top N operators of the level-batched encoder")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    encoder = TreeLstmEncoder(args.input_dim, args.hidden_dim).to(device)
    lstm = torch.nn.LSTM(args.input_dim, args.hidden_dim, batch_first=True).to(device)
    data = [(trees, tensors, mask, torch.randn(*mask.shape, args.input_dim, device=device, requires_grad=True))
            for trees, tensors, mask in batches(args.trees, args.batch, args.batches, device)]
    runners = build_runners(encoder, lstm, device, args.amp, args.no_recursive)
    for name, run in runners.items():  # warm-up
        run(*data[0])
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            for batch in data:
                runners["tree_lstm (level-batched)"](*batch)
        print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.profile))
        return
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"threads={torch.get_num_threads()}"
    profiled = {}
    if device.type == "cuda":
        profiled = {name: profile_columns(lambda: run(*data[0])) for name, run in runners.items()}
    leaves = sum(int(mask.sum()) for _, _, mask, _ in data)
    heights = [int(tensors["heights"].max()) for _, tensors, _, _ in data]
    for condition in conditions(args.conditions):
        times = {name: [] for name in runners}
        for _ in range(args.repeats):
            for batch in data:
                for name, run in runners.items():
                    started = time.perf_counter()
                    run(*batch)
                    times[name].append(time.perf_counter() - started)
        median = {name: statistics.median(values) for name, values in times.items()}
        print(f"\n{condition}: SST {Path(args.trees).name}: {len(data)} batches of {args.batch} sentences "
              f"({leaves / len(data):.0f} words, tree height {min(heights)}-{max(heights)} per batch), "
              f"d_w={args.input_dim}, d={args.hidden_dim}, forward+backward, median over {args.repeats} passes, "
              f"torch {torch.__version__}, {where}, amp={args.amp or 'off'}")
        cuda = " kernels (batch 1) | GPU busy % |" if profiled else ""
        print("| implementation | ms per batch | time / tree_lstm's | time / torch.nn.LSTM's |" + cuda)
        print("|---|---:|---:|---:|" + ("---:|---:|" if profiled else ""))
        base, lstm_time = median["tree_lstm (level-batched)"], median["torch.nn.LSTM"]
        for name, value in median.items():
            extra = profiled.get(name, "")
            print(f"| {name} | {value * 1000:.1f} | {value / base:.2f} | {value / lstm_time:.2f} |{extra}")


if __name__ == "__main__":
    main()
