"""
What the direction a `..._erased_states` run projects out of its alignment's input holds, on the words of PAIRS
(`research/word_aligned_decomposable_attention.py`'s variants `position_erased_states`,
`principal_direction_erased_states` and `position_free_principal_direction_erased_states`): whether a control's
direction is one apart from position, or position again. Per run, over every word of both sentences (the encoder's
states a, a word's position i from 1), with u the run's erased direction as trained (its unit vector; fixed at test):

* cos(u, Cov(a, i)): the cosine between u and the direction that linearly carries position on these words (its sign
  is u's, which a projection ignores; |cos| 1 erases all of the linear position, 0 none of it);
* corr(a . u, i): the correlation of a word's coordinate along u with its position;
* var share: the share of the states' variance along u (the trace of Cov(a, a));
* and the same three for the states' own first principal direction on these words, for reference.

    OMP_NUM_THREADS=1 .venv/bin/python research/snli_erased_direction.py PAIRS RUN [RUN ...] [--json FILE]

Each RUN is a serialization directory with `config.json`, `vocabulary/` and `best.th` (or the replicate.py run folder
holding it in `train/`); PAIRS are read by each run's own validation reader.
"""
import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import torch

from snli_accuracy_by_length import parse_pair_runs  # research/: this file's folder
from sst_accuracy_by_length import load_run, run_name, tensor_batches, validation_reader
from word_aligned_decomposable_attention import DirectionErasure

COLUMNS = ("cos(u, Cov(a, i))", "corr(a . u, i)", "var share of u",
           "cos(PC1, Cov(a, i))", "corr(a . PC1, i)", "var share of PC1")


def states_and_positions(model, instances, batch_size: int = 64) -> Tuple[torch.Tensor, torch.Tensor]:
    """Every unmasked word's state (the premise encoder's, which encodes the hypothesis too), both sentences pooled,
    and its position from 1."""
    states: List[torch.Tensor] = []
    masks: List[torch.Tensor] = []
    with torch.no_grad():
        for _, tensors in tensor_batches(model, instances, batch_size):
            for sentence in ("premise", "hypothesis"):
                masks.append(tensors[sentence]["tokens"]["tokens"] != 0)
                states.append(model._premise_encoder(model._text_field_embedder(tensors[sentence]), masks[-1]).double())
    return DirectionErasure.words(states, masks)  # pooled as the erasure pools them in training


def direction_figures(a: torch.Tensor, i: torch.Tensor, covariance: torch.Tensor, u: torch.Tensor) -> List[float]:
    """cos(u, Cov(a, i)), corr(a . u, i) and u's share of the variance, for centred a and i, their covariance
    Cov(a, i) and a unit u."""
    along = a @ u
    return [float(u @ covariance / covariance.norm()), float(torch.corrcoef(torch.stack([along, i]))[0, 1]),
            float(along.pow(2).mean() / a.pow(2).sum(1).mean())]


def erased_direction(run: Path, pairs: str) -> Dict[str, float]:
    model = load_run(run)
    if getattr(model, "_alignment_input", None) not in getattr(model, "ERASURES", {}):
        sys.exit(f"{run}: not a run of an `..._erased_states` alignment (word_aligned_decomposable_attention.py)")
    instances = list(validation_reader(run).read(pairs))
    if not instances:
        sys.exit(f"{pairs}: no labelled pairs read by {run}'s reader")
    a, i = states_and_positions(model, instances)
    a, i = a - a.mean(0), i - i.mean()
    u = model.erasure().direction().double()
    if float(u.norm()) == 0:
        sys.exit(f"{run}: its erasure was never estimated (P is the identity)")
    first = DirectionErasure.top_eigenvector(a.T @ a / len(a))
    covariance = DirectionErasure.covariance_with_position(a, i)
    return dict(zip(COLUMNS, direction_figures(a, i, covariance, u) + direction_figures(a, i, covariance, first)))


def main(argv=None) -> None:
    args, runs = parse_pair_runs(__doc__, argv, "every run's figures")
    kept = {str(run): erased_direction(run, args.pairs) for run in runs}
    if args.json:
        args.json.write_text(json.dumps(kept, indent=1) + "\n")
    print("| run | " + " | ".join(COLUMNS) + " |")
    print("|---|" + "---:|" * len(COLUMNS))
    for run in runs:
        print(f"| {run_name(run)} | " + " | ".join(f"{kept[str(run)][name]:+.3f}" for name in COLUMNS) + " |")


if __name__ == "__main__":
    main()
