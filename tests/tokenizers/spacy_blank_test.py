import pickle

from allennlp.common import Params
from allennlp.data import Tokenizer

from memplugins.tokenizers import SpacyBlankTokenizer


def test_registered_and_tokenizes_like_spacy_english_rules():
    tokenizer = Tokenizer.from_params(Params({"type": "spacy_blank"}))
    assert isinstance(tokenizer, SpacyBlankTokenizer)
    tokens = [t.text for t in tokenizer.tokenize("The dog's owner can't find the U.K. map (again)!")]
    assert tokens == ["The", "dog", "'s", "owner", "ca", "n't", "find", "the", "U.K.", "map", "(", "again", ")", "!"]


def test_offsets_start_end_tokens_and_batch():
    tokenizer = SpacyBlankTokenizer(start_tokens=["@start@", "@s2@"], end_tokens=["@end@"])
    tokens = tokenizer.tokenize("Hi  there")
    assert [t.text for t in tokens] == ["@start@", "@s2@", "Hi", "there", "@end@"]
    assert tokens[3].idx == 4
    batch = tokenizer.batch_tokenize(["a b", "c"])
    assert [[t.text for t in sentence] for sentence in batch] == [["@start@", "@s2@", "a", "b", "@end@"], ["@start@", "@s2@", "c", "@end@"]]


def test_params_round_trip_and_pickle():
    tokenizer = SpacyBlankTokenizer(language="en", split_on_spaces=True, start_tokens=["<s>", "<t>"])
    rebuilt = Tokenizer.from_params(Params(tokenizer._to_params()))
    assert [t.text for t in rebuilt.tokenize("a-b c")] == ["<s>", "<t>", "a-b", "c"]
    assert [t.text for t in pickle.loads(pickle.dumps(tokenizer)).tokenize("x y")] == ["<s>", "<t>", "x", "y"]
