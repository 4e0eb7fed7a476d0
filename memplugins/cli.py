"""
The `memplugins` command: AllenNLP's command line with memplugins loaded first, from any folder, no
`--include-package` and no `.allennlp_plugins` needed, and a few commands of its own.

    memplugins train snli_mma_nse -s out/              # a shipped config by name (memplugins configs lists them)
    memplugins attention-map out/model.tar.gz '{"premise": "...", "hypothesis": "..."}' --output-file map.png
    memplugins plot-metrics out/ --output-file curves.png

This module imports nothing heavy at its top. The console command's launcher (`memplugins_launcher.py`) runs it
without importing the memplugins package (whose import loads AllenNLP, torch and transformers: about 10 s), so
`--help`, `--version` and `configs` answer at once; every other command imports the package and hands over to
AllenNLP's command line. `import memplugins` calls `quiet_third_party_imports` from here before AllenNLP is
imported.

Being first also lets it silence, at their source, the lines that every `allennlp` command prints offline and that
are not errors:

* allennlp-models' NarrativeQA metric module calls `nltk.download("punkt")` / `("wordnet")` when AllenNLP imports
  every plugin module, which prints `[nltk_data] Error loading punkt: <urlopen error ...>` offline. Nothing may be
  downloaded at run time here, and no memplugins code uses those NLTK resources, so under this command
  `nltk.download` is a no-op that logs (at debug level) what was asked.
* FutureWarnings / UserWarnings raised while third-party modules are imported (fairscale's and torch.jit's
  deprecations, `pkg_resources`'s) are filtered by their module; warnings from memplugins itself still show.
"""
import difflib
import logging
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Dict, List, Optional

logger = logging.getLogger("memplugins")

_THIRD_PARTY_IMPORT_WARNINGS = (
    (FutureWarning, r"fairscale(\..*)?"),
    (FutureWarning, r"torch\.jit(\..*)?"),
    (FutureWarning, r"allennlp\.training(\..*)?"),  # torch-2 deprecations of AllenNLP's own amp calls
    (UserWarning, r"pkg_resources(\..*)?"),
    (UserWarning, r"rouge(\..*)?"),
)

# AllenNLP 2.10.1's subcommands and ours, for `--help` without importing AllenNLP (tests/cli_test.py checks this
# list against the registry, so it cannot drift)
SUBCOMMANDS = {
    "train": "Train a model (a config file, or a shipped config by name).",
    "evaluate": "Evaluate the specified model + dataset(s).",
    "predict": "Use a trained model to make predictions.",
    "attention-map": "Draw a model's attention for one input as a PNG heatmap.",
    "plot-metrics": "Draw a run's training and validation curves as a PNG.",
    "configs": "List the shipped configs, one line each.",
    "test-install": "Report what is installed: memplugins, AllenNLP, registered names, CUDA devices.",
    "build-vocab": "Build a vocabulary from an experiment config file.",
    "cached-path": "Cache remote files to the AllenNLP cache.",
    "checklist": "Run a trained model through a checklist suite.",
    "count-instances": "Count the number of training instances in an experiment config file.",
    "diff": "Display a diff between two model checkpoints.",
    "find-lr": "Find a learning rate range.",
    "print-results": "Print results from allennlp serialization directories to the console.",
    "push-to-hf": "Push a model to the Hugging Face Hub.",
}
# `train`'s options that take a value (so the config is the first other word)
_TRAIN_VALUE_OPTIONS = {"-s", "--serialization-dir", "-o", "--overrides", "--node-rank", "--include-package"}


def quiet_third_party_imports() -> None:
    """Filters the deprecation warnings that third-party modules raise while they are imported (see the module
    docstring); `import memplugins` calls it first."""
    for category, module in _THIRD_PARTY_IMPORT_WARNINGS:
        warnings.filterwarnings("ignore", category=category, module=module)
    warnings.filterwarnings("ignore", message=r".*pkg_resources is deprecated.*", category=UserWarning)


def _offline_nltk_download(info_or_id=None, *args, **kwargs) -> bool:
    logger.debug("memplugins: nltk.download(%r) skipped (offline; nothing downloads at run time)", info_or_id)
    return False


def keep_nltk_offline() -> None:
    """Makes `nltk.download` a no-op that logs what was asked (the module docstring); call it before AllenNLP imports
    every plugin module (`import_plugins`)."""
    import nltk

    nltk.download = _offline_nltk_download


def version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


