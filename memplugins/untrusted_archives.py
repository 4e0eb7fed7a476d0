"""
Opening a model archive as untrusted input. Archives are shared files (downloaded, mailed, from a hub), and
AllenNLP 2.10's `load_archive` trusts them three ways: it extracts the tar with `extractall` and no filter (a member
named `../../x`, an absolute path, or a symlink followed by a member through it writes anywhere), it reads
`config.json` with jsonnet (`importstr` reads any local file, `std.extVar` every environment variable), and it builds
whatever the config names, including an import path such as `{"type": "os.system", "command": "..."}`, which
AllenNLP imports and calls.

`load_archive` here replaces AllenNLP's everywhere (`allennlp predict` / `evaluate`, `Predictor.from_path`,
`Model.from_archive`, the `memplugins` command):

* extraction takes regular files and folders with relative names only, through Python's tarfile `data` filter: a
  member outside the folder, an absolute path, a link or a device file is refused before anything is written;
* `config.json` is read as JSON, nothing else;
* while the archive's readers and model are built, a `type` must be a registered name: an import path is refused
  with an error that names the opt-in, `load_archive(..., allow_import_paths=True)`, the `memplugins` command's
  `--allow-import-paths`, or `MEMPLUGINS_ALLOW_IMPORT_PATHS=1` for the `allennlp` command. (A user's own training
  config is not an archive: import paths there keep working.)
* a truncated, empty or non-gzip file is an `ArchiveError` naming the file, not an `EOFError` or `ReadError`.

Weights are loaded by torch's `weights_only` loader (pickled code is refused). Tests: `tests/untrusted_archives_test.py`
(a crafted archive per attack: nothing runs, nothing is written outside the extraction folder).
"""
import contextlib
import contextvars
import gzip
import json
import logging
import os
import shutil
import tarfile
import tempfile
import zlib
from typing import Any, Dict, Iterator, Optional, Union

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.common.params import Params, parse_overrides, with_overrides
from allennlp.common.registrable import Registrable
from allennlp.models import archival

from memplugins.compat.patching import PATCHED, patch

logger = logging.getLogger(__name__)

ALLOW_IMPORT_PATHS_VARIABLE = "MEMPLUGINS_ALLOW_IMPORT_PATHS"
_import_paths_allowed: contextvars.ContextVar = contextvars.ContextVar("memplugins_import_paths_allowed", default=True)


class ArchiveError(ConfigurationError):
    """A model archive that cannot be opened safely, or at all."""


