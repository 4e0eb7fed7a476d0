"""
Issue 16: random byte mutations of each reader's fixture give valid instances or a `MalformedInputError` naming
file and line (or a counted skip), never another exception type. Seeded, so a failure reproduces.
"""
import random

import pytest

from tests.readers.malformed_files_test import READERS, assert_instances_or_a_named_error, mutated_copy

MUTATIONS_PER_READER = 40


def mutate(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        position = rng.randrange(len(data))
        kind = rng.choice(["flip", "insert", "delete", "duplicate_line", "truncate"])
        if kind == "flip":
            data[position] = rng.randrange(256)
        elif kind == "insert":
            data[position:position] = bytes(rng.choice([b"\x00", b"(", b")", b"\t", b"\n", b"\"", b"{", b"\xff"]))
        elif kind == "delete":
            del data[position : position + rng.randint(1, 8)]
        elif kind == "duplicate_line":
            end = data.find(b"\n", position)
            data[position:position] = data[position : end if end >= 0 else len(data)]
        else:
            del data[position:]
            if not data:
                data = bytearray(b"x")
    return bytes(data)


@pytest.mark.parametrize("name", READERS)
def test_mutated_files_give_instances_or_a_malformed_input_error(name, tmp_path):
    rng = random.Random(f"fuzz-{name}")
    for attempt in range(MUTATIONS_PER_READER):
        path = mutated_copy(name, tmp_path, lambda data: mutate(data, rng))
        assert_instances_or_a_named_error(name, path, tmp_path, attempt)
