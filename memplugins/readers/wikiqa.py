from typing import Dict, Iterable, Optional

from allennlp.common.file_utils import cached_path
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, LabelField, MetadataField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Tokenizer

from memplugins.readers.truncation import TruncatingTokenizer, TruncationCount
from memplugins.readers.errors import MalformedInputError, nonempty, numbered_lines
from memplugins.tokenizers import SpacyBlankTokenizer

TSV_HEADER = ["QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label"]


@DatasetReader.register("wikiqa")
class WikiQaReader(DatasetReader):
    """
    Reads the Microsoft WikiQA corpus (Yang, Yih and Meek 2015) for answer sentence selection, in either of its
    formats, told apart by the first line:

    * `.tsv` (`WikiQA-{train,dev,test}.tsv`): a header `QuestionID Question DocumentID DocumentTitle SentenceID
      Sentence Label`, then one tab-separated candidate per line; questions are identified by `QuestionID`.
    * tokenized `.txt` (`WikiQA-{train,dev,test}.txt`): `question<TAB>sentence<TAB>label` per line; as in the
      corpus's `.ref` files, a question is a run of consecutive lines with the same question text, numbered from 0.

    Instances: `question` and `answer` `TextField`s, a `label` `LabelField` (the integer 0 or 1, not indexed) when present, and
    `metadata` with `question_id` (used by the `map_mrr` ranking metric), `question_tokens`, `answer_tokens`.
    A malformed line (wrong number of fields, a label other than 0/1, an empty question or sentence, a bad header)
    raises `MalformedInputError` naming the file and line.

    Registered as a `DatasetReader` with name "wikiqa".

    # Parameters

    tokenizer : `Tokenizer`, optional (default = `SpacyBlankTokenizer()`)
    token_indexers : `Dict[str, TokenIndexer]`, optional (default = `{"tokens": SingleIdTokenIndexer()}`)
    max_tokens : `int`, optional (default = `None`)
        Truncate questions and answer sentences to this many tokens (the number truncated is logged once per file).
    """

    def __init__(
        self,
        tokenizer: Optional[Tokenizer] = None,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_tokens: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self._truncation = TruncationCount("max_tokens", max_tokens)
        self._tokenizer = tokenizer or SpacyBlankTokenizer()
        if max_tokens is not None:
            self._tokenizer = TruncatingTokenizer(self._tokenizer, self._truncation)
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    def _read(self, file_path: str) -> Iterable[Instance]:
        yield from self.shard_iterable(nonempty(self._read_rows(cached_path(file_path)), file_path, "wikiqa"))
        self._truncation.log_and_reset("wikiqa", file_path)

    def _read_rows(self, file_path: str) -> Iterable[Instance]:
        is_tsv = None
        question_number, previous_question = -1, None
        for line_number, line in numbered_lines(file_path):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            fields = line.split("\t")
            if is_tsv is None:
                is_tsv = fields[0] == "QuestionID"
                if is_tsv:
                    if fields != TSV_HEADER:
                        raise MalformedInputError(file_path, line_number, f"unexpected header {fields}")
                    continue
            expected = 7 if is_tsv else 3
            if len(fields) != expected:
                raise MalformedInputError(
                    file_path, line_number, f"expected {expected} tab-separated fields, found {len(fields)}"
                )
            if is_tsv:
                question_id, question, answer, label = fields[0], fields[1], fields[5], fields[6]
            else:
                question, answer, label = fields
                if question != previous_question:
                    question_number, previous_question = question_number + 1, question
                question_id = str(question_number)
            if label not in ("0", "1"):
                raise MalformedInputError(file_path, line_number, f"label must be 0 or 1, got {label!r}")
            for name, text in (("question", question), ("sentence", answer)):
                if not text.strip():
                    raise MalformedInputError(file_path, line_number, f"empty {name}")
            yield self.text_to_instance(question, answer, label, question_id)

    def text_to_instance(  # type: ignore
        self, question: str, answer: str, label: Optional[str] = None, question_id: Optional[str] = None
    ) -> Instance:
        question_tokens = self._tokenizer.tokenize(question)
        answer_tokens = self._tokenizer.tokenize(answer)
        fields: Dict[str, Field] = {
            "question": TextField(question_tokens),
            "answer": TextField(answer_tokens),
            "metadata": MetadataField(
                {
                    "question_id": question_id if question_id is not None else question,
                    "question_tokens": [t.text for t in question_tokens],
                    "answer_tokens": [t.text for t in answer_tokens],
                }
            ),
        }
        if label is not None:
            fields["label"] = LabelField(int(label), skip_indexing=True)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["question"]._token_indexers = self._token_indexers
        instance.fields["answer"]._token_indexers = self._token_indexers
