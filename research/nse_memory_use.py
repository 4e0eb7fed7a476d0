"""
Does a trained NSE use its memory? For a `basic_classifier` whose `seq2seq_encoder` is a left-to-right `nse` with
one write layer and no extra memories (e.g. training_config/sst2_nse.jsonnet), given as an archive or a
serialization directory with `config.json` and `best.th`, on a data file its validation reader reads (SST trees:
the sentences):

* the accuracy as trained;
* where the read key z_t (Munkhdalai and Yu 2017, eq. 2) goes: the mean weight on the current word's slot t, on the
  slots before it and on those after it (M_0 holds every word of the sentence, so z_t can read ahead), the mean
  distance |i - t|, the entropy as a fraction of the uniform distribution's over the sentence, and how much of M_0
  is left in the final memory (the mean over slots of prod_t (1 - z_t[i]), eq. 6's retention; 1 for an encoder
  trained with `write_memory: false`, whose replacements below never write either);
* with `key_strength: true`, the mean key strength β_t (the encoder's eq. 2');
* the accuracy when the memory is replaced, with every weight kept:
  - "current slot": z_t = e_t, a one-hot on the word's own slot. Slot t is still M_0's projected x_t when step t
    reads it (no earlier step wrote there), so the NSE becomes an LSTM f_w over f_c(o_t, W x_t): no memory;
  - "uniform": z_t uniform over the sentence's slots;
  - "never written": z_t from eq. 2 but M_t = M_0 for all t (eq. 6 left out): the memory only ever holds the words.

If "current slot" costs little, the memory adds little to two stacked LSTMs on this data.

    .venv/bin/python research/nse_memory_use.py SERIALIZATION_DIR_OR_ARCHIVE FILE [--batches N]

The replacements run eq. 1-6 step by step over the batch (a plain implementation beside the encoder's factored fast
path, `memplugins.modules.nse.fast`); with the model's own keys it is checked against the encoder's output before
any figure is printed.
"""
import math
from typing import Dict, List, Optional

import torch
from allennlp.data import Batch
from allennlp.nn.util import get_text_field_mask

from memplugins.encoders.nse import NseEncoder

from lstmn_attention_use import arguments, load  # noqa: E402  (research/ is on sys.path when this runs as a script)
from sst_accuracy_by_length import BUCKETS, bucket  # noqa: E402

MODES = ("model", "current slot", "uniform", "never written")
LABELS = {"model": "nothing (as trained)", "current slot": "key on the current slot (no memory)",
          "uniform": "uniform key", "never written": "memory never written (M_t = M_0)"}
STATISTICS = ("current slot", "earlier slots", "later slots", "mean distance", "entropy / uniform's",
              "M_0 retained at the end")


def add_key_statistics(totals: Dict[str, float], z: torch.Tensor, t: int, lengths: torch.Tensor) -> None:
    """Adds step t's keys z (N, T) of N sentences of `lengths` (N,) to the running sums."""
    if z.size(0) == 0:
        return
    lengths = lengths.to(z.dtype)
    distance = (torch.arange(z.size(-1)) - t).abs().to(z.dtype)
    totals["steps"] += z.size(0)
    totals["current slot"] += float(z[:, t].sum())
    totals["earlier slots"] += float(z[:, :t].sum())
    totals["later slots"] += float(z[:, t + 1:].sum())
    totals["mean distance"] += float((z * distance).sum())
    entropy = -(z * torch.log(z.clamp(min=1e-30))).sum(-1)
    several = lengths > 1  # a one-word sentence's key has no entropy to compare
    totals["entropy / uniform's"] += float((entropy[several] / torch.log(lengths[several])).sum())
    totals["entropy steps"] += float(several.sum())


def nse_steps(encoder: NseEncoder, inputs: torch.Tensor, mask: torch.BoolTensor, mode: str,
              totals: Optional[Dict[str, Dict[str, float]]] = None,
              groups: Optional[Dict[str, torch.BoolTensor]] = None) -> torch.Tensor:
    """Eq. 1-6 for a right-padded batch in evaluation mode, step by step, with z_t from eq. 2 (`model`, `never
    written`) or replaced; h_t (0 at padding). A padded step changes nothing. With `totals` and `groups` (a name and
    the (B,) members of each group of sentences), adds the keys' statistics of each group to `totals[name]`."""
    batch_size, num_steps, _ = inputs.shape
    k = encoder.hidden_size
    # (1) o_t, and M_0 (x_t, or o_t with initial_memory="read_states"), as the encoder computes them
    read, memory = encoder._read_and_initial_memory(inputs, mask)
    queries = encoder.key_queries(read)  # o_t, or β_t o_t with key_strength (2')
    strengths = encoder.key_strengths(read) if mode == "model" else None  # β_t (B, T, 1), or None
    cell = encoder.write_cells[0]
    h = inputs.new_zeros(batch_size, k)
    c = inputs.new_zeros(batch_size, k)
    retained = mask.to(inputs.dtype)
    lengths = mask.sum(-1, keepdim=True).clamp(min=1)
    outputs = []
    writes = encoder._write_memory and mode != "never written"  # an encoder trained read-only stays so
    for t in range(num_steps):
        if mode in ("model", "never written"):
            scores = torch.einsum("bik,bk->bi", memory, queries[:, t]).masked_fill(~mask, float("-inf"))
            z = torch.softmax(scores, dim=-1)  # (2)
        elif mode == "current slot":
            z = torch.nn.functional.one_hot(torch.full((batch_size,), t), num_steps).to(inputs.dtype)
        else:
            z = mask.to(inputs.dtype) / lengths
        step = mask[:, t]
        z = torch.where(step.unsqueeze(-1), torch.nan_to_num(z), torch.zeros_like(z))
        m_r = torch.einsum("bi,bik->bk", z, memory)  # (3)
        composed = encoder._compose_activation(encoder.compose(torch.cat([read[:, t], m_r], -1)))  # (4)
        h_new, c_new = cell(composed, (h, c))  # (5)
        h = torch.where(step.unsqueeze(-1), h_new, h)
        c = torch.where(step.unsqueeze(-1), c_new, c)
        if writes:
            memory = memory * (1 - z.unsqueeze(-1)) + z.unsqueeze(-1) * h.unsqueeze(1)  # (6)
            retained = retained * (1 - z)
        outputs.append(h * step.unsqueeze(-1))
        if totals is not None:
            for group, members in groups.items():
                add_key_statistics(totals[group], z[step & members], t, lengths[step & members].squeeze(-1))
                if strengths is not None:
                    totals[group]["key strength"] += float(strengths[:, t, 0][step & members].sum())
    if totals is not None:
        for group, members in groups.items():
            totals[group]["M_0 retained at the end"] += float((retained * mask)[members].sum())
            totals[group]["slots"] += float(mask[members].sum())
    return torch.stack(outputs, 1)


