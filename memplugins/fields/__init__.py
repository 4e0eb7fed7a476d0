from memplugins.fields.binary_tree_field import (
    BinaryTree, BinaryTreeField, batch_trees, parse_binary_tree, trees_of_batch,
)
