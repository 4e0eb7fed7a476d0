"""
Where decomposable attention's alignment looks, word by word, in trained pair models built on allennlp-models'
`decomposable_attention` (with or without a sentence encoder before it, e.g. replicate.py's
`snli_decomposable_attention_lstmn_encoder`): a diagnostic for why one encoder there does worse than another on
some pairs (docs/results.md "SNLI"). Parikh et al. (2016) align by e_ij = F(a_i)^T F(b_j) (their eq. 1; a_i the
premise's i-th vector, b_j the hypothesis's j-th, each the encoder's output where there is one, F the
`attend_feedforward`), and each hypothesis word j reads the premise through beta_j = sum_i softmax_i(e_ij) a_i (eq.
2; `h2p_attention`). For every hypothesis word j, with w_ji those weights over the premise's n words:

* same word: the weight on premise words whose text (lowercased) is word j's, over the hypothesis words that occur in
  the premise: how much of the alignment is on the literal match;
* entropy: -sum_i w_ji log w_ji / log n (premises of two words or more): 1 for uniform weights, 0 for one word;
* premise position read: sum_i w_ji (i - 1) / (n - 1) (the same premises): 0 the first word, 1 the last, 0.5 for
  uniform weights; an alignment that follows the words, not their places, reads near 0.5 at every j;
* ‖F(b_j)‖: the size of word j's attend features (the scale of e_ij, so of how sharp w_j can be); and ‖F(a_i)‖ of
  the premise's words by their own position.

And per run, how much of a premise word's position (i, from 1) is linearly written in its vectors: the R² of a
least-squares read-out of i (with an intercept) from a_i, from F's input (what eq. 1's F reads: a_i in
allennlp-models' model, another vector in the variants of `word_aligned_decomposable_attention.py`, e.g. a_i with its
position projected out) and from F(a_i) (F's output), fitted on the words of every other pair (the first, third, ...)
and scored on the words of the rest. A state that counts its steps (an intra-attention over
a tape that grows with t) reads high; F amplifying it is what turns position into alignment. The same read-out of
the word itself: its row of the embedding table (the GloVe vector, before any projection; the same target for every
run), all its dimensions at once (R² = 1 - the residual's summed squares over the target's, about its mean): how
much of what the word is survives in the vectors the alignment compares, which a literal match needs.

Each is given by the word's position in its sentence, per row (runs named `ROW-seedN...` pooled: the mean of the
seeds' means, with the lowest and highest seed's), then each later row's difference from the first, with the
two-sided permutation p over the two rows' seeds (`compare_seeds.py`'s). A last table gives every run's accuracy
and each statistic over all its words and, where there are four runs or more, each statistic's correlation with the
accuracy across the runs, and within rows (each run less its row's mean: whether seeds of one configuration that
align so do better, apart from what separates the rows).

    OMP_NUM_THREADS=1 .venv/bin/python research/snli_alignment.py PAIRS RUN [RUN ...] [--json FILE]

Each RUN is a serialization directory with `config.json`, `vocabulary/` and `best.th` (or the replicate.py run folder
holding it in `train/`); PAIRS are read by each run's own validation reader.
"""
import collections
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

import torch

import paths  # noqa: F401,E402  (benchmarks/replication on sys.path)
from compare_seeds import compare  # noqa: E402
from snli_accuracy_by_length import parse_pair_runs, row_name
from sst_accuracy_by_length import bucket, load_run, run_name, tensor_batches, validation_reader

POSITIONS = ((1, 2), (3, 5), (6, 8), (9, 10_000))  # a word's place in its sentence, from 1
STATISTICS = {  # name: (the sentence whose words it is taken over, the format of a cell)
    "same word": ("hypothesis", "{:.3f}"),
    "entropy": ("hypothesis", "{:.3f}"),
    "premise position read": ("hypothesis", "{:.3f}"),
    "‖F(b_j)‖": ("hypothesis", "{:.2f}"),
    "‖F(a_i)‖": ("premise", "{:.2f}"),
}


def keys() -> List[str]:
    return ["all"] + [bucket(first, POSITIONS) for first, _ in POSITIONS]


