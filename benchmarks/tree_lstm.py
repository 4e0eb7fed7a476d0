"""
Forward+backward time of the level-batched `tree_lstm` on real SST batches, against (a) the recursive one-tree-at-a-
time reference of the same equations (memplugins.modules.reference.tree_lstm; how the common PyTorch tree LSTMs
work) and (b) `torch.nn.LSTM` of the same size over the same sentences (as a padded batch). All three are timed in
one run, interleaved, over the same batches (consecutive sentences of the file, `--batch` each); medians reported.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/tree_lstm.py --trees ../shared/data/sst/trees/train.txt
        [--input-dim 50 --hidden-dim 50] [--conditions quiet busy] [--no-recursive]

`--conditions busy` measures while a second single-thread process competes for the machine (`benchmarks/load.py`);
`--no-recursive` leaves out the slow recursive reference.
"""
import argparse
import statistics
import time
from pathlib import Path

import torch

from load import conditions  # benchmarks/ is this file's folder
from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields import batch_trees
from memplugins.modules.reference.tree_lstm import tree_lstm_reference
from memplugins.readers import parse_sst_tree

ROOT = Path(__file__).resolve().parent.parent


def batches(path: str, batch_size: int, count: int):
    lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
    for start in range(0, min(len(lines), batch_size * count), batch_size):
        trees = [parse_sst_tree(line) for line in lines[start : start + batch_size]]
        yield (trees, *batch_trees(trees))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", default=str(ROOT.parent / "shared" / "data" / "sst" / "trees" / "train.txt"))
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--input-dim", type=int, default=50)
    parser.add_argument("--hidden-dim", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--conditions", nargs="*", default=["quiet"], help="quiet and/or busy (benchmarks/load.py)")
    parser.add_argument("--no-recursive", action="store_true", help="leave out the recursive reference")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="instead of timing, print torch.profiler's top N operators of the level-batched encoder")
    args = parser.parse_args()
    torch.manual_seed(0)
    encoder = TreeLstmEncoder(args.input_dim, args.hidden_dim)
    lstm = torch.nn.LSTM(args.input_dim, args.hidden_dim, batch_first=True)
    data = [(trees, tensors, mask, torch.randn(*mask.shape, args.input_dim, requires_grad=True))
            for trees, tensors, mask in batches(args.trees, args.batch, args.batches)]

    def level_batched(trees, tensors, mask, inputs):
        encoder.encode(inputs, mask, tensors).node_states.sum().backward()

    def recursive(trees, tensors, mask, inputs):
        total = 0
        for b, tree in enumerate(trees):
            total = total + torch.stack(tree_lstm_reference(encoder, inputs[b, : len(tree.leaves)], tree)).sum()
        total.backward()

    def sequential_lstm(trees, tensors, mask, inputs):
        lstm(inputs)[0].sum().backward()

    runners = {"tree_lstm (level-batched)": level_batched, "recursive reference": recursive,
               "torch.nn.LSTM": sequential_lstm}
    if args.no_recursive:
        del runners["recursive reference"]
    for name, run in runners.items():  # warm-up
        run(*data[0])
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as profiler:
            for batch in data:
                level_batched(*batch)
        print(profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.profile))
        return
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
              f"torch {torch.__version__}, threads={torch.get_num_threads()}")
        print("| implementation | ms per batch | time / tree_lstm's | time / torch.nn.LSTM's |")
        print("|---|---:|---:|---:|")
        base, lstm_time = median["tree_lstm (level-batched)"], median["torch.nn.LSTM"]
        for name, value in median.items():
            print(f"| {name} | {value * 1000:.1f} | {value / base:.2f} | {value / lstm_time:.2f} |")

if __name__ == "__main__":
    main()
