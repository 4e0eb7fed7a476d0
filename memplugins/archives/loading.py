"""
`load_archive` treating the archive as untrusted (the package docstring says what that means), and the patches that
put it, and the bounded extraction, wherever AllenNLP opens an archive.
"""
import contextlib
import contextvars
import json
import logging
import os
import pickle
import shutil
import tempfile
import warnings
import zipfile
from typing import Any, Dict, Iterator, Optional, Union

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.common.params import Params, parse_overrides, with_overrides
from allennlp.common.registrable import Registrable
from allennlp.models import archival
from allennlp.nn import util as nn_util

from memplugins.archives.config import (ALLOW_IMPORT_PATHS_VARIABLE, OPT_IN, check_registered_types,
                                        parse_archive_config)
from memplugins.archives.extraction import ArchiveError, ArchiveLimits, safe_extract
from memplugins.compat.patching import PATCHED, patch

logger = logging.getLogger(__name__)

#: while an archive is being built: whether a `type` may be an import path (the default, True, is AllenNLP's
#: behaviour for a user's own training config)
_import_paths_allowed: contextvars.ContextVar = contextvars.ContextVar("memplugins_import_paths_allowed", default=True)
#: while an archive's weights are read: the archive's name, for the error message
_loading_archive: contextvars.ContextVar = contextvars.ContextVar("memplugins_loading_archive", default=None)


