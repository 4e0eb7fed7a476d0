import logging
from typing import Any, Dict, Iterable, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.common.file_utils import cached_path
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, LabelField, MetadataField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import TokenIndexer
from allennlp.data.tokenizers import Token, Tokenizer
from allennlp_models.pair_classification.dataset_readers.snli import SnliReader, maybe_collapse_label

from memplugins.fields import BinaryTree, BinaryTreeField, parse_binary_tree
from memplugins.readers.errors import (
    MalformedInputError, no_instances_error, numbered_lines, parse_json_object, require_text,
)
from memplugins.readers.truncation import TruncatingTokenizer, TruncationCount
from memplugins.tokenizers import SpacyBlankTokenizer

logger = logging.getLogger(__name__)

SNLI_LABELS = ("entailment", "neutral", "contradiction")


@DatasetReader.register("snli_parsed")
class SnliParsedReader(SnliReader):
    """
    Reads SNLI / MultiNLI-style `.jsonl` or `.jsonl.gz` files (one JSON object per line with `gold_label`,
    `sentence1`, `sentence2` and, for trees, `sentence1_binary_parse` / `sentence2_binary_parse`), producing the
    same fields as allennlp-models' `snli` reader: `premise` and `hypothesis` `TextField`s (or one combined
    `tokens` field), a `metadata` field with the token strings, and a `label` `LabelField`.

    Differences from `snli`:

    * the default tokenizer is `spacy_blank` (offline; `snli`'s default downloads a spaCy model);
    * gzip input is read directly; blank lines are ignored;
    * lines whose gold label is `-` (no annotator majority) are skipped, as `snli` does, and the number skipped is
      logged once per file;
    * a malformed line — invalid JSON, not an object, a missing key, an unknown label, an empty sentence, or an
      invalid binary parse — raises `MalformedInputError` naming the file and the 1-based line number, instead of
      a bare `KeyError` / `JSONDecodeError` / `AssertionError`;
    * with `parse_trees=True`, each instance also has `premise_tree` and `hypothesis_tree` `BinaryTreeField`s
      (see `memplugins.fields.binary_tree_field` for the node numbering and tensors). The tokens are then the
      parse's leaves (PTB escapes such as `-LRB-` unescaped) rather than the tokenizer's output, so that tree
      leaves and `TextField` positions coincide.

    Registered as a `DatasetReader` with name "snli_parsed".

    # Parameters

    tokenizer : `Tokenizer`, optional (default = `SpacyBlankTokenizer()`)
        Tokenizer for premise and hypothesis when `parse_trees` is false.
    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `{"tokens": SingleIdTokenIndexer()}`)
    combine_input_fields : `bool`, optional
        As in `snli`: one `tokens` field for the pair (default: only for pretrained-transformer tokenizers).
        Cannot be combined with `parse_trees`.
    collapse_labels : `bool`, optional (default = `False`)
        As in `snli`: map "neutral" and "contradiction" to "non-entailment".
    parse_trees : `bool`, optional (default = `False`)
        Add the binary parse trees as `premise_tree` / `hypothesis_tree` fields.
    max_tokens : `int`, optional (default = `None`)
        Truncate premise and hypothesis to this many tokens (the number truncated is logged once per file). A parse
        tree cannot be truncated, so with `parse_trees` the pairs with a longer side are skipped (and counted) when
        reading a file; `text_to_instance` (prediction) keeps them whole.
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        combine_input_fields: Optional[bool] = None,
        collapse_labels: bool = False,
        parse_trees: bool = False,
        max_tokens: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(
            tokenizer=tokenizer or SpacyBlankTokenizer(),
            token_indexers=token_indexers,
            combine_input_fields=combine_input_fields,
            collapse_labels=collapse_labels,
            **kwargs,
        )
        if parse_trees and self._combine_input_fields:
            raise ConfigurationError("snli_parsed: parse_trees=True needs separate premise/hypothesis fields")
        self.parse_trees = parse_trees
        self._truncation = TruncationCount("max_tokens", max_tokens)
        if max_tokens is not None:  # wrapped after SnliReader has looked at the tokenizer's type
            self._tokenizer = TruncatingTokenizer(self._tokenizer, self._truncation)

    def _read(self, file_path: str) -> Iterable[Instance]:
        yield from self.shard_iterable(self._read_examples(cached_path(file_path)))

    def _read_examples(self, file_path: str) -> Iterable[Instance]:
        required = ["gold_label", "sentence1", "sentence2"]
        if self.parse_trees:
            required += ["sentence1_binary_parse", "sentence2_binary_parse"]
        skipped = too_long = read = 0
        for line_number, line in numbered_lines(file_path):
            if not line.strip():
                continue
            example = parse_json_object(line, file_path, line_number)
            for key in required:
                if key not in example:
                    raise MalformedInputError(file_path, line_number, f"missing key {key!r}")
            label = example["gold_label"]
            if label == "-":
                skipped += 1
                continue
            if label not in SNLI_LABELS:
                raise MalformedInputError(
                    file_path, line_number, f"unknown gold_label {label!r} (expected one of {', '.join(SNLI_LABELS)} or '-')"
                )
            instance = self._example_to_instance(example, label, file_path, line_number)
            if self.parse_trees and self._truncation.limit is not None and max(
                len(instance["premise"]), len(instance["hypothesis"])
            ) > self._truncation.limit:
                too_long += 1
                continue
            read += 1
            yield instance
        if not read:
            raise no_instances_error(file_path, "snli_parsed", f"{skipped} pairs with gold_label '-' skipped, "
                                     f"{too_long} longer than max_tokens")
        logger.info("snli_parsed: skipped %d pairs with gold_label '-' in %s", skipped, file_path)
        if too_long:
            logger.info("snli_parsed: skipped %d parsed pairs longer than max_tokens=%d in %s", too_long,
                        self._truncation.limit, file_path)
        self._truncation.log_and_reset("snli_parsed", file_path)

    def _example_to_instance(self, example: Dict[str, Any], label: str, file_path: str, line_number: int) -> Instance:
        for key in ("sentence1", "sentence2") + (("sentence1_binary_parse", "sentence2_binary_parse") if self.parse_trees else ()):
            require_text(example[key], file_path, line_number, key)
        if not self.parse_trees:
            return self.text_to_instance(example["sentence1"], example["sentence2"], label)
        try:
            return self.text_to_instance(
                example["sentence1"],
                example["sentence2"],
                label,
                premise_binary_parse=example["sentence1_binary_parse"],
                hypothesis_binary_parse=example["sentence2_binary_parse"],
            )
        except ValueError as error:
            raise MalformedInputError(file_path, line_number, str(error)) from None

    def text_to_instance(  # type: ignore
        self,
        premise: str,
        hypothesis: str,
        label: Optional[str] = None,
        premise_binary_parse: Optional[str] = None,
        hypothesis_binary_parse: Optional[str] = None,
    ) -> Instance:
        """
        With `parse_trees`, `premise_binary_parse` and `hypothesis_binary_parse` are required (a `ValueError`
        says so) and give both the tokens and the trees; otherwise they are ignored.
        """
        if not self.parse_trees:
            return super().text_to_instance(premise, hypothesis, label)
        if premise_binary_parse is None or hypothesis_binary_parse is None:
            raise ValueError(
                "this reader has parse_trees=True: give 'sentence1_binary_parse' and 'sentence2_binary_parse'"
            )
        premise_tree = parse_binary_tree(premise_binary_parse)
        hypothesis_tree = parse_binary_tree(hypothesis_binary_parse)
        fields: Dict[str, Field] = {
            "premise": TextField(self._leaf_tokens(premise_tree)),
            "hypothesis": TextField(self._leaf_tokens(hypothesis_tree)),
            "premise_tree": BinaryTreeField(premise_tree),
            "hypothesis_tree": BinaryTreeField(hypothesis_tree),
            "metadata": MetadataField(
                {"premise_tokens": list(premise_tree.leaves), "hypothesis_tokens": list(hypothesis_tree.leaves)}
            ),
        }
        if label:
            fields["label"] = LabelField(maybe_collapse_label(label, self.collapse_labels))
        return Instance(fields)

    @staticmethod
    def _leaf_tokens(tree: BinaryTree) -> list:
        return [Token(leaf) for leaf in tree.leaves]
