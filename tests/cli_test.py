"""
End-to-end through the `allennlp` command line, offline: the subprocesses get a sitecustomize that makes any
non-loopback connection fail. Each CLI start costs ~15 s (AllenNLP imports), so the steps share one training run.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NO_NETWORK_PATH, REPO_ROOT, free_port

ALLENNLP = str(Path(sys.executable).parent / "allennlp")


def run_allennlp(*args, env=None, cwd=REPO_ROOT, timeout=600):
    environment = {**os.environ, "PYTHONPATH": str(NO_NETWORK_PATH), **(env or {})}
    result = subprocess.run(
        [ALLENNLP, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"allennlp {' '.join(args)} failed:\n{result.stderr[-5000:]}"
    return result


@pytest.fixture(scope="module")
def trained_archive(tmp_path_factory):
    """`allennlp train` of the README's default config on the shipped data, found via .allennlp_plugins."""
    out = tmp_path_factory.mktemp("cli") / "wbw"
    run_allennlp("train", "training_config/snli_rte_word_by_word.jsonnet", "-s", str(out), env={"NUM_EPOCHS": "2"})
    archive = out / "model.tar.gz"
    assert archive.exists()
    return archive


def test_train_evaluate_predict(trained_archive, tmp_path):
    metrics_file = tmp_path / "metrics.json"
    run_allennlp(
        "evaluate", str(trained_archive), "fixtures/snli/snli_1.0_dev_sample_validation.jsonl",
        "--output-file", str(metrics_file), "--include-package", "memplugins",
    )
    metrics = json.loads(metrics_file.read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0 and metrics["loss"] > 0

    predictions_file = tmp_path / "predictions.jsonl"
    run_allennlp(
        "predict", str(trained_archive), "fixtures/snli/predict_sample.jsonl",
        "--output-file", str(predictions_file), "--silent", "--include-package", "memplugins",
    )
    predictions = [json.loads(line) for line in predictions_file.read_text().splitlines()]
    assert len(predictions) == 10
    for prediction in predictions:
        assert prediction["label"] in {"entailment", "neutral", "contradiction"}
        assert len(prediction["premise_attention"]) == len(prediction["hypothesis_tokens"])
        assert len(prediction["premise_attention"][0]) == len(prediction["premise_tokens"])


def test_predict_reads_snli_files_directly(trained_archive, tmp_path):
    predictions_file = tmp_path / "predictions.jsonl"
    run_allennlp(
        "predict", str(trained_archive), "fixtures/snli/tiny.jsonl", "--output-file", str(predictions_file), "--silent",
    )
    assert len(predictions_file.read_text().splitlines()) == 20  # predict does not skip '-' lines: it has no gold


def test_test_install_reports_no_plugin_errors():
    result = run_allennlp("test-install")
    output = result.stdout + result.stderr
    assert "could not be loaded" not in output
    assert "Plugin memplugins available" in output


def test_memplugins_test_install_reports_versions_names_and_devices(tmp_path):
    result = run_memplugins("test-install", cwd=tmp_path)
    assert "memplugins 0.2.0 installed to" in result.stdout and "AllenNLP 2.10.1" in result.stdout
    assert "CUDA devices available:" in result.stdout
    assert "Seq2SeqEncoder: lstmn, nse" in result.stdout and "Model: " in result.stdout


def test_help_version_and_configs_answer_without_importing_allennlp(tmp_path):
    """`memplugins --help` under 3 s (the launcher imports neither AllenNLP nor torch), timed beside `allennlp
    --help` in one run; `--version` is ours; `configs` lists every shipped config."""
    import time

    started = time.perf_counter()
    helped = run_memplugins("--help", cwd=tmp_path)
    ours = time.perf_counter() - started
    started = time.perf_counter()
    run_allennlp("--help", cwd=tmp_path)
    theirs = time.perf_counter() - started
    assert ours < 3.0 and ours < theirs, (ours, theirs)
    assert "attention-map" in helped.stdout and "plot-metrics" in helped.stdout and "train" in helped.stdout
    assert run_memplugins("--version", cwd=tmp_path).stdout.startswith("memplugins 0.2.0 (AllenNLP 2.10.1")
    listed = run_memplugins("configs", cwd=tmp_path).stdout
    for config in (REPO_ROOT / "training_config").glob("*.jsonnet"):
        assert f"\n{config.stem} " in "\n" + listed, config.stem


def test_the_help_lists_every_registered_subcommand():
    from allennlp.commands.subcommand import Subcommand

    from memplugins.cli import SUBCOMMANDS

    assert set(SUBCOMMANDS) == set(Subcommand.list_available()) | {"configs"}


def test_importing_memplugins_prints_nothing(tmp_path):
    result = subprocess.run([sys.executable, "-c", "import memplugins; from allennlp.predictors import Predictor"],
                            cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(NO_NETWORK_PATH)})
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result.stderr[-3000:]


