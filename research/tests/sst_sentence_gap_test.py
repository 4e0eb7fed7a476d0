"""research/sst_sentence_gap.py: a group's accuracy is the mean of its runs' own accuracies, the gap and the number of
sentences the groups differ on come from the runs' own predictions sentence by sentence, the bootstrap interval
holds the gap and collapses where the groups agree, and runs that read other sentences are refused."""
import sys

import numpy
import pytest

from memplugins.readers.sst_trees import unescape_sst_word
from research.tests.saved_models import SST_SAMPLE, save_shrunk_sst_peer, save_shrunk_tree_lstm
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import sst_sentence_gap  # noqa: E402
from sst_accuracy_by_length import accuracy_by_length, import_plugins, sentence_results  # noqa: E402


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two binary tree runs and two binary peer runs (random weights, different seeds), and a fine-grained peer."""
    import_plugins()
    folders = {}
    for name, save, seed in [("tree0", save_shrunk_tree_lstm, 0), ("tree1", save_shrunk_tree_lstm, 1),
                             ("peer0", save_shrunk_sst_peer, 0), ("peer1", save_shrunk_sst_peer, 1)]:
        folders[name] = tmp_path_factory.mktemp(name)
        save(folders[name], seed=seed)
    folders["fine"] = tmp_path_factory.mktemp("fine")
    save_shrunk_sst_peer(folders["fine"], granularity="5-class")
    return folders


def _accuracy(run):
    counts = accuracy_by_length(run, str(SST_SAMPLE))
    return counts["all"][0] / counts["all"][1]


def test_the_gap_is_the_groups_mean_accuracies_and_their_sentence_by_sentence_difference(runs):
    first, second = [runs["tree0"], runs["tree1"]], [runs["peer0"], runs["peer1"]]
    (gap,) = sst_sentence_gap.compare([str(SST_SAMPLE)], first, second, resamples=2000, seed=0)
    assert gap.first == pytest.approx(numpy.mean([_accuracy(run) for run in first]))
    assert gap.second == pytest.approx(numpy.mean([_accuracy(run) for run in second]))
    assert gap.gap == pytest.approx(gap.second - gap.first)
    rights = {name: [right for _, right in sentence_results(runs[name], str(SST_SAMPLE))]
              for name in ("tree0", "tree1", "peer0", "peer1")}
    differ = sum(a + b != c + d for a, b, c, d in zip(rights["tree0"], rights["tree1"], rights["peer0"],
                                                      rights["peer1"]))
    assert gap.differ == differ > 0
    assert gap.sentences == len(rights["tree0"]) > 20
    assert gap.low <= gap.gap <= gap.high and gap.low < gap.high
    # a wider draw of sentences than the sample's own cannot narrow the interval below a single sentence's weight
    assert gap.high - gap.low > 1 / gap.sentences


def test_a_group_against_itself_has_no_gap_and_no_spread(runs):
    group = [runs["tree0"], runs["peer1"]]
    (gap,) = sst_sentence_gap.compare([str(SST_SAMPLE)], group, group, resamples=500, seed=0)
    assert (gap.gap, gap.low, gap.high, gap.differ) == (0, 0, 0, 0)


def test_the_interval_is_the_percentiles_of_resampled_sentences():
    first = numpy.array([1.0, 0.0, 1.0, 1.0])
    second = numpy.array([1.0, 1.0, 0.0, 1.0])
    gap = sst_sentence_gap.sentence_gap(first, second, resamples=4000, seed=3)
    assert gap.gap == 0 and gap.differ == 2
    # each resample draws 4 of the differences (0, +1, -1, 0): its mean lies in [-1, 1] in steps of 1/4
    assert set(numpy.round(gap.draws * 4).tolist()) <= set(range(-4, 5))
    assert gap.low == numpy.percentile(gap.draws, 2.5) < 0 < gap.high == numpy.percentile(gap.draws, 97.5)
    assert sst_sentence_gap.sentence_gap(first, second, 4000, 3).draws.tolist() == gap.draws.tolist()  # seeded


def test_runs_that_read_other_sentences_are_refused_naming_them(runs):
    # the fine-grained reader keeps the neutral sentences the binary protocol drops
    with pytest.raises(ValueError, match=f"{runs['fine'].name} reads other sentences"):
        sst_sentence_gap.compare([str(SST_SAMPLE)], [runs["peer0"], runs["fine"]], [runs["tree0"]], 100, 0)
    with pytest.raises(ValueError, match="the --second runs read other sentences than the --first runs"):
        sst_sentence_gap.compare([str(SST_SAMPLE)], [runs["tree0"]], [runs["fine"]], 100, 0)


def test_the_two_readers_sentences_match_with_the_treebanks_escapes(runs, tmp_path):
    # allennlp-models' reader keeps -LRB- and \/ as written, ours unescapes them: the same sentences all the same
    trees = tmp_path / "trees.txt"
    trees.write_text("(3 (2 -LRB-) (3 (3 funny\\/gritty) (2 -RRB-)))\n(1 (2 a) (1 (2 \\/) (1 \\*bad\\*)))\n")
    (gap,) = sst_sentence_gap.compare([str(trees)], [runs["tree0"]], [runs["peer0"]], 100, 0)
    assert gap.sentences == 2
    assert [unescape_sst_word(word) for word in ("-LRB-", "funny\\/gritty", "\\*bad\\*", "(")] == [
        "(", "funny/gritty", "*bad*", "("]


def test_each_file_is_resampled_from_its_own_seed(runs):
    # the same file twice: the same gap, but draws of their own, so that the difference between two files' gaps has
    # an interval from independent resamples
    first, second = [runs["tree0"]], [runs["peer0"]]
    gaps = sst_sentence_gap.compare([str(SST_SAMPLE)] * 2, first, second, resamples=500, seed=4)
    assert gaps[0].gap == gaps[1].gap
    assert gaps[0].draws.tolist() != gaps[1].draws.tolist()
    again = sst_sentence_gap.compare([str(SST_SAMPLE)] * 2, first, second, resamples=500, seed=4)
    assert [gap.draws.tolist() for gap in again] == [gap.draws.tolist() for gap in gaps]  # and seeded
