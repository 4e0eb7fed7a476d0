"""
Issue 93's table of refusals, each through the real `memplugins` command (`tests.command_driver`, from a folder
without `.allennlp_plugins`): a message that says what is wrong and where (file and line for data, the member for
an archive, the opt-in where there is one), exit status 2, no traceback. The import-path row: tests/archives/
commands_test.py; SIGTERM: tests/cli_test.py; the `max_tokens` note: the last test here.
"""
import gzip
import json
import os
import pickle
import random

import pytest

from tests.archives.crafting import members_of, replaced, with_config, write_archive
from tests.command_driver import run_rows
from tests.config_models import config_archive
from tests.conftest import TEST_FIXTURES

SST_CONFIGS = ["sst_lstmn", "sst2_nse", "sst2_iram_full"]


class Payload:
    def __reduce__(self):
        return os.system, ("touch pwned",)


def sst_tree(label: str = "3", inner: str = "2") -> str:
    return f"({label} ({inner} (2 a) (3 lovely)) (2 film))\n"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """Builds every row's inputs, runs them all in one driver process, returns {row name: (result, folder)}."""
    from allennlp.commands.train import train_model_from_file

    folder = tmp_path_factory.mktemp("table")
    run = folder / "rte"
    train_model_from_file(str(TEST_FIXTURES / "rte_attention.jsonnet"), str(run), overrides='{"trainer.num_epochs": 1}')
    rte = run / "model.tar.gz"
    archives = {name: config_archive(f"training_config/{name}.jsonnet", folder / name)
                for name in SST_CONFIGS + ["ptb_lstmn_lm", "snli_mma_nse"]}
    # an archive trained before the checked readers: its config names allennlp-models' `sst_tokens` itself
    archives["sst_tokens (older archive)"] = write_archive(folder / "old_sst.tar.gz", with_config(
        members_of(archives["sst_lstmn"]), lambda config: {**config, "dataset_reader": {
            **{k: v for k, v in config["dataset_reader"].items() if k != "max_tokens"}, "type": "sst_tokens"}}))

    def data(name, content):
        path = folder / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return str(path)

    empty = data("empty.txt", "")
    pair = '{"premise": "A man plays.", "hypothesis": "A person plays."}\n'
    rng = random.Random(0)
    words = lambda: " ".join("".join(rng.choice("abcdefgh") for _ in range(5)) for _ in range(8))  # noqa: E731
    whole = gzip.compress("".join(json.dumps({"premise": words(), "hypothesis": words()}) + "\n"
                                  for _ in range(500)).encode())
    rows = {
        "weights.th is a pickle payload": (["predict", str(write_archive(folder / "pickle.tar.gz", replaced(
            members_of(rte), "weights.th", pickle.dumps(Payload())))), data("pair.jsonl", pair)],
            "member 'weights.th' holds pickled objects other than tensors"),
        "config.json nested 100,000 deep": (["predict", str(write_archive(folder / "deep.tar.gz", replaced(
            members_of(rte), "config.json", b"[" * 100_000 + b"]" * 100_000))), data("pair2.jsonl", pair)],
            "deep.tar.gz!config.json:1: nested more than 100 deep"),
        "predict: a 5,000-digit number": (["predict", str(rte), data("digits.jsonl", '{"premise": "a", "n": '
                                                                     + "9" * 5000 + "}\n")],
                                          "digits.jsonl:1: not JSON that can be read: Exceeds the limit"),
        "predict: a binary file": (["predict", str(rte), data("binary.jsonl", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)],
                                   "binary.jsonl:1: not UTF-8 text"),
        "predict: a truncated .jsonl.gz": (["predict", str(rte), data("cut.jsonl.gz", whole[: len(whole) * 3 // 4])],
                                           "cut.jsonl.gz:"),
    }
    for name in SST_CONFIGS + ["ptb_lstmn_lm", "sst_tokens (older archive)"]:
        rows[f"evaluate {name} on an empty file"] = (["evaluate", str(archives[name]), empty],
                                                     "empty.txt:0: .*no instances")
    sst_rows = {
        "a tree nested 5,000 deep": ("(3 " * 5000 + "(2 a)" + ")" * 5000 + "\n", "nested too deeply"),
        "a binary file": (b"\x00\xff\xfe(3 (2 a) (2 b))\n", "not UTF-8 text"),
        "the label '٣'": (sst_tree("٣"), "node label '٣' is not a sentiment class 0-4"),
        "the label '３'": (sst_tree("３"), "node label '３' is not a sentiment class 0-4"),
        "the label '³'": (sst_tree("³"), "node label '³' is not a sentiment class 0-4"),
        "a bad label on an inner node": (sst_tree("3", "7"), "node label '7' is not a sentiment class 0-4"),
    }
    for index, (name, (content, message)) in enumerate(sst_rows.items()):
        # a good tree on line 1, the bad one on line 2
        path = data(f"sst{index}.txt", sst_tree().encode() + (content if isinstance(content, bytes) else content.encode()))
        rows[f"sst reader: {name}"] = (["evaluate", str(archives["sst_lstmn"]), path], f"sst{index}.txt:2: .*{message}")
    names = list(rows)
    (folder / "work").mkdir()
    results = run_rows([{"program": "memplugins", "argv": rows[name][0], "cwd": str(folder / "work")}
                        for name in names], folder)
    return {name: (result, rows[name][1]) for name, result in zip(names, results)}


ROWS = (["weights.th is a pickle payload", "config.json nested 100,000 deep", "predict: a 5,000-digit number",
         "predict: a binary file", "predict: a truncated .jsonl.gz"]
        + [f"evaluate {name} on an empty file" for name in SST_CONFIGS + ["ptb_lstmn_lm", "sst_tokens (older archive)"]]
        + [f"sst reader: {name}" for name in ["a tree nested 5,000 deep", "a binary file", "the label '٣'",
                                              "the label '３'", "the label '³'", "a bad label on an inner node"]])


@pytest.mark.parametrize("row", ROWS)
def test_each_row_is_a_message_and_exit_status_2(table, row):
    import re

    result, expected = table[row]
    assert result["traceback"] == "", result["traceback"][-3000:]
    assert result["code"] == 2, result
    assert re.search(expected, result["stderr"]), result["stderr"][-2000:]
    assert "Traceback" not in result["stderr"]


def test_a_truncated_gz_names_the_first_line_it_could_not_read(table):
    result, _ = table["predict: a truncated .jsonl.gz"]
    line = int(result["stderr"].split("cut.jsonl.gz:")[1].split(":")[0])
    assert 100 < line < 500 and f"after line {line - 1}" in result["stderr"]


def test_predict_says_when_max_tokens_cut_an_input(tmp_path, caplog):
    from allennlp.predictors import Predictor

    archive = config_archive("training_config/snli_mma_nse.jsonnet", tmp_path / "mma")
    predictor = Predictor.from_path(str(archive))
    long = {"premise": " ".join(["word"] * 3000), "hypothesis": "a man ."}
    outputs = predictor.predict_batch_json([long, {"premise": "a man plays .", "hypothesis": "a man ."}, long])
    assert outputs[0]["truncated"] == [{"option": "max_tokens", "limit": 200, "length": 3000}]
    assert "truncated" not in outputs[1] and outputs[2]["truncated"] == outputs[0]["truncated"]
    assert len(outputs[0]["premise_tokens"]) == 200
    assert predictor.predict_json(long)["truncated"] == outputs[0]["truncated"]
    said = [record for record in caplog.records if "max_tokens=200 cut an input of 3000 tokens to 200" in
            record.getMessage()]
    assert len(said) == 1  # once per predictor, not once per input
