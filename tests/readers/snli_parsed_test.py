import gzip
import json
import logging
import shutil

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from allennlp_models.pair_classification.dataset_readers.snli import SnliReader

from memplugins.readers import MalformedInputError, SnliParsedReader
from memplugins.tokenizers import SpacyBlankTokenizer

TINY = "fixtures/snli/tiny.jsonl"
GOOD = {
    "gold_label": "entailment",
    "sentence1": "A dog runs (fast).",
    "sentence2": "An animal moves.",
    "sentence1_binary_parse": "( ( A dog ) ( ( runs ( -LRB- ( fast -RRB- ) ) ) . ) )",
    "sentence2_binary_parse": "( ( An animal ) ( moves . ) )",
}


def write_lines(tmp_path, lines, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_registered_and_reads_fixture_like_snli_reader(caplog):
    reader = DatasetReader.from_params(Params({"type": "snli_parsed"}))
    assert isinstance(reader, SnliParsedReader)
    with caplog.at_level(logging.INFO):
        instances = list(reader.read(TINY))
    assert len(instances) == 18  # 20 lines, 2 with gold_label '-'
    assert "skipped 2 pairs with gold_label '-'" in caplog.text
    # the same fields and tokens as allennlp-models' `snli` reader given the same tokenizer
    reference = list(SnliReader(tokenizer=SpacyBlankTokenizer()).read(TINY))
    for ours, theirs in zip(instances, reference):
        assert set(ours.fields) == set(theirs.fields) == {"premise", "hypothesis", "metadata", "label"}
        assert [t.text for t in ours["premise"].tokens] == [t.text for t in theirs["premise"].tokens]
        assert ours["label"].label == theirs["label"].label


def test_reads_gzip(tmp_path):
    compressed = tmp_path / "tiny.jsonl.gz"
    with open(TINY, "rb") as source, gzip.open(compressed, "wb") as target:
        shutil.copyfileobj(source, target)
    assert len(list(SnliParsedReader().read(str(compressed)))) == 18


def test_parse_trees_fields(tmp_path):
    reader = SnliParsedReader(parse_trees=True)
    (instance,) = list(reader.read(write_lines(tmp_path, [json.dumps(GOOD)])))
    assert [t.text for t in instance["premise"].tokens] == ["A", "dog", "runs", "(", "fast", ")", "."]
    tree = instance["premise_tree"].tree
    assert tree.leaves == [t.text for t in instance["premise"].tokens]
    assert len(tree.children) == 6
    assert instance["hypothesis_tree"].tree.children == [(0, 1), (2, 3), (4, 5)]
    # trees over the whole real fixture: one leaf per token, n-1 internal nodes
    for instance in reader.read(TINY):
        for side in ("premise", "hypothesis"):
            tree = instance[f"{side}_tree"].tree
            assert len(tree.leaves) == len(instance[side].tokens) == len(tree.children) + 1


def test_collapse_labels_and_combined_fields_still_work():
    reader = SnliParsedReader(collapse_labels=True)
    labels = {instance["label"].label for instance in reader.read(TINY)}
    assert labels <= {"entailment", "non-entailment"}
    with pytest.raises(Exception, match="parse_trees"):
        SnliParsedReader(parse_trees=True, combine_input_fields=True)


def test_blank_lines_are_ignored(tmp_path):
    path = write_lines(tmp_path, ["", json.dumps(GOOD), "   ", json.dumps(GOOD), ""])
    assert len(list(SnliParsedReader().read(path))) == 2


@pytest.mark.parametrize(
    "bad_line, parse_trees, message",
    [
        ('{"gold_label": "entailment", "sentence1": "a"', False, "not JSON"),
        ('["not", "an", "object"]', False, "expected a JSON object"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "sentence2"}), False, "missing key 'sentence2'"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "gold_label"}), False, "missing key 'gold_label'"),
        (json.dumps({**GOOD, "gold_label": "entails"}), False, "unknown gold_label 'entails'"),
        (json.dumps({**GOOD, "sentence1": "   "}), False, "'sentence1' is empty"),
        (json.dumps({**GOOD, "sentence2": ""}), False, "'sentence2' is empty"),
        (json.dumps({**GOOD, "sentence2": 5}), False, "'sentence2' must be a string, got a JSON number"),
        (json.dumps({**GOOD, "sentence1": None}), False, "'sentence1' must be a string, got a JSON null"),
        ('{"gold_label": "entailment", "sentence1": "a \\ud800", "sentence2": "b"}', False, "unpaired surrogate"),
        ("[" * 100_000 + "]" * 100_000, False, "nested too deeply"),
        ("[1, 2]", False, "expected a JSON object, got a JSON array"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "sentence2_binary_parse"}), True, "missing key 'sentence2_binary_parse'"),
        (json.dumps({**GOOD, "sentence1_binary_parse": "( ( A dog ) runs"}), True, "unbalanced brackets"),
        (json.dumps({**GOOD, "sentence1_binary_parse": "( A dog runs )"}), True, "3 children"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, bad_line, parse_trees, message):
    path = write_lines(tmp_path, [json.dumps(GOOD), json.dumps({**GOOD, "gold_label": "-"}), bad_line, json.dumps(GOOD)])
    with pytest.raises(MalformedInputError) as error:
        list(SnliParsedReader(parse_trees=parse_trees).read(path))
    assert str(error.value).startswith(f"{path}:3: ")
    assert message in str(error.value)
    assert error.value.line_number == 3


def test_text_to_instance_with_trees_requires_parses():
    reader = SnliParsedReader(parse_trees=True)
    with pytest.raises(ValueError, match="sentence1_binary_parse"):
        reader.text_to_instance("A dog.", "An animal.")


@pytest.mark.parametrize("lines", [[], [json.dumps({**GOOD, "gold_label": "-"})] * 3], ids=["empty", "only '-'"])
def test_a_file_without_instances_is_an_error(tmp_path, lines):
    path = write_lines(tmp_path, lines)
    with pytest.raises(MalformedInputError, match="no instances"):
        list(SnliParsedReader().read(path))


def test_a_one_megabyte_line_is_read_and_truncated(tmp_path, caplog):
    path = write_lines(tmp_path, [json.dumps({**GOOD, "sentence1": "word " * 200_000})])
    with caplog.at_level("INFO"):
        instance, = SnliParsedReader(max_tokens=100).read(path)
    assert len(instance["premise"]) == 100
    assert any("truncated" in record.getMessage() for record in caplog.records)
