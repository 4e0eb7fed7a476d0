import logging
from itertools import zip_longest
from typing import Iterable, Optional

from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.instance import Instance
from allennlp.data.tokenizers import Tokenizer, WhitespaceTokenizer
from allennlp_models.generation.dataset_readers.seq2seq import Seq2SeqDatasetReader

from memplugins.readers.errors import MalformedInputError, no_instances_error, nonempty, numbered_lines
from memplugins.readers.truncation import TruncatingTokenizer, TruncationCount

logger = logging.getLogger(__name__)


@DatasetReader.register("parallel_text")
class ParallelTextReader(Seq2SeqDatasetReader):
    """
    Reads a parallel corpus stored as two line-aligned files, `{file_path}.{source_suffix}` and
    `{file_path}.{target_suffix}` (e.g. IWSLT14's `valid.de-en.en` / `valid.de-en.de`: `file_path` is
    `.../valid.de-en`), into allennlp-models' seq2seq instances (`source_tokens`, `target_tokens`, with the start /
    end symbols of `Seq2SeqDatasetReader`, whose options this reader takes too; for TSV input use its `seq2seq`
    reader). Options from Munkhdalai and Yu (2017, section 4.5): `max_length` drops pairs where either side has
    more words (the paper: 25; the dropped count is logged) and `lowercase`.

    Files of different lengths, or an empty line on either side, raise an error naming the file and line.

    Registered as a `DatasetReader` with name "parallel_text".

    # Parameters

    source_suffix : `str`, optional (default = `"en"`)
    target_suffix : `str`, optional (default = `"de"`)
        The paper translates English to German.
    max_length : `int`, optional (default = `None`)
        Drop pairs whose source or target has more whitespace tokens than this.
    source_max_tokens, target_max_tokens : `int`, optional (default = `None`)
        `Seq2SeqDatasetReader`'s: truncate instead of dropping (the number truncated is logged once per file).
    max_tokens : `int`, optional (default = `None`)
        Cuts a source text to this many tokens, as `source_max_tokens` does, and a prediction says so in its output
        (`truncated`); the shipped configs use it to keep a pathological prediction input from an NSE, whose memory
        is quadratic in length (their training pairs are under `max_length` already).
    lowercase : `bool`, optional (default = `False`)
    source_tokenizer : `Tokenizer`, optional (default = `WhitespaceTokenizer()`)
        The corpus is pre-tokenized; the target tokenizer defaults to the source one.
    **kwargs
        Passed to `Seq2SeqDatasetReader` (token indexers, start / end tokens, ...).
    """

    def __init__(
        self,
        source_suffix: str = "en",
        target_suffix: str = "de",
        max_length: Optional[int] = None,
        lowercase: bool = False,
        source_tokenizer: Optional[Tokenizer] = None,
        max_tokens: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(source_tokenizer=source_tokenizer or WhitespaceTokenizer(), **kwargs)
        self._truncation = TruncationCount("max_tokens", max_tokens)
        if max_tokens is not None:  # the source only: the target tokenizer stays the unwrapped one
            self._source_tokenizer = TruncatingTokenizer(self._source_tokenizer, self._truncation)
        self._source_suffix = source_suffix
        self._target_suffix = target_suffix
        self._max_length = max_length
        self._lowercase = lowercase

    def _read(self, file_path: str) -> Iterable[Instance]:
        source_path = f"{file_path}.{self._source_suffix}"
        target_path = f"{file_path}.{self._target_suffix}"
        dropped = 0
        pairs = zip_longest(numbered_lines(source_path), numbered_lines(target_path))
        lines = ((n, (s and s[1], t and t[1])) for n, (s, t) in enumerate(pairs, start=1))
        lines = nonempty(lines, file_path, "parallel_text")
        kept = 0
        for line_number, (source, target) in self.shard_iterable(lines):
            if source is None or target is None:
                shorter = source_path if source is None else target_path
                raise MalformedInputError(shorter, line_number, "file ends here but its parallel file goes on "
                                          f"({source_path} and {target_path} must have the same number of lines)")
            source, target = source.strip(), target.strip()
            for path, text in ((source_path, source), (target_path, target)):
                if not text:
                    raise MalformedInputError(path, line_number, "empty line in a parallel corpus")
            if self._max_length and max(len(source.split()), len(target.split())) > self._max_length:
                dropped += 1
                continue
            kept += 1
            yield self.text_to_instance(source, target)
        if dropped and not kept and not self._is_sharded():
            raise no_instances_error(file_path, "parallel_text", f"all {dropped} pairs longer than max_length={self._max_length}")
        if dropped:
            logger.info("parallel_text: dropped %d pairs longer than %d words in %s", dropped, self._max_length, file_path)
        # the counts of Seq2SeqDatasetReader's source_max_tokens / target_max_tokens truncation (its own _read, which
        # logs them, is replaced by this one)
        for side in ("source", "target"):
            if getattr(self, f"_{side}_max_tokens") and getattr(self, f"_{side}_max_exceeded"):
                logger.info("parallel_text: truncated %d %s texts to %s_max_tokens=%d in %s",
                            getattr(self, f"_{side}_max_exceeded"), side, side, getattr(self, f"_{side}_max_tokens"),
                            file_path)
            setattr(self, f"_{side}_max_exceeded", 0)
        self._truncation.log_and_reset("parallel_text", file_path)

    def _is_sharded(self) -> bool:
        """Whether this process reads only a share of the file (data loader workers or distributed training)."""
        info = self.get_worker_info()
        distributed = self.get_distributed_info()
        return (info is not None and info.num_workers > 1) or (distributed is not None and distributed.world_size > 1)

    def text_to_instance(self, source_string: str, target_string: Optional[str] = None) -> Instance:  # type: ignore
        """As `Seq2SeqDatasetReader`'s, lowercasing first if configured (so `allennlp predict` inputs match)."""
        if self._lowercase:
            source_string = source_string.lower()
            target_string = target_string.lower() if target_string is not None else None
        return super().text_to_instance(source_string, target_string)
