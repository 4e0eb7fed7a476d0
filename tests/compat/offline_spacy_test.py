"""
AllenNLP's own `spacy` tokenizer and the allennlp-models readers that default to it work offline with memplugins
imported (compat fix 4). These tests assume, as on our CI, that no trained spaCy model is installed.
"""
import pytest
import spacy
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Tokenizer
from allennlp.data.tokenizers import SpacyTokenizer
from allennlp.data.tokenizers.sentence_splitter import SpacySentenceSplitter
from allennlp_models.classification.dataset_readers.stanford_sentiment_tree_bank import (
    StanfordSentimentTreeBankDatasetReader,
)
from allennlp_models.pair_classification.dataset_readers.snli import SnliReader

from memplugins.tokenizers import SpacyBlankTokenizer

SNLI = "fixtures/snli/tiny.jsonl"


@pytest.fixture(autouse=True)
def no_trained_model():
    if spacy.util.is_package("en_core_web_sm"):
        pytest.skip("en_core_web_sm is installed here; these tests are about its absence")


def test_snli_reader_with_default_tokenizer_reads_fixture_like_spacy_blank(caplog):
    instances = list(SnliReader().read(SNLI))
    reference = list(SnliReader(tokenizer=SpacyBlankTokenizer()).read(SNLI))
    assert len(instances) == len(reference) == 18
    for ours, theirs in zip(instances, reference):
        for field in ("premise", "hypothesis"):
            assert [t.text for t in ours[field].tokens] == [t.text for t in theirs[field].tokens]


def test_fallback_warns_once_with_a_clear_message(caplog):
    from memplugins.compat import offline_spacy as compat
    from allennlp.common import util

    compat._warned_fallbacks.discard("en_core_web_sm")
    util.LOADED_SPACY_MODELS.clear()
    SpacyTokenizer()
    SpacyTokenizer(language="en_core_web_sm")
    warnings = [r.getMessage() for r in caplog.records if "is not installed" in r.getMessage()]
    assert len(warnings) == 1
    assert "spacy.blank('en')" in warnings[0]


def test_other_languages_fall_back_to_their_rules():
    tokens = [t.text for t in SpacyTokenizer(language="de_core_news_sm").tokenize("Ich gehe z.B. heute nach Hause.")]
    assert tokens == [t.text for t in SpacyBlankTokenizer(language="de").tokenize("Ich gehe z.B. heute nach Hause.")]


def test_config_with_default_spacy_tokenizer_builds():
    tokenizer = Tokenizer.from_params(Params({"type": "spacy"}))
    assert [t.text for t in tokenizer.tokenize("Don't panic!")] == ["Do", "n't", "panic", "!"]
    reader = DatasetReader.from_params(Params({"type": "snli"}))
    assert len(list(reader.read(SNLI))) == 18


def test_sst_tokens_reader_reads_fixture():
    reader = StanfordSentimentTreeBankDatasetReader()
    instances = list(reader.read("fixtures/sst/dev_sample.txt"))
    assert len(instances) == 40
    assert [t.text for t in instances[0]["tokens"].tokens][:3] == ["It", "'s", "a"]


@pytest.mark.parametrize(
    "make, what",
    [
        (lambda: SpacyTokenizer(pos_tags=True), "POS tagging was requested"),
        (lambda: Tokenizer.from_params(Params({"type": "spacy", "pos_tags": True})), "POS tagging was requested"),
        (lambda: SpacyTokenizer(parse=True), "a dependency parse"),
        (lambda: SpacyTokenizer(ner=True), "named entities"),
        (lambda: SpacySentenceSplitter(rule_based=False), "a dependency parse"),
    ],
)
def test_requesting_annotations_without_the_model_is_a_clear_error(make, what):
    SpacyTokenizer()  # a cached rule-based stand-in must not satisfy a later request for annotations
    with pytest.raises(ConfigurationError) as error:
        make()
    message = str(error.value)
    assert "'en_core_web_sm' is not installed" in message and what in message
    assert "python -m spacy download en_core_web_sm" in message


def test_rule_based_sentence_splitter_works_offline():
    splitter = SpacySentenceSplitter(rule_based=True)
    assert splitter.split_sentences("It rains. We stay in.") == ["It rains.", "We stay in."]
