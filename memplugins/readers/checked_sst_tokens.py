import logging
from typing import Iterable, List, Optional, Union

from allennlp.common.file_utils import cached_path
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.instance import Instance
from allennlp.data.tokenizers import Token
from allennlp_models.classification.dataset_readers.stanford_sentiment_tree_bank import (
    StanfordSentimentTreeBankDatasetReader,
)
from nltk.tree import Tree

from memplugins.readers.errors import MalformedInputError, nonempty, numbered_lines
from memplugins.readers.sst_trees import parse_sst_tree
from memplugins.readers.truncation import TruncationCount

logger = logging.getLogger(__name__)


@DatasetReader.register("checked_sst_tokens")
class CheckedSstTokensReader(StanfordSentimentTreeBankDatasetReader):
    """
    allennlp-models' `sst_tokens` reader (the same parameters and, for a well-formed file, the same instances:
    nltk's reading of each tree, phrases in its order) behind the checks every memplugins reader makes. Each line is
    first read by `parse_sst_tree`: unbalanced brackets, a node that is not binary, a tree nested too deeply, and a
    label on any node that is not one of the ASCII digits 0-4 (`sst_tokens` takes `٣`, `３` or `³` as a label string,
    and never looks at inner nodes' labels unless `use_subtrees`) are a `MalformedInputError` naming the file and
    line, as are bytes that are not UTF-8 and a truncated `.gz`. A file with no instances is an error, not a 0.0
    evaluation. The shipped SST configs that use `basic_classifier` read through it.

    Registered as a `DatasetReader` with name "checked_sst_tokens".

    # Parameters

    token_indexers, tokenizer, use_subtrees, granularity
        As allennlp-models' `sst_tokens`.
    max_tokens : `int`, optional (default = `None`)
        Cuts a phrase or sentence to this many tokens, in a file and in a prediction input (SST's longest sentence
        has 56; the limit keeps a model quadratic in length, such as the LSTMN or NSE, from a pathological input).
        The count is logged once per file; a prediction says so in its output.
    """

    def __init__(self, max_tokens: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._truncation = TruncationCount("max_tokens", max_tokens)

    def text_to_instance(self, tokens: Union[str, List[Union[str, Token]]],  # type: ignore
                         sentiment: Optional[str] = None) -> Optional[Instance]:
        if not isinstance(tokens, str):
            tokens = self._truncation(list(tokens))
        return super().text_to_instance(tokens, sentiment)

    def _read(self, file_path: str) -> Iterable[Instance]:
        neutral = {"dropped": 0}
        yield from nonempty(self._instances(str(file_path), neutral), str(file_path), "checked_sst_tokens",
                            lambda: f"{neutral['dropped']} neutral sentences dropped (2-class)")
        self._truncation.log_and_reset("checked_sst_tokens", str(file_path))

    def _instances(self, file_path: str, neutral: dict) -> Iterable[Instance]:
        logger.info("Reading instances from lines in file at: %s", file_path)
        for line_number, line in numbered_lines(cached_path(file_path), display_name=file_path):
            if not line.strip():
                continue
            try:
                parse_sst_tree(line)
                parsed = Tree.fromstring(line.strip("\n"))
            except ValueError as error:
                raise MalformedInputError(file_path, line_number, f"malformed SST tree: {error}") from None
            for tree in parsed.subtrees() if self._use_subtrees else [parsed]:
                instance = self.text_to_instance(tree.leaves(), tree.label())
                if instance is None:
                    neutral["dropped"] += 1
                else:
                    yield instance
