"""benchmarks/replication/replicate.py: a run stopped by --minutes and resumed gives the results of a run straight through."""
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SPEC = {
    "family": "tiny_rte",
    "rows": [{
        "name": "tiny_rte", "system": "ours", "label": "rte_attention word_by_word (test sizes)",
        "config": "tests/fixtures/rte_attention.jsonnet", "variables": {},
        "overrides": {"data_loader.shuffle": True, "trainer.num_epochs": 3},
        "test_file": "fixtures/snli/tiny.jsonl", "metric": "accuracy", "dev_metric": "accuracy",
        "data": "the 20-pair fixture", "paper": 0.5, "also": {"loss": None},
    }],
}


def _replicate(tmp_path, runs: str, *arguments: str) -> str:
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "replication" / "replicate.py"), "tiny_rte", "--spec",
               str(tmp_path / "spec.json"), "--runs", str(tmp_path / runs), "--results", str(tmp_path / f"{runs}.jsonl"),
               *arguments]
    finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return finished.stdout


def test_pieces_give_the_straight_result(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    _replicate(tmp_path, "straight")
    # a call whose deadline has passed trains one batch of its first piece, then stops (in-process tests of the
    # deadline callback, tests/training/deadline_test.py, cover several pieces and epoch boundaries)
    _replicate(tmp_path, "pieces", "--minutes", "0.00001")
    state = json.loads((tmp_path / "pieces" / "tiny_rte-seed1" / "run.json").read_text())
    assert [piece["exit"] for piece in state["pieces"]] == [75] and not state["done"]
    # the code each piece ran on, in the state and in the piece's line of train.log
    described = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT, capture_output=True,
                               text=True).stdout.strip() or "unknown"
    assert state["commits"] == [described]
    assert f" at {described}: " in (tmp_path / "pieces" / "tiny_rte-seed1" / "train.log").read_text()
    assert not (tmp_path / "pieces.jsonl").exists()
    # the overrides change what they name and keep the rest of the config
    config = json.loads((tmp_path / "pieces" / "tiny_rte-seed1" / "train" / "config.json").read_text())
    assert config["trainer"]["num_epochs"] == 3 and config["trainer"]["optimizer"] == {"type": "adam", "lr": 0.01}
    assert config["trainer"]["callbacks"] == [{"type": "deadline"}] and config["data_loader"]["batch_size"] == 5
    table = _replicate(tmp_path, "pieces")

    straight, = [json.loads(line) for line in (tmp_path / "straight.jsonl").read_text().splitlines()]
    pieces, = [json.loads(line) for line in (tmp_path / "pieces.jsonl").read_text().splitlines()]
    assert pieces["pieces"] == 2 and straight["pieces"] == 1
    # the machine each piece trained on (one here), its CPU model as /proc/cpuinfo names it
    state = json.loads((tmp_path / "pieces" / "tiny_rte-seed1" / "run.json").read_text())
    processors = {piece["processor"] for piece in state["pieces"]}
    assert pieces["processors"] == straight["processors"] == sorted(processors) and len(processors) == 1
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        assert f": {pieces['processors'][0]}\n" in cpuinfo.read_text()
    for key in ("value", "dev", "epochs", "best_epoch", "seed", "metric", "paper", "also"):
        assert pieces[key] == straight[key], key
    # the row's further test metric is recorded beside the main one and printed after it (it has no paper figure)
    assert set(pieces["also"]) == {"loss"} and pieces["also_paper"] == {"loss": None}
    assert (f"| rte_attention word_by_word (test sizes) | ours | {pieces['value']:.4f} (loss {pieces['also']['loss']:.4f})"
            f" | {pieces['dev']:.4f} | 0.5 |") in table

    # nothing left to train: the call only prints the table, and appends nothing
    again = _replicate(tmp_path, "pieces", "--minutes", "0.00001")
    assert again == table
    assert len((tmp_path / "pieces.jsonl").read_text().splitlines()) == 1


