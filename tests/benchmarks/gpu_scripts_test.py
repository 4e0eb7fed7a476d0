"""
The scripts that prepare and spend a lent GPU (issue 23), checked without one: the wheelhouse's pins cover the
whole lock, the GPU machine's package list leaves the packages we must carry carried, and the run script refuses
an unknown phase before it touches anything.
"""
import importlib.util
import os
import subprocess
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
    assert "replicate" in accepted
    # the replicate phase's default rows read PTB, which gpu_prepare.sh must put into .gpudata
    prepare = (ROOT / "scripts" / "gpu_prepare.sh").read_text()
    for split in ("train", "valid", "test"):
        assert f"ptb/ptb.{split}.txt" in prepare
