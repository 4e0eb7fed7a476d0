import logging
from typing import Iterable, Optional

from allennlp.common.file_utils import cached_path
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.instance import Instance
from allennlp_models.lm.dataset_readers.simple_language_modeling import SimpleLanguageModelingDatasetReader

from memplugins.readers.errors import nonempty, numbered_lines
from memplugins.readers.truncation import TruncatingTokenizer, TruncationCount

logger = logging.getLogger(__name__)


@DatasetReader.register("checked_simple_language_modeling")
class CheckedSimpleLanguageModelingReader(SimpleLanguageModelingDatasetReader):
    """
    allennlp-models' `simple_language_modeling` reader (the same parameters, and the same instance for every line of
    a well-formed file) reading through `numbered_lines`: bytes that are not UTF-8 and a truncated `.gz` are a
    `MalformedInputError` naming the file and line, and a file with no sentences is an error, not a 0.0
    evaluation. The shipped PTB configs read through it.

    Registered as a `DatasetReader` with name "checked_simple_language_modeling".

    # Parameters

    tokenizer, token_indexers, max_sequence_length, start_tokens, end_tokens
        As allennlp-models' `simple_language_modeling` (`max_sequence_length` drops a longer sentence of a file).
    max_tokens : `int`, optional (default = `None`)
        Cuts a sentence to this many tokens before the start and end tokens are added, in a file and in a
        prediction input (an LSTMN is quadratic in length; a prediction says in its output when it was cut).
    """

    def __init__(self, max_tokens: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._truncation = TruncationCount("max_tokens", max_tokens)
        if max_tokens is not None:
            self._tokenizer = TruncatingTokenizer(self._tokenizer, self._truncation)

    def _read(self, file_path: str) -> Iterable[Instance]:
        dropped = {"long": 0}
        yield from nonempty(self._instances(str(file_path), dropped), str(file_path),
                            "checked_simple_language_modeling",
                            lambda: f"{dropped['long']} sentences over max_sequence_length dropped")
        if dropped["long"]:
            logger.warning("Dropped %d instances from %s.", dropped["long"], file_path)
        self._truncation.log_and_reset("checked_simple_language_modeling", str(file_path))

    def _instances(self, file_path: str, dropped: dict) -> Iterable[Instance]:
        logger.info("Loading data from %s", file_path)
        for _, sentence in numbered_lines(cached_path(file_path), display_name=file_path):
            instance = self.text_to_instance(sentence)
            if instance.fields["source"].sequence_length() <= self._max_sequence_length:
                yield instance
            else:
                dropped["long"] += 1
