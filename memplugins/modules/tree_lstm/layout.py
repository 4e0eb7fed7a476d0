"""
Where the nodes of a batch of binary trees live, shared by the tree encoders (`tree_lstm`, `tree_rnn`) and their
fast path: a flat node buffer of `batch_size * num_nodes` rows, each tree's rows in the order of
`memplugins.fields.BinaryTreeField` (its leaves, then its internal nodes), and the internal nodes grouped by
height, so that an encoder computes one level of the whole batch at a time.
"""
from typing import Dict, List, NamedTuple, Optional, Tuple

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
    """
    A batch of trees' internal nodes by height, flat: level h occupies `parents[o_h : o_h + n_h]` and its children
    `children[2 o_h : 2 o_h + 2 n_h]` (the left children, then the right ones, in the parents' order), where
    `structure[h - 1]` = (#left, #right, #root) of the level and n_h their sum. A level's parents are ordered: left
    children, right children, roots (exact: no `level_bucket`), or, with the capacities of a graph key (a
    `level_bucket`): left children and roots, padding, then right children, padding; a padding parent is row
    `num_rows - 1`, which nothing reads, and its children are row `num_rows - 2`, which nothing writes.
    """

    parents: torch.Tensor  # (P,): node rows
    children: torch.Tensor  # (2P,)
    structure: Tuple[Tuple[int, int, int], ...]  # per level from height 1: (#left, #right, #root)
    leaf_rows: Tuple[torch.Tensor, torch.Tensor]  # node rows of the leaves that are left / right children
    leaf_positions: Tuple[torch.Tensor, torch.Tensor]  # their positions in the flattened (B * max_leaves) inputs
    num_rows: int  # the node buffer's rows: B * num_nodes, and for a graph key the two rows above

    @property
    def num_levels(self) -> int:
        return len(self.structure)


def level_capacities(batch_size: int, max_leaves: int, num_levels: int) -> List[Tuple[int, int]]:
    """
    Per height h = 1..num_levels, how many left children (and roots) and how many right children a batch of
    `batch_size` trees of at most `max_leaves` leaves can have at h: the fixed level sizes of a graph key. Why they
    hold: nodes of one height are never ancestors of each other, so their subtrees are disjoint, each with at least
    h + 1 leaves; no left child's subtree holds its tree's last leaf, and no right child's its first, so a tree has
    at most (L - 1) // (h + 1) of each; and a root at height h is the tree's only node there.
    """
    capacities = []
    for height in range(1, num_levels + 1):
        per_tree = (max_leaves - 1) // (height + 1)
        capacities.append((batch_size * max(1, per_tree), batch_size * per_tree))
    return capacities


