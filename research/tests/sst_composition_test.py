"""research/sst_composition.py: each phrase's kind from its children's labels, refusals naming file and line, and
accuracy per kind and scope equal to the model's own prediction phrase by phrase (for a tree run, its node's own
prediction inside the whole sentence)."""
import sys

import pytest
import torch
from nltk import Tree

from research.tests.saved_models import SST_SAMPLE as SAMPLE, save_shrunk_sst_peer, save_shrunk_tree_lstm
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "research"))
import sst_composition  # noqa: E402
from sst_accuracy_by_length import import_plugins  # noqa: E402


@pytest.mark.parametrize("tree, kind", [
    ("(1 (2 not) (3 good))", "flips"),  # a positive child under a negative phrase
    ("(4 (1 bad) (4 (2 so) (4 good)))", "flips"),  # one child each way: the opposite one decides
    ("(3 (2 the) (4 good))", "agrees"),
    ("(0 (1 dull) (1 slow))", "agrees"),
    ("(3 (2 a) (2 b))", "from neutral"),
])
def test_a_phrase_kind_comes_from_its_childrens_polarity(tree, kind):
    assert sst_composition.kind(Tree.fromstring(tree)) == kind


def test_the_phrases_are_the_non_neutral_multiword_subtrees_roots_marked(tmp_path):
    trees = tmp_path / "trees.txt"
    trees.write_text("(1 (2 not) (3 (2 very) (3 good)))\n\n(2 (2 a) (3 (2 the) (4 good)))\n")
    assert sst_composition.labelled_phrases(str(trees)) == [
        (["not", "very", "good"], "1", "flips", True, "(1 (2 not) (3 (2 very) (3 good)))"),
        (["very", "good"], "3", "agrees", False, "(3 (2 very) (3 good))"),
        # the neutral root is left out, its positive child kept
        (["the", "good"], "3", "agrees", False, "(3 (2 the) (4 good))"),
    ]


@pytest.mark.parametrize("line, problem", [
    ("(1 (2 not) (3 good)", "not a PTB-format tree"),
    ("(1 (2 a) (2 b) (3 c))", "a node with 3 children; SST is binary"),
    ("(7 (2 a) (3 c))", "a label outside 0-4"),
])
def test_a_bad_tree_is_refused_with_its_file_and_line(tmp_path, line, problem):
    trees = tmp_path / "trees.txt"
    trees.write_text("(3 (2 a) (3 b))\n" + line + "\n")
    with pytest.raises(ValueError, match=rf"trees.txt, line 2: {problem}"):
        sst_composition.labelled_phrases(str(trees))


def _tally(predicted) -> dict:
    """{(kind or "all", scope): [right, count]} from (tokens, fine-grained label, kind, is the root, the model's
    label) per phrase, as the module doc defines them."""
    expected = {}
    for tokens, label, kind, is_root, guess in predicted:
        right = int(guess == ("1" if int(label) > 2 else "0"))
        scopes = ["phrases", sst_composition.SHORT if len(tokens) <= 10 else sst_composition.LONG]
        for scope in scopes + (["sentences"] if is_root else []):
            for key in ((kind, scope), ("all", scope)):
                expected.setdefault(key, [0, 0])
                expected[key][0] += right
                expected[key][1] += 1
    return expected


def _counted(tmp_path, save):
    """A shrunk run saved by SAVE into tmp_path; the sample's phrases, the tool's counts, the run's model and reader."""
    import_plugins()
    save(tmp_path)
    phrases = sst_composition.labelled_phrases(str(SAMPLE))
    counts = sst_composition.accuracy_by_kind(tmp_path, phrases)
    return phrases, counts, sst_composition.load_run(tmp_path), sst_composition.validation_reader(tmp_path)


def test_accuracy_per_kind_is_the_models_own_prediction_phrase_by_phrase(tmp_path):
    phrases, counts, model, reader = _counted(tmp_path, save_shrunk_sst_peer)
    predicted = []
    for tokens, label, kind, is_root, _ in phrases:
        instance = reader.text_to_instance(tokens, label)
        reader.apply_token_indexers(instance)
        with torch.no_grad():
            predicted.append((tokens, label, kind, is_root, model.forward_on_instance(instance)["label"]))
    expected = _tally(predicted)
    assert dict(counts) == expected
    assert 0 < expected[("all", "phrases")][0] < expected[("all", "phrases")][1]  # neither all right nor all wrong
    assert expected[("all", "sentences")][1] == sum(phrase.is_root for phrase in phrases) > 20
    assert all(expected[(kind, "phrases")][1] > 0 for kind in sst_composition.KINDS)


def test_a_fine_grained_run_is_refused(tmp_path):
    import_plugins()
    save_shrunk_sst_peer(tmp_path, granularity="5-class")
    with pytest.raises(ValueError, match="not '2-class'"):
        sst_composition.accuracy_by_kind(tmp_path, sst_composition.labelled_phrases(str(SAMPLE)))


def _node_predictions(model, reader) -> dict:
    """{(line number, first leaf, end leaf): predicted label} of every node of every sample tree, each tree read
    whole: the tree classifier's own node outputs (`node_spans`, `node_labels`)."""
    predictions = {}
    for number, line in enumerate(SAMPLE.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            instance = reader.text_to_instance(line)
            reader.apply_token_indexers(instance)
            with torch.no_grad():
                output = model.forward_on_instance(instance)
            for (start, end), label in zip(output["node_spans"], output["node_labels"]):
                predictions[(number, start, end)] = label
    return predictions


def _phrases_with_spans():
    """(tokens, label, kind, is the root, (line number, first leaf, end leaf)) of each non-neutral multi-word
    phrase of the sample, found independently of sst_composition.labelled_phrases."""
    found = []

    def walk(tree, start, number, is_root):
        if isinstance(tree[0], str):
            return 1
        width = 0
        for child in tree:
            width += walk(child, start + width, number, False)
        if int(tree.label()) != 2:
            span = (number, start, start + width)
            found.append((tree.leaves(), tree.label(), sst_composition.kind(tree), is_root, span))
        return width

    for number, line in enumerate(SAMPLE.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            walk(Tree.fromstring(line), 0, number, True)
    return found


def test_a_tree_run_scores_each_phrase_as_its_node_inside_the_whole_sentence(tmp_path):
    phrases, counts, model, reader = _counted(tmp_path, save_shrunk_tree_lstm)
    nodes = _node_predictions(model, reader)
    spanned = _phrases_with_spans()
    assert sorted((" ".join(p[0]), *p[1:4]) for p in spanned) == sorted((" ".join(p[0]), *p[1:4]) for p in phrases)
    expected = _tally([(tokens, label, kind, is_root, nodes[span]) for tokens, label, kind, is_root, span in spanned])
    assert dict(counts) == expected
    assert 0 < expected[("all", "phrases")][0] < expected[("all", "phrases")][1]
    assert 0 < expected[("all", "sentences")][0] < expected[("all", "sentences")][1]


def test_a_fine_grained_tree_run_is_refused(tmp_path):
    import_plugins()
    save_shrunk_tree_lstm(tmp_path, granularity="5")
    with pytest.raises(ValueError, match="granularity is '5-class', not '2-class'"):
        sst_composition.accuracy_by_kind(tmp_path, sst_composition.labelled_phrases(str(SAMPLE)))
