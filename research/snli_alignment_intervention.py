"""
Interventions on decomposable attention's alignment in trained pair models (allennlp-models'
`decomposable_attention`, with or without a sentence encoder before it, e.g. replicate.py's
`snli_decomposable_attention_lstmn_encoder`): does the alignment cause an accuracy gap between two encoders, or only
go with it? `research/snli_alignment.py` measures that with the one-way LSTMN as the encoder the alignment puts less
weight on the literal match (the premise's occurrences of a hypothesis word) than with the LSTM, and that across
runs that weight tracks accuracy: an association (docs/results.md "SNLI"). Here a trained model's alignment is
changed at test time, nothing retrained. With e_ij = F(a_i)^T F(b_j) (Parikh et al. 2016, eq. 1; a_i, b_j the
premise's and hypothesis's encoded words):

* literal match +β (`--bonus`): e_ij + β wherever premise word i's text (lowercased) is hypothesis word j's, before
  both softmaxes of eq. 2, so that beta_j (what hypothesis word j reads of the premise) and alpha_i both lean to
  the literal match;
* aligned as the other row (`--graft`, two rows whose runs share seeds): e_ij of the other row's run with the same
  seed in place of the run's own (the pairs, so the shapes, are the same), its own a_i, b_j and compare and
  aggregate layers (eq. 3-5) kept: each row's states read through the other's alignment.

If the literal-match alignment is a cause of one encoder's deficit, that encoder gains more from the push than the
other, and its states aligned as the other's recover part of the gap where it sits (long entailed hypotheses). Both
give the compare layer alignments it was never trained on, so a gain is evidence and a loss is no proof of the
opposite.

    OMP_NUM_THREADS=1 .venv/bin/python research/snli_alignment_intervention.py PAIRS RUN [RUN ...] \\
        [--bonus 1,2,4] [--graft] [--json FILE]

Each RUN is a serialization directory with `config.json`, `vocabulary/` and `best.th` (or the replicate.py run folder
holding it in `train/`); runs named `ROW-seedN...` are grouped per ROW. PAIRS are read by each run's own validation
reader. Tables: per row and condition, the seeds' mean accuracy on all pairs, on each gold label's, on the entailed
pairs with hypotheses of 11 tokens or more, the literal-match weight (snli_alignment.py's "same word") and the share of
the pairs given each label (an alignment can move errors between labels); each condition's change from the run as
trained (the mean over seeds, and how many seeds gained); each later row under each condition less the first row as
trained, with the two-sided permutation p over the seeds (`compare_seeds.py`'s).
"""
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

import torch

import paths  # noqa: F401,E402  (benchmarks/replication on sys.path)
from compare_seeds import compare  # noqa: E402
from snli_accuracy_by_length import empty_counts, parse_pair_runs, row_name, tally
from sst_accuracy_by_length import load_run, run_name, tensor_batches, validation_reader

AS_TRAINED = "as trained"
LONG = "11+"  # snli_accuracy_by_length's longest hypothesis bucket


