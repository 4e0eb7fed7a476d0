import torch
from allennlp.common import Params
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders import TokenEmbedder


def test_pretrained_vectors_are_standardised_per_dimension():
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["a", "man", "dog", "the", "qqqq-not-in-file"], "tokens")
    params = {"embedding_dim": 50, "pretrained_file": "fixtures/glove/glove.6B.50d.snli_sample.txt.gz",
              "trainable": False}
    torch.manual_seed(0)  # rows of words missing from the file are random: the same draws for both
    plain = TokenEmbedder.from_params(Params({"type": "embedding", **params}), vocab=vocab)
    torch.manual_seed(0)
    standard = TokenEmbedder.from_params(Params({"type": "standardized_embedding", **params}), vocab=vocab)
    assert standard.padding_index is None  # embedding's default: every row counts (padding is masked downstream)
    rows = standard.weight
    torch.testing.assert_close(rows.mean(0), torch.zeros(50), atol=1e-5, rtol=0)
    torch.testing.assert_close(rows.std(0), torch.ones(50), atol=1e-5, rtol=0)
    raw = plain.weight
    torch.testing.assert_close(rows, (raw - raw.mean(0)) / raw.std(0))  # the same vectors, standardised
    assert not standard.weight.requires_grad


def test_a_padding_row_stays_zero_and_out_of_the_statistics():
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["a", "man", "dog"], "tokens")
    torch.manual_seed(0)
    standard = TokenEmbedder.from_params(
        Params({"type": "standardized_embedding", "embedding_dim": 4, "padding_index": 0}), vocab=vocab
    )
    assert torch.all(standard.weight[0] == 0)
    torch.testing.assert_close(standard.weight[1:].mean(0), torch.zeros(4), atol=1e-5, rtol=0)


GLOVE = "fixtures/glove/glove.6B.50d.snli_sample.txt.gz"


def _built(words):
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(words, "tokens")
    torch.manual_seed(0)
    params = {"type": "standardized_embedding", "embedding_dim": 50, "pretrained_file": GLOVE, "trainable": False}
    return vocab, TokenEmbedder.from_params(Params(params), vocab=vocab)


def _extended_and_expected(standard, vocab, new_words):
    """The embedder extended by `new_words`, and what their rows must be: the file's rows under the statistics the
    built rows were standardised with."""
    from allennlp.modules.token_embedders.embedding import _read_pretrained_embeddings_file

    built_size = vocab.get_vocab_size("tokens")
    raw = _read_pretrained_embeddings_file(GLOVE, 50, vocab, "tokens")  # the same seed: the same random rows
    mean, std = raw.mean(0), raw.std(0)
    vocab.add_tokens_to_namespace(new_words, "tokens")
    expected_raw = _read_pretrained_embeddings_file(GLOVE, 50, vocab, "tokens")[built_size:]
    standard.extend_vocab(vocab, extension_pretrained_file=GLOVE)
    return standard.weight[built_size:], (expected_raw - mean) / std


def test_extended_rows_are_standardised_with_the_built_statistics():
    words = ["a", "man", "dog", "the", "woman", "is", "playing", "outside"]
    vocab, standard = _built(words)
    torch.manual_seed(0)
    added, expected = _extended_and_expected(standard, vocab, ["cat", "sleeping"])
    assert standard.weight.shape == (vocab.get_vocab_size("tokens"), 50)
    torch.testing.assert_close(added, expected, atol=1e-5, rtol=1e-5)


def test_an_archive_without_the_statistics_recovers_them_from_the_file():
    words = ["a", "man", "dog", "the", "woman", "is", "playing", "outside"]
    vocab, standard = _built(words)
    state = {k: v for k, v in standard.state_dict().items() if not k.startswith("standardization_")}
    torch.manual_seed(1)  # a fresh build with other random rows: the archive's weights replace them
    fresh_vocab, loaded = _built(words)
    loaded.load_state_dict(state)
    assert torch.isnan(loaded.standardization_mean).all()
    torch.manual_seed(0)
    added, expected = _extended_and_expected(loaded, vocab, ["cat", "sleeping"])
    torch.testing.assert_close(added, expected, atol=1e-4, rtol=1e-4)