class LinearReadout:
    """Least squares of a target (a word's position, or a vector of targets) on a word's vector and an intercept,
    fitted on one half of the words and scored (R², over all the target's dimensions together) on the other, from
    each half's sums of x x^T, x y^T, y and y^2 (so no word is kept)."""

    def __init__(self) -> None:
        self.halves: List[Optional[Dict[str, torch.Tensor]]] = [None, None]

    def add(self, half: int, vectors: torch.Tensor, targets: torch.Tensor) -> None:
        """`targets` (words,) or (words, dimensions)."""
        x = torch.cat([vectors.double(), torch.ones(len(vectors), 1, dtype=torch.double)], dim=1)
        y = targets.double().reshape(len(targets), -1)
        sums = {"xx": x.T @ x, "xy": x.T @ y, "y": y.sum(0), "yy": (y * y).sum(), "n": torch.tensor(float(len(y)))}
        if self.halves[half] is None:
            self.halves[half] = sums
        else:
            for key, value in sums.items():
                self.halves[half][key] += value

    def r2(self) -> Optional[float]:
        """R² on the second half of the fit on the first; None where a half has no words or its targets do not
        vary."""
        fit, scored = self.halves
        if fit is None or scored is None:
            return None
        total = scored["yy"] - scored["y"] @ scored["y"] / scored["n"]
        if total <= 0:
            return None
        # a pseudo-inverse: vectors that span fewer dimensions than they have (a unit never used, or a direction
        # projected out, which float32 rounding leaves at 1e-7 of the rest and an exact inverse would blow up) still
        # fit; x x^T's eigenvalues below 1e-10 of the largest (x's singular values below 1e-5) are dropped
        w = torch.linalg.pinv(fit["xx"], rtol=1e-10, hermitian=True) @ fit["xy"]  # (inputs + 1, targets)
        # sum over the words of |y - x w|^2 = sum y^2 - 2 tr(w^T x^T y) + tr(w^T x^T x w)
        residual = scored["yy"] - 2 * (w * scored["xy"]).sum() + (w * (scored["xx"] @ w)).sum()
        return float(1 - residual / total)


READOUTS = ("a_i", "F's input", "F(a_i)")  # the vectors a premise word's position and identity are read from
TARGETS = {"position R²": "a premise word's position", "word R²": "a premise word's own GloVe vector"}


def word_vectors(model, run: Path) -> Callable[[torch.Tensor], torch.Tensor]:
    """RUN's embedding table (before any projection), as a lookup of token ids to the word vectors."""
    embedder = getattr(model._text_field_embedder, "token_embedder_tokens", None)
    if embedder is None or getattr(embedder, "weight", None) is None:
        sys.exit(f"{run}: the word read-out needs a `tokens` embedding table (an `embedding` token embedder)")
    return lambda ids: torch.nn.functional.embedding(ids, embedder.weight)


