import contextlib
from typing import Any, Dict, Iterator, List

import torch
from allennlp.data import Instance
from allennlp.data.fields import ListField, TextField
from allennlp.models import Model

from memplugins.encoders.lstmn import LstmnEncoder
from memplugins.encoders.nse import NseEncoder
from memplugins.encoders.tree_lstm import TreeLstmEncoder
from memplugins.fields.binary_tree_field import trees_of_batch
from memplugins.modules.tree_lstm.layout import right_branching_trees
from memplugins.modules.tree_lstm.reference import tree_lstm_gates

GATE_NAMES = ("forget left", "forget right", "input left", "input right")


class EncoderInternals:
    """
    Collects what every memplugins Seq2Seq encoder inside any model (ours, or allennlp-models' `esim`, `bcn`,
    `basic_classifier`, ... with an `lstmn` / `nse` encoder) computed during one `forward_on_instances`, per
    instance, so predictors can report them and `attention-map` can draw them:

    * `lstmn`: `attention`, the intra-attention `(layers, n, n)` (bidirectional: left-to-right layers, then
      right-to-left ones);
    * `nse`: `keys`, z_t over the memory slots `(n, n)` (bidirectional: the left-to-right pass's);
    * `tree_lstm`: `gates`, each internal node's mean forget and input gates `(n - 1, 4)`, with `phrases` (the
      words under each node) and `gate_names`.

    Each call of an encoder is one entry, named `<module path>#<call>` (esim encodes the premise, then the
    hypothesis, with one encoder: `_encoder#0`, `_encoder#1`), trimmed to that instance's n tokens, with
    `tokens`: the tokens of the instance's text field of that length, taken in field order (e.g. premise, then
    hypothesis), or positions "0".."n-1" when no field matches. A call whose batch is every sentence of the
    instances' `ListField`s of text (a hierarchical model's sentence encoder) gives one entry per sentence,
    `<module path>#<call>.sentence<s>`; a call with any other batch is not reported.
    """

    def __init__(self, model: Model) -> None:
        self._encoders = [
            (name, module)
            for name, module in model.named_modules()
            if isinstance(module, (LstmnEncoder, NseEncoder, TreeLstmEncoder)) and not name.endswith("backward_encoder")
        ]

    def __bool__(self) -> bool:
        return bool(self._encoders)

    @contextlib.contextmanager
    def collecting(self, instances: List[Instance]) -> Iterator[List[Dict[str, Any]]]:
        collected: List[Dict[str, Any]] = [{} for _ in instances]
        calls: Dict[str, int] = {}
        handles = []

        def hook_for(name: str):
            def hook(module, args, kwargs, _output):
                # `forward(inputs, mask)`: the mask positional or by name (basic_classifier passes `mask=`)
                mask = args[1] if len(args) > 1 else kwargs.get("mask")
                if mask is None:
                    return
                if isinstance(module, TreeLstmEncoder):
                    tree = args[2] if len(args) > 2 else kwargs.get("tree")
                    collect_gates(module, name, args[0], mask, tree, instances, calls, collected)
                    return
                if isinstance(module, LstmnEncoder):
                    kind, values = "attention", module.last_attention  # (B, L, T, T)
                else:
                    kind, values = "keys", module.last_output.keys  # (B, T, T)
                call = calls.get(name, 0)
                # one batch row per instance; or, in a hierarchical model, every sentence of every document in order
                # (instance, entry name, the row's words where known) per batch row
                if mask.size(0) == len(instances):
                    rows = [(i, f"{name}#{call}", None) for i in range(len(instances))]
                else:
                    rows = [(i, f"{name}#{call}.sentence{s}", words)
                            for i, instance in enumerate(instances) for s, words in enumerate(_sentences(instance))]
                    if len(rows) != mask.size(0):
                        return
                calls[name] = call + 1
                for row, (i, entry, words) in enumerate(rows):
                    n = int(mask[row].sum())
                    if words is None:
                        words = _tokens_of_length(instances[i], n, call)
                    elif len(words) != n:
                        words = [str(j) for j in range(n)]
                    collected[i][entry] = {kind: values[row, ..., :n, :n].float().cpu().numpy(), "tokens": words}

            return hook

        for name, module in self._encoders:
            handles.append(module.register_forward_hook(hook_for(name), with_kwargs=True))
        try:
            yield collected
        finally:
            for handle in handles:
                handle.remove()


def collect_gates(module, name: str, inputs, mask, tree, instances: List[Instance], calls: Dict[str, int],
                  collected: List[Dict[str, Any]]) -> None:
    """A tree LSTM's call: each internal node's mean gates (`tree_lstm_gates`), rows labelled with the phrase."""
    if mask.size(0) != len(instances):
        return
    call = calls.get(name, 0)
    calls[name] = call + 1
    trees = trees_of_batch(mask, tree if tree is not None else right_branching_trees(mask))
    with torch.no_grad():
        leaves = module.leaves(inputs, mask)
        weights = module.weights()
        for i, (instance, structure) in enumerate(zip(instances, trees)):
            n = len(structure.leaves)
            words = _tokens_of_length(instance, n, call)
            gates = tree_lstm_gates(weights, leaves[i, :n].float(), structure)
            phrases = [" ".join(words[start:end]) for start, end in structure.spans()[n:]]
            collected[i][f"{name}#{call}"] = {"gates": gates.cpu().numpy(), "tokens": words, "phrases": phrases,
                                              "gate_names": list(GATE_NAMES)}


def _sentences(instance: Instance) -> List[List[str]]:
    """The sentences of the instance's list of text fields (the hierarchical reader's `sentences`), as tokens."""
    for field in instance.fields.values():
        if isinstance(field, ListField) and field.field_list and isinstance(field.field_list[0], TextField):
            return [[token.text for token in sentence.tokens] for sentence in field.field_list if len(sentence)]
    if "sentence_index" in instance.fields and "tokens" in instance.fields:  # `document_rating`'s flat document
        sentences: Dict[int, List[str]] = {}
        for token, number in zip(instance["tokens"].tokens, instance["sentence_index"].tensor.tolist()):
            sentences.setdefault(number, []).append(token.text)
        return [sentences[number] for number in sorted(sentences)]
    return []


def _tokens_of_length(instance: Instance, n: int, call: int) -> List[str]:
    fields = [field for field in instance.fields.values() if isinstance(field, TextField)]
    if len(fields) > call and len(fields[call]) == n:
        return [token.text for token in fields[call].tokens]
    matching = [field for field in fields if len(field) == n]
    if len(matching) == 1:
        return [token.text for token in matching[0].tokens]
    return [str(i) for i in range(n)]