class Replay(torch.nn.Module):
    """A sentence encoder that runs once per batch: its outputs (the premise's, then the hypothesis's) are kept on the
    first pass and given back on the next ones, which change only what comes after it (the alignment)."""

    def __init__(self, encoder: torch.nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.outputs: List[torch.Tensor] = []
        self.replaying = False
        self.calls = 0

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        if not self.replaying:
            self.outputs.append(self.encoder(inputs, mask))
            return self.outputs[-1]
        output = self.outputs[self.calls % len(self.outputs)]
        self.calls += 1
        return output

    def new_batch(self) -> None:
        self.outputs, self.replaying, self.calls = [], False, 0


class Aligned:
    """One trained model with hooks: its sentence encoder replayed within a batch, and its alignment scores e_ij
    (`_matrix_attention`'s output, (batch, premise words, hypothesis words)) kept and, while `edit` is set,
    replaced by `edit(e)`."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.model = load_run(run)
        matrix_attention = getattr(self.model, "_matrix_attention", None)
        if getattr(self.model, "_attend_feedforward", None) is None or matrix_attention is None:
            sys.exit(f"{run}: not a decomposable_attention model (no attend_feedforward and matrix_attention)")
        self.replay: Optional[Replay] = None
        encoder = getattr(self.model, "_premise_encoder", None)
        if encoder is not None:
            if getattr(self.model, "_hypothesis_encoder", None) is not encoder:
                sys.exit(f"{run}: its premise and hypothesis encoders differ; only a shared encoder is replayed")
            self.replay = Replay(encoder)
            self.model._premise_encoder = self.model._hypothesis_encoder = self.replay
        self.labels = self.model.vocab.get_index_to_token_vocabulary("labels")
        self.scores: Optional[torch.Tensor] = None
        self.edit: Optional[Callable[[torch.Tensor], torch.Tensor]] = None
        matrix_attention.register_forward_hook(self._hook)

    def _hook(self, module, inputs, output: torch.Tensor) -> torch.Tensor:
        self.scores = output
        return output if self.edit is None else self.edit(output)

    def forward(self, tensors: dict, edit: Optional[Callable[[torch.Tensor], torch.Tensor]] = None) -> dict:
        """The model's output on one batch; the first call of a batch (after `new_batch`) runs the encoder, later
        ones replay it."""
        self.edit = edit
        try:
            output = self.model(**tensors)
        finally:
            self.edit = None
            if self.replay is not None:
                self.replay.replaying = True
        if "h2p_attention" not in output:
            sys.exit(f"{self.run}: its model does not align as decomposable_attention does (no h2p_attention)")
        return output

    def new_batch(self) -> None:
        if self.replay is not None:
            self.replay.new_batch()


def same_words(chunk: list, premise_length: int, hypothesis_length: int) -> torch.Tensor:
    """(batch, premise words, hypothesis words): True where the two words' texts, lowercased, are the same."""
    same = torch.zeros(len(chunk), premise_length, hypothesis_length, dtype=torch.bool)
    for k, instance in enumerate(chunk):
        hypothesis = [token.text.lower() for token in instance["hypothesis"].tokens]
        for i, token in enumerate(instance["premise"].tokens):
            word = token.text.lower()
            for j, other in enumerate(hypothesis):
                same[k, i, j] = word == other
    return same


class Tallies:
    """Per condition: correct/total by snli_accuracy_by_length's fields, and the literal-match weight's [sum, count]
    over hypothesis words that occur in the premise."""

    def __init__(self, labels: Dict[int, str]) -> None:
        self.labels = labels
        self.conditions: Dict[str, dict] = {}

    def add(self, condition: str, chunk: list, tensors: dict, output: dict, same: torch.Tensor) -> None:
        kept = self.conditions.setdefault(condition, {"counts": empty_counts(self.labels), "same word": [0.0, 0],
                                                      "predicted": {label: 0 for label in self.labels.values()}})
        predicted = output["label_logits"].argmax(-1).tolist()
        tally(kept["counts"], chunk, predicted, tensors["label"].tolist(), self.labels)
        for guess in predicted:
            kept["predicted"][self.labels[guess]] += 1
        weights = output["h2p_attention"]  # (batch, hypothesis words, premise words)
        same_t = same.transpose(1, 2)
        present = same_t.any(-1)
        kept["same word"][0] += float((weights * same_t).sum(-1)[present].sum())
        kept["same word"][1] += int(present.sum())

    def as_dict(self) -> dict:
        return {condition: {"counts": {field: dict(cells) for field, cells in kept["counts"].items()},
                            "same word": kept["same word"], "predicted": kept["predicted"]}
                for condition, kept in self.conditions.items()}


def seed_of(run: Path) -> Optional[str]:
    found = re.search(r"-seed(\d+)", run_name(run))
    return found.group(1) if found else None


def intervene(runs: List[Path], pairs: str, bonuses: List[float], batch_size: int = 64) -> List[dict]:
    """Every condition's tallies for each of RUNS: one run, or (`--graft`) two runs of the same seed, each then also
    aligned as the other."""
    models = [Aligned(run) for run in runs]
    tokens = models[0].model.vocab.get_token_to_index_vocabulary("tokens")
    if any(model.model.vocab.get_token_to_index_vocabulary("tokens") != tokens for model in models[1:]):
        sys.exit(f"{', '.join(map(str, runs))}: the runs' vocabularies differ, so one batch's tensors cannot serve "
                 "both")
    tallies = [Tallies(model.labels) for model in models]
    instances = list(validation_reader(runs[0]).read(pairs))
    if not instances:
        sys.exit(f"{pairs}: no labelled pairs read by {runs[0]}'s reader")
    with torch.no_grad():
        for chunk, tensors in tensor_batches(models[0].model, instances, batch_size):
            scores, same = [], None
            for model, kept in zip(models, tallies):
                model.new_batch()
                output = model.forward(tensors)
                scores.append(model.scores)
                if same is None:  # the same pairs, so the same shape, for every model of the batch
                    same = same_words(chunk, *model.scores.shape[1:])
                kept.add(AS_TRAINED, chunk, tensors, output, same)
                for bonus in bonuses:
                    output = model.forward(tensors, lambda e, bonus=bonus: e + bonus * same.to(e.dtype))
                    kept.add(f"literal match +{bonus:g}", chunk, tensors, output, same)
            if len(models) == 2:
                for k, (model, kept) in enumerate(zip(models, tallies)):
                    output = model.forward(tensors, lambda e, donor=scores[1 - k]: donor)
                    kept.add(f"aligned as {row_name(runs[1 - k])}", chunk, tensors, output, same)
    return [kept.as_dict() for kept in tallies]


def figures(result: dict) -> Dict[str, Optional[float]]:
    """One run's accuracies (%) under one condition: all pairs, each gold label's, long entailed hypotheses; the
    literal-match weight; and the share of pairs (%) given each label."""
    counts = result["counts"]

    def percent(field: str, key: str = "all") -> Optional[float]:
        correct, total = counts[field].get(key, [0, 0])
        return 100 * correct / total if total else None

    labels = sorted(field.split(", gold ")[1] for field in counts if ", gold " in field)
    entailment = next((label for label in labels if label.startswith("entail")), None)
    values = {"all": percent("premise")}
    values.update({label: percent(f"hypothesis, gold {label}") for label in labels})
    if entailment is not None:
        values[f"{entailment}, hypothesis {LONG}"] = percent(f"hypothesis, gold {entailment}", LONG)
    total, count = result["same word"]
    values["same word"] = total / count if count else None
    pairs = sum(result["predicted"].values())
    values.update({f"predicted {label}": 100 * result["predicted"][label] / pairs for label in labels})
    return values


def cell(value: Optional[float], name: str, signed: bool = False) -> str:
    if value is None:
        return "-"
    form = ("{:+.3f}" if signed else "{:.3f}") if name == "same word" else ("{:+.1f}" if signed else "{:.1f}")
    return form.format(value)


def differences(after: List[dict], before: List[dict], columns: List[str], paired: bool) -> List[str]:
    """Per column, the mean of `after`'s seeds less `before`'s; `paired` (the same runs, changed): with how many
    seeds gained, else with the permutation p over the two sets of seeds."""
    cells = []
    for column in columns:
        if any(seed[column] is None for seed in after + before):
            cells.append("-")
            continue
        mine, theirs = [seed[column] for seed in after], [seed[column] for seed in before]
        text = cell(statistics.fmean(mine) - statistics.fmean(theirs), column, signed=True)
        if paired:
            text += f" ({sum(a > b for a, b in zip(mine, theirs))}/{len(mine)})"
        elif len(mine) > 1 and len(theirs) > 1:
            text += f", p {compare(theirs, mine).p:.3f}"
        cells.append(text)
    return cells


def tables(results: Dict[str, List[dict]]) -> str:
    """results: {row: [each seed's {condition: tallies}]} in the order given; the seeds of two rows in the same
    order when they are compared."""
    rows = list(results)
    columns = list(figures(results[rows[0]][0][AS_TRAINED]))
    per_seed = {row: {condition: [figures(seed[condition]) for seed in results[row] if condition in seed]
                      for condition in {c for seed in results[row] for c in seed}} for row in rows}
    lines = ["", "Accuracy (%, the seeds' mean) and literal-match weight, per row and condition:", "",
             "| row | condition | seeds | " + " | ".join(columns) + " |", "|---|---|---:|" + "---:|" * len(columns)]
    for row in rows:
        for condition in sorted(per_seed[row], key=lambda c: (c != AS_TRAINED, c)):
            values = per_seed[row][condition]
            means = [statistics.fmean(seed[column] for seed in values)
                     if all(seed[column] is not None for seed in values) else None for column in columns]
            lines.append(f"| {row} | {condition} | {len(values)} | "
                         + " | ".join(cell(value, column) for value, column in zip(means, columns)) + " |")
    lines += ["", "Each condition less the same run as trained (the seeds' mean; seeds that gained of all):", "",
              "| row | condition | " + " | ".join(columns) + " |", "|---|---|" + "---:|" * len(columns)]
    for row in rows:
        for condition in sorted(c for c in per_seed[row] if c != AS_TRAINED):
            cells = differences(per_seed[row][condition], per_seed[row][AS_TRAINED], columns, paired=True)
            lines.append(f"| {row} | {condition} | " + " | ".join(cells) + " |")
    if len(rows) > 1:
        lines += ["", f"Each later row under each condition less {rows[0]} as trained (p: two-sided permutation over "
                      "the seeds):", "", "| row | condition | " + " | ".join(columns) + " |",
                  "|---|---|" + "---:|" * len(columns)]
        for row in rows[1:]:
            for condition in sorted(per_seed[row], key=lambda c: (c != AS_TRAINED, c)):
                cells = differences(per_seed[row][condition], per_seed[rows[0]][AS_TRAINED], columns, paired=False)
                lines.append(f"| {row} | {condition} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    args, runs = parse_pair_runs(__doc__, argv, "every run's counts per condition", options=(
        (("--bonus",), {"default": "1,2,4", "help": "comma-separated β's added to e_ij at literal matches"}),
        (("--graft",), {"action": "store_true", "help": "two rows: each run aligned as the other row's same seed"})))
    try:
        bonuses = [float(value) for value in args.bonus.split(",") if value.strip()]
    except ValueError:
        sys.exit(f"--bonus {args.bonus}: comma-separated numbers, e.g. 1,2,4")
    grouped: Dict[str, List[Path]] = {}
    for run in runs:
        grouped.setdefault(row_name(run), []).append(run)
    results: Dict[str, List[dict]] = {row: [] for row in grouped}
    kept = {}
    if args.graft:
        if len(grouped) != 2:
            sys.exit(f"--graft: runs of two rows, not {len(grouped)} ({', '.join(grouped)})")
        first, second = grouped.values()
        partners = {seed_of(run): run for run in second}
        if None in partners or len(partners) != len(second) or sorted(partners) != sorted(map(seed_of, first)):
            sys.exit("--graft: each row's runs named ROW-seedN with the same seeds, once each: "
                     f"{[run_name(run) for run in first]} against {[run_name(run) for run in second]}")
        jobs = [[run, partners[seed_of(run)]] for run in first]
    else:
        jobs = [[run] for run in runs]
    for job in jobs:
        for run, result in zip(job, intervene(job, args.pairs, bonuses)):
            kept[str(run)] = result
            results[row_name(run)].append(result)
    if args.json:
        args.json.write_text(json.dumps(kept, indent=1) + "\n")
    print(tables(results))


if __name__ == "__main__":
    main()
