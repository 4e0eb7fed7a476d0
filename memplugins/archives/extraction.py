"""
Bounded, filtered extraction of a model archive (a tar, gzipped as `allennlp train` writes it, or bzip2 / xz / plain).

The archive is read as one stream, member by member, and every limit is checked on a member's header before any of
its bytes are written:

* regular files and folders with relative names inside the target folder only (no `..`, absolute paths, links,
  devices, FIFOs or sparse files);
* at most `ArchiveLimits.max_members` members, no member over `max_member_bytes`, and at most `max_total_bytes`
  in all. The decompressed stream itself is also counted (the tar headers, pax records and padding included), so a
  header that understates nothing can still not make the decompressor run past the total: a gzip bomb stops at the
  limit, not at the disk's end.

A refusal is an `ArchiveError` naming the archive and the member; the caller removes the partial folder
(`load_archive` does). The defaults are sized for real archives (a 300d SNLI model with its vocabulary is a few
hundred MB, a dozen members) and can be raised per call or by environment variable (`ArchiveLimits.from_env`).
"""
import gzip
import lzma
import os
import tarfile
import zlib
from dataclasses import dataclass
from typing import IO, Optional

from allennlp.common.checks import ConfigurationError

from memplugins.readers.errors import open_decompressed

GIB = 1024 ** 3
#: environment variables that raise (or lower) the limits for every archive opened in the process
LIMIT_VARIABLES = {
    "max_total_bytes": "MEMPLUGINS_ARCHIVE_MAX_BYTES",
    "max_member_bytes": "MEMPLUGINS_ARCHIVE_MAX_MEMBER_BYTES",
    "max_members": "MEMPLUGINS_ARCHIVE_MAX_MEMBERS",
}
_CHUNK = 1 << 20


class ArchiveError(ConfigurationError):
    """A model archive that cannot be opened safely, or at all (the message names the archive and member)."""


@dataclass(frozen=True)
class ArchiveLimits:
    """
    What extracting one archive may write.

    # Parameters

    max_total_bytes : `int`, optional (default = `4 GiB`)
        The decompressed size of the whole archive (members, headers and padding).
    max_member_bytes : `int`, optional (default = `2 GiB`)
        One member's size (the weights file is the largest member of a model archive).
    max_members : `int`, optional (default = `10,000`)
        Members, folders included (a model archive has a dozen: config, weights, meta, one file per vocabulary
        namespace).
    """

    max_total_bytes: int = 4 * GIB
    max_member_bytes: int = 2 * GIB
    max_members: int = 10_000

    @classmethod
    def from_env(cls) -> "ArchiveLimits":
        """The defaults, each replaced by its variable in `LIMIT_VARIABLES` where that is set (a whole number of
        bytes or members; `4G`, `500M` and `64K` are accepted for sizes)."""
        values = {}
        for field, variable in LIMIT_VARIABLES.items():
            text = os.environ.get(variable, "").strip()
            if text:
                values[field] = _parse_size(text, variable)
        return cls(**values)

    def hint(self) -> str:
        return ("if you trust this archive, raise the limit: load_archive(..., limits=ArchiveLimits(...)) or "
                + ", ".join(f"{variable}" for variable in LIMIT_VARIABLES.values()))


def _parse_size(text: str, variable: str) -> int:
    units = {"K": 1024, "M": 1024 ** 2, "G": GIB, "T": 1024 * GIB}
    scale = units.get(text[-1].upper(), 1)
    digits = text[:-1] if text[-1].upper() in units else text
    if not digits.isdigit() or not digits.isascii():
        raise ConfigurationError(f"{variable}={text!r}: expected a whole number, optionally with K, M, G or T")
    return int(digits) * scale


class _CountingReader:
    """A decompressed stream that refuses to yield more than `limit` bytes in all."""

    def __init__(self, stream: IO[bytes], limit: int, archive_file: str, limits: ArchiveLimits) -> None:
        self._stream, self._limit, self._archive_file, self._limits = stream, limit, archive_file, limits
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self._limit - self.count + 1
        data = self._stream.read(min(size, self._limit - self.count + 1))
        self.count += len(data)
        if self.count > self._limit:
            raise ArchiveError(f"{self._archive_file}: decompresses to more than max_total_bytes="
                               f"{self._limits.max_total_bytes:,} bytes; the archive is not opened ({self._limits.hint()})")
        return data


