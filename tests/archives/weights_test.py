"""
An archive's weights (`memplugins.archives.loading`): torch's `weights_only` loader refuses a pickle that would run
code, and that refusal, a truncated file and a missing one are each an `ArchiveError` naming the archive and member
(not torch's advice to retry with `weights_only=False`).
"""
import os
import pickle

import pytest
import torch
from allennlp.models.archival import load_archive

from memplugins.archives import ArchiveError
from tests.archives.crafting import members_of, replaced, write_archive


class Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_pickle_payload_runs_nothing_and_is_named(good_archive, sandbox):
    marker = sandbox / "pwned"
    for data in (pickle.dumps(Payload(marker)), pickle.dumps({"weight": Payload(marker)}, protocol=2)):
        archive = write_archive(sandbox / "pickle.tar.gz", replaced(members_of(good_archive), "weights.th", data))
        with pytest.raises(ArchiveError, match="pickle.tar.gz: member 'weights.th' holds pickled objects other than "
                                               "tensors .*not loaded, since unpickling them could run code") as error:
            load_archive(str(archive))
        assert "weights_only=False" not in str(error.value)
    assert not marker.exists()


def test_a_torch_save_of_an_object_is_refused_too(good_archive, sandbox):
    marker = sandbox / "pwned"
    path = sandbox / "object.th"
    torch.save({"weight": Payload(marker)}, path)
    archive = write_archive(sandbox / "object.tar.gz", replaced(members_of(good_archive), "weights.th",
                                                               path.read_bytes()))
    with pytest.raises(ArchiveError, match="holds pickled objects other than tensors"):
        load_archive(str(archive))
    assert not marker.exists()


def test_truncated_and_missing_weights_are_named(good_archive, sandbox):
    members = members_of(good_archive)
    weights = next(data for member, data in members if member.name.endswith("weights.th"))
    archive = write_archive(sandbox / "cut.tar.gz", replaced(members, "weights.th", weights[: len(weights) // 2]))
    with pytest.raises(ArchiveError, match="cut.tar.gz: member 'weights.th' is not a readable state dict"):
        load_archive(str(archive))
    archive = write_archive(sandbox / "none.tar.gz", [(m, d) for m, d in members if not m.name.endswith("weights.th")])
    with pytest.raises(ArchiveError, match="none.tar.gz: the archive has no weights file"):
        load_archive(str(archive))


def test_outside_an_archive_read_state_dict_keeps_its_errors(tmp_path):
    """The naming applies while an archive loads; elsewhere AllenNLP's own errors are unchanged."""
    from allennlp.nn import util

    (tmp_path / "bad.th").write_bytes(pickle.dumps(Payload(tmp_path / "pwned")))
    with pytest.raises(pickle.UnpicklingError):
        util.read_state_dict(str(tmp_path / "bad.th"))
    assert not (tmp_path / "pwned").exists()
