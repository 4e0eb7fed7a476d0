from typing import Any, Dict, List, Optional

import spacy

from allennlp.data.tokenizers import SpacyTokenizer, Token, Tokenizer
from allennlp.data.tokenizers.spacy_tokenizer import _remove_spaces, _WhitespaceSpacyTokenizer


@Tokenizer.register("spacy_blank")
class SpacyBlankTokenizer(SpacyTokenizer):
    """
    AllenNLP's `SpacyTokenizer` over `spacy.blank(language)`: spaCy's complete rule-based tokenizer (prefix,
    suffix and infix rules plus the language's exception table) with no trained pipeline, so nothing is
    downloaded. It produces the same tokens as a trained English pipeline's tokenizer; tokens carry no POS tag,
    lemma, dependency or entity annotations.

    Registered as a `Tokenizer` with name "spacy_blank".

    # Parameters

    language : `str`, optional (default = `"en"`)
        A spaCy language code (`spacy.blank` accepts any code spaCy ships rules for: "en", "de", "fr", ...).
    keep_spacy_tokens : `bool`, optional (default = `False`)
        Keep spaCy's token objects instead of AllenNLP `Token`s (which, unlike spaCy's, can be pickled).
    split_on_spaces : `bool`, optional (default = `False`)
        Split on single spaces only, for text that is already tokenized.
    start_tokens : `List[str]`, optional
        Tokens added to the beginning of every tokenized string.
    end_tokens : `List[str]`, optional
        Tokens added to the end of every tokenized string.
    """

    def __init__(
        self,
        language: str = "en",
        keep_spacy_tokens: bool = False,
        split_on_spaces: bool = False,
        start_tokens: Optional[List[str]] = None,
        end_tokens: Optional[List[str]] = None,
    ) -> None:
        # SpacyTokenizer.__init__ would load (and try to download) a trained model, so it is not called;
        # these are the attributes its methods read.
        self._language = language
        self._pos_tags = False
        self._parse = False
        self._ner = False
        self._split_on_spaces = split_on_spaces
        self.spacy = spacy.blank(language)
        # spaCy refuses texts over 1,000,000 characters (error E088) because a parser or NER needs about 1 GB per
        # 100,000 characters; a tokenizer needs nothing of the kind, so any text is tokenized (readers and configs
        # bound the tokens they keep with max_tokens).
        self.spacy.max_length = 2**62
        if split_on_spaces:
            self.spacy.tokenizer = _WhitespaceSpacyTokenizer(self.spacy.vocab)
        self._keep_spacy_tokens = keep_spacy_tokens
        self._original_start_tokens = list(start_tokens or [])
        self._start_tokens = list(reversed(self._original_start_tokens))  # inserted one by one at index 0
        self._end_tokens = list(end_tokens or [])
        self._is_version_3 = True

    def batch_tokenize(self, texts: List[str]) -> List[List[Token]]:
        # The parent uses `pipe(n_process=-1)`, which forks a process per core for a rule-based tokenizer that
        # is faster in-process.
        return [self._sanitize(_remove_spaces(doc)) for doc in self.spacy.pipe(texts)]

    def _to_params(self) -> Dict[str, Any]:
        return {
            "type": "spacy_blank",
            "language": self._language,
            "keep_spacy_tokens": self._keep_spacy_tokens,
            "split_on_spaces": self._split_on_spaces,
            "start_tokens": self._original_start_tokens,
            "end_tokens": self._end_tokens,
        }