def _check_member(member: tarfile.TarInfo, archive_file: str, root: str) -> None:
    name = member.name
    if os.path.isabs(name) or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"{archive_file}: member {name!r} has an absolute path; the archive is not opened")
    if not (member.isreg() or member.isdir()) or member.issparse():
        kind = "link" if member.issym() or member.islnk() else "special file"
        raise ArchiveError(f"{archive_file}: member {name!r} is a {kind}; a model archive holds only files and "
                           "folders, so it is not opened")
    target = os.path.realpath(os.path.join(root, name))
    if target != root and not target.startswith(root + os.sep):
        raise ArchiveError(f"{archive_file}: member {name!r} would be written outside the extraction folder; the "
                           "archive is not opened")


def _write_member(archive: tarfile.TarFile, member: tarfile.TarInfo, root: str) -> None:
    target = os.path.join(root, member.name)
    if member.isdir():
        os.makedirs(target, mode=0o755, exist_ok=True)
        return
    os.makedirs(os.path.dirname(target) or root, mode=0o755, exist_ok=True)
    source = archive.extractfile(member)
    # O_EXCL|O_NOFOLLOW: never through a link, never over a file an earlier member wrote
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(descriptor, "wb") as output:
        remaining = member.size
        while remaining:
            chunk = source.read(min(_CHUNK, remaining))
            if not chunk:
                raise EOFError(f"member {member.name!r} ends early")
            output.write(chunk)
            remaining -= len(chunk)


def safe_extract(archive_file: str, directory: str, limits: Optional[ArchiveLimits] = None) -> None:
    """Extracts a model archive's regular files and folders into `directory` (module docstring), refusing anything
    else with an `ArchiveError`. The caller removes `directory` on a refusal."""
    limits = limits or ArchiveLimits.from_env()
    root = os.path.realpath(directory)
    members = written = 0
    try:
        with open_decompressed(archive_file) as raw:  # gzip, bzip2, xz or plain, by magic
            counted = _CountingReader(raw, limits.max_total_bytes, archive_file, limits)
            with tarfile.open(fileobj=counted, mode="r|") as archive:  # a stream: headers read as they come
                for member in archive:
                    members += 1
                    if members > limits.max_members:
                        raise ArchiveError(f"{archive_file}: more than max_members={limits.max_members:,} members; "
                                           f"the archive is not opened ({limits.hint()})")
                    _check_member(member, archive_file, root)
                    if member.size > limits.max_member_bytes:
                        raise ArchiveError(f"{archive_file}: member {member.name!r} is {member.size:,} bytes, over "
                                           f"max_member_bytes={limits.max_member_bytes:,}; the archive is not opened "
                                           f"({limits.hint()})")
                    written += member.size
                    if written > limits.max_total_bytes:
                        raise ArchiveError(f"{archive_file}: members add up to more than max_total_bytes="
                                           f"{limits.max_total_bytes:,} bytes (at {member.name!r}); the archive is not "
                                           f"opened ({limits.hint()})")
                    try:
                        _write_member(archive, member, root)
                    except (FileExistsError, IsADirectoryError, NotADirectoryError):
                        raise ArchiveError(f"{archive_file}: member {member.name!r} clashes with an earlier member "
                                           "(the same name twice, or a file and a folder of one name); the archive "
                                           "is not opened") from None
                    except OSError as error:  # the disk, not the archive (full, read-only)
                        raise ArchiveError(f"{archive_file}: could not extract member {member.name!r} into "
                                           f"{directory}: {error.strerror or error}") from None
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError, lzma.LZMAError) as error:
        if isinstance(error, (FileNotFoundError, PermissionError)) and getattr(error, "filename", None) == archive_file:
            raise ArchiveError(f"{archive_file}: cannot be read ({error.strerror})") from None
        raise ArchiveError(f"{archive_file}: not a readable model archive (a gzipped tar that `allennlp train` "
                           f"writes): {type(error).__name__}: {error}") from None
    if members == 0:
        raise ArchiveError(f"{archive_file}: an empty archive; a model archive holds config.json and weights")
