"""
Where the nodes of a batch of binary trees live, shared by the tree encoders (`tree_lstm`, `tree_rnn`) and their
fast path: a flat node buffer of `batch_size * num_nodes` rows, each tree's rows in the order of
`memplugins.fields.BinaryTreeField` (its leaves, then its internal nodes), and the internal nodes grouped by
height, so that an encoder computes one level of the whole batch at a time.
"""
from typing import Dict, List, NamedTuple, Tuple

import torch
from allennlp.common.checks import ConfigurationError

from memplugins.fields.binary_tree_field import BinaryTree, BinaryTreeField


class TreeLevels(NamedTuple):
    """Where a batch of trees' nodes live in a flat node buffer of `batch_size * num_nodes` rows (the field's node
    order per tree: leaves, then internal nodes), and its internal nodes grouped by height, lowest first."""

    num_nodes: int  # per tree: max_leaves + max_internal
    leaf_rows: torch.Tensor  # (B * max_leaves,): the leaves' rows
    levels: List[Tuple[torch.Tensor, torch.Tensor]]  # per height >= 1: parents' rows (n,), their children's (n, 2)


def nodes_per_tree(encoder: str, mask: torch.BoolTensor, tree: Dict[str, torch.Tensor]) -> int:
    """max_leaves + max_internal, after checking that the leaves are exactly the tokens."""
    max_leaves, max_internal = mask.size(1), tree["children"].size(1)
    if max_leaves != max_internal + 1:
        raise ConfigurationError(
            f"{encoder}: {max_leaves} leaf positions but trees with up to {max_internal} internal nodes; the "
            "leaves must be exactly the tokens (no start/end tokens)"
        )
    return max_leaves + max_internal


def tree_levels(encoder: str, mask: torch.BoolTensor, tree: Dict[str, torch.Tensor]) -> TreeLevels:
    """The node layout of `tree` (a `BinaryTreeField`'s tensors) over leaves `mask`, shared by the tree encoders.
    The internal nodes are sorted by height once, so that each level is a slice (padding has height 0: dropped)."""
    batch_size, max_leaves = mask.shape
    max_internal = tree["children"].size(1)
    num_nodes = nodes_per_tree(encoder, mask, tree)
    device = mask.device
    offsets = (torch.arange(batch_size, device=device) * num_nodes).unsqueeze(1)
    node_ids = offsets + max_leaves + torch.arange(max_internal, device=device)  # (B, max_internal), flat
    child_ids = offsets.unsqueeze(-1) + tree["children"]  # (B, max_internal, 2), flat
    leaf_rows = (offsets + torch.arange(max_leaves, device=device)).view(-1)
    heights = tree["heights"].masked_fill(~tree["mask"], 0).view(-1)
    order = torch.argsort(heights, stable=True)
    level_sizes = torch.bincount(heights).tolist() if max_internal else [heights.numel()]
    sorted_parents = node_ids.reshape(-1)[order]
    sorted_children = child_ids.reshape(-1, 2)[order]
    levels = []
    start = level_sizes[0]
    for size in level_sizes[1:]:
        levels.append((sorted_parents[start : start + size], sorted_children[start : start + size]))
        start += size
    return TreeLevels(num_nodes, leaf_rows, levels)


class SidedLevels(NamedTuple):
    """A batch of trees' internal nodes by height, each level ordered left children, right children, roots."""

    levels: List[Tuple[torch.Tensor, torch.Tensor, int, int]]  # parents' rows (n,), children's (2n,), #left, #right
    leaf_rows: Tuple[torch.Tensor, torch.Tensor]  # node rows of the leaves that are left / right children
    leaf_positions: Tuple[torch.Tensor, torch.Tensor]  # their positions in the flattened (B * max_leaves) inputs


def sided_levels(mask: torch.BoolTensor, tree: Dict[str, torch.Tensor], num_nodes: int) -> SidedLevels:
    """The node layout of `tree` (a `BinaryTreeField`'s tensors; rows as in `tree_levels`) with sides."""
    batch_size, max_leaves = mask.shape
    max_internal = tree["children"].size(1)
    device = mask.device
    offsets = (torch.arange(batch_size, device=device) * num_nodes).unsqueeze(1)
    node_ids = (offsets + max_leaves + torch.arange(max_internal, device=device)).view(-1)
    real = tree["mask"].view(-1)
    child_ids = (offsets.unsqueeze(-1) + tree["children"]).view(-1, 2)
    side = torch.full((batch_size * num_nodes,), 2, dtype=torch.long, device=device)  # 2: no parent
    side[child_ids[real, 0]] = 0
    side[child_ids[real, 1]] = 1
    heights = tree["heights"].view(-1).masked_fill(~real, 0)
    key = heights * 3 + side[node_ids]  # sorted by height, then left, right, root
    order = torch.argsort(key, stable=True)
    counts = torch.bincount(key, minlength=3).tolist()
    parents, children = node_ids[order], child_ids[order]
    levels, start = [], sum(counts[:3])  # height 0: padding
    for height in range(1, len(counts) // 3 + 1):
        left, right, root = counts[3 * height : 3 * height + 3] + [0] * max(0, 3 * height + 3 - len(counts))
        n = left + right + root
        if n:
            level_children = children[start : start + n]
            levels.append((parents[start : start + n], level_children.t().reshape(-1), left, right))
        start += n
    leaf_rows = (offsets + torch.arange(max_leaves, device=device)).view(-1)
    leaf_side = side[leaf_rows]
    positions = torch.arange(batch_size * max_leaves, device=device)
    return SidedLevels(
        levels,
        (leaf_rows[leaf_side == 0], leaf_rows[leaf_side == 1]),
        (positions[leaf_side == 0], positions[leaf_side == 1]),
    )


def right_branching_trees(mask: torch.BoolTensor) -> Dict[str, torch.Tensor]:
    """`BinaryTreeField` tensors of the default right-branching tree over each sequence's real tokens."""
    trees = [BinaryTree.right_branching(["_"] * max(n, 1)) for n in mask.sum(1).tolist()]
    fields = [BinaryTreeField(tree) for tree in trees]
    padding = {"num_internal": mask.size(1) - 1}
    return {k: v.to(mask.device) for k, v in fields[0].batch_tensors([f.as_tensor(padding) for f in fields]).items()}
