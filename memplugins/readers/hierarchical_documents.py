import logging
from typing import Dict, Iterable, Optional

from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import LabelField, ListField, MetadataField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Tokenizer, WhitespaceTokenizer

from memplugins.readers.truncation import TruncationCount
from memplugins.readers.errors import MalformedInputError, nonempty, numbered_lines

logger = logging.getLogger(__name__)

SENTENCE_SEPARATOR = "<sssss>"


@DatasetReader.register("hierarchical_documents")
class HierarchicalDocumentsReader(DatasetReader):
    """
    Reads document-level sentiment data in the format of Tang, Qin and Liu (2015) (Yelp 2013 / IMDB `.ss` files):
    one document per line, `user_id \\t\\t product_id \\t\\t rating \\t\\t text`, the text's sentences separated by
    ` <sssss> ` and already tokenized. Each instance has `sentences` (a `ListField` of one `TextField` per
    sentence), `label` (the rating, as a string label) and `metadata` (user, product, sentences).
    To bucket batches by the number of sentences (as the paper does), use a `bucket` batch sampler with
    `sorting_keys: ["sentences"]`.

    A line with a wrong number of fields, a non-integer rating or no text raises an error naming file and line.

    Registered as a `DatasetReader` with name "hierarchical_documents".

    # Parameters

    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `{"tokens": SingleIdTokenIndexer()}`)
    tokenizer : `Tokenizer`, optional (default = `WhitespaceTokenizer()`)
        The corpus is pre-tokenized.
    max_sentences : `int`, optional (default = `None`)
        Keep only the first sentences of longer documents.
    max_sentence_length : `int`, optional (default = `None`)
        Truncate longer sentences. Both truncations are counted and logged once per file.
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        tokenizer: Optional[Tokenizer] = None,
        max_sentences: Optional[int] = None,
        max_sentence_length: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._tokenizer = tokenizer or WhitespaceTokenizer()
        self._sentence_count = TruncationCount("max_sentences", max_sentences)
        self._sentence_length = TruncationCount("max_sentence_length", max_sentence_length)

    def _read(self, file_path: str) -> Iterable[Instance]:
        lines = nonempty(((n, line) for n, line in numbered_lines(file_path) if line.strip()), file_path,
                         "hierarchical_documents")
        for line_number, line in self.shard_iterable(lines):
            line = line.rstrip("\n")
            fields = line.split("\t\t")
            if len(fields) != 4:
                reason = f"expected 4 fields separated by a double tab (user, product, rating, text), found {len(fields)}"
                raise MalformedInputError(file_path, line_number, reason)
            user, product, rating, text = fields
            if not rating.strip().isascii() or not rating.strip().isdigit():
                raise MalformedInputError(file_path, line_number, f"rating {rating!r} is not a whole number of stars")
            sentences = [s.strip() for s in text.split(SENTENCE_SEPARATOR) if s.strip()]
            if not sentences:
                raise MalformedInputError(file_path, line_number, "document without text")
            yield self.text_to_instance(sentences, rating.strip(), user=user, product=product)
        self._sentence_count.log_and_reset("hierarchical_documents", file_path)
        self._sentence_length.log_and_reset("hierarchical_documents", file_path)

    def text_to_instance(  # type: ignore
        self, sentences, rating: Optional[str] = None, user: str = "", product: str = ""
    ) -> Instance:
        """`sentences`: a list of sentence strings, or one text with ` <sssss> ` between sentences."""
        if isinstance(sentences, str):
            sentences = [s.strip() for s in sentences.split(SENTENCE_SEPARATOR) if s.strip()]
        if not sentences:  # (a ListField of no TextFields cannot be padded)
            raise ValueError(f"a document needs at least one sentence (separated by {SENTENCE_SEPARATOR.strip()!r})")
        sentences = self._sentence_count(sentences)
        text_fields = []
        for sentence in sentences:
            tokens = self._sentence_length(self._tokenizer.tokenize(sentence))
            text_fields.append(TextField(tokens, self._token_indexers))
        fields = {"sentences": ListField(text_fields),
                  "metadata": MetadataField({"user": user, "product": product, "sentences": sentences})}
        if rating is not None:
            fields["label"] = LabelField(rating)
        return Instance(fields)
