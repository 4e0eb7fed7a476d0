import pytest
from allennlp.data import Batch, Vocabulary

from memplugins.readers import MalformedInputError, SstTreesReader, parse_sst_tree

SAMPLE = "fixtures/sst/dev_sample.txt"


def test_parse_keeps_every_node_label_in_node_order():
    tree = parse_sst_tree("(3 (2 It) (4 (2 -LRB-) (3 a\\/b)))")
    assert tree.leaves == ["It", "(", "a/b"]
    assert tree.children == [(1, 2), (0, 3)]
    assert tree.labels == ["2", "2", "3", "4", "3"]


def test_one_word_and_deep_left_branching_trees():
    assert parse_sst_tree("(4 great)").children == []
    deep = parse_sst_tree("(1 (1 (1 (2 a) (2 b)) (2 c)) (2 d))")
    assert deep.children == [(0, 1), (4, 2), (5, 3)]
    assert deep.heights() == [1, 2, 3]


@pytest.mark.parametrize(
    "line, reason",
    [
        ("(3 (2 It) (4 lovely)", "unbalanced"),
        ("(3 (2 It) (4 lovely)))", "unbalanced"),
        ("(3 (2 a) (2 b) (2 c))", "3 children"),
        ("(x (2 a) (2 b))", "not a sentiment class"),
        ("(7 (2 a) (2 b))", "not a sentiment class"),
        ("(3 (2 a b))", "more than one word"),
        ("(3 (2 (2 a) (2 b)))", "unary"),
    ],
)
def test_malformed_trees_name_the_file_and_line(tmp_path, line, reason):
    path = tmp_path / "trees.txt"
    path.write_text("(3 (2 fine) (3 tree))\n" + line + "\n")
    with pytest.raises(MalformedInputError, match=rf"trees.txt:2: .*{reason}"):
        list(SstTreesReader().read(str(path)))


def test_granularities_and_root_only():
    five = list(SstTreesReader().read(SAMPLE))
    two = list(SstTreesReader(granularity="2-class").read(SAMPLE))
    assert len(five) == 40
    roots = [instance["tree"].tree.labels[-1] for instance in five]
    assert len(two) == sum(label != "2" for label in roots)  # neutral sentences dropped
    for instance in two:
        assert set(instance["tree"].tree.labels) <= {"0", "1", None}
    root_only = list(SstTreesReader(root_only=True).read(SAMPLE))
    assert all(set(i["tree"].tree.labels[:-1]) == {None} for i in root_only)


def test_labels_tensor_follows_the_node_buffer():
    reader = SstTreesReader(granularity="2-class")
    instances = [reader.text_to_instance("x")]  # labels are only read from files
    instances = list(reader.read(SAMPLE))[:3]
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    labels = tensors["tree"]["labels"]
    max_leaves = tensors["tokens"]["tokens"]["tokens"].size(1)
    for b, instance in enumerate(instances):
        tree = instance["tree"].tree
        n = len(tree.leaves)
        for node, label in enumerate(tree.labels):
            row = node if node < n else max_leaves + node - n
            expected = -1 if label is None else vocab.get_token_index(label, "labels")
            assert labels[b, row] == expected
        assert labels[b, tensors["tree"]["root"][b]] >= 0


def test_plain_sentences_get_the_right_branching_tree():
    instance = SstTreesReader().text_to_instance("not a bad film")
    tree = instance["tree"].tree
    assert tree.leaves == ["not", "a", "bad", "film"]
    assert tree.children == [(2, 3), (1, 4), (0, 5)] and tree.labels is None


def test_a_word_with_a_no_break_space_stays_one_word():
    # SST's train.txt has the film title "8\u00a01/2" as one leaf
    assert parse_sst_tree("(2 (2 like) (2 8\u00a01\\/2))").leaves == ["like", "8\u00a01/2"]
