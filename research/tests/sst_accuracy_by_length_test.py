"""research/sst_accuracy_by_length.py: for a sequence classifier and for a tree classifier, the accuracy overall is
the model's own `accuracy` metric on the same sentences, and each length bucket counts the model's own predictions;
a tree run asked for phrases is refused with the reason."""
import sys

import pytest
import torch

from research.tests.saved_models import SST_SAMPLE, save_shrunk_sst_peer, save_shrunk_tree_lstm
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import sst_accuracy_by_length  # noqa: E402


def _expected(run):
    """{bucket or "all": [right, count]} from the model's own output label on each sentence, one at a time, and
    the model's accuracy metric over them."""
    model = sst_accuracy_by_length.load_run(run)
    expected = {}
    model.get_metrics(reset=True)
    for instance in sst_accuracy_by_length.read_trees(run, str(SST_SAMPLE)):
        with torch.no_grad():
            output = model.forward_on_instance(instance)
        gold = instance["label"].label if "label" in instance.fields else instance["tree"].tree.labels[-1]
        for key in ("all", sst_accuracy_by_length.bucket(len(instance["tokens"].tokens))):
            expected.setdefault(key, [0, 0])
            expected[key][0] += int(output["label"] == gold)
            expected[key][1] += 1
    return expected, model.get_metrics()["accuracy"]


@pytest.mark.parametrize("save", [save_shrunk_sst_peer, save_shrunk_tree_lstm], ids=["basic_classifier", "tree"])
def test_each_bucket_counts_the_models_own_predictions(tmp_path, save):
    sst_accuracy_by_length.import_plugins()
    save(tmp_path)
    counts = sst_accuracy_by_length.accuracy_by_length(tmp_path, str(SST_SAMPLE))
    expected, accuracy = _expected(tmp_path)
    assert dict(counts) == expected
    assert counts["all"][0] / counts["all"][1] == pytest.approx(accuracy)
    assert 0 < counts["all"][0] < counts["all"][1]  # neither all right nor all wrong
    assert sum(count for key, (_, count) in counts.items() if key != "all") == counts["all"][1] > 20
    assert len(counts) > 2  # more than one length bucket


def test_a_tree_run_asked_for_phrases_is_refused_with_the_reason(tmp_path):
    sst_accuracy_by_length.import_plugins()
    save_shrunk_tree_lstm(tmp_path)
    with pytest.raises(ValueError, match="a tree run .* its phrases are its nodes.*sst_composition.py"):
        sst_accuracy_by_length.accuracy_by_length(tmp_path, str(SST_SAMPLE), phrases=True)