def test_training_time_counts_pieces_whose_process_was_killed(tmp_path, monkeypatch):
    # a piece killed with its session never reaches run.json: the logs still hold its epochs and its invocation
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks" / "replication"))
    import replicate

    (tmp_path / "train").mkdir()
    (tmp_path / "train.log").write_text("\n===== 2026-11-23T22:26 allennlp train\nlog\n===== 2026-11-24T00:45 allennlp "
                                        "train --recover\n===== 2026-11-24T04:01 allennlp train --recover\n")
    (tmp_path / "train" / "out.log").write_text(
        "INFO - Epoch duration: 0:01:00.4\nINFO - other\nINFO - Epoch duration: 1:00:00.000001\n")
    state = replicate.RunState(row="r", seed=1, device="cpu", threads=1,
                               pieces=[{"seconds": 10, "exit": 0, "epochs_done": 2}])
    assert replicate.training_time(tmp_path, state) == {"train_seconds": 3660, "pieces": 3}
    (tmp_path / "train" / "out.log").unlink()
    assert replicate.training_time(tmp_path, state) == {"train_seconds": 10, "pieces": 3}


def test_slices_cut_line_ranges_once_and_name_a_short_source(tmp_path, monkeypatch):
    # SNLI and IWSLT rows train on part of a dev split and select on the rest: the two parts must be exactly the
    # stated lines, gzip or plain, and a source too short for its range must say so rather than train on less
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks" / "replication"))
    import dataclasses
    import gzip
    import replicate
    from rows import Row

    data = tmp_path / "data"
    data.mkdir()
    with gzip.open(data / "dev.jsonl.gz", "wt") as source:
        source.write("".join(f"line {index}\n" for index in range(10)))
    (data / "plain.en").write_text("a\nb\nc\n")
    args = type("Args", (), dict(data=str(data), runs=str(tmp_path / "runs"), results=str(tmp_path / "r.jsonl"),
                                 device="cpu", threads=1, minutes=None, until=None))
    replication = replicate.Replication(args)
    row = Row("r", family="f", system="ours", label="r", config="c", test_file="DATA/plain.en", metric="m",
              dev_metric="m", data="d", variables={"TRAIN": "SLICE/train.jsonl", "TEST": "DATA/plain.en", "N": "3"},
              slices={"train.jsonl": ["DATA/dev.jsonl.gz", 0, 7], "selection.jsonl": ["DATA/dev.jsonl.gz", 7, 10],
                      "two.en": ["DATA/plain.en", 1, 3]})
    replication.write_slices(row)
    sliced = tmp_path / "runs" / "data"
    assert (sliced / "train.jsonl").read_text() == "".join(f"line {index}\n" for index in range(7))
    assert (sliced / "selection.jsonl").read_text() == "line 7\nline 8\nline 9\n"
    assert (sliced / "two.en").read_text() == "b\nc\n"
    assert sorted(path.name for path in sliced.iterdir()) == ["selection.jsonl", "train.jsonl", "two.en"]
    environment = replication.environment(row, seed=1)
    assert environment["TRAIN"] == str(sliced / "train.jsonl") and environment["TEST"] == str(data / "plain.en")
    assert environment["N"] == "3"

    (sliced / "two.en").write_text("kept\n")  # written once: a started row keeps its data
    replication.write_slices(row)
    assert (sliced / "two.en").read_text() == "kept\n"

    short = dataclasses.replace(row, slices={"more.en": ["DATA/plain.en", 1, 5]})
    with pytest.raises(ValueError, match=r"plain.en has 3 lines; row r's slice more.en needs lines 2-5"):
        replication.write_slices(short)
    assert not (sliced / "more.en").exists()


# one result of a row as replicate.py records it, less its metrics, for the tests of `table`
TABLE_RESULT = {"family": "sst", "row": "sst2_x", "system": "ours", "label": "x, binary", "seed": 1, "epochs": 3,
                "dev_metric": "accuracy", "paper": 0.9, "train_seconds": 60, "device": "cpu", "threads": 1,
                "commits": ["abc"]}


