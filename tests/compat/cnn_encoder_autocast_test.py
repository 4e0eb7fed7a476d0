"""compat.cnn_encoder_autocast: the character CNN ignores padding under autocast."""
import torch


def test_character_cnn_ignores_padding_under_autocast():
    from allennlp.modules.seq2vec_encoders import CnnEncoder

    torch.manual_seed(0)
    encoder = CnnEncoder(embedding_dim=4, num_filters=3, ngram_filter_sizes=(2, 3), output_dim=5)
    tokens = torch.randn(3, 6, 4)
    mask = torch.tensor([[True] * 6, [True, True, False, False, False, False], [False] * 6])  # last: a padding token
    reference = encoder(tokens, mask)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mixed = encoder(tokens, mask)
    torch.testing.assert_close(mixed.float(), reference, atol=2e-2, rtol=0)
