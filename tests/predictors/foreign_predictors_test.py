"""
Importing memplugins leaves other predictors' input formats alone (issue 93, item 5): `allennlp predict` still reads
each line through the predictor's own `load_line` (a CSV predictor gets its CSV lines), and `--use-dataset-reader`
still reads the file with the archive's (validation) reader, as AllenNLP's own `predict_test.py`
(`test_alternative_file_formats`, `test_uses_correct_dataset_reader`) checks; a bad line of a foreign format is still
named by file and line.
"""
import csv
import io
import json
import sys

import pytest
from allennlp.commands import main
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader
from allennlp.predictors import Predictor

from memplugins.readers.errors import MalformedInputError
from memplugins.readers.snli_parsed import SnliParsedReader
from memplugins.predictors.entailment_pairs import EntailmentPairsPredictor


@Predictor.register("memplugins-test-csv-pairs", exist_ok=True)
class CsvPairsPredictor(EntailmentPairsPredictor):
    """Pairs written as CSV rows (premise, hypothesis); predictions written as CSV rows (label, probabilities)."""

    def load_line(self, line: str) -> JsonDict:
        premise, hypothesis = next(csv.reader([line]))
        return {"premise": premise, "hypothesis": hypothesis}

    def dump_line(self, outputs: JsonDict) -> str:
        output = io.StringIO()
        csv.writer(output).writerow([outputs["label"], *outputs["label_probs"]])
        return output.getvalue()


@Predictor.register("memplugins-test-reader-type", exist_ok=True)
class ReaderTypePredictor(Predictor):
    def dump_line(self, outputs: JsonDict) -> str:
        return json.dumps({"dataset_reader_type": type(self._dataset_reader).__name__}) + "\n"

    def load_line(self, line: str) -> JsonDict:
        raise NotImplementedError  # --use-dataset-reader: lines are never read this way


@DatasetReader.register("memplugins-test-fake-reader", exist_ok=True)
class FakeReader(SnliParsedReader):
    pass


def predict(*args):
    sys.argv = ["allennlp", "predict", *map(str, args), "--silent"]
    main(prog="allennlp")


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    from allennlp.commands.train import train_model_from_file

    from tests.conftest import TEST_FIXTURES

    out = tmp_path_factory.mktemp("trained") / "run"
    train_model_from_file(str(TEST_FIXTURES / "rte_attention.jsonnet"), str(out), overrides='{"trainer.num_epochs": 1}')
    return out / "model.tar.gz"


def test_a_predictor_reads_its_own_line_format(archive, tmp_path):
    infile, outfile = tmp_path / "pairs.csv", tmp_path / "out.csv"
    with open(infile, "w", newline="") as handle:
        csv.writer(handle).writerows([["A man plays a guitar, loudly.", "A person plays music."],
                                      ["Two dogs run.", "Cats sleep."]])
    predict(archive, infile, "--output-file", outfile, "--predictor", "memplugins-test-csv-pairs")
    rows = list(csv.reader(outfile.open()))
    assert len(rows) == 2
    for label, *probabilities in rows:
        assert label in {"entailment", "neutral", "contradiction"} and len(probabilities) == 3
        assert all(0 <= float(p) <= 1 for p in probabilities)


def test_a_bad_line_of_another_format_is_named(archive, tmp_path):
    infile = tmp_path / "pairs.csv"
    infile.write_text('"A man plays.","A person plays."\nonly one field\n')
    with pytest.raises(MalformedInputError, match="pairs.csv:2: could not read this line"):
        predict(archive, infile, "--output-file", tmp_path / "out.csv", "--predictor", "memplugins-test-csv-pairs")


@pytest.mark.parametrize("choice, expected", [(None, "FakeReader"), ("train", "SnliParsedReader")])
def test_use_dataset_reader_takes_the_chosen_reader(archive, tmp_path, choice, expected):
    from tests.conftest import REPO_ROOT

    outfile = tmp_path / "out.jsonl"
    predict(archive, REPO_ROOT / "fixtures/snli/tiny.jsonl", "--output-file", outfile, "--overrides",
            '{"validation_dataset_reader": {"type": "memplugins-test-fake-reader"}}', "--predictor",
            "memplugins-test-reader-type", "--use-dataset-reader", *(["--dataset-reader-choice", choice] if choice else []))
    results = [json.loads(line) for line in outfile.read_text().splitlines()]
    assert results and results[0]["dataset_reader_type"] == expected