def test_results_of_another_vocabulary_stay_apart():
    sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
    from replicate import table, vocabulary_of

    base = TABLE_RESULT
    results = [{**base, "value": 0.8, "dev": 0.81},  # written before results named their vocabulary
               {**base, "value": 0.7, "dev": 0.72, "vocabulary": "train+dev", "seed": 2},
               {**base, "value": 0.85, "dev": 0.8, "vocabulary": "glove"}]
    lines = table(results).splitlines()
    assert "| x, binary | ours | 0.8000 | 0.8100 | 0.9 | 0.8000 / 0.7000 |" in lines[4]
    assert "| x, binary, GloVe vocabulary | ours | 0.8500 | 0.8000 | 0.9 | 0.8500 |" in lines[5]
    assert vocabulary_of({"vocabulary": {"type": "from_instances", "min_pretrained_embeddings": {"tokens": 9}}}) \
        == "glove"
    assert vocabulary_of({"vocabulary": {"type": "from_instances"}}) == vocabulary_of({}) == "train+dev"


@pytest.mark.slow  # about 45 s of training: opt-in (`-m slow`), the default run stays under 10 minutes
def test_a_run_trained_before_its_config_zeroed_the_unknown_row_is_evaluated_with_it_zeroed(tmp_path):
    from memplugins.initializers.zero_unknown_row import TOKEN_TABLE_REGEX

    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    _replicate(tmp_path, "runs")
    zeroing = {"model.initializer": {"regexes": [[TOKEN_TABLE_REGEX, {"type": "zero_unknown_row"}]]}}
    spec = {**SPEC, "rows": [{**SPEC["rows"][0], "overrides": {**SPEC["rows"][0]["overrides"], **zeroing}}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    printed = _replicate(tmp_path, "runs")
    first, second = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert first["unknown_row"] == "random" and "unknown_row_zeroed_after_training" not in first
    assert second["unknown_row"] == "zero" and second["unknown_row_zeroed_after_training"] is True
    # not trained again: the same run, its archive with the row zeroed (the fixture's test words are all in its
    # vocabulary, so the metric is the same)
    assert second["pieces"] == first["pieces"] == 1 and second["value"] == first["value"]
    train = tmp_path / "runs" / "tiny_rte-seed1" / "train"
    assert (train / "model-zero-unknown-row.tar.gz").exists()
    assert "| rte_attention word_by_word (test sizes), zero unknown row | ours |" in printed
    # a third call has nothing to do
    assert _replicate(tmp_path, "runs") == printed
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 2


def test_results_with_another_unknown_row_stay_apart():
    sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
    from replicate import table, unknown_row_of

    base = {**TABLE_RESULT, "vocabulary": "glove"}
    results = [{**base, "value": 0.8, "dev": 0.81}, {**base, "value": 0.82, "dev": 0.81, "unknown_row": "zero"}]
    lines = table(results).splitlines()
    assert "| x, binary, GloVe vocabulary | ours | 0.8000 |" in lines[4]
    assert "| x, binary, GloVe vocabulary, zero unknown row | ours | 0.8200 |" in lines[5]
    zeroing = {"model": {"initializer": {"regexes": [["x", {"type": "normal"}], ["y", {"type": "zero_unknown_row"}]]}}}
    assert unknown_row_of(zeroing) == "zero"
    assert unknown_row_of({"model": {"initializer": {"regexes": [["x", {"type": "normal"}]]}}}) == "random"
    assert unknown_row_of({"model": {}}) == unknown_row_of({}) == "random"


def test_the_seeds_column_is_in_seed_order_whatever_order_they_finished_in():
    sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
    from replicate import table

    base = {**TABLE_RESULT, "vocabulary": "glove", "unknown_row": "zero"}
    results = [{**base, "seed": 1, "value": 0.81, "dev": 0.80}, {**base, "seed": 3, "value": 0.83, "dev": 0.82},
               {**base, "seed": 2, "value": 0.82, "dev": 0.83}]
    row = table(results).splitlines()[4]
    # the best-dev seed (2) leads the row; the column lists seeds 1, 2, 3
    assert "| ours | 0.8200 | 0.8300 | 0.9 | 0.8100 / 0.8200 / 0.8300 | 3 | 0.1 h |" in row


def test_two_invocations_sharing_a_row_never_record_a_run_twice(tmp_path, monkeypatch):
    # one invocation per core may share rows: a run another process holds is skipped (its lock is held through
    # training and evaluation), and a run another process recorded after this one started is not evaluated again
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks" / "replication"))
    import fcntl
    import replicate
    from rows import Row

    args = type("Args", (), dict(data=str(tmp_path), runs=str(tmp_path / "runs"), results=str(tmp_path / "r.jsonl"),
                                 device="cpu", threads=1, minutes=None, until=None))
    replication = replicate.Replication(args)
    row = Row(**{**SPEC["rows"][0], "family": "tiny_rte"})
    monkeypatch.setattr(replication, "vocabulary", lambda row, seed: "train+dev")
    monkeypatch.setattr(replication, "unknown_row", lambda row, seed: "random")
    trained = []

    def train(row, seed):
        trained.append(seed)
        if seed == 2:  # another invocation records seed 2 while this one trains it
            (tmp_path / "r.jsonl").write_text(json.dumps({"row": row.name, "seed": 2}) + "\n")
        return replicate.RunState(row=row.name, seed=seed, device="cpu", threads=1, done=True)

    monkeypatch.setattr(replication, "train", train)
    monkeypatch.setattr(replication, "evaluate", lambda row, seed, state: {"row": row.name, "seed": seed, "value": 0.5})
    (tmp_path / "runs" / "tiny_rte-seed1").mkdir(parents=True)
    with open(tmp_path / "runs" / "tiny_rte-seed1" / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another invocation trains seed 1
        replication.run([row], [1, 2, 3])
    assert trained == [2, 3]
    recorded = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [result["seed"] for result in recorded] == [2, 3]
    replication.run([row], [2, 3])  # both recorded: nothing to do
    assert trained == [2, 3]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="finds the training process in /proc")
def test_a_stopped_invocation_stops_its_training_process(tmp_path):
    """SIGTERM to replicate.py ends its `allennlp train` piece too: left running, an orphaned piece writes into a run
    directory whose lock nobody holds, beside the next invocation's trainer."""
    import signal
    import time
    from pathlib import Path

    long = {**SPEC, "rows": [{**SPEC["rows"][0], "overrides": {**SPEC["rows"][0]["overrides"],
                                                                "trainer.num_epochs": 100000}}]}
    (tmp_path / "spec.json").write_text(json.dumps(long))
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "replication" / "replicate.py"), "tiny_rte", "--spec",
               str(tmp_path / "spec.json"), "--runs", str(tmp_path / "runs"), "--results", str(tmp_path / "r.jsonl")]
    invocation = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def children():
        found = []
        for status in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = status.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == invocation.pid:
                found.append(int(status.parent.name))
        return found

    metrics = tmp_path / "runs" / "tiny_rte-seed1" / "train" / "metrics_epoch_0.json"
    deadline = time.time() + 300
    while not metrics.exists() and time.time() < deadline and invocation.poll() is None:
        time.sleep(0.5)
    assert metrics.exists(), invocation.stderr.read().decode()[-3000:] if invocation.poll() is not None else "slow"
    [piece] = children()
    try:
        invocation.send_signal(signal.SIGTERM)
        assert invocation.wait(timeout=120) == 128 + signal.SIGTERM
        assert not os.path.exists(f"/proc/{piece}")  # stopped and reaped, not orphaned
    finally:
        if os.path.exists(f"/proc/{piece}"):  # a failed check leaves no trainer behind
            os.kill(piece, signal.SIGKILL)


