"""
What our predictors accept as one input (a JSON object), checked before anything reaches a tokenizer or a model:
a missing key, a value of the wrong JSON type, empty text and unencodable text (an unpaired surrogate such as
"\\ud800") each give an `InvalidInputError` that says which key and what is wrong. Under `allennlp predict`
(`memplugins.predictors.input_lines`) the error also names the input file and line.
"""
from typing import Any, List, Sequence

from memplugins.readers.errors import json_type, load_json_object, text_problem


class InvalidInputError(ValueError):
    """A prediction input the predictor cannot take (the message says which key and why)."""


class JsonObjectLines:
    """Mixin for a `Predictor` (listed before it): `allennlp predict` reads each input line as a JSON object, and
    a line that is not one is a `LineError` saying what it is (`memplugins.predictors.input_lines` adds the file and
    line)."""

    def load_line(self, line: str) -> dict:
        return load_json_object(line)


def input_object(value: Any, predictor: str) -> dict:
    if not isinstance(value, dict):
        raise InvalidInputError(f"{predictor}: an input must be a JSON object, got a JSON {json_type(value)}")
    return value


def _either(names: Sequence[str]) -> str:
    return " or ".join(repr(name) for name in names)


def input_text(value: Any, names: Sequence[str], predictor: str) -> str:
    """The first of `names` present in the input object `value`, checked to be non-empty, encodable text."""
    data = input_object(value, predictor)
    present = [name for name in names if name in data]
    if not present:
        raise InvalidInputError(f"{predictor}: each input needs {_either(names)}; got keys {sorted(data)}")
    problem = text_problem(data[present[0]])
    if problem:
        raise InvalidInputError(f"{predictor}: {present[0]!r} {problem}")
    return data[present[0]]


def input_texts(value: Any, name: str, predictor: str) -> List[str]:
    """`value[name]`, a non-empty list of non-empty, encodable strings."""
    items = input_object(value, predictor).get(name)
    if not isinstance(items, list) or not items:
        got = "nothing" if items is None else f"a JSON {json_type(items)}" if not isinstance(items, list) else "[]"
        raise InvalidInputError(f"{predictor}: {name!r} must be a non-empty list of strings, got {got}")
    for index, item in enumerate(items):
        problem = text_problem(item)
        if problem:
            raise InvalidInputError(f"{predictor}: {name}[{index}] {problem}")
    return items
