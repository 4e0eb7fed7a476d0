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
