"""benchmarks/sst_composition.py: each phrase's kind from its children's labels, refusals naming file and line, and
accuracy per kind and scope equal to the model's own prediction phrase by phrase."""
import json
import sys

import _jsonnet
import pytest
import torch
from nltk import Tree

from memplugins.compat import CONFIG_DEFAULTS
from tests.benchmarks.saved_models import save_with_random_weights
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import sst_composition  # noqa: E402
from sst_accuracy_by_length import import_plugins  # noqa: E402

SAMPLE = REPO_ROOT / "fixtures" / "sst" / "dev_sample.txt"


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
        (["not", "very", "good"], "1", "flips", True),
        (["very", "good"], "3", "agrees", False),
        (["the", "good"], "3", "agrees", False),  # the neutral root is left out, its positive child kept
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


def _saved_binary_peer(tmp_path, granularity="2-class"):
    import_plugins()
    config = json.loads(_jsonnet.evaluate_file(
        str(REPO_ROOT / "benchmarks" / "configs" / "sst_basic_classifier_lstm.jsonnet"),
        ext_vars={**CONFIG_DEFAULTS, "SST_GRANULARITY": granularity}))
    embedder = config["model"]["text_field_embedder"]["token_embedders"]["tokens"]
    embedder.pop("pretrained_file")
    embedder["embedding_dim"] = 6
    config["model"]["seq2vec_encoder"].update(input_size=6, hidden_size=8)
    config.pop("vocabulary")
    save_with_random_weights(tmp_path, config, str(SAMPLE))


def test_accuracy_per_kind_is_the_models_own_prediction_phrase_by_phrase(tmp_path):
    _saved_binary_peer(tmp_path)
    phrases = sst_composition.labelled_phrases(str(SAMPLE))
    counts = sst_composition.accuracy_by_kind(tmp_path, phrases)
    model = sst_composition.load_run(tmp_path)
    reader = sst_composition.validation_reader(tmp_path)
    expected = {}
    for tokens, label, kind, is_root in phrases:
        instance = reader.text_to_instance(tokens, label)
        reader.apply_token_indexers(instance)
        with torch.no_grad():
            output = model.forward_on_instance(instance)
        right = int(output["label"] == ("1" if int(label) > 2 else "0"))
        scopes = ["phrases", sst_composition.SHORT if len(tokens) <= 10 else sst_composition.LONG]
        for scope in scopes + (["sentences"] if is_root else []):
            for key in ((kind, scope), ("all", scope)):
                expected.setdefault(key, [0, 0])
                expected[key][0] += right
                expected[key][1] += 1
    assert dict(counts) == expected
    assert 0 < expected[("all", "phrases")][0] < expected[("all", "phrases")][1]  # neither all right nor all wrong
    assert expected[("all", "sentences")][1] == sum(is_root for *_, is_root in phrases) > 20
    assert all(expected[(kind, "phrases")][1] > 0 for kind in sst_composition.KINDS)


def test_a_fine_grained_run_is_refused(tmp_path):
    _saved_binary_peer(tmp_path, granularity="5-class")
    with pytest.raises(ValueError, match="not '2-class'"):
        sst_composition.accuracy_by_kind(tmp_path, sst_composition.labelled_phrases(str(SAMPLE)))
