"""
Accuracy of trained binary SST classifiers on the multi-word phrases of TREES (dev or test), split by how each
phrase's sentiment relates to its two children's: a diagnostic of composition, for gaps between models that
fit the training phrases alike (the LSTMN against the peer's LSTM, docs/results.md "sst_lstmn").

    .venv/bin/python benchmarks/sst_composition.py TREES RUN [RUN ...] [--json]

Each RUN is a serialization directory (`config.json`, `vocabulary/`, `best.th`; a `replicate.py` run's `train/`).
Every labelled subtree of two or more tokens whose fine-grained label is not neutral (2) is scored as the binary
protocol scores it (0-1 negative, 3-4 positive), by the run's own reader, and falls in one kind:

* `flips`: a child carries the opposite polarity (not neutral), e.g. "not good" over "good": the phrase's label
  cannot be read off that child; what composition must get right (Socher et al. 2013's negation and "but" cases).
* `agrees`: no child is opposite and at least one shares the phrase's polarity: one child's sentiment carries over.
* `from neutral`: both children neutral, the sentiment arises in the combination.

Prints a table per scope (all such phrases; those of 2-10 and of 11+ tokens; the sentences, i.e. the roots), a row
per run with the accuracy and count of each kind, then, for runs that differ only in their seed (`NAME-seedN-...`),
the mean per kind. `--json`: one line per run, [right, count] per kind and scope.
"""
import collections
import json
import re
import statistics
from pathlib import Path

import torch
from nltk import Tree

from sst_accuracy_by_length import load_run, parse_runs, run_name, tensor_batches, validation_reader

KINDS = ("flips", "agrees", "from neutral")
SHORT, LONG = "phrases of 2-10 tokens", "phrases of 11+ tokens"
SCOPES = ("phrases", SHORT, LONG, "sentences")


def polarity(label: str) -> int:
    """-1, 0 or +1 for SST's fine-grained labels 0-1, 2 and 3-4."""
    value = int(label)
    return (value > 2) - (value < 2)


def kind(tree: Tree) -> str:
    """Which of KINDS a non-neutral binary node of an SST tree is (module doc)."""
    own = polarity(tree.label())
    children = [polarity(child.label()) for child in tree]
    if -own in children:
        return "flips"
    return "agrees" if own in children else "from neutral"


def labelled_phrases(trees: str) -> list:
    """(tokens, fine-grained label, kind, is the root) for each non-neutral subtree of two or more tokens in
    TREES. A line that is not a binary SST tree is refused with its file and line."""
    phrases = []
    with open(trees, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                root = Tree.fromstring(line)
            except ValueError as error:
                raise ValueError(f"{trees}, line {number}: not a PTB-format tree ({error})") from None
            for subtree in root.subtrees():
                if len(subtree) == 1 and isinstance(subtree[0], str):
                    continue  # a word
                if len(subtree) != 2 or not all(isinstance(child, Tree) for child in subtree):
                    raise ValueError(f"{trees}, line {number}: a node with {len(subtree)} children; SST is binary")
                if not re.fullmatch(r"[0-4]", subtree.label()) or not all(
                        re.fullmatch(r"[0-4]", child.label()) for child in subtree):
                    raise ValueError(f"{trees}, line {number}: a label outside 0-4 near {subtree.label()!r}")
                if polarity(subtree.label()) != 0:
                    phrases.append((subtree.leaves(), subtree.label(), kind(subtree), subtree is root))
    return phrases


def accuracy_by_kind(run: Path, phrases: list) -> dict:
    """{(kind or "all", scope of SCOPES): [right, count]} of RUN over PHRASES (`labelled_phrases`)."""
    model = load_run(run)
    reader = validation_reader(run)
    if getattr(reader, "_granularity", None) != "2-class":
        raise ValueError(f"{run}: a binary run (its reader's granularity is "
                         f"{getattr(reader, '_granularity', None)!r}, not '2-class')")
    instances = []
    for tokens, label, _, _ in phrases:
        instance = reader.text_to_instance(tokens, label)
        reader.apply_token_indexers(instance)
        instances.append(instance)
    counts = collections.defaultdict(lambda: [0, 0])
    remaining = iter(phrases)  # tensor_batches keeps the instances' order
    with torch.no_grad():
        for _, tensors in tensor_batches(model, instances):
            predicted = model(**tensors)["logits"].argmax(-1).tolist()
            for guess, gold in zip(predicted, tensors["label"].tolist()):
                tokens, _, phrase_kind, is_root = next(remaining)
                scopes = ("phrases", SHORT if len(tokens) <= 10 else LONG) + (("sentences",) if is_root else ())
                for scope in scopes:
                    for key in ((phrase_kind, scope), ("all", scope)):
                        counts[key][0] += int(guess == gold)
                        counts[key][1] += 1
    return counts


def main() -> None:
    args = parse_runs(__doc__, "../shared/data/sst/trees/dev.txt", json_option=True)
    phrases = labelled_phrases(args.trees)
    kinds = ("all",) + KINDS
    results = [(run, accuracy_by_kind(run, phrases)) for run in args.runs]
    if args.json:
        for run, counts in results:
            print(json.dumps({"run": str(run), **{f"{k}, {scope}": counts[(k, scope)] for scope in SCOPES
                                                  for k in kinds}}))
        return
    for scope in SCOPES:
        print(f"\n{scope}: accuracy (count)\n")
        print("| run | " + " | ".join(kinds) + " |")
        print("|---|" + "---:|" * len(kinds))
        by_group = collections.defaultdict(list)
        for run, counts in results:
            accuracy = {k: counts[(k, scope)][0] / counts[(k, scope)][1] for k in kinds if counts[(k, scope)][1]}
            by_group[re.sub(r"-seed\d+", "", run_name(run))].append(accuracy)
            print(f"| {run_name(run)} | " + " | ".join(
                f"{accuracy[k]:.3f} ({counts[(k, scope)][1]})" if k in accuracy else "-" for k in kinds) + " |")
        if any(len(accuracies) > 1 for accuracies in by_group.values()):
            print("\n| runs (mean over seeds) | seeds | " + " | ".join(kinds) + " |")
            print("|---|---:|" + "---:|" * len(kinds))
            for group, accuracies in by_group.items():
                means = [statistics.mean(a[k] for a in accuracies) if all(k in a for a in accuracies) else None
                         for k in kinds]
                print(f"| {group} | {len(accuracies)} | " + " | ".join(
                    "-" if mean is None else f"{mean:.3f}" for mean in means) + " |")


if __name__ == "__main__":
    main()
