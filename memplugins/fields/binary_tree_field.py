"""
A binary tree over the tokens of a sentence, batched so that a tree encoder can process every node of one height,
across the whole batch, with one set of matrix multiplications.

Node numbering, for a sentence of n tokens (the leaves, left to right):

* nodes `0 .. n-1` are the leaves, i.e. token positions of the sentence's `TextField`;
* nodes `n .. 2n-2` are the n-1 internal nodes in post-order (children before their parent), so the root is
  the last node. A one-token sentence has no internal node; its root is leaf 0.

In a batch, sentences are padded to `max_leaves` tokens, so `BinaryTreeField.as_tensor` renumbers internal node
`n + j` to `max_leaves + j`. A model concatenates its leaf states `(batch, max_leaves, d)` and internal states
`(batch, max_internal, d)` into one node buffer, and every index in the tensors below points into it.

Tensors (`as_tensor`, batched by `batch_tensors` to a leading batch dimension):

* `children`: `LongTensor (max_internal, 2)`: left and right child of each internal node (0 for padding).
* `heights`: `LongTensor (max_internal,)`: 1 + the larger child height (leaves have height 0; padding 0).
  Nodes of equal height never depend on each other, so an encoder loops over heights 1..max, not over nodes.
* `mask`: `BoolTensor (max_internal,)`: which internal nodes exist.
* `root`: `LongTensor ()`: the root's index in the node buffer.
* `labels` (only for trees with node labels, e.g. `sst_trees`): `LongTensor (max_leaves + max_internal,)`: each
  node's label id in `label_namespace`, in node-buffer order; -1 for unlabelled nodes and padding.

The leaves must be exactly the tokens of the sentence's `TextField` (no added start/end tokens); `snli_parsed`
guarantees this by taking the tokens from the parse when it adds trees.
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import torch

from allennlp.data.fields import Field
from allennlp.data.vocabulary import Vocabulary

# Penn Treebank escapes used in SNLI's parses, turned back into the characters GloVe and tokenizers see.
PTB_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


@dataclass
class BinaryTree:
    """
    Leaves (token strings) and internal nodes as (left, right) node indices in post-order (see module doc);
    optionally a label per node (leaves first, then internal nodes; None where a node is unlabelled).
    """

    leaves: List[str]
    children: List[Tuple[int, int]]
    labels: Optional[List[Optional[str]]] = None

    @classmethod
    def right_branching(cls, leaves: List[str]) -> "BinaryTree":
        """The default binarisation of a plain sentence: (w_1 (w_2 (... (w_{n-1} w_n)))), built bottom-up."""
        n = len(leaves)
        children: List[Tuple[int, int]] = []
        for left in range(n - 2, -1, -1):
            right = n - 1 if not children else n + len(children) - 1
            children.append((left, right))
        return cls(list(leaves), children)

    def restricted_to(self, kept: List[int]) -> "BinaryTree":
        """The tree over the leaves at positions `kept` (increasing): a node whose subtree lost every leaf goes, and
        a node left with one child is replaced by it, so what remains keeps the parse's shape (an attacker that
        deletes words, e.g. AllenNLP's InputReduction, needs a tree over the words that are left). A node that is
        kept keeps its label."""
        new_index = {old: new for new, old in enumerate(kept)}
        n = len(self.leaves)
        node: List[Optional[int]] = [new_index.get(i) for i in range(n)]
        children: List[Tuple[int, int]] = []
        labels = [self.labels[i] for i in kept] if self.labels is not None else None
        for j, (left, right) in enumerate(self.children):
            a, b = node[left], node[right]
            if a is not None and b is not None:
                children.append((a, b))
                node.append(-len(children))  # provisional, renumbered below
                if labels is not None:
                    labels.append(self.labels[n + j])
            else:
                node.append(a if a is not None else b)
        m = len(kept)
        if labels is not None and m:
            labels[-1] = self.labels[-1]  # the sentence's label stays at the root, whichever node that now is
        renumber = lambda index: index if index >= 0 else m + (-index - 1)  # noqa: E731
        return BinaryTree([self.leaves[i] for i in kept], [(renumber(a), renumber(b)) for a, b in children], labels)

    def spans(self) -> List[Tuple[int, int]]:
        """The leaf span `[start, end)` of every node, in node order."""
        n = len(self.leaves)
        spans = [(i, i + 1) for i in range(n)]
        for left, right in self.children:
            spans.append((spans[left][0], spans[right][1]))
        return spans

    def heights(self) -> List[int]:
        n = len(self.leaves)
        height = [0] * (n + len(self.children))
        for j, (left, right) in enumerate(self.children):
            height[n + j] = 1 + max(height[left], height[right])
        return height[n:]


def parse_binary_tree(text: str) -> BinaryTree:
    """
    Parses a bracketed binary parse such as SNLI's `sentence1_binary_parse`:
    `"( ( Two women ) ( ( are ( embracing ... ) ) . ) )"`. Brackets are `(` / `)` tokens separated by spaces;
    every other token is a leaf (PTB escapes like `-LRB-` are unescaped). A bracket around a single item is
    transparent. Raises `ValueError` for unbalanced brackets, an empty tree or a node with more than two children.
    """
    leaves: List[str] = []
    children: List[Tuple[int, int]] = []
    # Internal nodes get provisional ids -(j+1) and are renumbered to n + j once n (the number of leaves) is known.
    stack: List[List[int]] = [[]]
    for item in text.split():
        if item == "(":
            stack.append([])
        elif item == ")":
            if len(stack) == 1:
                raise ValueError(f"unbalanced brackets (unexpected ')') in binary parse {text!r}")
            group = stack.pop()
            if len(group) == 0:
                raise ValueError(f"empty brackets in binary parse {text!r}")
            if len(group) > 2:
                raise ValueError(f"a node with {len(group)} children in binary parse {text!r} (must be binary)")
            if len(group) == 1:
                stack[-1].append(group[0])
            else:
                children.append((group[0], group[1]))
                stack[-1].append(-len(children))
        else:
            leaves.append(PTB_UNESCAPE.get(item, item))
            stack[-1].append(len(leaves) - 1)
    if len(stack) != 1:
        raise ValueError(f"unbalanced brackets ({len(stack) - 1} unclosed '(') in binary parse {text!r}")
    if len(stack[0]) != 1:
        if not leaves:
            raise ValueError(f"empty binary parse {text!r}")
        raise ValueError(f"binary parse {text!r} has {len(stack[0])} top-level constituents, expected one root")
    n = len(leaves)
    renumber = lambda node: node if node >= 0 else n + (-node - 1)  # noqa: E731
    return BinaryTree(leaves, [(renumber(left), renumber(right)) for left, right in children])


class BinaryTreeField(Field[Dict[str, torch.Tensor]]):
    """
    A `Field` holding a `BinaryTree` whose leaves are the tokens of a sentence's `TextField`; see the module
    docstring for the node numbering and the tensors it produces.
    """

    __slots__ = ["tree", "label_namespace", "_label_ids"]

    def __init__(self, tree: BinaryTree, label_namespace: str = "labels") -> None:
        self.tree = tree
        self.label_namespace = label_namespace
        self._label_ids: Optional[List[int]] = None

    def count_vocab_items(self, counter: Dict[str, Dict[str, int]]) -> None:
        for label in self.tree.labels or ():
            if label is not None:
                counter[self.label_namespace][label] += 1

    def index(self, vocab: Vocabulary) -> None:
        if self.tree.labels is not None:
            self._label_ids = [
                -1 if label is None else vocab.get_token_index(label, self.label_namespace) for label in self.tree.labels
            ]

    def get_padding_lengths(self) -> Dict[str, int]:
        return {"num_internal": len(self.tree.children)}

    def as_tensor(self, padding_lengths: Dict[str, int]) -> Dict[str, torch.Tensor]:
        max_internal = padding_lengths["num_internal"]
        max_leaves = max_internal + 1  # a binary tree with k internal nodes has k+1 leaves
        n = len(self.tree.leaves)
        num_internal = len(self.tree.children)

        def to_buffer(node: int) -> int:
            return node if node < n else max_leaves + (node - n)

        children = torch.zeros(max_internal, 2, dtype=torch.long)
        heights = torch.zeros(max_internal, dtype=torch.long)
        mask = torch.zeros(max_internal, dtype=torch.bool)
        if num_internal:
            children[:num_internal] = torch.tensor([[to_buffer(l), to_buffer(r)] for l, r in self.tree.children])
            heights[:num_internal] = torch.tensor(self.tree.heights())
            mask[:num_internal] = True
        root = torch.tensor(max_leaves + num_internal - 1 if num_internal else 0)
        tensors = {"children": children, "heights": heights, "mask": mask, "root": root}
        if self.tree.labels is not None:
            if self._label_ids is None:
                raise RuntimeError("BinaryTreeField with labels: call index(vocab) before as_tensor")
            labels = torch.full((max_leaves + max_internal,), -1, dtype=torch.long)
            labels[:n] = torch.tensor(self._label_ids[:n], dtype=torch.long)
            labels[max_leaves : max_leaves + num_internal] = torch.tensor(self._label_ids[n:], dtype=torch.long)
            tensors["labels"] = labels
        return tensors

    def empty_field(self) -> "BinaryTreeField":
        empty = BinaryTreeField(BinaryTree([], [], [] if self.tree.labels is not None else None), self.label_namespace)
        empty._label_ids = [] if self.tree.labels is not None else None
        return empty

    def batch_tensors(self, tensor_list: List[Dict[str, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        return {key: torch.stack([tensors[key] for tensors in tensor_list]) for key in tensor_list[0]}

    def __len__(self) -> int:
        return len(self.tree.leaves)

    def human_readable_repr(self) -> Dict[str, list]:
        readable = {"leaves": self.tree.leaves, "children": [list(pair) for pair in self.tree.children]}
        if self.tree.labels is not None:
            readable["labels"] = self.tree.labels
        return readable

    def __str__(self) -> str:
        return f"BinaryTreeField with {len(self.tree.leaves)} leaves and {len(self.tree.children)} internal nodes."


def batch_trees(trees: List[BinaryTree]) -> Tuple[Dict[str, torch.Tensor], torch.BoolTensor]:
    """The batched `BinaryTreeField` tensors of `trees` (no labels) and the mask of their leaves (the tokens), as a
    data loader would give them to a tree encoder."""
    fields = [BinaryTreeField(BinaryTree(tree.leaves, tree.children)) for tree in trees]
    padding = {"num_internal": max(max(len(tree.children) for tree in trees), 0)}
    tensors = fields[0].batch_tensors([field.as_tensor(padding) for field in fields])
    mask = torch.zeros(len(trees), padding["num_internal"] + 1, dtype=torch.bool)
    for b, tree in enumerate(trees):
        mask[b, : len(tree.leaves)] = True
    return tensors, mask


def trees_of_batch(mask: torch.BoolTensor, tensors: Dict[str, torch.Tensor]) -> List[BinaryTree]:
    """The trees (structure only; leaves named by position) that batched `BinaryTreeField` tensors describe: the
    inverse of `batch_trees`."""
    max_leaves = mask.size(1)
    trees = []
    for b, n in enumerate(mask.sum(1).tolist()):
        num_internal = int(tensors["mask"][b].sum())
        to_node = lambda row: row if row < max_leaves else n + row - max_leaves  # noqa: E731
        children = [(to_node(left), to_node(right)) for left, right in tensors["children"][b, :num_internal].tolist()]
        trees.append(BinaryTree([str(i) for i in range(n)], children))
    return trees
