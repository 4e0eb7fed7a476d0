"""
The README's examples run as written from an empty folder outside the checkout: its `memplugins` command lines
(list the configs, train one epoch by name, evaluate and predict on the shipped fixtures by their checkout paths,
draw an attention map), then its Python snippets (IntegratedGradient through the default predictor, a model card by
name), each extracted from README.md itself, so an edited example is a tested one. Offline: the subprocesses get a
sitecustomize that makes any non-loopback connection fail.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NO_NETWORK_PATH, REPO_ROOT

BIN = Path(sys.executable).parent
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str, section: str):
    body = README.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.S)


def run(command, cwd, timeout=900):
    environment = {**os.environ, "PYTHONPATH": str(NO_NETWORK_PATH), "PATH": f"{BIN}:{os.environ['PATH']}"}
    result = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout,
                            shell=isinstance(command, str))
    assert result.returncode == 0, f"{command} failed in {cwd}:\n{result.stderr[-4000:]}"
    for line in (result.stderr + result.stdout).splitlines():
        assert "[nltk_data]" not in line and "Traceback" not in line, (command, line)
    return result


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """An empty folder where the README's command lines ran, in order (the training takes one epoch)."""
    here = tmp_path_factory.mktemp("readme_examples")
    commands = [line for block in blocks("bash", "Installing into your own environment")
                for line in block.splitlines() if line.startswith("memplugins ")]
    assert [command.split()[1] for command in commands] == ["configs", "train", "evaluate", "predict", "attention-map"]
    outputs = {command.split()[1]: run(command.split("#")[0], here) for command in commands}
    here.joinpath("outputs.json").write_text(json.dumps({name: result.stdout + result.stderr
                                                        for name, result in outputs.items()}))
    return here


def test_the_command_lines_run_from_an_empty_folder(folder):
    outputs = json.loads((folder / "outputs.json").read_text())
    assert "snli_rte_attention" in outputs["configs"]
    assert (folder / "out" / "model.tar.gz").exists()
    assert json.loads((folder / "out" / "metrics.json").read_text())["epoch"] == 0  # one epoch: the -o took
    assert 0.0 <= json.loads((folder / "metrics.json").read_text())["accuracy"] <= 1.0
    predictions = [json.loads(line.split("prediction:", 1)[1]) for line in outputs["predict"].splitlines()
                   if line.startswith("prediction:")]
    assert predictions and all(prediction["label"] in ("entailment", "contradiction", "neutral")
                               for prediction in predictions)
    assert (folder / "map.png").stat().st_size > 0
    assert all("FutureWarning" not in output for output in outputs.values())
    # the README's prose: `memplugins plot-metrics out/` and the TensorBoard log every config writes
    plotted = run("memplugins plot-metrics out/", folder)
    assert "curves" in plotted.stdout and (folder / "out" / "curves.png").stat().st_size > 0
    assert (folder / "out" / "log" / "train").is_dir()


def test_the_python_snippets_run_and_the_saliency_comment_is_true(folder):
    snippets = blocks("python", "Interpreting a model")
    assert len(snippets) == 2
    saliency, card = snippets
    # the comment says which grad_input is which input: check it against the tokens the predictor made
    check = ("\ninstance = predictor._json_to_instance({'premise': 'A man plays a guitar.', "
             "'hypothesis': 'A person plays music.'})\n"
             "assert len(saliency['instance_1']['grad_input_1']) == len(instance['hypothesis'])\n"
             "assert len(saliency['instance_1']['grad_input_2']) == len(instance['premise'])\n")
    assert "grad_input_1\": [...hypothesis" in saliency
    run([sys.executable, "-c", saliency + check], folder)
    printed = run([sys.executable, "-c", card], folder).stdout
    assert "snli_mma_nse" in printed and "test accuracy" in printed


def test_the_docs_own_config_examples_run_from_an_empty_folder(tmp_path):
    """docs/using.md: allennlp-models' ESIM config as shipped in examples/, then with the LSTMN swapped in."""
    text = (REPO_ROOT / "docs" / "using.md").read_text(encoding="utf-8").replace("\\\n", " ")
    commands = [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S) for line in block.splitlines()
                if line.startswith("memplugins ")]
    assert len(commands) == 2
    for command in commands:
        run(command, tmp_path)
    from allennlp.models.archival import load_archive

    from memplugins.encoders import LstmnEncoder

    for name, swapped in (("esim_lstm", False), ("esim_lstmn", True)):
        model = load_archive(str(tmp_path / "out" / name / "model.tar.gz")).model
        assert isinstance(model._encoder, LstmnEncoder) == swapped
        assert isinstance(model._inference_encoder, LstmnEncoder) == swapped


def test_a_mistyped_config_name_lists_the_closest_names(tmp_path):
    result = subprocess.run([str(BIN / "memplugins"), "train", "snli_rte_wordbyword", "-s", "out"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "did you mean snli_rte_word_by_word" in result.stderr and "memplugins configs" in result.stderr


def test_cuda_device_without_cuda_is_one_line(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = subprocess.run([str(BIN / "memplugins"), "predict", "missing.tar.gz", "in.jsonl", "--cuda-device", "0"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "no CUDA device" in result.stderr


def test_an_override_that_replaces_a_whole_block_names_the_keys_it_drops():
    from memplugins.commands.override_check import replaced_blocks, train_config_and_overrides

    config = {"trainer": {"num_epochs": 10, "patience": 3, "optimizer": {"type": "adam", "lr": 1e-3}}, "model": {}}
    assert replaced_blocks(config, {"trainer": {"num_epochs": 1}}) == [("trainer", ["optimizer", "patience"])]
    assert replaced_blocks(config, {"trainer.num_epochs": 1, "trainer.optimizer": {"type": "adam"}}) == [
        ("trainer.optimizer", ["lr"])]
    assert replaced_blocks(config, {"trainer.num_epochs": 1}) == []
    assert train_config_and_overrides(["train", "-s", "out", "snli_rte_attention.jsonnet", "-o", "{}"]) == (
        "snli_rte_attention.jsonnet", "{}")


def test_a_whole_block_override_of_a_shipped_config_is_logged_with_the_keys_it_drops(tmp_path):
    result = subprocess.run([str(BIN / "memplugins"), "train", "snli_rte_attention", "-s", str(tmp_path / "out"),
                             "-o", '{"trainer": {"num_epochs": 1}}', "--dry-run"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    warning = next(line for line in result.stderr.splitlines() if "replaces the whole 'trainer' block" in line)
    assert "optimizer" in warning and "validation_metric" in warning and '"trainer.' in warning
