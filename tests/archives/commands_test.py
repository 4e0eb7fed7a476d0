"""
No crafted archive runs code through any command that opens one: for every key an AllenNLP command builds from an
archive's config (`COMMAND_KEYS`), an archive naming `os.system` there goes through `memplugins evaluate`,
`predict`, `attention-map` and `train` (a config whose model is `from_archive` of it), and through
`allennlp evaluate` / `predict --include-package memplugins`, each from a folder without `.allennlp_plugins`; and
through AllenNLP's interpreters in Python. No marker file appears, and the `memplugins` command answers each with
its message and exit status 2, no traceback.
"""
import json

import pytest
from allennlp.interpret.saliency_interpreters import SimpleGradient
from allennlp.predictors import Predictor

from memplugins.archives import ArchiveError
# what the commands build from an archive's config (config_test checks every key of its KEYS)
COMMAND_KEYS = ["dataset_reader", "validation_dataset_reader", "dataset_reader.tokenizer", "model",
                "model.text_field_embedder.token_embedders.tokens", "vocabulary", "data_loader",
                "data_loader.batch_sampler", "validation_data_loader", "validation_data_loader.batch_sampler",
                "evaluation", "trainer.callbacks[0]"]
from tests.archives.crafting import members_of, set_path, with_config, write_archive
from tests.command_driver import run_rows
from tests.conftest import REPO_ROOT

DATA = str(REPO_ROOT / "fixtures/snli/tiny.jsonl")
PAIR = '{"premise": "A man plays.", "hypothesis": "A person plays."}'


def crafted(good_archive, folder, key, marker):
    members = with_config(members_of(good_archive), lambda config: set_path(
        config, key, {"type": "os.system", "command": f"touch {marker}"}))
    return write_archive(folder / f"{key.replace('[', '_').replace(']', '')}.tar.gz", members)


def command_lines(archive, folder):
    train_config = folder / f"{archive.name}.train.json"
    train_config.write_text(json.dumps({
        "dataset_reader": {"type": "snli_parsed", "tokenizer": {"type": "spacy_blank"}},
        "train_data_path": DATA, "model": {"type": "from_archive", "archive_file": str(archive)},
        "data_loader": {"batch_size": 5}, "trainer": {"optimizer": "adam", "num_epochs": 1}}))
    return {
        "memplugins evaluate": ("memplugins", ["evaluate", str(archive), DATA]),
        "memplugins predict": ("memplugins", ["predict", str(archive), DATA, "--silent"]),
        "memplugins attention-map": ("memplugins", ["attention-map", str(archive), PAIR, "--output-file",
                                                    str(folder / "map.png")]),
        "memplugins train (from_archive)": ("memplugins", ["train", str(train_config), "-s",
                                                           str(folder / f"{archive.name}.run")]),
        "allennlp evaluate": ("allennlp", ["evaluate", str(archive), DATA, "--include-package", "memplugins"]),
        "allennlp predict": ("allennlp", ["predict", str(archive), DATA, "--silent", "--include-package",
                                          "memplugins"]),
    }


@pytest.fixture(scope="module")
def outcomes(good_archive, tmp_path_factory):
    """Every (key, command) row, run by `tests.command_driver` in two processes (the `allennlp` rows first, in a
    process where only `--include-package` imports memplugins)."""
    folder = tmp_path_factory.mktemp("crafted")
    rows = {}
    for key in COMMAND_KEYS:
        marker = folder / f"marker-{key}"
        archive = crafted(good_archive, folder, key, marker)
        for command, (program, argv) in command_lines(archive, folder).items():
            rows[(key, command)] = {"program": program, "argv": argv, "cwd": str(folder), "marker": str(marker)}
    results = {}
    for program in ("allennlp", "memplugins"):
        chosen = [(name, row) for name, row in rows.items() if row["program"] == program]
        (folder / program).mkdir()
        for (name, row), result in zip(chosen, run_rows([row for _, row in chosen], folder / program, timeout=1200)):
            results[name] = {**result, "marker": row["marker"]}
    return results


@pytest.mark.parametrize("key", COMMAND_KEYS)
def test_no_command_runs_an_archives_import_path(outcomes, key):
    from pathlib import Path

    for (row_key, command), result in outcomes.items():
        if row_key != key:
            continue
        assert not Path(result["marker"]).exists(), f"{command} ran os.system from {key}"
        if command.startswith("memplugins"):
            assert result["code"] == 2 and result["traceback"] == "", (command, result)
            assert f"{key}.type is 'os.system', an import path" in result["stderr"], (command, result["stderr"])
            assert "--allow-import-paths" in result["stderr"]
        else:  # AllenNLP's own command line prints the ArchiveError as a traceback; what matters is that it refused
            assert result["code"] != 0 and "ArchiveError" in result["traceback"], (command, result)


@pytest.mark.parametrize("key", ["model", "dataset_reader", "validation_dataset_reader"])
def test_the_interpreters_refuse_it_too(good_archive, sandbox, key):
    marker = sandbox / "pwned"
    archive = crafted(good_archive, sandbox, key, marker)
    with pytest.raises(ArchiveError, match="import path"):
        SimpleGradient(Predictor.from_path(str(archive))).saliency_interpret_from_json(json.loads(PAIR))
    assert not marker.exists()
