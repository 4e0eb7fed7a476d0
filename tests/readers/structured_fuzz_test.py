"""
Structure-aware fuzzing of every reader (issue 24; `fuzz_test.py` flips bytes): a fixture line is replaced by one
changed the way real bad data is, in the file's own format: JSON values of the wrong type, deep nesting, a 1 MB
value, an unpaired surrogate, non-ASCII digits, a field too many or too few. Accepted outcomes, as for byte flips:
valid instances, or a `MalformedInputError` naming the file and a line. Seeded, so a failure reproduces.
"""
import json
import random

import pytest

from tests.readers.malformed_files_test import READERS, assert_instances_or_a_named_error, mutated_copy

MUTATIONS_PER_READER = 25
ODD_DIGITS = "\u0663\u00b3\u2463\uff14"  # Arabic-Indic 3, superscript 3, circled 4, fullwidth 4: isdigit() is True
WRONG_VALUES = [None, 5, -1.5, True, [], ["a"], {"a": 1}, "", "   ", "\ud800", "[" * 5000, "word " * 200_000,
                ODD_DIGITS[0]]


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


WRONG_VALUES.append(nested(200))


def json_mutation(line: str, rng: random.Random) -> str:
    record = json.loads(line)
    kind = rng.choice(["wrong value", "drop key", "deep", "not an object"])
    if kind == "wrong value":
        record[rng.choice(list(record))] = rng.choice(WRONG_VALUES)
    elif kind == "drop key":
        record.pop(rng.choice(list(record)))
    elif kind == "deep":
        return "[" * 100_000 + json.dumps(record) + "]" * 100_000
    else:
        return json.dumps(rng.choice([[record], "text", 3, None]))
    return json.dumps(record)


def text_mutation(line: str, rng: random.Random, separator: str) -> str:
    fields = line.split(separator)
    kind = rng.choice(["odd digits", "huge", "deep", "fields", "empty field"])
    if kind == "odd digits":
        return "".join(rng.choice(ODD_DIGITS) if c.isdigit() else c for c in line)
    if kind == "huge":
        index = rng.randrange(len(fields))
        fields[index] = fields[index] + " word" * 200_000
    elif kind == "deep":
        return "(2 " * 3000 + line + ")" * 3000
    elif kind == "fields":
        fields = fields + ["extra"] if rng.random() < 0.5 else fields[:-1]
    else:
        fields[rng.randrange(len(fields))] = ""
    return separator.join(fields)


SEPARATORS = {"sst_trees": " ", "wikiqa": "\t", "parallel_text": " ", "hierarchical_documents": "\t\t"}


@pytest.mark.parametrize("name", READERS)
def test_structured_mutations_give_instances_or_a_malformed_input_error(name, tmp_path):
    rng = random.Random(f"structured-{name}")
    for attempt in range(MUTATIONS_PER_READER):
        def mutate(data: bytes) -> bytes:
            lines = data.decode("utf-8").splitlines()
            index = rng.randrange(1 if name == "wikiqa" else 0, len(lines))  # (WikiQA's header stays)
            if name == "snli_parsed":
                lines[index] = json_mutation(lines[index], rng)
            else:
                lines[index] = text_mutation(lines[index], rng, SEPARATORS[name])
            return "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"

        path = mutated_copy(name, tmp_path, mutate)
        assert_instances_or_a_named_error(name, path, tmp_path, attempt)
