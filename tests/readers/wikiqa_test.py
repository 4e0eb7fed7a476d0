import pytest

from memplugins.readers import MalformedInputError, WikiQaReader

TSV = "fixtures/wikiqa/WikiQA-dev.sample.tsv"
TXT = "fixtures/wikiqa/WikiQA-train.sample.txt"
HEADER = "QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel"


def test_reads_tsv_with_question_ids():
    instances = list(WikiQaReader().read(TSV))
    assert len(instances) == 60
    ids = [instance["metadata"]["question_id"] for instance in instances]
    assert ids[0] == "Q8" and len(set(ids)) == 6
    assert {instance["label"].label for instance in instances} == {0, 1}
    assert [t.text for t in instances[0]["question"].tokens][:3] == ["How", "are", "epithelial"]


def test_reads_tokenized_txt_grouping_consecutive_questions():
    instances = list(WikiQaReader().read(TXT))
    assert len(instances) == 40
    ids = [instance["metadata"]["question_id"] for instance in instances]
    assert ids == sorted(ids, key=int) and ids[0] == "0"
    questions = {" ".join(instance["metadata"]["question_tokens"]) for instance in instances if instance["metadata"]["question_id"] == "0"}
    assert len(questions) == 1


@pytest.mark.parametrize(
    "lines, message",
    [
        ([HEADER, "Q1\tq?\tD1\tT\tD1-0\tanswer\t2"], "label must be 0 or 1, got '2'"),
        ([HEADER, "Q1\tq?\tD1\tT\tD1-0\tanswer"], "expected 7 tab-separated fields, found 6"),
        ([HEADER, "Q1\t \tD1\tT\tD1-0\tanswer\t1"], "empty question"),
        (["QuestionID\tQuestion\tLabel"], "unexpected header"),
        (["what ?\tan answer\t1", "what ?\tanother"], "expected 3 tab-separated fields, found 2"),
        (["what ?\t\t0"], "empty sentence"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, lines, message):
    path = tmp_path / "bad.tsv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(MalformedInputError) as error:
        list(WikiQaReader().read(str(path)))
    assert str(error.value).startswith(f"{path}:{len(lines)}: ") and message in str(error.value)
