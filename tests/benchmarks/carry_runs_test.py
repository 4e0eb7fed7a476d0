"""benchmarks/replication/carry_runs.py and replicate.py's relocation: a run begun on one machine (a lent GPU) and carried to
another resumes there from its last completed epoch and ends where a run straight through ends."""
import argparse
import fcntl
import io
import json
import shutil
import subprocess
import sys
import tarfile

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks" / "replication"))
import carry_runs  # noqa: E402
import replicate  # noqa: E402


def _run_dir(root, name, done=False, best_epoch=1, checkpoints=((2, 0), (3, 5))):
    directory = root / name
    serialization = directory / "train"
    (serialization / "vocabulary").mkdir(parents=True)
    (directory / "run.json").write_text(json.dumps({"row": name, "seed": 1, "device": "cuda:0", "threads": 3,
                                                    "done": done}))
    (directory / "train.log").write_text("===== piece\n")
    (directory / ".lock").write_text("")
    (serialization / "config.json").write_text("{}")
    (serialization / "vocabulary" / "tokens.txt").write_text("a\nb\n")
    (serialization / "log").mkdir()
    (serialization / "log" / "events.out").write_bytes(b"x" * 100)
    for epoch in range(max(epoch for epoch, batches in checkpoints if batches == 0)):  # epochs 0 .. K-1 done
        (serialization / f"metrics_epoch_{epoch}.json").write_text(json.dumps({"best_epoch": min(epoch, best_epoch)}))
    for epoch, batches in checkpoints:
        (serialization / f"model_state_e{epoch}_b{batches}.th").write_bytes(f"{name} weights {epoch} {batches}".encode())
        (serialization / f"training_state_e{epoch}_b{batches}.th").write_bytes(f"{name} state {epoch}".encode())
    (serialization / "best.th").write_bytes(f"{name} best".encode())
    return directory


def test_pack_carries_each_unfinished_runs_last_completed_epoch_and_unpack_restores_it(tmp_path):
    runs = tmp_path / "runs"
    _run_dir(runs, "a_row-seed1")  # its last completed epoch (index 1) is its best: best.th is its model state
    _run_dir(runs, "b_row-seed1", best_epoch=0)  # its best epoch came earlier: best.th travels
    (_run_dir(runs, "c_row-seed1", done=True) / "train" / "model.tar.gz").write_bytes(b"archive")
    carry_runs.pack(runs, tmp_path / "out", first=["b_row"], max_mib=50, part_mib=0.0005)
    parts = sorted((tmp_path / "out").iterdir())
    assert len(parts) > 1 and all(part.name.startswith("runs.tar.gz.") for part in parts)

    carried = tmp_path / "carried"
    assert sorted(carry_runs.unpack(tmp_path / "out", carried)) == ["a_row-seed1", "b_row-seed1", "c_row-seed1"]
    a = carried / "a_row-seed1" / "train"
    # the mid-epoch checkpoint of the third epoch stays behind; best.th is the second epoch's weights
    assert sorted(path.name for path in a.glob("*.th")) == ["best.th", "model_state_e2_b0.th", "training_state_e2_b0.th"]
    assert (a / "best.th").read_bytes() == b"a_row-seed1 weights 2 0"
    assert (a / "vocabulary" / "tokens.txt").read_text() == "a\nb\n" and not (a / "log").exists()
    assert (carried / "b_row-seed1" / "train" / "best.th").read_bytes() == b"b_row-seed1 best"
    assert not list((carried / "c_row-seed1" / "train").glob("*.th"))
    assert (carried / "c_row-seed1" / "train" / "model.tar.gz").read_bytes() == b"archive"
    assert json.loads((carried / "c_row-seed1" / "run.json").read_text())["done"] is True
    # the same parts again: every run here is as far along, so none is replaced
    before = {path: path.read_bytes() for path in carried.rglob("*") if path.is_file()}
    assert carry_runs.unpack(tmp_path / "out", carried) == []
    assert {path: path.read_bytes() for path in carried.rglob("*") if path.is_file()} == before


