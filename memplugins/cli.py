"""
`memplugins` (console command) and `python -m memplugins`: AllenNLP's command line with memplugins loaded first.
This module imports nothing heavy at its top, so that `memplugins/__init__.py` can quiet third-party import
warnings with it before it imports AllenNLP and torch.

    memplugins train training_config/snli_mma_nse.jsonnet -s out/
    memplugins attention-map out/model.tar.gz '{"premise": "...", "hypothesis": "..."}' --output-file map.png

Every `allennlp` subcommand works the same way, from any folder, with no `--include-package memplugins` and no
`.allennlp_plugins` file: this package is imported before AllenNLP builds its command parser, so our components
and the `attention-map` subcommand are registered. Being first also lets it silence, at their source, the lines
that every `allennlp` command prints offline and that are not errors:

* allennlp-models' NarrativeQA metric module calls `nltk.download("punkt")` / `("wordnet")` when AllenNLP imports
  every plugin module, which prints `[nltk_data] Error loading punkt: <urlopen error ...>` offline. Nothing may be
  downloaded at run time here, and no memplugins code uses those NLTK resources, so `nltk.download` becomes a
  no-op that logs (at debug level) what was asked.
* FutureWarnings / UserWarnings raised while third-party modules are imported (fairscale's and torch.jit's
  deprecations, `pkg_resources`'s) are filtered by their module; warnings from memplugins itself still show.
"""
import logging
import os
import sys
import warnings

logger = logging.getLogger("memplugins")

_THIRD_PARTY_IMPORT_WARNINGS = (
    (FutureWarning, r"fairscale(\..*)?"),
    (FutureWarning, r"torch\.jit(\..*)?"),
    (FutureWarning, r"allennlp\.training(\..*)?"),  # torch-2 deprecations of AllenNLP's own amp calls
    (UserWarning, r"pkg_resources(\..*)?"),
    (UserWarning, r"rouge(\..*)?"),
)


def _offline_nltk_download(info_or_id=None, *args, **kwargs) -> bool:
    logger.debug("memplugins: nltk.download(%r) skipped (offline; nothing downloads at run time)", info_or_id)
    return False


def quiet_third_party_imports() -> None:
    """Filters the deprecation warnings that third-party modules raise while they are imported (see the module
    docstring); `import memplugins` calls it first."""
    for category, module in _THIRD_PARTY_IMPORT_WARNINGS:
        warnings.filterwarnings("ignore", category=category, module=module)
    warnings.filterwarnings("ignore", message=r".*pkg_resources is deprecated.*", category=UserWarning)


def main() -> None:
    if "--allow-import-paths" in sys.argv:  # our flag (memplugins.untrusted_archives), not AllenNLP's
        sys.argv.remove("--allow-import-paths")
        os.environ["MEMPLUGINS_ALLOW_IMPORT_PATHS"] = "1"
    import nltk

    nltk.download = _offline_nltk_download  # before AllenNLP imports every plugin module (the module docstring)
    import allennlp.__main__  # noqa: F401  (its import configures logging as the `allennlp` command's does)
    import memplugins  # noqa: F401  (registers everything, applies memplugins.compat)
    from allennlp.commands import main as allennlp_main
    from allennlp.common.util import install_sigterm_handler

    from memplugins.predictors.inputs import InvalidInputError
    from memplugins.readers.errors import MalformedInputError
    from memplugins.untrusted_archives import ArchiveError

    # SIGTERM (a cluster's pre-emption, `kill`) raises SigTermReceived, which `train` answers as `allennlp train`
    # does: "Training interrupted by the user", the best model archived, a non-zero exit
    install_sigterm_handler()
    try:
        allennlp_main(prog="memplugins")
    except (MalformedInputError, ArchiveError, InvalidInputError) as error:  # bad input: the message, no traceback
        print(f"memplugins: error: {error}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    sys.exit(main())
