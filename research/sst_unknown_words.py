"""
How trained SST classifiers treat words their vocabulary lacks: a diagnostic for test accuracy far below dev
accuracy (docs/results.md "sst_nse"). AllenNLP builds the vocabulary from the training and validation data, so no dev
sentence has an unknown word, while about half the SST test sentences have one. They all map to @@UNKNOWN@@, whose
embedding row was drawn at random (at the norm of the GloVe rows) and is never trained: no training token maps to
it. Each RUN (a `benchmarks/replication/replicate.py` run's `train/`, or any serialization directory with `config.json`,
`vocabulary/` and `best.th`) is evaluated on TREES three ways:

- "as trained": the model as it is (what `replicate.py` records);
- "unknown = 0": its @@UNKNOWN@@ row set to zero, as the NSE paper sets out-of-vocabulary words ("The embeddings for
  out-of-vocabulary words were set to zero vector", section 4);
- "vocab + GloVe": the vocabulary extended with the TREES words (AllenNLP's `extend_embedder_vocab`, as
  `allennlp evaluate --extend-vocab`), their rows read from the run's own pretrained file; a word the file lacks
  stays unknown, and @@UNKNOWN@@ is zero;
- "GloVe vocabulary": what the run would give had it been trained with our configs' vocabulary
  (training_config/glove_vocabulary.libsonnet: the training and validation words and the pretrained file's): the
  TREES words the file holds join the vocabulary with their rows from the file, the rest stay @@UNKNOWN@@ as
  trained. For a table that training never changes beyond the rows its tokens reach (a fixed table, or a tuned one
  outside the optimizer's L2, as all our SST rows but the tree LSTM's), this is the configs' protocol exactly, up to
  the random draws of initialisation: a row no training token reaches gets a zero gradient, and Adam's and AdaGrad's
  step for a zero gradient with zero history is zero.

    SST_GRANULARITY=2-class .venv/bin/python research/sst_unknown_words.py TREES RUN [RUN ...] [--json]

Prints one row per run: the four accuracies, and as trained, the accuracy on the sentences with an unknown word and
on the others (with their counts); with --json, one JSON line per run instead. Changes no file.
"""
import gzip
import json
from pathlib import Path

import torch
from allennlp.common import Params
from allennlp.data import Batch
from allennlp.models import Model

from sst_accuracy_by_length import load_run, parse_runs, read_trees, run_name  # research/: this file's folder

UNKNOWN = "@@UNKNOWN@@"


def embedding(model: Model):
    return model._text_field_embedder.token_embedder_tokens


def predictions(model: Model, instances) -> list:
    """(correct, has an unknown word) per instance."""
    unknown = model.vocab.get_token_index(UNKNOWN, "tokens")
    results = []
    with torch.no_grad():
        for start in range(0, len(instances), 64):
            chunk = instances[start:start + 64]
            batch = Batch(chunk)
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            predicted = model(**tensors)["logits"].argmax(-1)
            ids = tensors["tokens"]["tokens"]["tokens"]
            gold = sentence_labels(tensors)
            scored = gold >= 0  # a tree reader keeps a sentence whose root has no label at this granularity as -1
            results += list(zip((predicted == gold)[scored].tolist(), (ids == unknown).any(-1)[scored].tolist()))
    return results


def sentence_labels(tensors: dict) -> torch.Tensor:
    """The sentence label of each instance: `label` (sst_tokens), or the root's label of the tree (sst_trees)."""
    if "label" in tensors:
        return tensors["label"]
    tree = tensors["tree"]
    return tree["labels"][torch.arange(tree["labels"].size(0)), tree["root"]]


def pretrained_file(run: Path) -> str:
    params = Params.from_file(str(run / "config.json"))
    return params["model"]["text_field_embedder"]["token_embedders"]["tokens"]["pretrained_file"]


def file_words(path: str) -> set:
    """The words of a GloVe-format text file (gzipped or not)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as lines:
        return {line.split(" ", 1)[0] for line in lines}


def zero_unknown(model: Model) -> None:
    with torch.no_grad():
        embedding(model).weight[model.vocab.get_token_index(UNKNOWN, "tokens")] = 0


def glove_vocabulary(model: Model, instances, pretrained: str) -> None:
    """Adds the words of `instances` that `pretrained` holds to the model's vocabulary, their rows from the file."""
    in_file = file_words(pretrained)
    words = {token.text.lower() for instance in instances for token in instance["tokens"].tokens}
    known = model.vocab.get_token_to_index_vocabulary("tokens")
    model.vocab.add_tokens_to_namespace(sorted(w for w in words if w in in_file and w not in known), "tokens")
    model.extend_embedder_vocab({"_text_field_embedder.token_embedder_tokens": pretrained})


def fraction(results) -> float:
    return sum(c for c, _ in results) / len(results)


def accuracy(results) -> str:
    return f"{fraction(results):.3f} ({len(results)})" if results else "-"


def main() -> None:
    args = parse_runs(__doc__, "../shared/data/sst/trees/test.txt", json_option=True)
    if not args.json:
        print("| run | as trained | unknown = 0 | vocab + GloVe | GloVe vocabulary | as trained, with an unknown word "
              "| without |")
        print("|---|---:|---:|---:|---:|---:|---:|")
    for run in args.runs:
        model, instances, pretrained = load_run(run), read_trees(run, args.trees), pretrained_file(run)
        trained = predictions(model, instances)
        glove_vocabulary(model, instances, pretrained)
        with_glove = predictions(model, read_trees(run, args.trees))  # fresh instances, indexed by the new vocabulary
        if args.json:
            print(json.dumps({"run": str(run), "as_trained": fraction(trained), "glove_vocabulary": fraction(with_glove),
                              "sentences": len(trained)}))
            continue
        model = load_run(run)
        zero_unknown(model)
        zeroed = predictions(model, instances)
        known = model.vocab.get_vocab_size("tokens")
        model.vocab.extend_from_instances(instances)
        model.extend_embedder_vocab({"_text_field_embedder.token_embedder_tokens": pretrained})
        # AllenNLP draws the rows of added words the file lacks at random: zero them, as the unknown word's
        in_file = file_words(pretrained)
        with torch.no_grad():
            for index in range(known, model.vocab.get_vocab_size("tokens")):
                if model.vocab.get_token_from_index(index, "tokens") not in in_file:
                    embedding(model).weight[index] = 0
        extended = predictions(model, read_trees(run, args.trees))  # fresh instances, indexed by the new vocabulary
        cells = [accuracy(trained), accuracy(zeroed), accuracy(extended), accuracy(with_glove),
                 accuracy([r for r in trained if r[1]]), accuracy([r for r in trained if not r[1]])]
        print(f"| {run_name(run)} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