def safe_extract(archive_file: str, directory: str) -> None:
    """Extracts a model archive's regular files and folders into `directory`, refusing anything else."""
    try:
        with tarfile.open(archive_file, "r:*") as archive:
            members = archive.getmembers()  # reads every header first: a truncated file fails before any write
            for member in members:
                if os.path.isabs(member.name) or member.name.startswith(("/", "\\")):
                    raise ArchiveError(f"{archive_file}: member {member.name!r} has an absolute path; the archive is "
                                       "not opened")
                if not (member.isfile() or member.isdir()):
                    kind = "link" if member.issym() or member.islnk() else "special file"
                    raise ArchiveError(f"{archive_file}: member {member.name!r} is a {kind}; a model archive holds "
                                       "only files and folders, so it is not opened")
            if hasattr(tarfile, "data_filter"):
                archive.extractall(directory, members=members, filter="data")
            else:
                _extract_without_filters(archive, archive_file, directory, members)
    except getattr(tarfile, "FilterError", ()) as error:  # () catches nothing where tarfile has no filters
        raise ArchiveError(f"{archive_file}: member {error.tarinfo.name!r} would be written outside the extraction "
                           f"folder ({error}); the archive is not opened") from None
    except (tarfile.ReadError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ArchiveError(f"{archive_file}: not a readable model archive (a gzipped tar that `allennlp train` "
                           f"writes): {type(error).__name__}: {error}") from None


def _extract_without_filters(archive: tarfile.TarFile, archive_file: str, directory: str, members) -> None:
    """Python before 3.11.4 (Debian 12's system Python is 3.11.2) has no extraction filters: what the "data" filter
    refuses among the files and folders left after `safe_extract`'s checks (a path that leaves the folder) is refused
    here by hand, and what it resets (permission bits beyond rwx, the archive's owners) is reset."""
    root = os.path.realpath(directory)
    for member in members:
        target = os.path.realpath(os.path.join(root, member.name))
        if target != root and not target.startswith(root + os.sep):
            raise ArchiveError(f"{archive_file}: member {member.name!r} would be written outside the extraction "
                               "folder; the archive is not opened")
        member.mode = 0o755 if member.isdir() else 0o644
        member.uid, member.gid, member.uname, member.gname = os.getuid(), os.getgid(), "", ""
    archive.extractall(directory, members=members)


def read_archive_config(config_file: str, overrides: Union[str, Dict[str, Any]] = "") -> Params:
    """An archive's `config.json` as plain JSON (no jsonnet: no imports, no environment), with the caller's
    overrides (the caller's own, so AllenNLP's override syntax applies)."""
    try:
        with open(config_file, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ArchiveError(f"{config_file}: an archive's config must be a JSON object ({error})") from None
    if not isinstance(config, dict):
        raise ArchiveError(f"{config_file}: an archive's config must be a JSON object, got {type(config).__name__}")
    if isinstance(overrides, dict):
        overrides = json.dumps(overrides)
    overrides_dict = parse_overrides(overrides)
    return Params(with_overrides(config, overrides_dict) if overrides_dict else config)


@contextlib.contextmanager
def import_paths(allowed: bool) -> Iterator[None]:
    """While the block runs, a `type` that is an import path (not a registered name) is resolved only if
    `allowed`."""
    token = _import_paths_allowed.set(allowed)
    try:
        yield
    finally:
        _import_paths_allowed.reset(token)


def _resolve_registered_only(original):
    def resolve_class_name(cls, name: str):
        if not _import_paths_allowed.get() and name not in Registrable._registry[cls] and "." in name:
            raise ConfigurationError(
                f"'{name}' is an import path, not a registered name for '{cls.__name__}'. A model archive's config "
                "may name only registered types: importing a path runs its code (a config can name any function, "
                "e.g. 'os.system'). If you trust this archive, allow import paths: load_archive(..., "
                "allow_import_paths=True), the memplugins command's --allow-import-paths, or "
                f"{ALLOW_IMPORT_PATHS_VARIABLE}=1 for the allennlp command."
            )
        return original(cls, name)

    return resolve_class_name


def load_archive(
    archive_file: Union[str, os.PathLike],
    cuda_device: int = -1,
    overrides: Union[str, Dict[str, Any]] = "",
    weights_file: Optional[str] = None,
    allow_import_paths: Optional[bool] = None,
) -> archival.Archive:
    """
    AllenNLP's `load_archive`, treating the archive as untrusted (module docstring). `allow_import_paths`: let the
    archive's config name types by import path (default: the environment variable `MEMPLUGINS_ALLOW_IMPORT_PATHS`,
    else no).
    """
    if allow_import_paths is None:
        allow_import_paths = os.environ.get(ALLOW_IMPORT_PATHS_VARIABLE, "").lower() in ("1", "true", "yes")
    try:
        resolved = cached_path(archive_file)
    except FileNotFoundError:
        raise ArchiveError(f"{archive_file}: no such model archive") from None
    tempdir = None
    try:
        if os.path.isdir(resolved):
            serialization_dir = resolved
        else:
            tempdir = serialization_dir = tempfile.mkdtemp()
            safe_extract(resolved, tempdir)
        weights_path = weights_file or archival.get_weights_path(serialization_dir)
        config = read_archive_config(os.path.join(serialization_dir, archival.CONFIG_NAME), overrides)
        with import_paths(allow_import_paths):
            readers = archival._load_dataset_readers(config.duplicate(), serialization_dir)
            model = archival._load_model(config.duplicate(), weights_path, serialization_dir, cuda_device)
        meta_path = os.path.join(serialization_dir, archival.META_NAME)
        meta = archival.Meta.from_path(meta_path) if os.path.exists(meta_path) else None
    finally:
        if tempdir is not None:
            shutil.rmtree(tempdir, ignore_errors=True)
    if meta is not None:
        archival._check_version_compatibility(archive_file, meta)
    return archival.Archive(model=model, config=config, dataset_reader=readers[0],
                            validation_dataset_reader=readers[1], meta=meta)


def apply() -> None:
    original = Registrable.__dict__["resolve_class_name"].__func__
    if not hasattr(original, PATCHED):
        replacement = _resolve_registered_only(original)
        setattr(replacement, PATCHED, original)
        Registrable.resolve_class_name = classmethod(replacement)
    # `from allennlp.models.archival import load_archive` bound it in several modules: rebind them all
    patch(archival, "load_archive", lambda original: load_archive, rebind=True)
