import pytest

from memplugins.readers import HierarchicalDocumentsReader, MalformedInputError

SAMPLE = "fixtures/yelp13_format/sample.ss"


def test_reads_sentences_and_ratings():
    instances = list(HierarchicalDocumentsReader().read(SAMPLE))
    assert len(instances) == 60
    first = instances[0]
    assert first["label"].label == "1"
    assert [t.text for t in first["sentences"].field_list[0].tokens][:3] == ["worst", "dinner", "i"]
    assert len(first["sentences"]) == len(first["metadata"]["sentences"]) == 3
    assert {i["label"].label for i in instances} == {"1", "2", "3", "4", "5"}


def test_truncation_options(tmp_path):
    path = tmp_path / "d.ss"
    path.write_text("u\t\tp\t\t4\t\ta b c <sssss> d e <sssss> f\n")
    instance = next(iter(HierarchicalDocumentsReader(max_sentences=2, max_sentence_length=2).read(str(path))))
    assert [[t.text for t in s.tokens] for s in instance["sentences"].field_list] == [["a", "b"], ["d", "e"]]


@pytest.mark.parametrize(
    "line, reason",
    [("u\t\tp\t\t4", "found 3"), ("u\tp\t4\ttext", "found 1"), ("u\t\tp\t\tfive\t\ttext", "not a whole number of stars"),
     ("u\t\tp\t\t4\t\t <sssss> ", "without text")],
)
def test_malformed_lines_name_file_and_line(tmp_path, line, reason):
    path = tmp_path / "d.ss"
    path.write_text("u\t\tp\t\t3\t\tfine . <sssss> ok .\n" + line + "\n")
    with pytest.raises(MalformedInputError, match=rf"d\.ss:2: .*{reason}"):
        list(HierarchicalDocumentsReader().read(str(path)))
