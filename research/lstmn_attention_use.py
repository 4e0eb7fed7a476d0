"""
Does a trained LSTMN use its memory tape? For a `language_model` whose contextualizer is a left-to-right `lstmn` of
any depth (with or without skip connections), a `basic_classifier` whose `seq2seq_encoder` is one (e.g.
training_config/sst_lstmn.jsonnet), or allennlp-models' `decomposable_attention` whose `premise_encoder` is one
(and encodes the hypothesis too: replicate.py's `snli_decomposable_attention_lstmn_encoder`), given as an archive or
a serialization directory with `config.json` and `best.th`, on a data file its reader reads (PTB text; SST trees,
read by the validation reader: the sentences; SNLI pairs):

* the model's figure as trained: the token-weighted perplexity (PPL = exp(NLL / T), Cheng et al. 2016, section
  5.1) of a language model, the accuracy of a classifier;
* where its intra-attention s^t (eq. 5) goes: the mean weight on the most recent slot t-1, on the 2-5 slots before
  it and on the rest, the mean distance back, and the entropy as a fraction of the uniform distribution's;
* the figure when s^t is replaced, with every weight kept, by a one-hot on slot t-1 (then eq. 6 gives
  h~_t = h_{t-1}, c~_t = c_{t-1}, and the layer is an ordinary LSTM) or by uniform weights over slots < t, in
  every layer; and, for a stack, by the one-hot in one layer at a time;
* with `--window K ...`: the figure when eq. 5's softmax is taken over the last K slots only (t-K .. t-1, the
  model's own scores, eq. 4), in every layer: whether reading far back on long inputs, which a model trained on short
  phrases saw little of, is what costs it (K = 1 is the one-hot above; K at least the longest input is the model).

The attention statistics are per layer (layer 1 is the lowest).

If replacing the attention by "most recent slot" costs little, the tape adds little to an LSTM on this data.

    .venv/bin/python research/lstmn_attention_use.py SERIALIZATION_DIR_OR_ARCHIVE FILE [--batches N]
        [--window K [K ...]]

The ablations run eq. 4-9 step by step over the batch (`windowed_lstmn.layer_steps`, a third, plain
implementation); with the model's own attention it is checked against the layer's output before any figure is
printed. A model trained with `windowed_lstmn` (research/windowed_lstmn.py) is read at its own window "as trained",
one trained with `recency_lstmn` with its learned score on slot t-1 wherever s^t is eq. 5's.
"""
import argparse
import functools
import math
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import torch
from allennlp.data import Batch

import allennlp_models.classification  # noqa: F401  (basic_classifier, sst_tokens)
import allennlp_models.lm  # noqa: F401  (language_model, its reader; not NarrativeQA: it calls nltk.download)
import memplugins  # noqa: F401
from memplugins.untrusted_archives import load_archive  # the archive is untrusted input
from sst_accuracy_by_length import import_instruments, load_run, validation_reader  # research/: this file's folder
from windowed_lstmn import layer_steps  # eq. 4-9 step by step, with s^t replaced or windowed

MODES = ("model", "most recent slot", "uniform")


def ablations(num_layers: int, windows: Sequence[int] = ()) -> List[tuple]:
    """(label, mode, the layers it replaces) for each figure: as trained, each replacement in every layer, for a
    stack the one-hot in one layer at a time, and the attention over each of `windows`' last K slots."""
    every = tuple(range(num_layers))
    in_every = " (every layer)" if num_layers > 1 else ""
    rows = [("nothing (as trained)", "model", ())]
    rows += [(mode + in_every, mode, every) for mode in MODES[1:]]
    if num_layers > 1:
        rows += [(f"most recent slot, layer {k + 1} only", "most recent slot", (k,)) for k in every]
    rows += [(f"its own attention over the last {k} slots{in_every}", f"last {k}", every) for k in windows]
    return rows


def load(path: str):
    import_instruments()  # a model trained with a measuring instrument (windowed_lstmn) loads too
    if os.path.isdir(path):
        return load_run(Path(path)), validation_reader(Path(path))
    archive = load_archive(path)
    return archive.model.eval(), archive.validation_dataset_reader


def attention_statistics(attention: torch.Tensor, mask: torch.BoolTensor, totals: Dict[str, float]) -> None:
    """Adds one batch's s^t (B, T, T) at valid steps with at least two slots to read to the running sums."""
    num_steps = attention.size(-1)
    steps = torch.arange(num_steps)
    distance = (steps.view(-1, 1) - steps.view(1, -1)).clamp(min=0).to(attention.dtype)  # t - i
    valid = mask & (steps >= 2).unsqueeze(0)
    s = attention[valid]  # (N, T)
    t = steps.expand_as(mask)[valid].to(attention.dtype)
    dist = distance.expand(mask.size(0), -1, -1)[valid]
    totals["steps"] += s.size(0)
    totals["most recent"] += float((s * (dist == 1)).sum())
    totals["2-5 back"] += float((s * ((dist >= 2) & (dist <= 5))).sum())
    totals["6+ back"] += float((s * (dist >= 6)).sum())
    totals["distance"] += float((s * dist).sum())
    entropy = -(s * torch.log(s.clamp(min=1e-30))).sum(-1)
    totals["entropy fraction"] += float((entropy / torch.log(t)).sum())


