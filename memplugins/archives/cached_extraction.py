"""
`cached_path(..., extract_archive=True)` under the same rules as a model archive. AllenNLP extracts through it
where a command is given an archive (`allennlp diff`, `Vocabulary.from_files` on a `.tar.gz`, the sharded reader).
The cached-path library checks a tar's member types but compares paths as strings (a member `../pathtestX/f`
passes) and bounds nothing, and extracts a zip as it is. Here its tar check becomes `safe_extract`'s member check
plus `ArchiveLimits` on the headers (no links at all: a data archive needs none), and a zip's central directory is
checked the same way before anything is written.
"""
import os
import tarfile
import zipfile

from memplugins.archives.extraction import ArchiveError, ArchiveLimits, _check_member
from memplugins.compat.patching import patch

_HYPOTHETICAL_ROOT = os.path.realpath(os.path.join(os.sep, "memplugins-extraction-root"))


def _check_sizes(name: str, sizes, limits: ArchiveLimits) -> None:
    total = 0
    for count, (member, size) in enumerate(sizes, start=1):
        if count > limits.max_members:
            raise ArchiveError(f"{name}: more than max_members={limits.max_members:,} members; not extracted "
                               f"({limits.hint()})")
        if size > limits.max_member_bytes:
            raise ArchiveError(f"{name}: member {member!r} is {size:,} bytes, over max_member_bytes="
                               f"{limits.max_member_bytes:,}; not extracted ({limits.hint()})")
        total += size
        if total > limits.max_total_bytes:
            raise ArchiveError(f"{name}: members add up to more than max_total_bytes={limits.max_total_bytes:,}; "
                               f"not extracted ({limits.hint()})")


def check_tarfile(tar_file: tarfile.TarFile) -> None:
    name = str(tar_file.name)
    limits = ArchiveLimits.from_env()

    def members():
        for member in tar_file:
            _check_member(member, name, _HYPOTHETICAL_ROOT)
            yield member.name, member.size

    _check_sizes(name, members(), limits)


class CheckedZipFile(zipfile.ZipFile):
    def extractall(self, path=None, members=None, pwd=None):
        name = str(self.filename)
        infos = self.infolist()
        for info in infos:
            target = os.path.realpath(os.path.join(_HYPOTHETICAL_ROOT, info.filename))
            if os.path.isabs(info.filename) or not target.startswith(_HYPOTHETICAL_ROOT + os.sep):
                raise ArchiveError(f"{name}: member {info.filename!r} would be written outside the extraction folder")
            if (info.external_attr >> 16) & 0o170000 not in (0, 0o100000, 0o040000):
                raise ArchiveError(f"{name}: member {info.filename!r} is a link or special file; not extracted")
        _check_sizes(name, ((info.filename, info.file_size) for info in infos), ArchiveLimits.from_env())
        return super().extractall(path, members, pwd)


def apply() -> None:
    try:
        from cached_path import _cached_path
    except ImportError:  # another cached-path layout: nothing of it to patch
        return
    if hasattr(_cached_path, "check_tarfile"):
        patch(_cached_path, "check_tarfile", lambda original: check_tarfile)
    if getattr(_cached_path, "ZipFile", None) is zipfile.ZipFile:
        _cached_path.ZipFile = CheckedZipFile
