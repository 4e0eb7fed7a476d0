"""
Kernel launches per step of the LSTMN and NSE fast paths (and per level of the tree LSTM's), with and without the
Triton kernels, counted without a GPU: every ATen operation that computes is counted once (views and allocations
of uninitialised memory, which launch nothing, are left out), and each Triton
kernel launch once (under `TRITON_INTERPRET=1`, where the kernels run on the CPU; the operations the interpreter
itself runs are not counted). On CUDA each counted operation is about one kernel launch, which at these sizes costs
more than its arithmetic: this is the count the kernels exist to cut. `benchmarks/speed/cuda_profile.py` counts the real
launches on a GPU.

The third column is the loops as CUDA graphs (the default on CUDA, `memplugins.modules.fast_path.step_graphs`; the
tree LSTM's levels padded to a graph key's shapes), captured here with the module's CPU simulation: what the host
still issues per call (the copies in and out, and for the tree LSTM the layout and the padding of its leaves), with
each graph replay counted as one launch; the replay's own kernels run on the GPU without the host. The fourth
counts those: what a capture records, the Triton kernels with every step on its padded path (a capture cannot ask
the host which steps are full, `step_graphs.step_is_full`); each is still a kernel the GPU launches and waits on.

    .venv/bin/python benchmarks/speed/launch_count.py [--steps 10] [--batch 4] [--dim 8]
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NO_LAUNCH = {"view", "_unsafe_view", "slice", "select", "unsqueeze", "squeeze", "transpose", "t", "expand", "permute",
         "split", "split_with_sizes", "chunk", "unbind", "as_strided", "alias", "detach", "narrow", "reshape",
         "_reshape_alias", "lift_fresh", "unflatten", "diagonal", "view_as", "expand_as",
         "empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided"}  # allocations: no launch
KERNEL_ENTRY_POINTS = [
    ("memplugins.modules.lstmn.tape_read_kernel", "tape_read_forward"),
    ("memplugins.modules.lstmn.tape_read_kernel", "tape_read_backward"),
    ("memplugins.modules.nse.read_kernel", "write_and_read"),
    ("memplugins.modules.nse.read_backward_kernel", "read_backward"),
    ("memplugins.modules.nse.write_backward_kernel", "write_backward"),
    ("memplugins.modules.nse.cell_backward_kernel", "cell_backward"),
    ("memplugins.modules.fast_path.cell_kernel", "lstm_cell_backward_kernel"),
    ("memplugins.modules.fast_path.cell_kernel", "lstm_cell_forward_kernel"),
    ("memplugins.modules.tree_lstm.level_kernel", "gather_and_gates"),
    ("memplugins.modules.tree_lstm.level_kernel", "level_output"),
    ("memplugins.modules.tree_lstm.level_kernel", "output_backward"),
    ("memplugins.modules.tree_lstm.level_kernel", "gates_backward"),
]
SST_SAMPLE = ROOT / "fixtures" / "sst" / "dev_sample.txt"


def count(steps: int, batch: int, dim: int) -> dict:
    """In this process (the environment decides whether the kernels run): launches per step, forward and backward."""
    import importlib

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from memplugins.encoders import LstmnEncoder, NseEncoder

    class Counter(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.count, self.paused = 0, 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if not self.paused and func.overloadpacket.__name__ not in NO_LAUNCH:
                self.count += 1
            return func(*args, **(kwargs or {}))

        def one_launch(self, function, *args, **kwargs):
            """Counts `function` as one launch (unless inside another), none of the operations it runs."""
            if not self.paused:
                self.count += 1
            self.paused += 1
            try:
                return function(*args, **kwargs)
            finally:
                self.paused -= 1

    counter = Counter()
    if os.environ.get("MEMPLUGINS_TRITON") != "0":
        for module_name, name in KERNEL_ENTRY_POINTS:
            module = importlib.import_module(module_name)

            def counted(*args, _original=getattr(module, name), **kwargs):
                # what the interpreter runs inside a kernel is not a GPU launch; inside a graph replay, the replay's
                # one launch stands for it
                return counter.one_launch(_original, *args, **kwargs)

            setattr(module, name, counted)
    if os.environ.get("LAUNCH_COUNT_AS_CAPTURED") == "1":
        # what a capture records: every step possibly padded (`step_graphs.step_is_full`), so the masked path
        for module_name in ("memplugins.modules.lstmn.fast", "memplugins.modules.nse.fast",
                            "memplugins.modules.nse.backward"):
            module = importlib.import_module(module_name)
            module.step_is_full = lambda mask: [False] * mask.size(1)
    if os.environ.get("MEMPLUGINS_CUDA_GRAPHS") == "1":
        from memplugins.modules.fast import step_graphs

        step_graphs.SIMULATE_ON_CPU = True
        capture = step_graphs._capture

        def counted_capture(function, device):
            replay, result = capture(function, device)

            def counted_replay():
                counter.one_launch(replay)  # one graph launch; the simulation's re-run stands for the GPU's work

            return counted_replay, result

        step_graphs._capture = counted_capture
    torch.manual_seed(0)
    x = torch.randn(batch, steps, dim, requires_grad=True)
    mask = torch.ones(batch, steps, dtype=torch.bool)
    counts = {}
    for name, encoder in [("lstmn", LstmnEncoder(dim, dim)), ("nse", NseEncoder(dim, dim))]:
        encoder(x, mask).sum().backward()  # warm-up: imports, first-call work, graph captures
        encoder.zero_grad(set_to_none=True)  # so the counted backward does not add into existing .grad
        x.grad = None
        with counter:
            counter.count = 0
            output = encoder(x, mask)
            forward = counter.count
            counter.count = 0
            output.sum().backward()
            backward = counter.count
        counts[name] = {"forward": forward / steps, "backward": backward / steps}
    counts["tree_lstm"] = _tree_counts(counter, dim)
    return counts


def _tree_counts(counter, dim: int) -> dict:
    """The tree LSTM over the shipped SST sample's first 4 trees, per level of the batch."""
    import torch

    from memplugins.encoders import TreeLstmEncoder
    from memplugins.fields import batch_trees
    from memplugins.modules.tree_lstm.layout import nodes_per_tree, sided_levels
    from memplugins.readers import parse_sst_tree

    trees = [parse_sst_tree(line) for line in SST_SAMPLE.read_text().splitlines()[:4]]
    tree, mask = batch_trees(trees)
    levels = sided_levels(mask, tree, nodes_per_tree("tree_lstm", mask, tree)).num_levels
    encoder = TreeLstmEncoder(dim, dim, "tanh")
    x = torch.randn(len(trees), mask.size(1), dim, requires_grad=True)
    encoder.encode(x, mask, tree)
    with counter:
        counter.count = 0
        states = encoder.encode(x, mask, tree).node_states
        forward = counter.count
        counter.count = 0
        states.sum().backward()
        backward = counter.count
    return {"forward": forward / levels, "backward": backward / levels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--dim", type=int, default=8)
    parser.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_process:
        print(json.dumps(count(args.steps, args.batch, args.dim)))
        return
    results = {}
    kernels = {"MEMPLUGINS_TRITON": "1", "TRITON_INTERPRET": "1"}
    for label, environment in [("torch operations", {"MEMPLUGINS_TRITON": "0"}),
                               ("with the Triton kernels", kernels),
                               ("as CUDA graphs", {**kernels, "MEMPLUGINS_CUDA_GRAPHS": "1"}),
                               ("replayed", {**kernels, "LAUNCH_COUNT_AS_CAPTURED": "1"})]:
        finished = subprocess.run(
            [sys.executable, __file__, "--in-process", "--steps", str(args.steps), "--batch", str(args.batch),
             "--dim", str(args.dim)], cwd=ROOT, capture_output=True, text=True, check=True,
            env={**os.environ, **environment, "PYTHONPATH": str(ROOT)})
        results[label] = json.loads(finished.stdout.strip().splitlines()[-1])
    print(f"Launches per step (T = {args.steps}; the tree LSTM: per level, over 4 SST sample trees), the encoder's "
          "whole pass averaged; ATen operations that compute, and Triton launches\n")
    print("| encoder | pass | torch operations | with the Triton kernels | as CUDA graphs (host) | "
          "as CUDA graphs (replayed on the GPU) |\n|---|---|---:|---:|---:|---:|")
    for name in ("lstmn", "nse", "tree_lstm"):
        for direction in ("forward", "backward"):
            plain = results["torch operations"][name][direction]
            fused = results["with the Triton kernels"][name][direction]
            graphed = results["as CUDA graphs"][name][direction]
            # the tree LSTM's levels have no full-step shortcut: its replay runs what its eager kernels run
            replayed = results["replayed"][name][direction]
            print(f"| {name} | {direction} | {plain:.1f} | {fused:.1f} | {graphed:.1f} | {replayed:.1f} |")


if __name__ == "__main__":
    main()
