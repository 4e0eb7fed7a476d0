"""
memplugins.untrusted_archives: a crafted model archive per attack. Each is refused with a clear error, nothing it
names runs, and nothing is written outside the extraction folder.
"""
import io
import json
import subprocess
import sys
import tarfile
import tempfile

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from memplugins.untrusted_archives import ArchiveError
from tests.conftest import NO_NETWORK_PATH, REPO_ROOT, TEST_FIXTURES


@pytest.fixture(scope="module")
def good_archive(tmp_path_factory):
    out = tmp_path_factory.mktemp("trained")
    train_model_from_file(str(TEST_FIXTURES / "rte_attention.jsonnet"), str(out / "run"), overrides='{"trainer.num_epochs": 1}')
    return out / "run" / "model.tar.gz"


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """Extraction goes to `tmp_path/tmp/...` (tempfile's folder), so a write outside it lands in `tmp_path`."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path


def members_of(archive):
    with tarfile.open(archive) as tar:
        return [(member, tar.extractfile(member).read() if member.isfile() else None) for member in tar.getmembers()]


def write_archive(path, members, extra=()):
    """A gzipped tar of `members` ((TarInfo, bytes or None)) plus `extra` ones."""
    with tarfile.open(path, "w:gz") as tar:
        for member, data in list(members) + list(extra):
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return path


def with_config(members, edit):
    result = []
    for member, data in members:
        if member.name.endswith("config.json"):
            config = edit(json.loads(data))
            data = (config if isinstance(config, str) else json.dumps(config)).encode()
            member = tarfile.TarInfo(member.name)
            member.size = len(data)
        result.append((member, data))
    return result


def file_member(name, data=b"x"):
    member = tarfile.TarInfo(name)
    member.size = len(data)
    return member, data


def stray_files(root):
    """Files anywhere under `root` except inside the trained-model and extraction folders."""
    return [p for p in root.rglob("*") if p.is_file() and "tmp" not in p.relative_to(root).parts[:1]
            and p.suffix != ".gz"]


def test_an_import_path_in_the_config_runs_nothing(good_archive, sandbox):
    marker = sandbox / "pwned"
    members = with_config(members_of(good_archive), lambda config: {
        **config, "dataset_reader": {"type": "os.system", "command": f"touch {marker}"}})
    archive = write_archive(sandbox / "evil.tar.gz", members)
    for load in (lambda: load_archive(str(archive)), lambda: Predictor.from_path(str(archive))):
        with pytest.raises(ConfigurationError, match="import path.*allow_import_paths=True.*--allow-import-paths"):
            load()
    assert not marker.exists()


def test_the_cli_refuses_it_too(good_archive, sandbox):
    marker = sandbox / "pwned"
    members = with_config(members_of(good_archive), lambda config: {
        **config, "dataset_reader": {"type": "os.system", "command": f"touch {marker}"}})
    archive = write_archive(sandbox / "evil.tar.gz", members)
    command = [sys.executable, "-m", "memplugins", "predict", str(archive), str(REPO_ROOT / "fixtures/snli/tiny.jsonl")]
    env = {"PYTHONPATH": f"{NO_NETWORK_PATH}:{REPO_ROOT}", "PATH": "/usr/bin:/bin", "HOME": str(sandbox)}
    finished = subprocess.run(command, capture_output=True, text=True, env=env, cwd=sandbox, timeout=300)
    assert finished.returncode != 0 and "--allow-import-paths" in finished.stderr
    assert not marker.exists()


def test_import_paths_load_when_the_user_allows_them(good_archive, sandbox):
    members = with_config(members_of(good_archive), lambda config: {
        **config, "model": {**config["model"], "type": "memplugins.models.rte_attention.RteAttention"}})
    archive = write_archive(sandbox / "trusted.tar.gz", members)
    with pytest.raises(ConfigurationError, match="import path"):
        load_archive(str(archive))
    assert type(load_archive(str(archive), allow_import_paths=True).model).__name__ == "RteAttention"


@pytest.fixture(params=["filters", "no filters"])
def extraction(request, monkeypatch):
    """With tarfile's extraction filters, and as on Python before 3.11.4, which has none (Debian 12's 3.11.2)."""
    if request.param == "no filters":
        monkeypatch.delattr(tarfile, "data_filter")
        monkeypatch.delattr(tarfile, "FilterError")
    return request.param


@pytest.mark.parametrize("name", ["../outside.txt", "../../outside.txt", "weights/../../outside.txt"])
def test_members_outside_the_folder_are_refused(good_archive, sandbox, name, extraction):
    archive = write_archive(sandbox / "traversal.tar.gz", members_of(good_archive), [file_member(name)])
    with pytest.raises(ArchiveError, match="outside the extraction folder"):
        load_archive(str(archive))
    assert stray_files(sandbox) == []


def test_an_absolute_member_is_refused(good_archive, sandbox):
    target = sandbox / "absolute" / "x"
    archive = write_archive(sandbox / "absolute.tar.gz", members_of(good_archive), [file_member(str(target))])
    with pytest.raises(ArchiveError):
        load_archive(str(archive))
    assert not target.exists()


def test_a_symlink_and_a_member_through_it_are_refused(good_archive, sandbox):
    outside = sandbox / "outside"
    outside.mkdir()
    link = tarfile.TarInfo("link")
    link.type, link.linkname = tarfile.SYMTYPE, str(outside)
    archive = write_archive(sandbox / "symlink.tar.gz", members_of(good_archive), [(link, None), file_member("link/x")])
    with pytest.raises(ArchiveError, match="is a link"):
        load_archive(str(archive))
    assert list(outside.iterdir()) == []


def test_a_device_file_is_refused(good_archive, sandbox):
    device = tarfile.TarInfo("null")
    device.type, device.devmajor, device.devminor = tarfile.CHRTYPE, 1, 3
    archive = write_archive(sandbox / "device.tar.gz", members_of(good_archive), [(device, None)])
    with pytest.raises(ArchiveError, match="special file"):
        load_archive(str(archive))


def test_a_jsonnet_config_is_not_evaluated(good_archive, sandbox):
    secret = sandbox / "secret.txt"
    secret.write_text("do not read")
    members = with_config(members_of(good_archive), lambda config: (
        json.dumps(config)[:-1] + f', "leak": importstr "{secret}", "home": std.extVar("HOME")' + "}"))
    archive = write_archive(sandbox / "jsonnet.tar.gz", members)
    with pytest.raises(ArchiveError, match="must be a JSON object"):
        load_archive(str(archive))


@pytest.mark.parametrize("damage", ["truncated", "empty", "not gzip", "missing"])
def test_a_damaged_file_is_a_clear_error(good_archive, sandbox, damage):
    path = sandbox / "model.tar.gz"
    data = good_archive.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "not gzip":
        path.write_text("just some text\n")
    with pytest.raises(ArchiveError, match="model.tar.gz"):
        load_archive(str(path))


def test_a_good_archive_still_loads_and_predicts(good_archive, sandbox, extraction):
    predictor = Predictor.from_path(str(good_archive))
    output = predictor.predict_json({"premise": "A man plays.", "hypothesis": "A person plays."})
    assert set(output["label_probs"]) and stray_files(sandbox) == []