def alignment(run: Path, pairs: str, batch_size: int = 64) -> Dict[str, object]:
    """RUN's best weights on PAIRS: {"accuracy": fraction, statistic: {position bucket: [sum, count]},
    "position R²": {READOUTS' name: R²}, "word R²": {READOUTS' name: R²}}."""
    model = load_run(run)
    attend = getattr(model, "_attend_feedforward", None)
    if attend is None:
        sys.exit(f"{run}: not a decomposable_attention model (no attend_feedforward)")
    instances = list(validation_reader(run).read(pairs))
    if not instances:
        sys.exit(f"{pairs}: no labelled pairs read by {run}'s reader")
    sums: Dict[str, Dict[str, List[float]]] = {name: collections.defaultdict(lambda: [0.0, 0])
                                               for name in STATISTICS}
    features: List[torch.Tensor] = []  # F's outputs: the premise's, then the hypothesis's, per forward
    attended: List[torch.Tensor] = []  # F's inputs, the same way
    encoded: List[torch.Tensor] = []  # a_i and b_j: the encoder's outputs, or the embedder's where there is none
    sentence_encoder = getattr(model, "_premise_encoder", None)
    if sentence_encoder is None:
        sentence_encoder = model._text_field_embedder

    def keep_attend(module, inputs, output) -> None:  # returns None: a hook's return value would replace the output
        attended.append(inputs[0])
        features.append(output)

    hooks = [attend.register_forward_hook(keep_attend),
             sentence_encoder.register_forward_hook(lambda module, inputs, output: encoded.append(output))]
    readouts = {target: {name: LinearReadout() for name in READOUTS} for target in TARGETS}
    glove = word_vectors(model, run)
    right = 0
    seen = 0  # pairs before this batch: a pair's half is its index's parity

    def add(name: str, position: int, value: float) -> None:
        for key in ("all", bucket(position, POSITIONS)):
            sums[name][key][0] += value
            sums[name][key][1] += 1

    try:
        with torch.no_grad():
            for chunk, tensors in tensor_batches(model, instances, batch_size):
                features.clear()
                attended.clear()
                encoded.clear()
                output = model(**tensors)
                if len(features) != 2 or len(encoded) != 2 or "h2p_attention" not in output:
                    sys.exit(f"{run}: its model does not align as decomposable_attention does (F called "
                             f"{len(features)} times, h2p_attention {'in' if 'h2p_attention' in output else 'not in'} "
                             f"its output)")
                premise_features, hypothesis_features = features
                right += int((output["label_logits"].argmax(-1) == tensors["label"]).sum())
                weights = output["h2p_attention"]  # (batch, hypothesis words, premise words)
                for k, instance in enumerate(chunk):
                    premise = [token.text.lower() for token in instance["premise"].tokens]
                    hypothesis = [token.text.lower() for token in instance["hypothesis"].tokens]
                    n = len(premise)
                    places = torch.arange(n, dtype=weights.dtype) / max(n - 1, 1)
                    words = glove(tensors["premise"]["tokens"]["tokens"][k, :n])
                    for name, vectors in zip(READOUTS, (encoded[0], attended[0], premise_features)):
                        readouts["position R²"][name].add((seen + k) % 2, vectors[k, :n], torch.arange(1, n + 1))
                        readouts["word R²"][name].add((seen + k) % 2, vectors[k, :n], words)
                    for i in range(n):
                        add("‖F(a_i)‖", i + 1, float(premise_features[k, i].norm()))
                    for j, word in enumerate(hypothesis):
                        w = weights[k, j, :n]
                        add("‖F(b_j)‖", j + 1, float(hypothesis_features[k, j].norm()))
                        if word in premise:
                            add("same word", j + 1, float(sum(w[i] for i in range(n) if premise[i] == word)))
                        if n > 1:
                            add("entropy", j + 1, float(-(w * w.clamp(min=1e-30).log()).sum()) / math.log(n))
                            add("premise position read", j + 1, float((w * places).sum()))
                seen += len(chunk)
    finally:
        for hook in hooks:
            hook.remove()
    return {"accuracy": right / len(instances), **{name: dict(cells) for name, cells in sums.items()},
            **{target: {name: readout.r2() for name, readout in fits.items()} for target, fits in readouts.items()}}


def means(results: List[dict], name: str, key: str) -> Optional[List[float]]:
    """Each run's mean of one statistic in one bucket; None where a run has no words there."""
    cells = [result[name].get(key, [0.0, 0]) for result in results]
    return None if any(count == 0 for _, count in cells) else [total / count for total, count in cells]


def pearson(x: List[float], y: List[float]) -> Optional[float]:
    """Pearson's r over four or more runs; None for fewer, or where either side is constant."""
    if len(x) < 4 or len(set(x)) == 1 or len(set(y)) == 1:
        return None
    return statistics.correlation(x, y)


def row_lines(results: Dict[str, List[dict]], figures: Dict[str, List[Optional[List[float]]]], form: str) -> List[str]:
    """A table's lines: per row, each cell's seeds' mean (with their range), "-" where `figures` has None; then each
    later row less the first, with the permutation p over the two rows' seeds where both have two or more."""
    rows = list(results)
    lines = []
    for row in rows:
        cells = ["-" if values is None else form.format(statistics.fmean(values))
                 + (f" ({form.format(min(values))}-{form.format(max(values))})" if len(values) > 1 else "")
                 for values in figures[row]]
        lines.append(f"| {row} | {len(results[row])} | " + " | ".join(cells) + " |")
    for row in rows[1:]:
        tested = len(results[row]) > 1 and len(results[rows[0]]) > 1
        cells = []
        for mine, first in zip(figures[row], figures[rows[0]]):
            if mine is None or first is None:
                cells.append("-")
                continue
            difference = statistics.fmean(mine) - statistics.fmean(first)
            cells.append(("{:+" + form[2:]).format(difference)
                         + (f", p {compare(first, mine).p:.3f}" if tested else ""))
        lines.append(f"| {row} − {rows[0]} | | " + " | ".join(cells) + " |")
    return lines


