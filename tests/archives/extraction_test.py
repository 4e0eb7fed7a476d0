"""
Extraction of an untrusted archive (`memplugins.archives.extraction`): a crafted archive per attack is refused with
an `ArchiveError` naming the archive and member, nothing is written outside the extraction folder, and the partial
folder is gone afterwards; the limits are checked on each member's header, before its bytes are written.
"""
import io
import os
import tarfile
import zipfile

import pytest
from allennlp.common.file_utils import cached_path
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from memplugins.archives import ArchiveError, ArchiveLimits, safe_extract
from memplugins.archives.extraction import LIMIT_VARIABLES
from tests.archives.crafting import file_member, members_of, stray_files, write_archive


def leftovers(sandbox):
    """What stayed in the extraction folder (tempfile's, `sandbox/tmp`) after loading."""
    return list((sandbox / "tmp").iterdir())


@pytest.mark.parametrize("name", ["../outside.txt", "../../outside.txt", "weights/../../outside.txt"])
def test_members_outside_the_folder_are_refused(good_archive, sandbox, name):
    archive = write_archive(sandbox / "traversal.tar.gz", members_of(good_archive), [file_member(name)])
    with pytest.raises(ArchiveError, match=f"traversal.tar.gz: member '{name}' would be written outside"):
        load_archive(str(archive))
    assert stray_files(sandbox) == [] and leftovers(sandbox) == []


def test_an_absolute_member_is_refused(good_archive, sandbox):
    target = sandbox / "absolute" / "x"
    archive = write_archive(sandbox / "absolute.tar.gz", members_of(good_archive), [file_member(str(target))])
    with pytest.raises(ArchiveError, match="has an absolute path"):
        load_archive(str(archive))
    assert not target.exists() and leftovers(sandbox) == []


def test_a_symlink_and_a_member_through_it_are_refused(good_archive, sandbox):
    outside = sandbox / "outside"
    outside.mkdir()
    link = tarfile.TarInfo("link")
    link.type, link.linkname = tarfile.SYMTYPE, str(outside)
    archive = write_archive(sandbox / "symlink.tar.gz", members_of(good_archive), [(link, None), file_member("link/x")])
    with pytest.raises(ArchiveError, match="member 'link' is a link"):
        load_archive(str(archive))
    assert list(outside.iterdir()) == [] and leftovers(sandbox) == []


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE, tarfile.LNKTYPE])
def test_devices_fifos_and_hard_links_are_refused(good_archive, sandbox, kind):
    special = tarfile.TarInfo("special")
    special.type, special.linkname = kind, "config.json"
    archive = write_archive(sandbox / "special.tar.gz", members_of(good_archive), [(special, None)])
    with pytest.raises(ArchiveError, match="member 'special' is a (special file|link)"):
        load_archive(str(archive))
    assert leftovers(sandbox) == []


def test_a_member_named_twice_is_refused(good_archive, sandbox):
    archive = write_archive(sandbox / "twice.tar.gz", members_of(good_archive), [file_member("config.json", b"{}")])
    with pytest.raises(ArchiveError, match="'config.json' clashes with an earlier member"):
        load_archive(str(archive))


@pytest.mark.parametrize("damage", ["truncated", "empty", "not gzip", "missing", "no members"])
def test_a_damaged_file_is_a_clear_error(good_archive, sandbox, damage):
    path = sandbox / "model.tar.gz"
    data = good_archive.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "not gzip":
        path.write_text("just some text\n")
    elif damage == "no members":
        write_archive(path, [])
    with pytest.raises(ArchiveError, match="model.tar.gz"):
        load_archive(str(path))
    assert leftovers(sandbox) == []


def test_the_limits_are_checked_before_a_members_bytes_are_written(good_archive, sandbox, monkeypatch):
    """A member over the limit is refused on its header: the stream past it is never read (here it holds no
    data at all), and nothing stays behind."""
    members = members_of(good_archive)
    huge = tarfile.TarInfo("zeros")
    huge.size = 5 * 1024 ** 3
    path = sandbox / "bomb.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
        tar.fileobj.write(huge.tobuf(tarfile.GNU_FORMAT))  # the header alone: 5 GB announced, nothing after it
    with pytest.raises(ArchiveError, match="member 'zeros' is 5,368,709,120 bytes, over max_member_bytes"):
        load_archive(str(path))
    assert leftovers(sandbox) == []


