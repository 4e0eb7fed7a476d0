"""
Opening a model archive as untrusted input. Archives are shared files (downloaded, mailed, from a hub), and
AllenNLP 2.10's `load_archive` trusts them four ways: it extracts the tar with `extractall` and no filter or bound
(a member named `../../x`, an absolute path, a symlink followed by a member through it, or a 5 GB member of zeros
compressed to a few MB writes anywhere, or fills the disk), it reads `config.json` with jsonnet (`importstr` reads
any local file, `std.extVar` every environment variable), it builds whatever the config names, including an import
path such as `{"type": "os.system", "command": "..."}`, which AllenNLP imports and calls, and its commands build
more from the config after loading (`evaluate`'s data loader, batch sampler and `evaluation` block).

`load_archive` here replaces AllenNLP's everywhere (`allennlp predict` / `evaluate` / `checklist`,
`Predictor.from_path`, `Model.from_archive`, the `memplugins` command):

* extraction (`extraction.py`) reads the tar as a stream and takes regular files and folders with relative names
  only, within `ArchiveLimits` (members, one member's size, the total), each checked on the member's header before
  its bytes are written; the partial folder is removed on refusal. AllenNLP's other extraction helpers
  (`archival.extracted_archive`, `cached_path(extract_archive=True)`) apply the same rules
  (`cached_extraction.py`);
* `config.json` (`config.py`) is read as JSON with comments and trailing commas, as AllenNLP-era archives are
  written, never evaluated; then, once, over the whole config, every `type` must be a registered name: an import path
  anywhere is refused when the archive is opened, so no later use of `archive.config` can build it. The opt-in is
  `load_archive(..., allow_import_paths=True)`, the `memplugins` command's `--allow-import-paths`, or
  `MEMPLUGINS_ALLOW_IMPORT_PATHS=1`. (A user's own training config is not an archive: import paths there keep
  working.) While the archive's readers and model are built, a `type` that is an import path is refused a second
  time, at AllenNLP's resolver;
* weights are loaded by torch's `weights_only` loader: a pickle that would run code, a truncated or missing weights
  file, a vocabulary that is not UTF-8, a bad `meta.json`: each is an `ArchiveError` naming the archive and member.

Every refusal is an `ArchiveError` (a `ConfigurationError`), which the `memplugins` command prints without a
traceback (exit status 2). Tests: `tests/archives/`.
"""
from memplugins.archives.config import ALLOW_IMPORT_PATHS_VARIABLE, MAX_DEPTH, check_registered_types
from memplugins.archives.extraction import LIMIT_VARIABLES, ArchiveError, ArchiveLimits, safe_extract
from memplugins.archives.loading import apply, import_paths, load_archive, read_archive_config

__all__ = ["ALLOW_IMPORT_PATHS_VARIABLE", "LIMIT_VARIABLES", "MAX_DEPTH", "ArchiveError", "ArchiveLimits", "apply",
           "check_registered_types", "import_paths", "load_archive", "read_archive_config", "safe_extract"]