def test_until_is_the_next_occurrence_of_a_clock_time_and_the_earlier_deadline_wins(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks" / "replication"))
    from replicate import deadline_of

    now = datetime.datetime(2026, 11, 26, 9, 30, 15).timestamp()
    assert deadline_of(None, None, now) is None
    assert deadline_of(20, None, now) == now + 1200
    assert deadline_of(None, "12:15", now) == datetime.datetime(2026, 11, 26, 12, 15).timestamp()
    # a time already past today is tomorrow's, as for `shutdown 06:00` run in the evening
    assert deadline_of(None, "9:30", now) == datetime.datetime(2026, 11, 27, 9, 30).timestamp()
    assert deadline_of(None, "2026-11-27T06:00", now) == datetime.datetime(2026, 11, 27, 6).timestamp()
    assert deadline_of(20, "12:15", now) == now + 1200
    assert deadline_of(600, "12:15", now) == datetime.datetime(2026, 11, 26, 12, 15).timestamp()
    for bad in ("24:00", "12:60", "noon", "2026-11-25T06:00"):
        with pytest.raises(ValueError, match="--until"):
            deadline_of(None, bad, now)


def test_a_bad_until_is_refused_before_anything_trains(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "replication" / "replicate.py"), "tiny_rte", "--spec",
               str(tmp_path / "spec.json"), "--runs", str(tmp_path / "runs"), "--until", "25:00"]
    finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 2 and "--until 25:00: not a time of day" in finished.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow  # about 45 s of training: opt-in (`-m slow`), the default run stays under 10 minutes
