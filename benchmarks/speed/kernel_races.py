"""
Races inside the Triton kernels, on CUDA: a kernel run again on the same inputs must give the same bits (one program
per batch row, fixed block loops, no atomics), so any run that differs from the first shows a race between the
warps of a program. A warp that loads a value another warp of its program has already overwritten in place is such
a race (`memplugins.modules.lstmn.tape_read_kernel`'s module doc); it depends on how the warps happen to be
scheduled, so it shows only now and then, and only on a GPU: Triton's interpreter, which the CPU tests use, runs a
program's threads as one.

For each case it runs the same inputs `--runs` times and counts the runs whose outputs (and gradients, for the
forward-and-backward cases) are not bitwise equal to the first run's, and those with a non-finite value; beside
them the largest difference from the first run, and from the torch path on CUDA (`MEMPLUGINS_TRITON=0`, run once).
The scorer's weights are shifted so that the tape's scores sit near -90: a warp that took a softmax weight for a
score there computes exp(> 88), which is inf in float32, as in the NaN losses of the 3-layer LSTMN LM
(docs/research/ptb_lm.md, "NaN on the GPU").

    python benchmarks/speed/kernel_races.py [--runs 300] [--ir-dir DIR]

`--ir-dir` writes each compiled kernel's Triton GPU IR (`.ttgir`: the layouts that say which threads hold a value)
there. Not a test: it needs a GPU, and a race shows only sometimes; `scripts/gpu_run_all.sh races` runs it.
"""
import argparse
import functools
import os
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

import torch

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # after PYTHONPATH: RACES_BEFORE

from memplugins.encoders import NseEncoder  # noqa: E402
from memplugins.modules import LstmnLayer  # noqa: E402


DEVICE = "cuda"  # `--device cpu` with TRITON_INTERPRET=1 checks this script itself on a CPU (no races there)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randomize(module: torch.nn.Module, seed: int, scale: float) -> torch.nn.Module:
    generator = _generator(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * scale)
    return module


def _lengths(batch_size: int, longest: int, seed: int) -> torch.Tensor:
    lengths = torch.randint(2, longest + 1, (batch_size,), generator=_generator(seed))
    lengths[0] = longest
    return lengths


def _tape_read_inputs(batch_size: int, steps: int, hidden: int):
    """The tape read case's inputs on the CPU: keys, query, scorer (shifted so the scores sit near -90), tape, and
    the mask of a padded batch."""
    generator = _generator(1)
    keys = torch.randn(batch_size, steps, hidden, generator=generator)
    query = torch.randn(batch_size, hidden, generator=generator)
    scorer = torch.randn(hidden, generator=generator) * 0.05 - 0.3
    tape = torch.randn(batch_size, steps, 2 * hidden, generator=generator)
    valid = torch.arange(steps)[None, :] < _lengths(batch_size, steps, 2)[:, None]
    return keys, query, scorer, tape, valid


def tape_read_case(batch_size: int = 40, steps: int = 84, hidden: int = 300) -> Callable[[], List[torch.Tensor]]:
    """One launch of the LSTMN tape read (eq. 4-6) at the last step, on a padded batch, scores near -90. Its
    reference (`run.reference`) is eq. 4-6 in float64 with torch's softmax on the same inputs."""
    from memplugins.modules.lstmn.tape_read_kernel import tape_read_forward

    inputs = _tape_read_inputs(batch_size, steps, hidden)
    keys, query, scorer, tape = (tensor.to(DEVICE) for tensor in inputs[:4])
    valid = inputs[4].to(torch.uint8).to(DEVICE)
    t = steps - 1

    def run() -> List[torch.Tensor]:
        summary = torch.empty(batch_size, 2 * hidden, device=DEVICE)
        activation, weights = tape_read_forward(keys, query, scorer, tape, valid, t, summary)
        return [summary, weights, activation]

    def reference() -> List[torch.Tensor]:
        keys, query, scorer, tape, valid = (tensor.double() if tensor.is_floating_point() else tensor
                                            for tensor in inputs)
        activation = torch.sigmoid(keys[:, :t] + query[:, None])
        scores = (2 * activation.matmul(scorer)).masked_fill(~valid[:, :t], torch.finfo(torch.float64).min)
        weights = torch.softmax(scores, dim=-1)
        summary = torch.bmm(weights[:, None], tape[:, :t])[:, 0]
        return [tensor.float().to(DEVICE) for tensor in (summary, weights, activation)]

    run.reference = reference
    return run


