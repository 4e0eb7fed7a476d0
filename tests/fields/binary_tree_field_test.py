import re
import pytest
import torch
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer
from allennlp.data.tokenizers import Token

from memplugins.fields import BinaryTreeField, parse_binary_tree


def test_parse_numbering_is_leaves_then_post_order():
    tree = parse_binary_tree("( ( a b ) ( c ( d e ) ) )")
    assert tree.leaves == ["a", "b", "c", "d", "e"]
    # internal nodes 5.. in post-order: (a b)=5, (d e)=6, (c (d e))=7, root=8
    assert tree.children == [(0, 1), (3, 4), (2, 6), (5, 7)]
    assert tree.heights() == [1, 1, 2, 3]


@pytest.mark.parametrize("text, leaves", [("dog", ["dog"]), ("( dog )", ["dog"]), ("( ( ( dog ) ) )", ["dog"])])
def test_one_word_trees(text, leaves):
    tree = parse_binary_tree(text)
    assert tree.leaves == leaves and tree.children == []


def test_deep_left_branching_tree():
    n = 60
    text = "( " * (n - 1) + "w0 " + " ".join(f"w{i} )" for i in range(1, n))
    tree = parse_binary_tree(text)
    assert len(tree.leaves) == n
    assert tree.heights() == list(range(1, n))
    assert tree.children[0] == (0, 1) and tree.children[-1] == (2 * n - 3, n - 1)


@pytest.mark.parametrize(
    "text, message",
    [
        ("( a b", "unclosed"),
        ("( a b ) )", "unexpected ')'"),
        ("( a b c )", "3 children"),
        ("", "empty binary parse"),
        ("( )", "empty brackets"),
        ("( a b ) ( c d )", "2 top-level constituents"),
    ],
)
def test_malformed_parses(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_binary_tree(text)


def test_batched_tensors_point_into_a_padded_node_buffer():
    big = parse_binary_tree("( ( a b ) ( c ( d e ) ) )")  # 5 leaves, 4 internal
    small = parse_binary_tree("( x y )")  # 2 leaves, 1 internal
    single = parse_binary_tree("z")
    instances = [
        Instance({"tokens": TextField([Token(w) for w in tree.leaves], {"t": SingleIdTokenIndexer()}),
                  "tree": BinaryTreeField(tree)})
        for tree in (big, small, single)
    ]
    batch = Batch(instances)
    batch.index_instances(Vocabulary.from_instances(instances))
    tensors = batch.as_tensor_dict()
    tree = tensors["tree"]
    max_leaves = tensors["tokens"]["t"]["tokens"].size(1)
    assert max_leaves == 5
    # node buffer: 5 leaf slots, then 4 internal slots
    assert tree["children"].tolist()[0] == [[0, 1], [3, 4], [2, 6], [5, 7]]
    assert tree["children"].tolist()[1] == [[0, 1], [0, 0], [0, 0], [0, 0]]
    assert tree["mask"].tolist() == [[True] * 4, [True, False, False, False], [False] * 4]
    assert tree["heights"].tolist()[0] == [1, 1, 2, 3]
    assert tree["root"].tolist() == [8, 5, 0]
    assert torch.equal(tree["heights"][~tree["mask"]], torch.zeros(7, dtype=torch.long))