def test_a_row_starts_from_the_table_another_run_tuned_and_keeps_it_fixed(tmp_path, monkeypatch):
    source = SPEC["rows"][0]
    fixed = {**source, "name": "tiny_rte_source_vectors", "label": "rte_attention, the table tiny_rte tuned, fixed",
             "vectors_from": "tiny_rte",
             "overrides": {**source["overrides"], "model.text_field_embedder.token_embedders.tokens.trainable": False}}
    (tmp_path / "spec.json").write_text(json.dumps({"family": "tiny_rte", "rows": [source, fixed]}))
    command = [sys.executable, str(REPO_ROOT / "benchmarks" / "replication" / "replicate.py"), "tiny_rte", "--spec",
               str(tmp_path / "spec.json"), "--runs", str(tmp_path / "runs"), "--results", str(tmp_path / "r.jsonl")]
    # its source not trained yet: refused, naming the row to train
    refused = subprocess.run([*command, "--rows", "tiny_rte_source_vectors"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=600)
    assert refused.returncode != 0 and "--rows tiny_rte --seeds 1" in refused.stderr
    assert not (tmp_path / "r.jsonl").exists()

    finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    results = {result["row"]: result for result in map(json.loads, (tmp_path / "r.jsonl").read_text().splitlines())}
    assert results["tiny_rte_source_vectors"]["vectors_from"] == "tiny_rte-seed1"
    assert "vectors_from" not in results["tiny_rte"]
    import torch

    table = "_text_field_embedder.token_embedder_tokens.weight"
    tuned = torch.load(tmp_path / "runs" / "tiny_rte-seed1" / "train" / "best.th")[table]
    kept = torch.load(tmp_path / "runs" / "tiny_rte_source_vectors-seed1" / "train" / "best.th")
    assert torch.equal(kept[table], tuned)  # copied, then fixed through training
    (first, initializer), *_ = json.loads(
        (tmp_path / "runs" / "tiny_rte_source_vectors-seed1" / "train" / "config.json").read_text()
    )["model"]["initializer"]["regexes"]
    assert initializer["type"] == "pretrained"
    assert initializer["weights_file_path"].endswith("tiny_rte-seed1/train/best.th")

    # a run whose vocabulary is not its source's is stopped: the copied rows would be other words'
    monkeypatch.syspath_prepend(str(REPO_ROOT / "benchmarks" / "replication"))
    import replicate
    from rows import Row

    monkeypatch.setitem(replicate.FAMILIES, "tiny_rte", [Row(family="tiny_rte", **row) for row in (source, fixed)])
    args = type("Args", (), dict(data=str(tmp_path), runs=str(tmp_path / "runs"), results=str(tmp_path / "r.jsonl"),
                                 device="cpu", threads=1, minutes=None, until=None))
    replication = replicate.Replication(args)
    row = replicate.FAMILIES["tiny_rte"][1]
    out = tmp_path / "runs" / "tiny_rte_source_vectors-seed1"
    replication.check_vectors_source(row, 1, out)
    tokens = out / "train" / "vocabulary" / "tokens.txt"
    tokens.write_text("another\n" + tokens.read_text())
    with pytest.raises(RuntimeError, match="different vocabularies"):
        replication.check_vectors_source(row, 1, out)