def _forward_backward(module: torch.nn.Module, forward: Callable[[], List[torch.Tensor]],
                      leaves: List[torch.Tensor]) -> Callable[[], List[torch.Tensor]]:
    def run() -> List[torch.Tensor]:
        outputs = forward()
        generator = _generator(9)
        loss = sum((torch.tanh(output) * torch.randn(output.shape, generator=generator).to(DEVICE)).sum()
                   for output in outputs)
        return outputs + list(torch.autograd.grad(loss, leaves))

    return run


def lstmn_case(batch_size: int = 40, steps: int = 40, input_size: int = 150, hidden: int = 300,
               recency_start: Optional[float] = None) -> Callable[[], List[torch.Tensor]]:
    """An LSTMN layer's forward and backward (the tape read and cell kernels), padded, scores near -90; with
    RECENCY_START, the layer's recency score β (drawn with the rest) on slot t-1."""
    layer = _randomize(LstmnLayer(input_size, hidden, recency_start=recency_start), seed=3, scale=0.1)
    with torch.no_grad():
        layer.scorer.weight.sub_(0.3)
    layer = layer.to(DEVICE)
    x = torch.randn(batch_size, steps, input_size, generator=_generator(4)).to(DEVICE).requires_grad_()
    mask = (torch.arange(steps)[None, :] < _lengths(batch_size, steps, 5)[:, None]).to(DEVICE)
    return _forward_backward(layer, lambda: list(layer(x, mask)[:2]), [x, *layer.parameters()])


def nse_case(batch_size: int = 32, steps: int = 40, size: int = 300) -> Callable[[], List[torch.Tensor]]:
    """An MMA-NSE encoder's forward and backward (the read, read-backward and write-backward kernels), padded."""
    encoder = _randomize(NseEncoder(size, size, num_extra_memories=1), seed=6, scale=0.1).to(DEVICE)
    x = torch.randn(batch_size, steps, size, generator=_generator(7)).to(DEVICE).requires_grad_()
    mask = (torch.arange(steps)[None, :] < _lengths(batch_size, steps, 8)[:, None]).to(DEVICE)
    extra = torch.randn(batch_size, 30, size, generator=_generator(10)).to(DEVICE).requires_grad_()
    extra_mask = (torch.arange(30)[None, :] < _lengths(batch_size, 30, 11)[:, None]).to(DEVICE)

    def forward() -> List[torch.Tensor]:
        output = encoder.encode(x, mask, [(extra, extra_mask)])
        return [output.hidden, output.memory, output.keys, output.extra_memories[0], output.extra_keys[0]]

    return _forward_backward(encoder, forward, [x, extra, *encoder.parameters()])


def _random_tree(words: int, generator: torch.Generator) -> str:
    """An SST-format binary tree over `words` leaves, split at random points."""
    if words == 1:
        return "(2 w)"
    left = int(torch.randint(1, words, (1,), generator=generator))
    return f"(2 {_random_tree(left, generator)} {_random_tree(words - left, generator)})"


def tree_lstm_case(batch_size: int = 32, longest: int = 40, size: int = 300) -> Callable[[], List[torch.Tensor]]:
    """The tree LSTM's forward and backward over random binary trees (the level kernels), d = 300."""
    from memplugins.encoders import TreeLstmEncoder
    from memplugins.fields import batch_trees
    from memplugins.readers import parse_sst_tree

    generator = _generator(12)
    trees = [parse_sst_tree(_random_tree(int(n), generator)) for n in _lengths(batch_size, longest, 13)]
    encoder = _randomize(TreeLstmEncoder(size, size), seed=14, scale=0.1).to(DEVICE)
    tensors, mask = batch_trees(trees)
    tensors, mask = {key: value.to(DEVICE) for key, value in tensors.items()}, mask.to(DEVICE)
    x = torch.randn(batch_size, mask.size(1), size, generator=_generator(15)).to(DEVICE).requires_grad_()
    return _forward_backward(encoder, lambda: [encoder.encode(x, mask, tensors).node_states],
                             [x, *encoder.parameters()])


CASES: Dict[str, Callable[[], Callable[[], List[torch.Tensor]]]] = {
    "tape read forward (B=40, t=83, h=300)": tape_read_case,
    "lstmn layer forward + backward (B=40, T=40, 150 -> 300)": lstmn_case,
    "recency lstmn layer forward + backward (B=40, T=40, 150 -> 300)": functools.partial(lstmn_case,
                                                                                        recency_start=0.0),
    "mma-nse encoder forward + backward (B=32, T=40, d=300)": nse_case,
    "tree lstm forward + backward (B=32, up to 40 leaves, d=300)": tree_lstm_case,
}


