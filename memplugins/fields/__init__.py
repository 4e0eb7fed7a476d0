from memplugins.fields.binary_tree_field import BinaryTree, BinaryTreeField, parse_binary_tree
