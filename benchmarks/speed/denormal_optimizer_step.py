"""
What denormal floats cost an optimizer step on an embedding table the L2 has erased, and what flushing them
(`memplugins.training.flush_denormal`, on by default) saves; not part of CI. Prints a table of median
milliseconds per step, with denormals kept (IEEE gradual underflow) and flushed, measured in blocks that alternate
between the two in one process, so that each ratio shares the machine's state.

The table is binary SST's under the GloVe vocabulary (23,160 x 50). By default its weights and optimizer state are
drawn with the denormal fractions measured in `sst5_lstmn_l2_on_embeddings` after one epoch (47 % of the weights,
48 % of Adam's first moment, 11 % of its second; Adagrad's sum of squares takes Adam's second moment); `--run DIR`
takes them from a run's newest `model_state_*.th` and `training_state_*.th` instead (an Adam run's, loaded
weights-only).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/speed/denormal_optimizer_step.py [--run SERIALIZATION_DIR] [--steps 60]
"""
import argparse
import statistics
import time
from pathlib import Path

import torch

import memplugins  # noqa: F401  (the numpy globals AllenNLP's training states hold, for weights-only loading)
from memplugins.training import flush_denormal

ROWS, DIM = 23160, 50
TABLE_KEY = "_text_field_embedder.token_embedder_tokens.weight"
FRACTIONS = {"weight": 0.47, "exp_avg": 0.48, "exp_avg_sq": 0.11}  # denormal, measured (docstring)
BLOCK = 10


def drawn(fraction: float, normal: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """`normal` with `fraction` of its entries replaced by denormals spread log-uniformly over 1e-44..1e-38."""
    exponent = torch.empty(normal.shape).uniform_(-44, -38, generator=generator)
    sign = torch.where(torch.rand(normal.shape, generator=generator) < 0.5, -1.0, 1.0)
    denormal = (10.0 ** exponent.double() * sign).float()
    return torch.where(torch.rand(normal.shape, generator=generator) < fraction, denormal, normal)


def synthetic_state():
    generator = torch.Generator().manual_seed(0)
    weight = drawn(FRACTIONS["weight"], torch.randn(ROWS, DIM, generator=generator) * 0.05, generator)
    exp_avg = drawn(FRACTIONS["exp_avg"], torch.randn(ROWS, DIM, generator=generator) * 1e-6, generator)
    exp_avg_sq = drawn(FRACTIONS["exp_avg_sq"], torch.rand(ROWS, DIM, generator=generator) * 1e-10, generator).abs()
    return weight, {"step": torch.tensor(60000.0), "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}


def run_state(run: Path):
    newest = lambda pattern: max(run.glob(pattern), key=lambda path: path.stat().st_mtime)  # noqa: E731
    weight = torch.load(newest("model_state_*.th"), map_location="cpu", weights_only=True)[TABLE_KEY]
    states = torch.load(newest("training_state_*.th"), map_location="cpu", weights_only=True)["optimizer"]["state"]
    state = next(state for state in states.values() if state["exp_avg"].shape == weight.shape)
    return weight, {key: state[key] for key in ("step", "exp_avg", "exp_avg_sq")}


def denormal_share(tensor: torch.Tensor) -> float:
    return ((tensor != 0) & (tensor.abs() < torch.finfo(tensor.dtype).tiny)).float().mean().item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, help="a serialization directory of an Adam run")
    parser.add_argument("--steps", type=int, default=60, help="steps per setting and optimizer")
    args = parser.parse_args()

    torch.set_flush_denormal(False)  # build the tensors with gradual underflow: stored under the flush, they'd be 0
    weight, adam_state = run_state(args.run) if args.run else synthetic_state()
    print(f"table {tuple(weight.shape)}: denormal share of the weights {denormal_share(weight):.0%}, of exp_avg "
          f"{denormal_share(adam_state['exp_avg']):.0%}, of exp_avg_sq {denormal_share(adam_state['exp_avg_sq']):.0%}"
          f"; {torch.get_num_threads()} thread(s)")
    gradient = torch.zeros_like(weight)
    gradient[:40] = torch.randn(40, weight.shape[1]) * 1e-2  # a batch of 5 phrases touches a few dozen rows

    optimizers = {
        "adam, fused (sst_lstmn)": lambda p: torch.optim.Adam([p], lr=2e-3, weight_decay=1e-4, fused=True),
        "adam, per-parameter loop": lambda p: torch.optim.Adam([p], lr=2e-3, weight_decay=1e-4, foreach=False),
        "adagrad, fused (tree LSTM)": lambda p: torch.optim.Adagrad([p], lr=0.05, weight_decay=1e-4, fused=True),
    }
    times = {(name, flush): [] for name in optimizers for flush in (False, True)}
    for _ in range(max(1, args.steps // BLOCK)):
        for name, build in optimizers.items():
            for flush in (False, True):
                torch.set_flush_denormal(flush)
                parameter = torch.nn.Parameter(weight.clone())
                optimizer = build(parameter)
                if name.startswith("adam"):
                    optimizer.state[parameter] = {key: value.clone() for key, value in adam_state.items()}
                else:  # Adagrad's sum of squared gradients, erased the same way
                    optimizer.state[parameter] = {"step": adam_state["step"].clone(),
                                                  "sum": adam_state["exp_avg_sq"].clone()}
                for _ in range(BLOCK):
                    parameter.grad = gradient.clone()
                    start = time.perf_counter()
                    optimizer.step()
                    times[name, flush].append(time.perf_counter() - start)
    torch.set_flush_denormal(flush_denormal.requested())

    print("| optimizer step on the table | denormals kept (ms) | flushed (ms) | kept / flushed |")
    print("|---|---:|---:|---:|")
    for name in optimizers:
        kept, flushed = (statistics.median(times[name, flush]) * 1e3 for flush in (False, True))
        print(f"| {name} | {kept:.2f} | {flushed:.2f} | {kept / flushed:.1f}x |")


if __name__ == "__main__":
    main()