def _largest_difference(got: List[torch.Tensor], expected: List[torch.Tensor]) -> float:
    largest = 0.0
    for a, b in zip(got, expected):
        finite = torch.isfinite(a) & torch.isfinite(b)
        if finite.any():
            largest = max(largest, (a[finite] - b[finite]).abs().max().item())
    return largest


def measure(name: str, make: Callable, runs: int) -> Tuple[str, int, int, int, float, float, float]:
    """The case's row of the table: runs, runs differing from the first, runs with inf/NaN, the largest difference
    from the first, the first against the case's reference (its own, or the same case with MEMPLUGINS_TRITON=0),
    and the runs' seconds."""
    os.environ["MEMPLUGINS_TRITON"] = "1"
    run = make()
    if hasattr(run, "reference"):
        reference = run.reference()
    else:
        os.environ["MEMPLUGINS_TRITON"] = "0"
        reference = [tensor.detach().clone() for tensor in make()()]
        os.environ["MEMPLUGINS_TRITON"] = "1"
    first = [tensor.detach().clone() for tensor in run()]
    differing = nonfinite = 0
    largest = 0.0
    started = time.perf_counter()
    for _ in range(runs):
        outputs = run()
        if not all(torch.equal(a, b) for a, b in zip(outputs, first)):
            differing += 1
            largest = max(largest, _largest_difference(outputs, first))
        if not all(torch.isfinite(output).all() for output in outputs):
            nonfinite += 1
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    return name, runs, differing, nonfinite, largest, _largest_difference(first, reference), seconds


def dump_ir(directory: str) -> None:
    """Each compiled Triton kernel's GPU IR, where this Triton version keeps it where we look (best effort)."""
    from memplugins.modules.fast import (
        lstm_cell_kernel,
        nse_read_backward_kernel,
        nse_read_kernel,
        nse_write_backward_kernel,
        tape_read_kernel,
        tree_level_kernel,
    )

    os.makedirs(directory, exist_ok=True)
    for module in (tape_read_kernel, lstm_cell_kernel, nse_read_kernel, nse_read_backward_kernel,
                   nse_write_backward_kernel, tree_level_kernel):
        for name, function in vars(module).items():
            caches = getattr(function, "device_caches", None) or {}
            for index, entry in enumerate(caches.values()):
                compiled = entry[0] if isinstance(entry, tuple) else entry
                for number, kernel in enumerate(getattr(compiled, "values", lambda: [])()):
                    ir = getattr(kernel, "asm", {}).get("ttgir")
                    if ir:
                        path = os.path.join(directory, f"{module.__name__.rsplit('.', 1)[-1]}.{name}.{index}.{number}.ttgir")
                        with open(path, "w") as file:
                            file.write(ir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--only", nargs="*", help="cases whose name starts with one of these")
    parser.add_argument("--ir-dir")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help=argparse.SUPPRESS)
    parser.add_argument("--small", action="store_true", help=argparse.SUPPRESS)  # the test's sizes
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    cases = CASES if not args.small else {
        "tape read forward (B=3, t=6, h=8)": functools.partial(tape_read_case, 3, 7, 8),
        "lstmn layer forward + backward (B=3, T=5, 4 -> 8)": functools.partial(lstmn_case, 3, 5, 4, 8),
        "recency lstmn layer forward + backward (B=3, T=5, 4 -> 8)": functools.partial(lstmn_case, 3, 5, 4, 8, 0.0),
        "mma-nse encoder forward + backward (B=3, T=5, d=8)": functools.partial(nse_case, 3, 5, 8),
        "tree lstm forward + backward (B=3, up to 6 leaves, d=8)": functools.partial(tree_lstm_case, 3, 6, 8),
    }
    if DEVICE == "cuda" and not torch.cuda.is_available():
        sys.exit("kernel_races.py needs a CUDA device")
    import memplugins

    device = torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu (Triton's interpreter)"
    print(f"memplugins from {os.path.dirname(memplugins.__file__)}; torch {torch.__version__}, {device}")
    print("| case | runs | runs not bitwise equal to the first | runs with inf/NaN | largest difference from the first"
          " | first run against the torch path | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, make in cases.items():
        if args.only and not any(name.startswith(prefix) for prefix in args.only):
            continue
        row = measure(name, make, args.runs)
        print(f"| {row[0]} | {row[1]} | {row[2]} | {row[3]} | {row[4]:.3g} | {row[5]:.3g} | {row[6]:.1f} |",
              flush=True)
    if args.ir_dir:
        dump_ir(args.ir_dir)


if __name__ == "__main__":
    main()
