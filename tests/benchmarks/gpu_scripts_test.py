"""
The scripts that prepare and spend a lent GPU (issue 23), checked without one: the wheelhouse's pins cover the
whole lock, the GPU machine's package list leaves the packages we must carry carried, and the run script refuses
an unknown phase before it touches anything.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def wheelhouse():
    spec = importlib.util.spec_from_file_location("build_wheelhouse", ROOT / "scripts" / "build_wheelhouse.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_wheelhouse_pins_every_locked_and_no_deps_package_and_the_setuptools_range():
    module = wheelhouse()
    pins = module.pins()
    for path in ("constraints.lock", "no-deps.txt"):
        for line in (ROOT / "requirements" / path).read_text().splitlines():
            if "==" in line and not line.lstrip().startswith("#"):
                name, version = line.split(";")[0].split("#")[0].strip().split("==")
                assert pins[module.normalise(name)] == f"=={version}", line
    assert pins["setuptools"].startswith(">=") and "<82" in pins["setuptools"]
    assert pins["allennlp"] == "==2.10.1" and pins["allennlp-models"] == "==2.10.1"


def test_the_gpu_machine_list_does_not_skip_what_the_image_has_in_versions_allennlp_cannot_use():
    module = wheelhouse()
    listed = {module.normalise(line.split("#")[0].strip())
              for line in (ROOT / "scripts" / "gpu_machine_packages.txt").read_text().splitlines()
              if line.split("#")[0].strip()}
    assert {"torch", "numpy", "triton"} <= listed  # the image's own
    # AllenNLP 2.10 needs these at our pins: the image's transformers 5 / huggingface-hub 1 / setuptools >= 82 break it
    assert not listed & {"allennlp", "allennlp-models", "transformers", "huggingface-hub", "tokenizers", "setuptools",
                         "spacy", "jsonnet", "nltk"}
    # the image has no pydantic (an H100 lease of 2026-11-24 failed at spaCy's import when the list skipped it)
    assert not listed & {"pydantic", "pydantic-core", "annotated-types"}


def test_gpu_run_all_refuses_an_unknown_phase(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_run_all.sh"), "bogus"], capture_output=True,
                            text=True, env={**os.environ, "OUT": str(tmp_path)}, timeout=60)
    assert result.returncode == 2 and "unknown phase: bogus" in result.stderr
    assert list(Path(tmp_path).iterdir()) == []


def test_gpu_run_all_documents_every_phase_it_accepts_and_prepares_the_replicate_phases_data():
    script = (ROOT / "scripts" / "gpu_run_all.sh").read_text()
    accepted = script.split('case "$phase" in ')[1].split(")")[0].split("|")
    header = script.split("set -uo pipefail")[0]
    for phase in accepted:
        assert f"[{phase}]" in header and f"#     {phase} " in header, phase
        assert f"\n{phase}() {{" in script, phase
    # phases run in `bash -c`, which sees only exported functions
    exported = script.split("\nexport -f ")[1].split("\n")[0].split()
    assert sorted(exported) == sorted(accepted)
    assert "replicate" in accepted
    # the replicate phase's PTB rows (earlier leases' lanes) read PTB, which gpu_prepare.sh must put into .gpudata
    prepare = (ROOT / "scripts" / "gpu_prepare.sh").read_text()
    for split in ("train", "valid", "test"):
        assert f"ptb/ptb.{split}.txt" in prepare


def test_gpu_prepare_copies_every_data_file_of_the_rows_the_gpu_runs(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks" / "replication"))
    from rows import FAMILIES
    prepare = (ROOT / "scripts" / "gpu_prepare.sh").read_text()
    rows = {row.name: row for family in FAMILIES.values() for row in family}
    # the replicate phase's default lanes (read from the script), the rows of earlier leases, and the WikiQA row
    # its header describes
    script = (ROOT / "scripts" / "gpu_run_all.sh").read_text()
    default_lanes = script.split('"${REPLICATE:-')[1].split('}"')[0].split(";")
    default_rows = [word for lane in default_lanes for word in lane.split()[1:] if not word.startswith("--")
                    and not word.isdigit()]
    assert {"sst2_nse", "snli_esim", "snli_mma_nse_batch32", "snli_mma_nse",
            "sst2_nse_tuned_embeddings_peer_training"} <= set(default_rows)
    earlier = ("sst5_nse", "sst5_nse_k50_tuned_embeddings_peer_training", "sst5_nse_tuned_embeddings",
               "sst2_nse_tuned_embeddings_l2_on_embeddings", "ptb_lstmn_3layers_skip", "ptb_lstm_3layers_skip",
               "ptb_lstmn_3layers", "ptb_lstm_no_dropout",
               "ptb_lstmn_no_dropout", "wikiqa_mma_nse", "iwslt_nse_nse", "iwslt_nse_lstm", "sst2_iram_full",
               "sst5_lstmn", "sst2_nse_no_encoder_dropout", "snli_esim", "snli_mma_nse_batch32", "snli_mma_nse")
    for name in (*default_rows, *earlier):
        row = rows[name]
        # the files a row reads directly, and those its slices are cut from (IWSLT trains on a slice of valid)
        sources = [source for source, *_ in row.slices.values()]
        paths = [value for value in [*row.variables.values(), row.test_file or "", *sources]
                 if value.startswith("DATA/")]
        assert paths, name
        for value in paths:
            assert value[len("DATA/"):] in prepare, (name, value)


def test_gpu_run_all_says_what_to_carry_when_it_has_no_stack(tmp_path):
    # a python without allennlp in a tree without .gpusite (a copy of the script: this checkout may hold one), and
    # nothing unpacked: a clear message, not an ImportError per phase
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "gpu_run_all.sh", tmp_path / "scripts")
    bare_python = tmp_path / "python"  # this interpreter without its site-packages
    bare_python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    bare_python.chmod(0o755)
    result = subprocess.run(["bash", str(tmp_path / "scripts" / "gpu_run_all.sh"), "check"], capture_output=True,
                            text=True, env={**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": str(bare_python),
                                            "PYTHONPATH": "", "MEMPLUGINS_SITE": str(tmp_path / "site")}, timeout=60)
    assert result.returncode == 1 and "carry .gpusite" in result.stderr, result.stderr


def run_replicate_phase(tmp_path: Path, stub_body: str, out: Path, lanes: str, **env: str):
    """`gpu_run_all.sh replicate` with a stand-in python: it runs `-c` snippets (the deadline arithmetic, the stack
    check) and `stub_body` (sh) for every script call; the runs folder is tmp_path/runs."""
    stub = tmp_path / "python"
    stub.write_text(f'#!/bin/sh\nif [ "$1" = "-c" ]; then exec "{sys.executable}" "$@"; fi\n' + stub_body)
    stub.chmod(0o755)
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_run_all.sh"), "replicate"], capture_output=True, text=True, timeout=120,
        env={**os.environ, "OUT": str(out), "PYTHON": str(stub), "MEMPLUGINS_SITE": str(tmp_path / "site"),
             "REPLICATE": lanes, "REPLICATE_MINUTES": "5", "REPLICATE_RUNS": str(tmp_path / "runs"), **env})


def test_gpu_run_all_replicate_lanes_pass_their_options_to_each_row(tmp_path):
    # the stand-in logs every script call
    log = tmp_path / "calls.log"
    result = run_replicate_phase(tmp_path, f'echo "$@" >> "{log}"\n', tmp_path / "out",
                                 "ptb_lm row_a row_b --seeds 2 3;sst_nse row_c")
    assert result.returncode == 0, result.stderr
    calls = log.read_text().splitlines()
    replicate = sorted(call for call in calls if call.startswith("benchmarks/replication/replicate.py"))
    assert [call.split()[1:4] for call in replicate] == [["ptb_lm", "--rows", "row_a"], ["ptb_lm", "--rows", "row_b"],
                                                         ["sst_nse", "--rows", "row_c"]]
    assert all(call.endswith("--seeds 2 3") for call in replicate[:2]) and "--seeds" not in replicate[2]
    # every lane's first row, in lane order, goes first into what comes back
    assert [call for call in calls if call.startswith("benchmarks/replication/carry_runs.py pack")][0].endswith(
        "--first row_a row_c")


def test_a_later_replicate_call_returns_only_its_own_results(tmp_path):
    # a stand-in replicate.py that records one result per call in the --results file it is given; the lanes' results
    # stay beside the runs on the warm machine (replicate.py's `done` reads that file, so a second call skips what the
    # first finished), and each call returns only the lines it added
    record = ('if [ "$1" = benchmarks/replication/replicate.py ]; then row=$4; while [ $# -gt 0 ]; do\n'
              '  [ "$1" = --results ] && echo "{\\"row\\": \\"$row\\", \\"call\\": \\"$CALL\\"}" >> "$2"; shift\n'
              'done; fi\n')
    for call in ("1", "2"):
        result = run_replicate_phase(tmp_path, record, tmp_path / f"out{call}", "ptb_lm row_a;sst_nse row_c", CALL=call)
        assert result.returncode == 0, result.stderr
    returned = [[json.loads(line) for line in (tmp_path / f"out{call}" / "replication.jsonl").read_text().splitlines()]
                for call in ("1", "2")]
    assert [sorted((line["row"], line["call"]) for line in lines) for lines in returned] == [
        [("row_a", "1"), ("row_c", "1")], [("row_a", "2"), ("row_c", "2")]]
    assert len((tmp_path / "runs" / "replication.jsonl").read_text().splitlines()) == 4