def tables(results: Dict[str, List[dict]], names: Dict[str, List[str]]) -> str:
    """Per statistic, each row by position (the seeds' mean, with their range) and each later row less the first;
    the read-outs' R² (position, word) the same way; then each run's accuracy and statistics over all words, and their
    correlation across runs."""
    lines = []
    rows = list(results)
    for name, (sentence, form) in STATISTICS.items():
        lines += ["", f"{name}, by the {sentence} word's position:", "",
                  "| row | seeds | " + " | ".join(keys()) + " |", "|---|---:|" + "---:|" * len(keys())]
        lines += row_lines(results, {row: [means(results[row], name, key) for key in keys()] for row in rows}, form)
    for target, what in TARGETS.items():
        lines += ["", f"{target[0].upper()}{target[1:]} ({what} read linearly from its vectors, on held-out pairs):",
                  "", "| row | seeds | " + " | ".join(READOUTS) + " |", "|---|---:|" + "---:|" * len(READOUTS)]
        fits = {row: [[result[target][name] for result in results[row]] for name in READOUTS] for row in rows}
        lines += row_lines(results, {row: [None if None in values else values for values in fits[row]]
                                     for row in rows}, "{:.3f}")
    columns = {**{name: form for name, (_, form) in STATISTICS.items()},
               **{f"{target}, {name}": "{:.3f}" for target in TARGETS for name in READOUTS}}

    def overall(result: dict) -> Dict[str, Optional[float]]:
        """A run's figure for each column: a statistic's mean over all its words, or a read-out's R²."""
        values = {name: means([result], name, "all") for name in STATISTICS}
        return {**{name: None if value is None else value[0] for name, value in values.items()},
                **{f"{target}, {name}": result[target][name] for target in TARGETS for name in READOUTS}}

    overalls = {row: [overall(result) for result in results[row]] for row in rows}  # once a run
    runs = [(run, result, values) for row in rows
            for run, result, values in zip(names[row], results[row], overalls[row])]
    lines += ["", "Every run, over all its words:", "",
              "| run | accuracy | " + " | ".join(columns) + " |", "|---|---:|" + "---:|" * len(columns)]
    for run, result, values in runs:
        lines.append(f"| {run} | {100 * result['accuracy']:.1f} | "
                     + " | ".join("-" if values[name] is None else form.format(values[name])
                                  for name, form in columns.items()) + " |")
    if len(runs) >= 4:
        across, within = [], []
        for name in columns:
            figures = {row: [values[name] for values in overalls[row]] for row in rows}
            if any(None in values for values in figures.values()):
                across.append("-")
                within.append("-")
                continue
            r = pearson([value for row in rows for value in figures[row]],
                        [result["accuracy"] for row in rows for result in results[row]])
            across.append("-" if r is None else f"{r:+.2f}")
            # each run less its row's mean (rows of two seeds or more): the seeds' own variation, the rows' apart
            seeded = [row for row in rows if len(results[row]) > 1]
            r = pearson([value - statistics.fmean(figures[row]) for row in seeded for value in figures[row]],
                        [result["accuracy"] - statistics.fmean(other["accuracy"] for other in results[row])
                         for row in seeded for result in results[row]])
            within.append("-" if r is None else f"{r:+.2f}")
        lines.append("| correlation with the accuracy, across runs | | " + " | ".join(across) + " |")
        lines.append("| the same within rows (each run less its row's mean) | | " + " | ".join(within) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    args, runs = parse_pair_runs(__doc__, argv, "every run's sums and counts")
    results: Dict[str, List[dict]] = {}
    names: Dict[str, List[str]] = {}
    kept = {}
    for run in runs:
        kept[str(run)] = alignment(run, args.pairs)
        results.setdefault(row_name(run), []).append(kept[str(run)])
        names.setdefault(row_name(run), []).append(run_name(run))
    if args.json:
        args.json.write_text(json.dumps(kept, indent=1) + "\n")
    print(tables(results, names))


if __name__ == "__main__":
    main()