def import_paths_allowed_by_env() -> bool:
    return os.environ.get(ALLOW_IMPORT_PATHS_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def read_archive_config(config_file: str, overrides: Union[str, Dict[str, Any]] = "",
                        allow_import_paths: bool = False, display_name: Optional[str] = None) -> Params:
    """An archive's `config.json` (`memplugins.archives.config`: JSON with comments and trailing commas, nothing
    evaluated, checked for import paths unless allowed), with the caller's overrides (the caller's own, so
    AllenNLP's override syntax applies and they are not checked). `display_name` names the file in errors (e.g.
    `model.tar.gz!config.json` rather than the extraction folder)."""
    display_name = display_name or config_file
    try:
        with open(config_file, "rb") as handle:
            text = handle.read().decode("utf-8-sig")
    except FileNotFoundError:
        raise ArchiveError(f"{display_name}: the archive has no config.json") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ArchiveError(f"{display_name}: an archive's config must be UTF-8 JSON ({error})") from None
    config = parse_archive_config(text, display_name)
    if not allow_import_paths:
        check_registered_types(config, display_name)
    if isinstance(overrides, dict):
        overrides = json.dumps(overrides)
    overrides_dict = parse_overrides(overrides)
    return Params(with_overrides(config, overrides_dict) if overrides_dict else config)


@contextlib.contextmanager
def import_paths(allowed: bool) -> Iterator[None]:
    """While the block runs, a `type` that is an import path (not a registered name) is resolved only if
    `allowed` (a second line of defence behind `check_registered_types`, for what an archive builds)."""
    token = _import_paths_allowed.set(allowed)
    try:
        yield
    finally:
        _import_paths_allowed.reset(token)


def _resolve_registered_only(original):
    def resolve_class_name(cls, name: str):
        if not _import_paths_allowed.get() and name not in Registrable._registry[cls] and "." in name:
            raise ArchiveError(f"'{name}' is an import path, not a registered name for '{cls.__name__}'. A model "
                               "archive's config may name only registered types: importing a path runs its code (a "
                               f"config can name any function, e.g. 'os.system'). {OPT_IN}")
        return original(cls, name)

    return resolve_class_name


def _naming_the_weights(original):
    """`read_state_dict` that, while an archive loads, turns an unreadable weights file into an `ArchiveError` (a
    pickle that would run code is refused by torch's `weights_only` loader; a truncated file fails to unzip)."""

    def read_state_dict(path, *args, **kwargs):
        archive = _loading_archive.get()
        if archive is None:
            return original(path, *args, **kwargs)
        try:
            with warnings.catch_warnings():  # torch's note on the pickle protocol of a file it is about to refuse
                warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
                return original(path, *args, **kwargs)
        except FileNotFoundError:
            raise ArchiveError(f"{archive}: the archive has no weights file ({os.path.basename(path)})") from None
        except pickle.UnpicklingError as error:
            lines = [line.strip() for line in str(error).splitlines() if "Unsupported" in line or "GLOBAL" in line]
            detail = f" ({lines[0]})" if lines else ""
            raise ArchiveError(f"{archive}: member {os.path.basename(path)!r} holds pickled objects other than "
                               f"tensors{detail}; it was not loaded, since unpickling them could run code") from None
        except (RuntimeError, EOFError, ValueError, zipfile.BadZipFile, OSError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ArchiveError(f"{archive}: member {os.path.basename(path)!r} is not a readable state dict "
                               f"({type(error).__name__}: {first})") from None

    return read_state_dict


def load_archive(
    archive_file: Union[str, os.PathLike],
    cuda_device: int = -1,
    overrides: Union[str, Dict[str, Any]] = "",
    weights_file: Optional[str] = None,
    allow_import_paths: Optional[bool] = None,
    limits: Optional[ArchiveLimits] = None,
) -> archival.Archive:
    """
    AllenNLP's `load_archive`, treating the archive as untrusted (`memplugins.archives`).

    `allow_import_paths`: let the archive's config name types by import path (default: the environment variable
    `MEMPLUGINS_ALLOW_IMPORT_PATHS`, else no). `limits`: what extraction may write (default
    `ArchiveLimits.from_env()`).
    """
    if allow_import_paths is None:
        allow_import_paths = import_paths_allowed_by_env()
    name = os.fspath(archive_file)
    try:
        resolved = cached_path(archive_file)
    except FileNotFoundError:
        raise ArchiveError(f"{name}: no such model archive") from None
    tempdir = None
    try:
        if os.path.isdir(resolved):
            serialization_dir = resolved
        else:
            tempdir = serialization_dir = tempfile.mkdtemp(prefix="memplugins-archive-")
            safe_extract(resolved, tempdir, limits)
        weights_path = weights_file or archival.get_weights_path(serialization_dir)
        config = read_archive_config(os.path.join(serialization_dir, archival.CONFIG_NAME), overrides,
                                     allow_import_paths, display_name=f"{name}!{archival.CONFIG_NAME}")
        with import_paths(allow_import_paths):
            archive_token = _loading_archive.set(name)
            try:
                readers = archival._load_dataset_readers(config.duplicate(), serialization_dir)
                model = archival._load_model(config.duplicate(), weights_path, serialization_dir, cuda_device)
            except UnicodeDecodeError as error:
                raise ArchiveError(f"{name}: a vocabulary or other text member is not UTF-8 ({error})") from None
            finally:
                _loading_archive.reset(archive_token)
        meta = _read_meta(os.path.join(serialization_dir, archival.META_NAME), name)
    finally:
        if tempdir is not None:
            shutil.rmtree(tempdir, ignore_errors=True)
    if meta is not None:
        archival._check_version_compatibility(archive_file, meta)
    return archival.Archive(model=model, config=config, dataset_reader=readers[0],
                            validation_dataset_reader=readers[1], meta=meta)


def _read_meta(meta_path: str, name: str) -> Optional[archival.Meta]:
    if not os.path.exists(meta_path):
        return None
    try:
        return archival.Meta.from_path(meta_path)
    except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError) as error:
        raise ArchiveError(f"{name}: member 'meta.json' is not AllenNLP's meta record ({error})") from None


@contextlib.contextmanager
def _bounded_extracted_archive(resolved_archive_file, cleanup=True):
    """AllenNLP's `archival.extracted_archive` (used by its pretrained-model initializer), extracting as
    `safe_extract` does."""
    tempdir = tempfile.mkdtemp(prefix="memplugins-archive-")
    try:
        safe_extract(resolved_archive_file, tempdir)
        yield tempdir
    except BaseException:
        shutil.rmtree(tempdir, ignore_errors=True)
        raise
    if cleanup:
        shutil.rmtree(tempdir, ignore_errors=True)


def apply() -> None:
    original = Registrable.__dict__["resolve_class_name"].__func__
    if not hasattr(original, PATCHED):
        replacement = _resolve_registered_only(original)
        setattr(replacement, PATCHED, original)
        Registrable.resolve_class_name = classmethod(replacement)
    # `from allennlp.models.archival import load_archive` bound it in several modules: rebind them all
    patch(archival, "load_archive", lambda original: load_archive, rebind=True)
    patch(archival, "extracted_archive", lambda original: _bounded_extracted_archive, rebind=True)
    patch(nn_util, "read_state_dict", _naming_the_weights)
    from memplugins.archives import cached_extraction

    cached_extraction.apply()


__all__ = ["ArchiveError", "ArchiveLimits", "ConfigurationError", "import_paths", "load_archive",
           "read_archive_config", "safe_extract"]
