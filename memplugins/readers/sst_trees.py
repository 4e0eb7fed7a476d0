import logging
import re
from typing import Dict, Iterable, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import MetadataField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token, Tokenizer

from memplugins.fields.binary_tree_field import PTB_UNESCAPE, BinaryTree, BinaryTreeField
from memplugins.readers.errors import MalformedInputError, nonempty, numbered_lines
from memplugins.readers.truncation import TruncationCount
from memplugins.tokenizers.spacy_blank import SpacyBlankTokenizer

logger = logging.getLogger(__name__)

# SST's five classes 0 (very negative) .. 4 (very positive) mapped per granularity; None drops the label.
SST_CLASSES = ("0", "1", "2", "3", "4")
GRANULARITIES: Dict[str, Dict[str, Optional[str]]] = {
    "5-class": {str(i): str(i) for i in range(5)},
    "3-class": {"0": "0", "1": "0", "2": "1", "3": "2", "4": "2"},
    "2-class": {"0": "0", "1": "0", "2": None, "3": "1", "4": "1"},
}


def unescape_sst_word(word: str) -> str:
    """A treebank word with its PTB escapes undone (`-LRB-` -> `(`, `\\/` -> `/`, `\\*` -> `*`), as `parse_sst_tree`
    reads it."""
    return PTB_UNESCAPE.get(word, word).replace("\\/", "/").replace("\\*", "*")


def parse_sst_tree(text: str) -> BinaryTree:
    """
    Parses one PTB-format Stanford Sentiment Treebank tree, e.g. `(3 (2 It) (4 (2 's) (3 lovely)))`: every node is
    `(label word)` or `(label left right)`. Returns the `BinaryTree` (see `memplugins.fields.binary_tree_field`) with
    the raw labels "0".."4" of every node (leaves first, internal nodes in post-order). PTB escapes (`-LRB-`, `\\/`)
    are undone. Raises `ValueError` for unbalanced brackets, a non-numeric label, a node with more than two children
    or a unary node over a phrase.
    """
    # split on ASCII whitespace only: some words contain a no-break space (e.g. the film title "8\u00a01/2")
    tokens = [t for t in re.split(r"[ \t\r\n]+", text.replace("(", " ( ").replace(")", " ) ")) if t]
    leaves: List[str] = []
    leaf_labels: List[str] = []
    children: List[Tuple[int, int]] = []
    internal_labels: List[str] = []
    position = 0

    def parse_node() -> int:
        """Parses the node starting at `position`; returns its provisional id (leaf i >= 0, internal j as -(j+1))."""
        nonlocal position
        if position >= len(tokens) or tokens[position] != "(":
            found = tokens[position] if position < len(tokens) else "end of line"
            raise ValueError(f"expected '(' at token {position + 1}, found {found!r} (unbalanced brackets?)")
        position += 1
        if position >= len(tokens):
            raise ValueError("unbalanced brackets: the tree ends after '('")
        label = tokens[position]
        if label not in SST_CLASSES:  # (str.isdigit accepts '٣', '³': not SST labels)
            raise ValueError(f"node label {label!r} is not a sentiment class 0-4")
        position += 1
        if position < len(tokens) and tokens[position] not in "()":  # a leaf: (label word)
            word = tokens[position]
            position += 1
            leaves.append(unescape_sst_word(word))
            leaf_labels.append(label)
            node = len(leaves) - 1
            items = 1
        else:
            subtrees = []
            while position < len(tokens) and tokens[position] == "(":
                subtrees.append(parse_node())
            if len(subtrees) > 2:
                raise ValueError(f"a node with {len(subtrees)} children (the trees must be binary)")
            if len(subtrees) != 2:
                raise ValueError("a unary node over a phrase (SST trees are binary with no unary chains)")
            children.append((subtrees[0], subtrees[1]))
            internal_labels.append(label)
            node = -len(children)
            items = 2
        if position >= len(tokens) or tokens[position] != ")":
            found = tokens[position] if position < len(tokens) else "end of line"
            if items == 1 and found not in "()":
                raise ValueError(f"a leaf with more than one word ({found!r}): the trees must be binary")
            raise ValueError(f"expected ')' at token {position + 1}, found {found!r} (unbalanced brackets?)")
        position += 1
        return node

    if not tokens:
        raise ValueError("empty tree")
    try:
        parse_node()
    except RecursionError:
        raise ValueError("the tree is nested too deeply to read (SST trees are a few dozen levels deep)") from None
    if position != len(tokens):
        raise ValueError(f"unbalanced brackets: {len(tokens) - position} tokens after the root's ')'")
    n = len(leaves)
    renumber = lambda node: node if node >= 0 else n + (-node - 1)  # noqa: E731
    return BinaryTree(leaves, [(renumber(l), renumber(r)) for l, r in children], leaf_labels + internal_labels)


