import pytest
import torch

from memplugins.encoders.iram import IramEncoder, attention_overlap


def encoder(full=False, penalty=0.0):
    torch.manual_seed(0)
    return IramEncoder(6, 4, num_iterations=3, num_context_layers=2 if full else 1, num_query_layers=1 if full else 0,
                       bidirectional=True,
                       embedding_highway_layers=2 if full else 0, query_highway=full, attention_penalty=penalty)


def test_overlap_equals_a_hand_computation():
    attention = torch.tensor([[[0.5, 0.5, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.5, 0.5]]])
    # off-diagonal dot products: (1,2) = 0.25, (1,3) = 0, (2,3) = 0.25, each twice; / (2 T) with T = 3
    assert torch.allclose(attention_overlap(attention), torch.tensor([(2 * 0.25 + 2 * 0.25) / 6]))


def reference(enc: IramEncoder, tokens: torch.Tensor) -> tuple:
    """One sentence, no padding, written step by step from the equations (see the encoder's docstring)."""
    x = tokens.unsqueeze(0)
    if enc.embedding_highway is not None:
        x = enc.embedding_highway(x)
    hidden, (_, cells) = enc.context_lstm(x)
    if enc.query_lstm is not None:
        _, (_, cells) = enc.query_lstm(hidden)
    q = torch.cat([cells[-2, 0], cells[-1, 0]])
    if enc.query_highway is not None:
        q = enc.query_highway(q.unsqueeze(0))[0]
    items = list(hidden[0])
    rows = []
    for t in range(enc._num_iterations):
        H = torch.stack(items)
        a = torch.softmax(H @ (q @ enc.attention_weight), 0)  # eq. 1: q W h_i
        s = enc.summary_highway((a.unsqueeze(1) * H).sum(0, keepdim=True))[0]  # eq. 2 + highway
        rows.append(torch.cat([a, a.new_zeros(len(tokens) + enc._num_iterations - 1 - len(a))]))
        items.append(s)
        q = enc.controller(s.unsqueeze(0), q.unsqueeze(0))[0]
    return s, torch.stack(rows)


@pytest.mark.parametrize("full", [False, True])
def test_encoder_equals_the_reference_and_padding_changes_nothing(full):
    enc = encoder(full).eval()
    tokens = torch.randn(2, 5, 6)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    output = enc.encode(tokens, mask)
    for b, n in enumerate([5, 3]):
        summary, attention = reference(enc, tokens[b, :n])
        assert torch.allclose(output.summary[b], summary, atol=1e-5)
        assert torch.allclose(output.attention[b][:, : n + 2], attention, atol=1e-5)  # eq. 4 for its own n tokens
        assert (output.attention[b][:, n + 2 :] == 0).all()  # then zeros for the batch's padding


def test_summaries_not_yet_made_get_exactly_zero_attention():
    output = encoder().encode(torch.randn(2, 4, 6), torch.ones(2, 4, dtype=torch.bool))
    n = 4
    assert output.attention.shape == (2, 3, n + 2)
    assert (output.attention[:, 0, n:] == 0).all() and (output.attention[:, 1, n + 1 :] == 0).all()
    assert (output.attention[:, 1, n] > 0).all() and (output.attention[:, 2, n:] > 0).all()
    assert torch.allclose(output.attention.sum(-1), torch.ones(2, 3))


def test_penalty_is_contributed_only_when_gamma_is_positive_and_every_parameter_gets_a_gradient():
    enc = encoder(full=True, penalty=0.5)
    output = enc.encode(torch.randn(2, 4, 6), torch.ones(2, 4, dtype=torch.bool))
    losses, metrics = enc.pop_auxiliary()
    assert torch.allclose(losses["attention_penalty"], 0.5 * output.overlap.mean())
    assert torch.allclose(metrics["attention_overlap"], output.overlap.mean())
    (output.summary.sum() + losses["attention_penalty"]).backward()
    for name, parameter in enc.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name
    plain = encoder(penalty=0.0)
    plain.encode(torch.randn(2, 4, 6), torch.ones(2, 4, dtype=torch.bool))
    assert "attention_penalty" not in plain.pop_auxiliary()[0]


def test_zero_iterations_is_the_papers_bilstm_baseline():
    """num_iterations=0 (section 4.1's baseline): the last BiLSTM layer's final hidden states, no attention."""
    torch.manual_seed(0)
    enc = IramEncoder(6, 4, num_iterations=0, attention_penalty=0.1, bidirectional=True)
    tokens, mask = torch.randn(3, 5, 6), torch.tensor([[1] * 5, [1] * 3 + [0] * 2, [1] * 2 + [0] * 3]).bool()
    output = enc.encode(tokens, mask)
    assert output.summary.shape == (3, 8) and output.attention.shape == (3, 0, 4)
    for i, n in enumerate(mask.sum(1).tolist()):
        states, _ = enc.context_lstm(tokens[i : i + 1, :n])  # unpadded: the plain LSTM call is exact
        expected = torch.cat([states[0, n - 1, :4], states[0, 0, 4:]])  # h→ at the last token, h← at the first
        torch.testing.assert_close(output.summary[i], expected, atol=1e-6, rtol=1e-5)
    assert not enc.__dict__.get("_pending_auxiliary_losses")  # no attention, so no penalty
