"""
Issue 24's table, reader rows: values that used to give raw exceptions (or a silent 0.0 at evaluation) now give a
`MalformedInputError` naming file and line, or are read.
"""
import pytest

from memplugins.readers.errors import MalformedInputError
from tests.readers.malformed_files_test import READERS, mutated_copy, read


def test_an_sst_label_must_be_an_ascii_class(tmp_path):
    path = mutated_copy("sst_trees", tmp_path, lambda data: "(\u0663 (2 It) (3 works))\n".encode())
    with pytest.raises(MalformedInputError, match=r":1: .*label '\u0663' is not a sentiment class"):
        read("sst_trees", path)


def test_a_deeply_nested_sst_tree_is_refused(tmp_path):
    deep = "(2 " * 5000 + "(2 word)" + ")" * 5000
    path = mutated_copy("sst_trees", tmp_path, lambda data: (deep + "\n").encode())
    with pytest.raises(MalformedInputError, match=":1: .*nested too deeply"):
        read("sst_trees", path)


@pytest.mark.parametrize("rating", ["--5", "-3", "٣", "4.5"])
def test_a_rating_must_be_a_whole_number_of_stars(tmp_path, rating):
    path = mutated_copy("hierarchical_documents", tmp_path, lambda data: f"u\t\tp\t\t{rating}\t\tgood .\n".encode())
    with pytest.raises(MalformedInputError, match=":1: rating"):
        read("hierarchical_documents", path)


def test_a_document_of_separators_only_is_refused(tmp_path):
    path = mutated_copy("hierarchical_documents", tmp_path, lambda data: b"u\t\tp\t\t4\t\t <sssss> \n")
    with pytest.raises(MalformedInputError, match=":1: document without text"):
        read("hierarchical_documents", path)


@pytest.mark.parametrize("name", READERS)
def test_an_empty_file_is_an_error_not_an_empty_evaluation(name, tmp_path):
    header = b"QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n" if name == "wikiqa" else b""
    path = mutated_copy(name, tmp_path, lambda data: header)
    if name == "parallel_text":
        (tmp_path / "data.en").write_bytes(b"")
    with pytest.raises(MalformedInputError, match="no instances"):
        read(name, path)


def test_sst_two_class_with_only_neutral_sentences_is_an_error(tmp_path):
    from allennlp.data import DatasetReader
    from allennlp.common import Params

    path = mutated_copy("sst_trees", tmp_path, lambda data: b"(2 (2 It) (2 is))\n(2 (2 a) (2 film))\n")
    reader = DatasetReader.from_params(Params({"type": "sst_trees", "granularity": "2-class"}))
    with pytest.raises(MalformedInputError, match="no instances.*2 sentences with a neutral root"):
        list(reader.read(path))


def test_an_unseen_label_at_evaluation_names_the_label():
    from allennlp.common.checks import ConfigurationError
    from allennlp.data import Vocabulary
    from allennlp.data.fields import LabelField

    vocab = Vocabulary()
    for rating in ("1", "2", "3", "4", "5"):
        vocab.add_token_to_namespace(rating, "labels")
    with pytest.raises(ConfigurationError, match="label '6' is not one the model was trained on.*'1', '2'"):
        LabelField("6").index(vocab)