@DatasetReader.register("sst_trees")
class SstTreesReader(DatasetReader):
    """
    Reads the Stanford Sentiment Treebank in its PTB tree format (`trees/{train,dev,test}.txt`, one tree per line)
    keeping the tree: each instance has the leaves as `tokens`, a `tree` `BinaryTreeField` with a label for every
    node (label namespace `labels`), and `metadata` (the tokens and the tree, for readable predictions).

    Granularity: "5-class" keeps the labels 0-4; "3-class" maps 0-1 / 2 / 3-4 to 0 / 1 / 2; "2-class" maps 0-1 to 0
    and 3-4 to 1 and, as the standard binary protocol does, leaves neutral nodes unlabelled and drops sentences
    whose root is neutral (counted and logged).

    `text_to_instance` also takes a plain sentence (no brackets): it is tokenized with `tokenizer` and given the
    documented default binarisation, right-branching `(w_1 (w_2 (... (w_{n-1} w_n))))`, without labels.

    Registered as a `DatasetReader` with name "sst_trees".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `{"tokens": SingleIdTokenIndexer()}`)
    granularity : `str`, optional (default = `"5-class"`)
        "5-class", "3-class" or "2-class".
    root_only : `bool`, optional (default = `False`)
        Keep only the root's label (every other node unlabelled): sentence-level supervision.
    tokenizer : `Tokenizer`, optional (default = `spacy_blank`)
        Tokenizes plain sentences given to `text_to_instance` (the treebank itself is already tokenized).
    max_tokens : `int`, optional (default = `None`)
        Trees with more leaves are skipped (a tree cannot be cut) and counted when reading a file; a plain sentence
        given to `text_to_instance` is truncated to this many tokens, a longer tree refused.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        granularity: str = "5-class",
        root_only: bool = False,
        tokenizer: Optional[Tokenizer] = None,
        max_tokens: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self._truncation = TruncationCount("max_tokens", max_tokens)
        if granularity not in GRANULARITIES:
            raise ConfigurationError(f"sst_trees: granularity must be one of {list(GRANULARITIES)}, got {granularity!r}")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._granularity = granularity  # the name allennlp-models' `sst_tokens` keeps it under
        self._label_map = GRANULARITIES[granularity]
        self._root_only = root_only
        self._tokenizer = tokenizer or SpacyBlankTokenizer()

    def _read(self, file_path: str) -> Iterable[Instance]:
        # every worker parses the whole file (cheap) and keeps its share of the trees, so an empty file is known
        dropped = {"neutral": 0, "long": 0}
        trees = nonempty(self._trees(file_path, dropped), file_path, "sst_trees",
                         lambda: f"{dropped['neutral']} sentences with a neutral root dropped (2-class protocol), "
                                 f"{dropped['long']} longer than max_tokens")
        for tree in self.shard_iterable(trees):
            yield self._instance(tree)
        if dropped["neutral"]:
            logger.info("sst_trees: dropped %d sentences with a neutral root from %s (2-class protocol)",
                        dropped["neutral"], file_path)
        if dropped["long"]:
            logger.info("sst_trees: skipped %d trees with more than max_tokens=%d leaves in %s", dropped["long"],
                        self._truncation.limit, file_path)

    def _trees(self, file_path: str, dropped: dict) -> Iterable[BinaryTree]:
        for line_number, line in numbered_lines(file_path):
            line = line.strip()
            if not line:
                continue
            try:
                tree = parse_sst_tree(line)
            except ValueError as error:
                raise MalformedInputError(file_path, line_number, f"malformed SST tree: {error}") from None
            tree.labels = self._map_labels(tree.labels)
            if tree.labels[-1] is None:  # the root is neutral in 2-class
                dropped["neutral"] += 1
                continue
            if self._truncation.limit is not None and len(tree.leaves) > self._truncation.limit:
                dropped["long"] += 1
                continue
            yield tree

    def _map_labels(self, raw_labels: List[str]) -> List[Optional[str]]:
        labels = [self._label_map[label] for label in raw_labels]
        if self._root_only:
            labels = [None] * (len(labels) - 1) + labels[-1:]
        return labels

    def _instance(self, tree: BinaryTree) -> Instance:
        fields = {
            "tokens": TextField([Token(word) for word in tree.leaves], self._token_indexers),
            "tree": BinaryTreeField(tree),
            "metadata": MetadataField({"tokens": tree.leaves, "tree": tree}),
        }
        return Instance(fields)

    def text_to_instance(self, sentence: str) -> Instance:  # type: ignore
        """A PTB-format tree (its labels are ignored) or a plain sentence (right-branching); no targets."""
        if sentence.lstrip().startswith("("):
            tree = parse_sst_tree(sentence)
            tree.labels = None  # a tree given for prediction is not a target
            if self._truncation.limit is not None and len(tree.leaves) > self._truncation.limit:
                raise ValueError(f"sst_trees: the tree has {len(tree.leaves)} leaves; max_tokens is "
                                 f"{self._truncation.limit} (a tree cannot be cut)")
        else:
            words = self._truncation([token.text for token in self._tokenizer.tokenize(sentence)])
            if not words:
                raise ValueError("sst_trees: empty sentence")
            tree = BinaryTree.right_branching(words)
        return self._instance(tree)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance["tokens"].token_indexers = self._token_indexers  # type: ignore
