"""
Trees that follow their sentence's tokens after an attacker deleted some: AllenNLP's InputReduction removes tokens
from a `TextField` and leaves the instance's other fields as they were, so a tree model's `BinaryTreeField` would
still have a leaf per original word. The predictors of tree models call `match_trees_to_tokens` in
`get_gradients`; the tree becomes the original parse restricted to the words that are left
(`BinaryTree.restricted_to`).
"""
from typing import List, Sequence, Tuple

from allennlp.data import Instance, Vocabulary

from memplugins.fields import BinaryTreeField


def kept_positions(leaves: Sequence[str], words: Sequence[str]) -> List[int]:
    """Positions of `leaves` that `words` keeps, in order (`words` is `leaves` with some deleted)."""
    kept, start = [], 0
    for word in words:
        position = next((i for i in range(start, len(leaves)) if leaves[i] == word), None)
        if position is None:
            raise ValueError(f"the tokens {list(words)} are not the tree's leaves {list(leaves)} with some deleted")
        kept.append(position)
        start = position + 1
    return kept


def match_trees_to_tokens(instance: Instance, pairs: Sequence[Tuple[str, str]], vocab: Vocabulary) -> List[str]:
    """For each (text field, tree field) of `pairs` in the instance whose token count no longer matches the tree;
    returns the names of the tree fields it replaced."""
    replaced = []
    for text_name, tree_name in pairs:
        if tree_name not in instance.fields or text_name not in instance.fields:
            continue
        tree = instance[tree_name].tree
        words = [token.text for token in instance[text_name].tokens]
        if len(words) == len(tree.leaves):
            continue
        field = BinaryTreeField(tree.restricted_to(kept_positions(tree.leaves, words)),
                                label_namespace=instance[tree_name].label_namespace)
        if instance.indexed:
            field.index(vocab)
        instance.fields[tree_name] = field
        replaced.append(tree_name)
    return replaced