# ----- the shipped configs and their data, found without importing anything heavy

def data_roots() -> List[Path]:
    """Where the shipped configs and fixtures are: the checkout that holds this package (an editable install, a
    clone), then `<prefix>/share/memplugins` (a wheel installs them there)."""
    checkout = Path(__file__).resolve().parent.parent
    return [root for root in (checkout, Path(sys.prefix) / "share" / "memplugins") if (root / "training_config").is_dir()]


def shipped_configs() -> Dict[str, Path]:
    """Config name (file name without `.jsonnet`) to path; the checkout's win over installed copies."""
    configs: Dict[str, Path] = {}
    for root in reversed(data_roots()):
        configs.update({path.stem: path for path in sorted((root / "training_config").glob("*.jsonnet"))})
    return dict(sorted(configs.items()))


def config_header(path: Path) -> str:
    """A config's header comment (its leading `//` lines) as one line (also the model cards' description)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].strip())
    return " ".join(lines)


def config_summary(path: Path) -> str:
    """The first sentence of a config's header comment."""
    text = config_header(path)
    end = re.search(r"(?<!\bal)\.\s+(?=[A-Z])", text)  # a sentence's end, not "et al. 2016"
    return text[: end.start() + 1] if end else text


class UsageError(Exception):
    """A command line that cannot run as written: `main` prints it as one line and exits 2."""


def resolve_train_config(argv: List[str]) -> List[str]:
    """`train NAME ...`: the shipped config NAME when NAME is not a file here (also `NAME.jsonnet` and
    `training_config/NAME.jsonnet`, as the README writes them, from a folder outside the checkout). A word that is
    neither a file nor a shipped name is a `UsageError` naming the closest shipped configs."""
    index = 1
    while index < len(argv):
        word = argv[index]
        if word in _TRAIN_VALUE_OPTIONS:
            index += 2
            continue
        if word.startswith("-"):
            index += 1
            continue
        if Path(word).exists():
            return argv
        configs = shipped_configs()
        name = Path(word).name[: -len(".jsonnet")] if word.endswith(".jsonnet") else word
        if name in configs and ("/" not in word or Path(word).parent.name == "training_config"):
            return argv[:index] + [str(configs[name])] + argv[index + 1 :]
        if word.endswith((".json", ".yaml", ".yml")) or ("/" in word and not word.endswith(".jsonnet")):
            return argv  # a file of the user's that is missing: AllenNLP's own message says so
        close = difflib.get_close_matches(name, list(configs), n=3, cutoff=0.6)
        raise UsageError(f"train: {word!r} is neither a file nor a shipped config"
                         + (f"; did you mean {' or '.join(close)}?" if close else "")
                         + " (`memplugins configs` lists them)")
    return argv


def resolve_shipped_files(argv: List[str]) -> List[str]:
    """Words that name a shipped file by its path in the checkout (`fixtures/snli/predict_sample.jsonl`,
    `training_config/...`, `examples/...`) and are not files in the current folder: the installed copy, so the README's commands
    run as written from any folder. A file of the user's with that path always wins."""
    roots = data_roots()
    resolved = []
    for word in argv:
        if word.startswith(("fixtures/", "training_config/", "examples/")) and not Path(word).exists():
            found = [root / word for root in roots if (root / word).exists()]
            word = str(found[0]) if found else word
        resolved.append(word)
    return resolved


def _help() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = [f"memplugins {version('memplugins')} (AllenNLP {version('allennlp')}): AllenNLP's command line with "
             "memplugins loaded.", "", "usage: memplugins [--version] [--allow-import-paths] COMMAND ...", "",
             "Commands:"]
    lines += [f"    {name:<{width}}  {description}" for name, description in SUBCOMMANDS.items()]
    lines += ["", "`memplugins COMMAND --help` describes a command. --allow-import-paths lets a model archive's config",
              "name types by import path (refused by default: importing a path runs its code)."]
    return "\n".join(lines)


def _list_configs() -> None:
    configs = shipped_configs()
    if not configs:
        print("memplugins: no shipped configs found (looked in: the checkout, <prefix>/share/memplugins)")
        return
    width = max(len(name) for name in configs)
    for name, path in configs.items():
        print(f"{name:<{width}}  {config_summary(path)}")


