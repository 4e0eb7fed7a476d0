import pytest
import torch

from memplugins.encoders.tree_rnn import TreeRnnEncoder
from memplugins.fields import BinaryTree, batch_trees
from memplugins.readers import parse_sst_tree

TREES = [
    "(3 (2 It) (4 (2 's) (3 lovely)))",
    "(1 (2 (2 Not) (1 good)) (2 .))",
    "(2 Fine)",
    "(4 (3 (2 a) (3 (3 great) (2 film))) (2 (2 ,) (3 indeed)))",
]


def reference_tree_rnn(encoder: TreeRnnEncoder, words: torch.Tensor, tree: BinaryTree) -> torch.Tensor:
    """p = g(W_1 x + W_2 y + b), recursively, untied leaf / internal weights; returns the root."""
    d = encoder.get_output_dim()
    leaf_w1, leaf_w2 = encoder.leaf_weights.weight.split(d)
    inner_w1, inner_w2 = encoder.internal_weights.weight.split(d)
    n = len(tree.leaves)

    def node(index):
        if index < n:
            return words[index], True
        left, right = tree.children[index - n]
        (x, x_leaf), (y, y_leaf) = node(left), node(right)
        w1 = leaf_w1 if x_leaf else inner_w1
        w2 = leaf_w2 if y_leaf else inner_w2
        return encoder._g(w1 @ x + w2 @ y + encoder.bias), False

    root, is_leaf = node(n + len(tree.children) - 1 if tree.children else 0)
    return encoder.leaf_projection(root) if is_leaf and encoder.leaf_projection is not None else root


@pytest.mark.parametrize("input_dim", [5, 4])
def test_batched_roots_equal_the_recursive_reference_and_padding_changes_nothing(input_dim):
    torch.manual_seed(0)
    encoder = TreeRnnEncoder(input_dim, 4)
    trees = [parse_sst_tree(text) for text in TREES]
    tensors, mask = batch_trees(trees)
    words = torch.randn(*mask.shape, input_dim)
    roots = encoder(words, mask, tensors)
    for b, tree in enumerate(trees):
        n = len(tree.leaves)
        torch.testing.assert_close(roots[b], reference_tree_rnn(encoder, words[b, :n], tree), atol=1e-6, rtol=1e-5)
        alone_tensors, alone_mask = batch_trees([tree])
        alone = encoder(words[b : b + 1, :n], alone_mask, alone_tensors)[0]
        torch.testing.assert_close(alone, roots[b], atol=1e-6, rtol=1e-5)


def test_every_parameter_gets_a_gradient():
    torch.manual_seed(0)
    encoder = TreeRnnEncoder(5, 4)
    tensors, mask = batch_trees([parse_sst_tree(text) for text in TREES])
    words = torch.randn(*mask.shape, 5)
    encoder.encode(words, mask, tensors).node_states.sum().backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name
