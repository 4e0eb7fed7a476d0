"""The attention layers against slow, per-example implementations written directly from eq. 7-9 and 11-13."""
import torch

from memplugins.modules import LastOutputAttention, WordByWordAttention

K = 8


def random_batch(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    premise_lengths, hypothesis_lengths = [5, 2, 7, 1], [3, 6, 1, 4]
    batch = len(premise_lengths)
    premise = torch.randn(batch, max(premise_lengths), K, generator=generator)
    hypothesis = torch.randn(batch, max(hypothesis_lengths), K, generator=generator)
    premise_mask = torch.arange(max(premise_lengths))[None, :] < torch.tensor(premise_lengths)[:, None]
    hypothesis_mask = torch.arange(max(hypothesis_lengths))[None, :] < torch.tensor(hypothesis_lengths)[:, None]
    # garbage in the padding must not matter
    premise[~premise_mask] = 100.0
    hypothesis[~hypothesis_mask] = -100.0
    return premise, premise_mask, hypothesis, hypothesis_mask, premise_lengths, hypothesis_lengths


def reference_word_by_word(layer: WordByWordAttention, Y: torch.Tensor, H: torch.Tensor):
    """Eq. 11-13 for one unpadded pair, in the paper's column layout: Y is k x L, h_t a column vector."""
    W_y, W_h, W_r = layer.premise_projection.weight, layer.query_projection.weight, layer.recurrent_projection.weight
    W_t, w = layer.carry_projection.weight, layer.scorer.weight[0]
    Y = Y.t()  # k x L
    L = Y.size(1)
    e_L = torch.ones(L)
    r = torch.zeros(K)
    alphas = []
    for h_t in H:
        M_t = torch.tanh(W_y @ Y + torch.outer(W_h @ h_t + W_r @ r, e_L))  # (11)
        alpha_t = torch.softmax(w @ M_t, dim=0)  # (12)
        r = Y @ alpha_t + torch.tanh(W_t @ r)  # (13)
        alphas.append(alpha_t)
    return r, torch.stack(alphas)


def reference_last_output(layer: LastOutputAttention, Y: torch.Tensor, h_N: torch.Tensor):
    W_y, W_h, w = layer.premise_projection.weight, layer.query_projection.weight, layer.scorer.weight[0]
    Y = Y.t()
    M = torch.tanh(W_y @ Y + torch.outer(W_h @ h_N, torch.ones(Y.size(1))))  # (7)
    alpha = torch.softmax(w @ M, dim=0)  # (8)
    return Y @ alpha, alpha  # (9)


def test_word_by_word_equals_per_example_reference():
    torch.manual_seed(1)
    layer = WordByWordAttention(K)
    premise, premise_mask, hypothesis, hypothesis_mask, p_lens, h_lens = random_batch()
    r_batch, alpha_batch = layer(premise, premise_mask, hypothesis, hypothesis_mask)
    assert alpha_batch.shape == (4, max(h_lens), max(p_lens))
    for i, (p_len, h_len) in enumerate(zip(p_lens, h_lens)):
        r_ref, alpha_ref = reference_word_by_word(layer, premise[i, :p_len], hypothesis[i, :h_len])
        torch.testing.assert_close(r_batch[i], r_ref, atol=1e-5, rtol=0)
        torch.testing.assert_close(alpha_batch[i, :h_len, :p_len], alpha_ref, atol=1e-5, rtol=0)
        assert (alpha_batch[i, h_len:] == 0).all() and (alpha_batch[i, :, p_len:] == 0).all()


def test_last_output_attention_equals_per_example_reference():
    torch.manual_seed(2)
    layer = LastOutputAttention(K)
    premise, premise_mask, hypothesis, _, p_lens, _ = random_batch(seed=3)
    h_N = hypothesis[:, 0]
    r_batch, alpha_batch = layer(premise, premise_mask, h_N)
    for i, p_len in enumerate(p_lens):
        r_ref, alpha_ref = reference_last_output(layer, premise[i, :p_len], h_N[i])
        torch.testing.assert_close(r_batch[i], r_ref, atol=1e-5, rtol=0)
        torch.testing.assert_close(alpha_batch[i, :p_len], alpha_ref, atol=1e-5, rtol=0)
        assert (alpha_batch[i, p_len:] == 0).all()


def test_word_by_word_gradients_reach_every_parameter():
    layer = WordByWordAttention(K)
    premise, premise_mask, hypothesis, hypothesis_mask, _, _ = random_batch()
    r, _ = layer(premise, premise_mask, hypothesis, hypothesis_mask)
    r.sum().backward()
    for name, parameter in layer.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name