def test_a_later_calls_parts_replace_only_the_runs_they_carry_further(tmp_path):
    first_call, later_call, here = tmp_path / "first", tmp_path / "later", tmp_path / "here"
    for name in ("a_row-seed1", "b_row-seed1"):
        _run_dir(first_call, name, checkpoints=((2, 0),))
    _run_dir(first_call, "c_row-seed1", done=True, checkpoints=((3, 0),))  # finished, its archive did not travel
    carry_runs.pack(first_call, tmp_path / "out1", first=[], max_mib=50, part_mib=15)
    carry_runs.unpack(tmp_path / "out1", here)
    # the later call: a trained on to epoch 4; b too, but its checkpoint stayed behind; c's archive travels now
    _run_dir(later_call, "a_row-seed1", checkpoints=((4, 0),))
    for path in (_run_dir(later_call, "b_row-seed1", checkpoints=((4, 0),)) / "train").glob("*_e4_b0.th"):
        path.unlink()
    finished = _run_dir(later_call, "c_row-seed1", done=True, checkpoints=((3, 0),))
    (finished / "train" / "model.tar.gz").write_bytes(b"archive")
    carry_runs.pack(later_call, tmp_path / "out2", first=[], max_mib=50, part_mib=15)
    # while a replicate.py here trains a (its lock held), a stays; c, further along in the parts, is taken
    with open(here / "a_row-seed1" / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert carry_runs.unpack(tmp_path / "out2", here) == ["c_row-seed1"]
    assert (here / "a_row-seed1" / "train" / "model_state_e2_b0.th").exists()
    shutil.rmtree(here / "c_row-seed1")  # back as the first call left it
    next((here / ".replaced").glob("c_row-seed1.*")).rename(here / "c_row-seed1")

    assert carry_runs.unpack(tmp_path / "out2", here) == ["a_row-seed1", "c_row-seed1"]
    assert (here / "a_row-seed1" / "train" / "model_state_e4_b0.th").read_bytes() == b"a_row-seed1 weights 4 0"
    assert not (here / "a_row-seed1" / "train" / "model_state_e2_b0.th").exists()
    # b stays as it was: the carried b is further along but could not go on (no weights), this one can
    assert (here / "b_row-seed1" / "train" / "model_state_e2_b0.th").exists()
    assert not (here / "b_row-seed1" / "train" / "metrics_epoch_3.json").exists()
    assert (here / "c_row-seed1" / "train" / "model.tar.gz").read_bytes() == b"archive"
    # what was replaced is set aside, not deleted, and is not a run of RUNS to pack again
    aside = sorted(path.name.split(".")[0] for path in (here / ".replaced").iterdir())
    assert aside == ["a_row-seed1", "c_row-seed1"]
    assert (next((here / ".replaced").glob("a_row-seed1.*")) / "train" / "model_state_e2_b0.th").exists()
    files, _ = carry_runs.plan(here, [], 50 * carry_runs.MIB)
    assert not any(name.startswith(".replaced") for _, name in files)


def test_a_checkpoint_over_the_budget_stays_behind_and_the_first_rows_go_first(tmp_path):
    runs = tmp_path / "runs"
    for name in ("a_row-seed1", "b_row-seed1"):
        serialization = _run_dir(runs, name) / "train"
        (serialization / "model_state_e2_b0.th").write_bytes(b"w" * 600_000)
    files, entries = carry_runs.plan(runs, first=["b_row"], max_bytes=1_000_000)
    assert entries["b_row-seed1"]["checkpoint"]["epochs_completed"] == 2
    assert entries["a_row-seed1"]["checkpoint"] is None and "did not fit" in entries["a_row-seed1"]["left_behind"]
    assert not any(name.startswith("a_row-seed1/train/model_state") for _, name in files)


def test_unfinished_runs_checkpoints_go_before_finished_runs_archives(tmp_path):
    # a finished run's result is in the lane's replication.jsonl already; an unfinished run goes on only from its
    # checkpoint, so with room for one the checkpoint travels, also when --first names the finished row and its
    # name sorts first
    runs = tmp_path / "runs"
    finished = _run_dir(runs, "a_row-seed1", done=True) / "train"
    (finished / "model.tar.gz").write_bytes(b"a" * 600_000)
    (_run_dir(runs, "b_row-seed1") / "train" / "model_state_e2_b0.th").write_bytes(b"w" * 600_000)
    files, entries = carry_runs.plan(runs, first=["a_row"], max_bytes=1_000_000)
    assert entries["b_row-seed1"]["checkpoint"]["epochs_completed"] == 2
    assert "archive" not in entries["a_row-seed1"] and "did not fit" in entries["a_row-seed1"]["left_behind"]
    # --first orders the unfinished runs among themselves
    (_run_dir(runs, "c_row-seed1") / "train" / "model_state_e2_b0.th").write_bytes(b"w" * 600_000)
    files, entries = carry_runs.plan(runs, first=["c_row", "a_row"], max_bytes=1_000_000)
    assert entries["c_row-seed1"]["checkpoint"] and not entries["b_row-seed1"]["checkpoint"]
    assert [name for name in entries] == ["c_row-seed1", "b_row-seed1", "a_row-seed1"]


def test_the_budget_is_on_the_packed_bytes(tmp_path):
    """A checkpoint over the budget in raw bytes that packs under it travels (float32 weights pack to about 93 %:
    the 3-layer LSTMN's 58.9 MiB had stayed behind under a budget on raw bytes); when the packed parts are over the
    budget, the lowest-priority run is left without its weights, and the parts end under the budget."""
    budget_mib = 1.0
    runs = tmp_path / "runs"
    serialization = _run_dir(runs, "a_row-seed1") / "train"
    weights = b"\x00\x01" * int(0.52 * carry_runs.MIB)  # 1.04 MiB raw
    (serialization / "model_state_e2_b0.th").write_bytes(weights)
    carry_runs.pack(runs, tmp_path / "out", first=[], max_mib=budget_mib, part_mib=0.3)
    packed = sum(part.stat().st_size for part in (tmp_path / "out").iterdir())
    assert packed <= budget_mib * carry_runs.MIB
    carried = tmp_path / "carried"
    carry_runs.unpack(tmp_path / "out", carried)
    assert (carried / "a_row-seed1" / "train" / "model_state_e2_b0.th").read_bytes() == weights

    # two runs of weights that do not pack: each fits the raw allowance alone, together they pack over the budget
    runs = tmp_path / "random"
    rng = __import__("random").Random(0)
    for name in ("a_row-seed1", "b_row-seed1"):
        serialization = _run_dir(runs, name) / "train"
        (serialization / "model_state_e2_b0.th").write_bytes(rng.randbytes(int(0.5 * carry_runs.MIB)))
    carry_runs.pack(runs, tmp_path / "out2", first=["b_row"], max_mib=budget_mib, part_mib=0.3)
    assert sum(part.stat().st_size for part in (tmp_path / "out2").iterdir()) <= budget_mib * carry_runs.MIB
    carry_runs.unpack(tmp_path / "out2", tmp_path / "carried2")
    assert (tmp_path / "carried2" / "b_row-seed1" / "train" / "model_state_e2_b0.th").exists()
    assert not (tmp_path / "carried2" / "a_row-seed1" / "train" / "model_state_e2_b0.th").exists()
    assert (tmp_path / "carried2" / "a_row-seed1" / "run.json").exists()  # its record travels all the same


def _parts_with(tmp_path, members, listed, runs=("a_row-seed1",)):
    """Parts of a tar holding a manifest that lists `listed` and `runs` and the given (TarInfo, bytes) members."""
    buffer = io.BytesIO()
    manifest = {"runs": {run: {"done": True, "checkpoint": None} for run in runs},
                "files": {name: {"bytes": 1, "sha256": "0" * 64} for name in [*listed, *(f"{run}/run.json" for run in runs)]}}
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        encoded = json.dumps(manifest).encode()
        info = tarfile.TarInfo(carry_runs.MANIFEST)
        info.size = len(encoded)
        archive.addfile(info, io.BytesIO(encoded))
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    out = tmp_path / "parts"
    out.mkdir()
    (out / "runs.tar.gz.000").write_bytes(buffer.getvalue())
    return out


@pytest.mark.parametrize("kind", ["parent", "absolute", "symlink", "unlisted", "digest"])
def test_unpack_refuses_what_the_manifest_does_not_vouch_for(tmp_path, kind):
    name = {"parent": "a_row-seed1/../../evil", "absolute": "/tmp/evil", "symlink": "a_row-seed1/link",
            "unlisted": "a_row-seed1/other", "digest": "a_row-seed1/run.json"}[kind]
    info = tarfile.TarInfo(name)
    if kind == "symlink":
        info.type, info.linkname, data = tarfile.SYMTYPE, "/etc/passwd", None
    else:
        info.size, data = 1, b"x"
    parts = _parts_with(tmp_path, [(info, data)], [] if kind == "unlisted" else [name])
    with pytest.raises(SystemExit, match="SHA-256" if kind == "digest" else "refusing"):
        carry_runs.unpack(parts, tmp_path / "runs")
    assert not (tmp_path / "runs").exists() and not (tmp_path.parent / "evil").exists()


@pytest.mark.parametrize("run", ["..", ".", "a/../..", ".replaced"])
def test_unpack_refuses_a_manifest_run_that_is_not_a_run_directorys_name(tmp_path, run):
    parts = _parts_with(tmp_path, [], [], runs=(run,))
    with pytest.raises(SystemExit, match="refusing run"):
        carry_runs.unpack(parts, tmp_path / "runs" / "inner")
    assert not (tmp_path / "runs").exists()


def test_relocate_points_a_carried_runs_config_at_this_device_and_data(tmp_path):
    out = tmp_path / "runs" / "row-seed1"
    (out / "train").mkdir(parents=True)
    config = {"train_data_path": "/gpu/repo/.gpudata/ptb/ptb.train.txt",
              "model": {"embedder": {"pretrained_file": "/gpu/repo/.gpudata/glove/g.txt.gz"}},
              "trainer": {"cuda_device": 0, "callbacks": [{"type": "deadline"}]}, "other": "/gpu/repo/elsewhere"}
    (out / "train" / "config.json").write_text(json.dumps(config))
    (out / "train.log").write_text("\n===== piece 1\n")
    state = replicate.RunState(row="row", seed=1, device="cuda:0", threads=3, data="/gpu/repo/.gpudata")
    args = argparse.Namespace(data=str(tmp_path / "data"), runs=str(tmp_path / "runs"),
                              results=str(tmp_path / "results.jsonl"), device="cpu", threads=1, minutes=None,
                              until=None)
    replication = replicate.Replication(args)
    replication.relocate(out, state)
    moved = json.loads((out / "train" / "config.json").read_text())
    data = str((tmp_path / "data").resolve())
    assert moved["train_data_path"] == f"{data}/ptb/ptb.train.txt"
    assert moved["model"]["embedder"]["pretrained_file"] == f"{data}/glove/g.txt.gz"
    assert moved["trainer"] == {"cuda_device": -1, "callbacks": [{"type": "deadline"}]}
    assert moved["other"] == "/gpu/repo/elsewhere"
    assert state.data == data and json.loads((out / "run.json").read_text())["data"] == data
    log = (out / "train.log").read_text()
    assert "relocated to cpu: trainer.cuda_device 0 -> -1" in log and log.count("\n===== ") == 1
    replication.relocate(out, state)  # already here: nothing changes
    assert (out / "train.log").read_text() == log
    state.pieces = [{"device": "cuda:0"}, {"device": "cpu"}, {"device": "cpu"}]
    assert replicate.devices(state) == "cuda:0 + cpu"


SPEC = {
    "family": "tiny_lm",
    "rows": [{
        "name": "tiny_lm", "system": "ours", "label": "lstmn LM (test sizes)",
        "config": "training_config/ptb_lstmn_lm.jsonnet",
        "variables": {"PTB_TRAIN": "DATA/ptb/train.txt", "PTB_VALIDATION": "DATA/ptb/valid.txt",
                      "NUM_EPOCHS": "3", "LM_DROPOUT": "0.0", "LSTMN_LAYERS": "1"},
        "overrides": {"model.text_field_embedder.token_embedders.tokens.embedding_dim": 6,
                      "model.contextualizer": {"type": "lstmn", "input_size": 6, "hidden_size": 6, "num_layers": 1},
                      "data_loader.batch_sampler.batch_size": 40},
        "test_file": "DATA/ptb/valid.txt", "metric": "token_perplexity", "dev_metric": "perplexity",
        "data": "12 sentences of the PTB-format fixture", "paper": 108,
    }],
}


def test_a_run_carried_to_another_data_root_resumes_from_its_last_epoch_and_ends_as_one_run_straight_through(
        tmp_path):
    for root in ("data_here", "data_there"):  # one batch per epoch
        (tmp_path / root / "ptb").mkdir(parents=True)
        lines = (REPO_ROOT / "fixtures" / "ptb_format" / "train.txt").read_text().splitlines()
        (tmp_path / root / "ptb" / "train.txt").write_text("\n".join(lines[:12]) + "\n")
        (tmp_path / root / "ptb" / "valid.txt").write_text("\n".join(lines[12:16]) + "\n")
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))

    def replicate_call(runs, data, *arguments):
        command = [sys.executable, str(REPO_ROOT / "benchmarks" / "replication" / "replicate.py"), "tiny_lm", "--spec",
                   str(tmp_path / "spec.json"), "--runs", str(tmp_path / runs), "--data", str(tmp_path / data),
                   "--results", str(tmp_path / f"{runs}.jsonl"), *arguments]
        finished = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
        assert finished.returncode == 0, finished.stderr[-3000:]

    replicate_call("straight", "data_here")
    # two pieces of one batch each: the second completes epoch 1 (checkpoint e1_b0) and stops in epoch 2 (e1_b1)
    replicate_call("there", "data_there", "--minutes", "0.00001")
    replicate_call("there", "data_there", "--minutes", "0.00001")
    serialization = tmp_path / "there" / "tiny_lm-seed1" / "train"
    assert sorted(path.name for path in serialization.glob("model_state_*.th")) == [
        "model_state_e1_b0.th", "model_state_e1_b1.th"]
    carry_runs.pack(tmp_path / "there", tmp_path / "parts", first=["tiny_lm"], max_mib=50, part_mib=15)
    carry_runs.unpack(tmp_path / "parts", tmp_path / "here")
    replicate_call("here", "data_here")

    straight, = [json.loads(line) for line in (tmp_path / "straight.jsonl").read_text().splitlines()]
    carried, = [json.loads(line) for line in (tmp_path / "here.jsonl").read_text().splitlines()]
    for key in ("value", "dev", "epochs", "best_epoch"):
        assert carried[key] == straight[key], key
    log = (tmp_path / "here" / "tiny_lm-seed1" / "train.log").read_text()
    assert f"{tmp_path / 'data_there'}/ptb/train.txt -> {tmp_path / 'data_here'}/ptb/train.txt" in log
