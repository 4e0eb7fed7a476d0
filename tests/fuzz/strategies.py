"""
Hypothesis strategies for structure-aware fuzzing: bad input made the way real bad input is, in each format's own
shape. A data file is a few of its fixture's good lines with mutated lines among them, then perhaps damaged as a
whole (cut at a byte, gzipped and cut, a byte-order mark and CRLF, binary bytes spliced in). A mutated line keeps
its format's skeleton and puts in it: values of the wrong JSON type, deep nesting, numbers of thousands of digits,
long lines, text from every Unicode category (unpaired surrogates, controls, separators, other scripts' digits),
fields too many or too few, unbalanced brackets.
"""
import gzip
import json
from typing import List

from hypothesis import strategies as st

# every general category Unicode has, surrogates (Cs) included: `text` below encodes them with "surrogatepass"
CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
              "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"]
ODD_DIGITS = st.characters(categories=["Nd", "No", "Nl"]).filter(lambda c: c not in "0123456789")


def text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Short text drawn from one or more Unicode categories (each category gets its turn)."""
    return st.lists(st.sampled_from(CATEGORIES), min_size=1, max_size=3).flatmap(
        lambda categories: st.text(st.characters(categories=categories), max_size=max_size))


def huge_text() -> st.SearchStrategy[str]:
    return st.builds(lambda word, count: (word + " ") * count, st.sampled_from(["word", "a", "é", "(", "0"]),
                     st.integers(1_000, 60_000))


def huge_number() -> st.SearchStrategy[str]:
    return st.builds(lambda digits, sign: sign + "9" * digits, st.integers(4_000, 6_000), st.sampled_from(["", "-"]))


def deep(depth_min: int = 50, depth_max: int = 5_000) -> st.SearchStrategy[int]:
    return st.integers(depth_min, depth_max)


# (no subnormal floats: `import memplugins` flushes denormals to zero on the CPU, so none can be made)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=False),
                         text(), st.sampled_from(["", "   ", "\ud800", "\udfff", "\x00"]))
json_values = st.recursive(json_scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(text(10), children, max_size=4)), max_leaves=12)


@st.composite
def json_line(draw, good: dict) -> str:
    """A JSON-lines record made bad: a key's value of another type, a key gone or added, a list element changed,
    the whole line nested deep, a number of thousands of digits, not an object, or not JSON at all."""
    record = json.loads(json.dumps(good))
    kind = draw(st.sampled_from(["value", "value", "drop", "add", "deep", "digits", "not object", "not json",
                                 "truncated", "huge"]))
    key = draw(st.sampled_from(sorted(record)))
    if kind == "value":
        record[key] = draw(json_values)
    elif kind == "drop":
        record.pop(key)
    elif kind == "add":
        record[draw(text(10))] = draw(json_values)
    elif kind == "deep":
        depth = draw(deep())
        return "[" * depth + json.dumps(record) + "]" * depth
    elif kind == "digits":
        line = json.dumps({**record, key: 0})
        return line.replace(f'"{key}": 0', f'"{key}": {draw(huge_number())}', 1)
    elif kind == "not object":
        return json.dumps(draw(json_values))
    elif kind == "not json":
        return draw(text(200))
    elif kind == "truncated":
        line = json.dumps(record)
        return line[: draw(st.integers(0, max(0, len(line) - 1)))]
    else:
        record[key] = draw(huge_text())
    return json.dumps(record)


@st.composite
def field_line(draw, good: str, separator: str) -> str:
    """A separated-fields line (TSV, `.ss`, a tokenized sentence) made bad: a field replaced by odd text, digits
    from other scripts, a huge field, fields added or dropped, a field emptied, deep brackets."""
    fields = good.split(separator)
    kind = draw(st.sampled_from(["field", "odd digits", "huge", "more", "fewer", "empty", "brackets", "text"]))
    index = draw(st.integers(0, len(fields) - 1))
    if kind == "field":
        fields[index] = draw(text())
    elif kind == "odd digits":
        return "".join(draw(ODD_DIGITS) if char.isdigit() else char for char in good)
    elif kind == "huge":
        fields[index] += draw(huge_text())
    elif kind == "more":
        fields.insert(index, draw(text(10)))
    elif kind == "fewer" and len(fields) > 1:
        fields.pop(index)
    elif kind == "empty":
        fields[index] = ""
    elif kind == "brackets":
        depth = draw(deep(10, 3_000))
        fields[index] = "(" * depth + fields[index] + ")" * draw(st.integers(0, depth))
    else:
        return draw(text(300))
    return separator.join(fields)


@st.composite
def tree_line(draw, good: str) -> str:
    """A PTB-format sentiment tree made bad: a label replaced (other scripts' digits, 5-9, words), a node nested
    thousands deep, brackets unbalanced, a node with three children, a word from any Unicode category."""
    kind = draw(st.sampled_from(["label", "odd label", "deep", "unbalanced", "ternary", "word", "text"]))
    if kind in ("label", "odd label"):
        positions = [i for i, char in enumerate(good) if char == "(" and i + 1 < len(good)]
        position = draw(st.sampled_from(positions)) + 1
        label = draw(ODD_DIGITS) if kind == "odd label" else draw(st.sampled_from(["5", "9", "-1", "x", "", "22"]))
        return good[:position] + label + good[position + 1 :]
    if kind == "deep":
        depth = draw(deep(100, 6_000))
        return "(3 " * depth + good + ")" * depth
    if kind == "unbalanced":
        cut = draw(st.integers(0, len(good)))
        return good[:cut] + draw(st.sampled_from(["(", ")", "((", ""]))
    if kind == "ternary":
        return f"(2 {good} (2 a) (2 b))"
    if kind == "word":
        return good.replace("(2 ", f"(2 {draw(text(8))} ", 1) if "(2 " in good else good
    return draw(text(300))


@st.composite
def damaged_file(draw, good_lines: List[str], bad_line: st.SearchStrategy[str], keep_first: int = 0) -> bytes:
    """Some of `good_lines` (the first `keep_first` always: a header) with 1-3 bad lines placed among them, then
    perhaps damaged as a whole. Encoded with "surrogatepass", so an unpaired surrogate is invalid UTF-8 bytes."""
    body = good_lines[keep_first:]
    lines = good_lines[:keep_first] + draw(st.lists(st.sampled_from(body), min_size=0, max_size=6))
    for _ in range(draw(st.integers(1, 3))):
        lines.insert(draw(st.integers(keep_first, len(lines))), draw(bad_line))
    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass")
    whole = draw(st.sampled_from(["none", "none", "cut", "gzip", "gzip cut", "bom crlf", "binary", "empty"]))
    if whole == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif whole == "gzip":
        data = gzip.compress(data)
    elif whole == "gzip cut":
        packed = gzip.compress(data)
        data = packed[: draw(st.integers(1, len(packed) - 1))]
    elif whole == "bom crlf":
        data = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    elif whole == "binary":
        where = draw(st.integers(0, len(data)))
        data = data[:where] + draw(st.binary(min_size=1, max_size=64)) + data[where:]
    elif whole == "empty":
        data = b""
    return data
