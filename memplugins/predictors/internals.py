import contextlib
from typing import Any, Dict, Iterator, List

from allennlp.data import Instance
from allennlp.data.fields import TextField
from allennlp.models import Model

from memplugins.encoders.lstmn import LstmnEncoder
from memplugins.encoders.nse import NseEncoder


class EncoderInternals:
    """
    Collects what every memplugins Seq2Seq encoder inside any model (ours, or allennlp-models' `esim`, `bcn`,
    `basic_classifier`, ... with an `lstmn` / `nse` encoder) computed during one `forward_on_instances`, per
    instance, so predictors can report them and `attention-map` can draw them:

    * `lstmn`: `attention`, the intra-attention `(layers, n, n)` (bidirectional: left-to-right layers, then
      right-to-left ones);
    * `nse`: `keys`, z_t over the memory slots `(n, n)` (bidirectional: the left-to-right pass's).

    Each call of an encoder is one entry, named `<module path>#<call>` (esim encodes the premise, then the
    hypothesis, with one encoder: `_encoder#0`, `_encoder#1`), trimmed to that instance's n tokens, with
    `tokens`: the tokens of the instance's text field of that length, taken in field order (e.g. premise, then
    hypothesis), or positions "0".."n-1" when no field matches. A call whose batch is not the instances' batch
    (e.g. a hierarchical model's flattened sentences) is not reported.
    """

    def __init__(self, model: Model) -> None:
        self._encoders = [
            (name, module)
            for name, module in model.named_modules()
            if isinstance(module, (LstmnEncoder, NseEncoder)) and not name.endswith("backward_encoder")
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
                if mask is None or mask.size(0) != len(instances):
                    return
                if isinstance(module, LstmnEncoder):
                    kind, values = "attention", module.last_attention  # (B, L, T, T)
                else:
                    kind, values = "keys", module.last_output.keys  # (B, T, T)
                call = calls.get(name, 0)
                calls[name] = call + 1
                for i, instance in enumerate(instances):
                    n = int(mask[i].sum())
                    trimmed = values[i, ..., :n, :n].float().cpu().numpy()
                    collected[i][f"{name}#{call}"] = {kind: trimmed, "tokens": _tokens_of_length(instance, n, call)}

            return hook

        for name, module in self._encoders:
            handles.append(module.register_forward_hook(hook_for(name), with_kwargs=True))
        try:
            yield collected
        finally:
            for handle in handles:
                handle.remove()


def _tokens_of_length(instance: Instance, n: int, call: int) -> List[str]:
    fields = [field for field in instance.fields.values() if isinstance(field, TextField)]
    if len(fields) > call and len(fields[call]) == n:
        return [token.text for token in fields[call].tokens]
    matching = [field for field in fields if len(field) == n]
    if len(matching) == 1:
        return [token.text for token in matching[0].tokens]
    return [str(i) for i in range(n)]