def arguments(description: str, argv: Optional[List[str]], windows: bool = False) -> argparse.Namespace:
    """The command line of this analysis and of `nse_memory_use.py`: MODEL DATA_FILE [--batch-size] [--batches]
    (and this analysis's [--window K ...])."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a serialization directory (config.json, best.th) or a model archive")
    parser.add_argument("data_file")
    parser.add_argument("--batch-size", type=int, default=40)
    parser.add_argument("--batches", type=int, default=None, help="only the first N batches")
    if windows:
        parser.add_argument("--window", type=int, nargs="+", default=[],
                            help="also the figure with each layer's attention over its last K slots only")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> None:
    args = arguments(__doc__, argv, windows=True)
    if any(k < 1 for k in args.window):
        raise SystemExit(f"--window: a window holds at least one slot, not {min(args.window)}")
    model, reader = load(args.model)
    pair = getattr(model, "_premise_encoder", None) is not None  # decomposable_attention
    if pair and model._hypothesis_encoder is not model._premise_encoder:
        raise SystemExit("this analysis reads one lstmn: a decomposable_attention whose premise_encoder also encodes "
                         "the hypothesis (no hypothesis_encoder of its own)")
    classifier = pair or hasattr(model, "_seq2seq_encoder")  # basic_classifier; else language_model
    logits_key = "label_logits" if pair else "logits"
    encoder = (model._premise_encoder if pair else model._seq2seq_encoder if classifier
               else getattr(model, "_contextualizer", None))
    if getattr(encoder, "backward_encoder", None) is not None or not getattr(encoder, "layers", None):
        raise SystemExit("this analysis is for a left-to-right lstmn (a language_model's contextualizer, a "
                         "basic_classifier's seq2seq_encoder or a decomposable_attention's premise_encoder)")
    layers = list(encoder.layers)
    rows = ablations(len(layers), args.window)
    instances = list(reader.read(args.data_file))
    starts = list(range(0, len(instances), args.batch_size))[: args.batches]
    summed = {label: 0.0 for label, _, _ in rows}  # a language model's summed NLL, a classifier's correct answers
    units = 0.0  # a language model's tokens, a classifier's instances
    totals = [dict.fromkeys(["steps", "most recent", "2-5 back", "6+ back", "distance", "entropy fraction"], 0.0)
              for _ in layers]
    original_forwards = [layer.forward for layer in layers]
    with torch.no_grad():
        for start in starts:
            batch = Batch(instances[start : start + args.batch_size])
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            for label, mode, replaced in rows:
                captured: Dict[int, List[dict]] = {}  # a pair model calls its encoder twice

                def forward(inputs, mask, memory_addend=None, index=0, mode=mode, replaced=replaced):
                    layer = layers[index]
                    hidden, memory, attention = original_forwards[index](inputs, mask, memory_addend)
                    captured.setdefault(index, []).append(dict(attention=attention, mask=mask))
                    if mode == "model":
                        plain = layer_steps(layer, inputs, mode)[0] * mask.unsqueeze(-1)
                        gap = float((plain - hidden).abs().max())
                        if gap > 1e-4:
                            raise SystemExit(f"the step-by-step equations differ from layer {index + 1} by {gap:.2g}")
                        return hidden, memory, attention
                    if index not in replaced:
                        return hidden, memory, attention
                    return layer_steps(layer, inputs, mode)[0] * mask.unsqueeze(-1), memory, attention

                for index, layer in enumerate(layers):
                    layer.forward = functools.partial(forward, index=index)
                try:
                    output = model(**tensors)
                finally:
                    for layer, original in zip(layers, original_forwards):
                        layer.forward = original
                if classifier:
                    summed[label] += float((output[logits_key].argmax(-1) == tensors["label"]).sum())
                    count = float(tensors["label"].numel())
                else:
                    summed[label] += float(output["forward_loss"]) * float(output["batch_weight"])
                    count = float(output["batch_weight"])
                if mode == "model":
                    units += count
                    for index, layer_totals in enumerate(totals):
                        for call in captured[index]:
                            attention_statistics(call["attention"], call["mask"], layer_totals)
    unit, figure = ("instances", "accuracy") if classifier else ("tokens", "token-weighted PPL")
    print(f"{args.model} on {args.data_file}: {len(starts)} batches, {units:.0f} {unit}, {len(layers)} layer(s)")
    print(f"| attention replaced by | {figure} |\n|---|---:|")
    for label, _, _ in rows:
        value = summed[label] / units if classifier else math.exp(summed[label] / units)
        print(f"| {label} | {value:.{3 if classifier else 1}f} |")
    print("\nintra-attention at steps with two or more slots to read (means over steps):")
    print("| layer | steps | most recent slot | 2-5 slots back | 6+ back | mean distance back | entropy / uniform's |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for index, layer_totals in enumerate(totals):
        steps = layer_totals.pop("steps")
        print(f"| {index + 1} | {steps:.0f} | " + " | ".join(f"{value / steps:.3f}" for value in layer_totals.values())
              + " |")


if __name__ == "__main__":
    main()