@pytest.mark.parametrize("limit, extra, message", [
    ("max_members", [file_member(f"junk/{i}") for i in range(30)], "more than max_members=20 members"),
    ("max_member_bytes", [file_member("big", b"0" * 300_000)], "member 'big' is 300,000 bytes, over max_member_bytes"),
    ("max_total_bytes", [file_member(f"part{i}", b"0" * 100_000) for i in range(4)], "more than max_total_bytes"),
])
def test_each_limit_refuses_and_can_be_raised(good_archive, sandbox, monkeypatch, limit, extra, message):
    archive = write_archive(sandbox / "over.tar.gz", members_of(good_archive), extra)
    small = {"max_members": 20, "max_member_bytes": 200_000, "max_total_bytes": 350_000}
    monkeypatch.setenv(LIMIT_VARIABLES[limit], str(small[limit]))
    with pytest.raises(ArchiveError, match=f"{message}.*{LIMIT_VARIABLES[limit]}"):
        load_archive(str(archive))
    assert leftovers(sandbox) == []
    assert load_archive(str(archive), limits=ArchiveLimits(max_members=100)).model is not None  # the keyword
    monkeypatch.setenv(LIMIT_VARIABLES[limit], "1G" if limit != "max_members" else "100")
    assert load_archive(str(archive)).model is not None  # the variable, raised


def test_the_decompressed_stream_is_bounded_too(good_archive, sandbox):
    """Headers and padding count: 2,000 empty members are 1 MB of headers though their sizes add up to 0."""
    archive = write_archive(sandbox / "headers.tar.gz", members_of(good_archive),
                            [file_member(f"empty/{i}", b"") for i in range(2000)])
    with pytest.raises(ArchiveError, match="decompresses to more than max_total_bytes=600,000"):
        safe_extract(str(archive), str(sandbox / "tmp"), ArchiveLimits(max_total_bytes=600_000))


@pytest.mark.parametrize("mode", ["w", "w:bz2", "w:xz"])
def test_plain_bzip2_and_xz_tars_load(good_archive, sandbox, mode):
    archive = write_archive(sandbox / "other.tar", members_of(good_archive), mode=mode)
    assert type(load_archive(str(archive)).model).__name__ == "RteAttention"


def test_a_good_archive_still_loads_and_predicts(good_archive, sandbox):
    predictor = Predictor.from_path(str(good_archive))
    output = predictor.predict_json({"premise": "A man plays.", "hypothesis": "A person plays."})
    assert set(output["label_probs"]) and stray_files(sandbox) == [] and leftovers(sandbox) == []


def test_cached_path_extraction_follows_the_same_rules(good_archive, sandbox, monkeypatch):
    """`cached_path(..., extract_archive=True)` (AllenNLP's `diff`, `Vocabulary.from_files` on a `.tar.gz`): the
    cached-path library compared paths as strings (`../pathtestX/` passed) and bounded nothing."""
    cache = sandbox / "cache"
    sibling = write_archive(sandbox / "sibling.tar.gz", members_of(good_archive), [file_member("../sibling/x")])
    with pytest.raises(ArchiveError, match="outside the extraction folder"):
        cached_path(str(sibling), cache_dir=str(cache), extract_archive=True)
    monkeypatch.setenv(LIMIT_VARIABLES["max_member_bytes"], "1000")
    with pytest.raises(ArchiveError, match="over max_member_bytes=1,000"):
        cached_path(str(good_archive), cache_dir=str(cache), extract_archive=True)
    monkeypatch.delenv(LIMIT_VARIABLES["max_member_bytes"])
    zipped = sandbox / "bad.zip"
    with zipfile.ZipFile(zipped, "w") as handle:
        handle.writestr("ok.txt", "x")
        info = zipfile.ZipInfo("link")
        info.external_attr = 0o120777 << 16  # a symlink
        handle.writestr(info, "/etc/passwd")
    with pytest.raises(ArchiveError, match="'link' is a link or special file"):
        cached_path(str(zipped), cache_dir=str(cache), extract_archive=True)
    extracted = cached_path(str(good_archive), cache_dir=str(cache), extract_archive=True)
    assert os.path.exists(os.path.join(extracted, "config.json"))
    assert not (sandbox / "sibling").exists()


@pytest.mark.slow
def test_a_real_5_gb_bomb_is_refused_at_once(good_archive, sandbox):
    """The attack as it was reported: 5 GB of zeros compressed to about 23 MB (writing it takes ~10 s)."""
    class Zeros(io.RawIOBase):
        def __init__(self, size):
            self.left = size

        def readable(self):
            return True

        def readinto(self, buffer):
            count = min(len(buffer), self.left)
            buffer[:count] = bytes(count)
            self.left -= count
            return count

    path = sandbox / "bomb.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for member, data in members_of(good_archive):
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
        zeros = tarfile.TarInfo("zeros")
        zeros.size = 5 * 1024 ** 3
        tar.addfile(zeros, io.BufferedReader(Zeros(zeros.size), 1 << 20))
    with pytest.raises(ArchiveError, match="'zeros' is 5,368,709,120 bytes"):
        load_archive(str(path))
    assert leftovers(sandbox) == []