def length_groups(mask: torch.BoolTensor) -> Dict[str, torch.BoolTensor]:
    """"all" and each of `sst_accuracy_by_length`'s length buckets: the (B,) members of each."""
    lengths = mask.sum(-1)
    groups = {"all": torch.ones_like(lengths, dtype=torch.bool)}
    for first, last in BUCKETS:
        groups[bucket(first)] = (lengths >= first) & (lengths <= last)
    return groups


def main(argv: Optional[List[str]] = None) -> None:
    args = arguments(__doc__, argv)
    model, reader = load(args.model)
    encoder = getattr(model, "_seq2seq_encoder", None)
    if (not isinstance(encoder, NseEncoder) or encoder.backward_encoder is not None or encoder.num_extra_memories
            or len(encoder.write_cells) != 1 or encoder._output != "hidden"):
        raise SystemExit("this analysis is for a basic_classifier whose seq2seq_encoder is a left-to-right nse with "
                         "one write layer, no extra memories and output 'hidden'")
    instances = list(reader.read(args.data_file))
    starts = list(range(0, len(instances), args.batch_size))[: args.batches]
    names = ["all"] + [bucket(first) for first, _ in BUCKETS]
    correct = {mode: dict.fromkeys(names, 0.0) for mode in MODES}
    counts = dict.fromkeys(names, 0)
    totals = {name: dict.fromkeys(("steps", "entropy steps", "slots", "key strength") + STATISTICS, 0.0)
              for name in names}
    original_forward = encoder.forward
    with torch.no_grad():
        for start in starts:
            batch = Batch(instances[start : start + args.batch_size])
            batch.index_instances(model.vocab)
            tensors = batch.as_tensor_dict()
            # basic_classifier's own mask of the tokens, so the groups are the sentences the encoder sees
            groups = length_groups(get_text_field_mask(tensors["tokens"]))
            for mode in MODES:

                def forward(inputs, mask, mode=mode):
                    if mode != "model":
                        return nse_steps(encoder, inputs, mask, mode)
                    hidden = original_forward(inputs, mask)
                    plain = nse_steps(encoder, inputs, mask, mode, totals, groups)
                    gap = float((plain - hidden).abs().max())
                    if gap > 1e-4:
                        raise SystemExit(f"the step-by-step equations differ from the encoder by {gap:.2g}")
                    return hidden

                encoder.forward = forward
                try:
                    output = model(**tensors)
                finally:
                    encoder.forward = original_forward
                right = output["logits"].argmax(-1) == tensors["label"]
                for name, members in groups.items():
                    correct[mode][name] += float(right[members].sum())
            for name, members in groups.items():
                counts[name] += int(members.sum())
    print(f"{args.model} on {args.data_file}: {len(starts)} batches, {counts['all']} instances")
    print("\naccuracy, by sentence length in tokens (instances):")
    print("| memory replaced by | " + " | ".join(f"{name} ({counts[name]})" for name in names) + " |")
    print("|---|" + "---:|" * len(names))
    for mode in MODES:
        print(f"| {LABELS[mode]} | " + " | ".join(f"{correct[mode][name] / counts[name]:.3f}" if counts[name] else "-"
                                                  for name in names) + " |")
    print("\nread key z_t (means over steps; the last column over slots), by sentence length:")
    print("| sentences | steps | " + " | ".join(STATISTICS) + " |\n|---|" + "---:|" * (len(STATISTICS) + 1))
    for name in names:
        group = totals[name]
        steps = group["steps"]
        if not steps:
            continue
        figures = [group[statistic] / steps for statistic in STATISTICS[:4]]
        figures.append(group["entropy / uniform's"] / max(group["entropy steps"], 1.0))
        figures.append(group["M_0 retained at the end"] / max(group["slots"], 1.0))
        if not all(math.isfinite(value) for value in figures):
            raise SystemExit(f"a statistic of {name} is not finite")
        print(f"| {name} | {steps:.0f} | " + " | ".join(f"{value:.2f}" if statistic == "mean distance" else
                                                         f"{value:.3f}" for statistic, value in zip(STATISTICS, figures))
              + " |")
    if encoder.key_strength is not None:
        print("\nkey strength β_t (key_strength: true; the mean over steps), by sentence length: " + ", ".join(
            f"{name} {totals[name]['key strength'] / totals[name]['steps']:.3f}" for name in names
            if totals[name]["steps"]))


if __name__ == "__main__":
    main()