def test_distributed_two_cpu_processes(tmp_path):
    out = tmp_path / "distributed"
    overrides = json.dumps({"distributed": {"cuda_devices": [-1, -1], "master_port": free_port()},
                            "trainer": {"num_epochs": 1}})
    run_allennlp("train", "tests/fixtures/rte_attention.jsonnet", "-s", str(out), "-o", overrides)
    assert (out / "model.tar.gz").exists()
    metrics = json.loads((out / "metrics.json").read_text())
    assert "training_accuracy" in metrics


MEMPLUGINS = str(Path(sys.executable).parent / "memplugins")


def run_memplugins(*args, cwd, env=None, timeout=600):
    environment = {**os.environ, "PYTHONPATH": str(NO_NETWORK_PATH), **(env or {})}
    result = subprocess.run([MEMPLUGINS, *args], cwd=cwd, env=environment, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f"memplugins {' '.join(args)} failed:\n{result.stderr[-5000:]}"
    return result


def test_allennlp_command_finds_the_fixture_defaults_from_any_folder(tmp_path):
    run_allennlp("train", str(REPO_ROOT / "training_config" / "snli_rte_conditional.jsonnet"), "-s",
                 str(tmp_path / "run"), "--include-package", "memplugins", "--dry-run", cwd=tmp_path)


def test_memplugins_train_answers_sigterm_as_allennlp_train_does(tmp_path):
    """A cluster's pre-emption: SIGTERM after the first epoch; the best model so far is archived, and the command
    ends with one message saying how to continue (exit status 2), not a traceback."""
    import signal
    import time

    out = tmp_path / "run"
    command = [str(Path(sys.executable).parent / "memplugins"), "train", str(REPO_ROOT / "tests/fixtures/rte_attention.jsonnet"),
               "-s", str(out), "-o", json.dumps({"trainer.num_epochs": 1000})]
    environment = {**os.environ, "PYTHONPATH": str(NO_NETWORK_PATH)}
    log = tmp_path / "train.log"  # (a pipe nobody reads while training would fill up and block the process)
    with open(log, "w") as handle:
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=environment, stdout=handle, stderr=subprocess.STDOUT)
        deadline = time.time() + 300
        while not (out / "metrics_epoch_1.json").exists() and time.time() < deadline and process.poll() is None:
            time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=300)
    stderr = log.read_text()
    assert process.returncode == 2, stderr[-3000:]
    assert "Training interrupted by the user" in stderr
    assert "memplugins: train stopped by SIGTERM" in stderr and "--recover" in stderr
    assert "Traceback" not in stderr and "SigTermReceived" not in stderr
    assert (out / "model.tar.gz").exists()


def test_a_bad_prediction_input_names_its_line_without_a_traceback(trained_archive, tmp_path):
    """Every kind of bad line, in-process: tests/predictors/input_lines_test.py; here the command's exit and output."""
    good = '{"premise": "A man plays.", "hypothesis": "A person plays."}'
    (tmp_path / "input.jsonl").write_text(f'{good}\n\n{{"premise": "A man plays.", "hypothesis": 5}}\n')
    result = subprocess.run([str(Path(sys.executable).parent / "memplugins"), "predict", str(trained_archive),
                             str(tmp_path / "input.jsonl"), "--silent", "--output-file", str(tmp_path / "out.jsonl")],
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(NO_NETWORK_PATH)}, capture_output=True,
                            text=True, timeout=600)
    expected = "input.jsonl:3: could not predict this input: entailment_pairs: 'hypothesis' must be a string"
    assert result.returncode == 2 and expected in result.stderr, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