def test_install_report() -> str:
    """What `memplugins test-install` prints (imports everything, as the command is meant to)."""
    import torch
    from allennlp.common.registrable import Registrable

    import memplugins  # noqa: F401

    lines = [f"memplugins {version('memplugins')} installed to {Path(memplugins.__file__).parent}",
             f"AllenNLP {version('allennlp')}, allennlp-models {version('allennlp-models')}, torch {torch.__version__}",
             f"CUDA devices available: {torch.cuda.device_count()}"
             + "".join(f"\n    cuda:{i}: {torch.cuda.get_device_name(i)}" for i in range(torch.cuda.device_count())),
             f"shipped configs: {len(shipped_configs())} (memplugins configs)", "registered by memplugins:"]
    for base, names in sorted(Registrable._registry.items(), key=lambda item: item[0].__name__):
        ours = sorted(name for name, (cls, _) in names.items() if cls.__module__.startswith("memplugins"))
        if ours:
            lines.append(f"    {base.__name__}: {', '.join(ours)}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--allow-import-paths" in argv:  # our flag (memplugins.archives), not AllenNLP's
        argv.remove("--allow-import-paths")
        os.environ["MEMPLUGINS_ALLOW_IMPORT_PATHS"] = "1"
    if not argv or argv[0] in ("-h", "--help"):
        print(_help())
        return 0
    if argv[0] == "--version":
        print(f"memplugins {version('memplugins')} (AllenNLP {version('allennlp')}, "
              f"allennlp-models {version('allennlp-models')})")
        return 0
    if argv[0] == "configs":
        _list_configs()
        return 0
    try:
        argv = argv[:1] + resolve_shipped_files(argv[1:])
        if argv[0] == "train":
            argv = resolve_train_config(argv)
    except UsageError as error:
        print(f"memplugins: error: {error}", file=sys.stderr)
        return 2
    return _run_allennlp(argv)


def cuda_device_error(argv: List[str]) -> Optional[str]:
    """`--cuda-device N` (N >= 0) where torch sees no CUDA device: AllenNLP answers with a traceback that suggests
    a config key; one line here."""
    import torch

    for index, word in enumerate(argv):
        value = word.split("=", 1)[1] if word.startswith("--cuda-device=") else (
            argv[index + 1] if word == "--cuda-device" and index + 1 < len(argv) else None)
        if value is not None and value.lstrip("-").isdigit() and int(value) >= 0 and not torch.cuda.is_available():
            return (f"--cuda-device {value}, but torch {torch.__version__} sees no CUDA device on this machine; "
                    "leave the option out (or pass -1) to run on the CPU")
    return None


def _run_allennlp(argv: List[str]) -> int:
    keep_nltk_offline()  # before AllenNLP imports every plugin module
    import allennlp.__main__  # noqa: F401  (its import configures logging as the `allennlp` command's does)
    import memplugins  # noqa: F401  (registers everything, applies memplugins.compat)
    from allennlp.commands import main as allennlp_main
    from allennlp.common.checks import ConfigurationError
    from allennlp.common.util import SigTermReceived, install_sigterm_handler

    from memplugins.predictors.inputs import InvalidInputError
    from memplugins.readers.errors import MalformedInputError
    from memplugins.archives import ArchiveError

    if argv[0] == "test-install":
        print(test_install_report())
        return 0
    problem = cuda_device_error(argv)
    if problem:
        print(f"memplugins: error: {problem}", file=sys.stderr)
        return 2
    if argv[0] == "train":
        from memplugins.commands.override_check import warn_replaced_blocks

        warn_replaced_blocks(argv)
    # SIGTERM (a cluster's pre-emption, `kill`) raises SigTermReceived, which `train` answers as `allennlp train`
    # does: "Training interrupted by the user", the best model archived, a non-zero exit
    install_sigterm_handler()
    sys.argv = ["memplugins", *argv]
    try:
        allennlp_main(prog="memplugins")
    except (SigTermReceived, KeyboardInterrupt) as stop:
        what = "SIGTERM" if isinstance(stop, SigTermReceived) else "an interrupt (Ctrl-C)"
        print(f"memplugins: {argv[0]} stopped by {what}" + (
            "; the serialization directory keeps the last checkpoint (and an archive of the best epoch, if one "
            "ended): the same command with --recover continues exactly where it stopped" if argv[0] == "train"
            else ""), file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001  (bad input or config: the message, no traceback; others re-raised)
        if os.environ.get("MEMPLUGINS_TRACEBACK") == "1" or not isinstance(
                error, (MalformedInputError, ArchiveError, InvalidInputError, ConfigurationError)):
            raise
        print(f"memplugins: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
