import logging
from typing import Any, Dict, List, Optional

from allennlp.data.tokenizers import Token, Tokenizer

logger = logging.getLogger(__name__)


class TruncationCount:
    """
    Truncates token lists to a limit and counts how many were cut, so that a reader can log, once per file, how many
    instances `max_tokens` (or a similar option) changed, as AllenNLP's `seq2seq` reader does for
    `source_max_tokens`. `limit=None` truncates nothing. `recent` holds the lengths of the texts cut since
    `take_cuts` last read them (a predictor reads them after building each input's instance, to say so in its
    output); it keeps the latest `RECENT` only, so reading a file does not grow it.
    """

    RECENT = 64

    def __init__(self, option: str, limit: Optional[int]) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"{option} must be at least 1, got {limit}")
        self.option = option
        self.limit = limit
        self.truncated = 0
        self.recent: List[int] = []

    def __call__(self, items: List) -> List:
        if self.limit is not None and len(items) > self.limit:
            self.truncated += 1
            self.recent = self.recent[-(self.RECENT - 1):] + [len(items)]
            return items[: self.limit]
        return items

    def log_and_reset(self, reader: str, file_path: str) -> None:
        if self.truncated:
            logger.info("%s: truncated %d texts to %s=%d in %s", reader, self.truncated, self.option, self.limit,
                        file_path)
        self.truncated = 0


def take_cuts(reader: Any) -> List[Dict[str, Any]]:
    """What every `TruncationCount` of `reader` cut since this was last called (`{"option", "limit", "length"}`
    per text cut, `length` its tokens before the cut), clearing them."""
    cuts = []
    for count in vars(reader).values():
        if isinstance(count, TruncationCount) and count.recent:
            cuts += [{"option": count.option, "limit": count.limit, "length": length} for length in count.recent]
            count.recent = []
    return cuts


class TruncatingTokenizer(Tokenizer):
    """A tokenizer whose output is cut to `count.limit` tokens (special tokens are added after, by the reader)."""

    def __init__(self, tokenizer: Tokenizer, count: TruncationCount) -> None:
        self.tokenizer = tokenizer
        self.count = count

    def tokenize(self, text: str) -> List[Token]:
        return self.count(self.tokenizer.tokenize(text))

    def add_special_tokens(self, tokens1: List[Token], tokens2: Optional[List[Token]] = None) -> List[Token]:
        return self.tokenizer.add_special_tokens(tokens1, tokens2)

    def num_special_tokens_for_sequence(self) -> int:
        return self.tokenizer.num_special_tokens_for_sequence()

    def num_special_tokens_for_pair(self) -> int:
        return self.tokenizer.num_special_tokens_for_pair()