def sided_levels(mask: torch.BoolTensor, tree: Dict[str, torch.Tensor], num_nodes: int,
                 level_bucket: Optional[int] = None) -> SidedLevels:
    """
    The node layout of `tree` (a `BinaryTreeField`'s tensors; rows as in `tree_levels`) with sides. With
    `level_bucket`, the layout of a graph key: the batch's height rounded up to a multiple of it (at most
    max_leaves - 1) levels, each of the fixed size `level_capacities` gives, padded as the `SidedLevels` docstring
    says.
    """
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
    padded = level_bucket is not None
    # a level's sections in order: exact left, right, root; padded left, root | right (roots ride with the left)
    section = torch.tensor([0, 2, 1] if padded else [0, 1, 2], device=device)[side[node_ids]]
    key = heights * 3 + section
    order = torch.argsort(key, stable=True)
    counts = torch.bincount(key, minlength=3).tolist()
    num_levels = (len(counts) - 1) // 3  # the batch's height
    padded_levels = min(max_leaves - 1, -(-num_levels // level_bucket) * level_bucket) if padded else num_levels
    counts += [0] * (3 * (padded_levels + 1) - len(counts))
    per_level = [counts[3 * h : 3 * h + 3] for h in range(1, len(counts) // 3)]  # by section, from height 1
    if padded:
        capacities = level_capacities(batch_size, max_leaves, padded_levels)
        for height, ((left, root, right), (left_capacity, right_capacity)) in enumerate(zip(per_level, capacities), 1):
            if left + root > left_capacity or right > right_capacity:  # not binary trees over the mask's leaves
                raise ValueError(f"malformed tree tensors: {left} left children and {root} roots, {right} right "
                                 f"children at height {height} in {batch_size} trees of at most {max_leaves} leaves")
        structure = tuple((left, right, 0) for left, right in capacities)
        sections = [(0, per_level[h][0], left) for h, (left, _) in enumerate(capacities)]  # offsets in the level
    else:
        structure = tuple((left, right, root) for left, right, root in per_level)
        sections = [(0, left, left + right) for left, right, _ in per_level]
    # where each sorted node goes: its level's offset + its section's offset + its rank in its (height, section)
    group_starts = [0]
    for count in counts[:-1]:
        group_starts.append(group_starts[-1] + count)
    level_offset, offset_by_key, left_child_by_key, right_child_by_key = 0, [0, 0, 0], [0, 0, 0], [0, 0, 0]
    for level, (sizes, offsets_in_level) in enumerate(zip(structure, sections), 1):
        size = sum(sizes)
        for s in range(3):
            position = level_offset + offsets_in_level[s] - group_starts[3 * level + s]
            offset_by_key.append(position)
            left_child_by_key.append(level_offset)
            right_child_by_key.append(level_offset + size)
        level_offset += size
    num_rows = batch_size * num_nodes + (2 if padded else 0)
    start = sum(counts[:3])  # height 0: padding
    sorted_keys = key[order][start:]
    by_key = torch.tensor([offset_by_key, left_child_by_key, right_child_by_key], device=device)[:, sorted_keys]
    positions = torch.arange(start, len(order), device=device) + by_key[0]
    parents = torch.full((level_offset,), num_rows - 1, dtype=torch.long, device=device)
    children = torch.full((2 * level_offset,), num_rows - 2, dtype=torch.long, device=device)
    parents[positions] = node_ids[order][start:]
    sorted_children = child_ids[order][start:]
    children[positions + by_key[1]] = sorted_children[:, 0]
    children[positions + by_key[2]] = sorted_children[:, 1]
    leaf_rows = (offsets + torch.arange(max_leaves, device=device)).view(-1)
    leaf_side = side[leaf_rows]
    flat_positions = torch.arange(batch_size * max_leaves, device=device)
    return SidedLevels(
        parents,
        children,
        structure,
        (leaf_rows[leaf_side == 0], leaf_rows[leaf_side == 1]),
        (flat_positions[leaf_side == 0], flat_positions[leaf_side == 1]),
        num_rows,
    )


def pad_leaves(inputs: torch.Tensor, mask: torch.BoolTensor, tree: Dict[str, torch.Tensor],
               max_leaves: int) -> Tuple[torch.Tensor, torch.BoolTensor, Dict[str, torch.Tensor]]:
    """The same batch with `max_leaves` leaf positions and max_leaves - 1 internal slots, as `BinaryTreeField`
    pads: padding leaves and internal slots, the internal nodes' rows moved up (a graph key's shapes)."""
    batch_size, current = mask.shape
    extra = max_leaves - current
    if extra == 0:
        return inputs, mask, tree
    children = tree["children"]
    children = torch.where(children >= current, children + extra, children)
    return (
        torch.cat([inputs, inputs.new_zeros(batch_size, extra, inputs.size(2))], 1),
        torch.cat([mask, mask.new_zeros(batch_size, extra)], 1),
        {
            "children": torch.cat([children, children.new_zeros(batch_size, extra, 2)], 1),
            "heights": torch.cat([tree["heights"], tree["heights"].new_zeros(batch_size, extra)], 1),
            "mask": torch.cat([tree["mask"], tree["mask"].new_zeros(batch_size, extra)], 1),
        },
    )


def right_branching_trees(mask: torch.BoolTensor) -> Dict[str, torch.Tensor]:
    """`BinaryTreeField` tensors of the default right-branching tree over each sequence's real tokens."""
    trees = [BinaryTree.right_branching(["_"] * max(n, 1)) for n in mask.sum(1).tolist()]
    fields = [BinaryTreeField(tree) for tree in trees]
    padding = {"num_internal": mask.size(1) - 1}
    return {k: v.to(mask.device) for k, v in fields[0].batch_tensors([f.as_tensor(padding) for f in fields]).items()}
