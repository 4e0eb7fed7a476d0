"""
Accuracy of trained binary SST classifiers on the multi-word phrases of TREES (dev or test), split by how each
phrase's sentiment relates to its two children's: a diagnostic of composition, for gaps between models that
fit the training phrases alike (the LSTMN against the peer's LSTM, docs/results.md "sst_lstmn"; the tree LSTM
against the peer, "sst_tree_lstm").

    .venv/bin/python research/sst_composition.py TREES RUN [RUN ...] [--json]

Each RUN is a serialization directory (`config.json`, `vocabulary/`, `best.th`; a `replicate.py` run's `train/`).
Every labelled subtree of two or more tokens whose fine-grained label is not neutral (2) is scored as the binary
protocol scores it (0-1 negative, 3-4 positive), by the run's own reader: a sequence classifier reads the phrase's
tokens, our `tree_classifier` (reader `sst_trees`) the subtree itself, whose root is the phrase (a tree LSTM node's
state depends on its subtree alone, so this is the node's prediction inside the sentence as well, which the tests
check). Each phrase falls in one kind:

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
from typing import List, NamedTuple

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


class Phrase(NamedTuple):
    tokens: List[str]
    label: str  # fine-grained, 0-4
    kind: str  # one of KINDS
    is_root: bool
    tree: str  # the subtree, a PTB-format line with the treebank's labels


def labelled_phrases(trees: str) -> List[Phrase]:
    """A `Phrase` for each non-neutral subtree of two or more tokens in TREES. A line that is not a binary SST tree
    is refused with its file and line."""
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
                    phrases.append(Phrase(subtree.leaves(), subtree.label(), kind(subtree), subtree is root,
                                          " ".join(str(subtree).split())))
    return phrases


def accuracy_by_kind(run: Path, phrases: List[Phrase]) -> dict:
    """{(kind or "all", scope of SCOPES): [right, count]} of RUN over PHRASES (`labelled_phrases`)."""
    model = load_run(run)
    reader = validation_reader(run)
    granularity = getattr(reader, "_granularity", None)  # allennlp-models' `sst_tokens` and our `sst_trees` keep it
    if granularity != "2-class":
        raise ValueError(f"{run}: a binary run (its reader's granularity is {granularity!r}, not '2-class')")
    from memplugins.readers.sst_trees import SstTreesReader

    tree_run = isinstance(reader, SstTreesReader)  # the reader just built, not its config read a second time
    instances = []
    for phrase in phrases:
        # a tree's text_to_instance takes the labelled subtree and drops its labels: the gold is the phrase's
        instance = (reader.text_to_instance(phrase.tree) if tree_run
                    else reader.text_to_instance(phrase.tokens, phrase.label))
        reader.apply_token_indexers(instance)
        instances.append(instance)
    golds = [model.vocab.get_token_index("1" if int(phrase.label) > 2 else "0", "labels") for phrase in phrases]
    counts = collections.defaultdict(lambda: [0, 0])
    remaining = iter(zip(phrases, golds))  # tensor_batches keeps the instances' order
    with torch.no_grad():
        for _, tensors in tensor_batches(model, instances):
            for guess in model(**tensors)["logits"].argmax(-1).tolist():
                phrase, gold = next(remaining)
                scopes = (("phrases", SHORT if len(phrase.tokens) <= 10 else LONG)
                          + (("sentences",) if phrase.is_root else ()))
                for scope in scopes:
                    for key in ((phrase.kind, scope), ("all", scope)):
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
