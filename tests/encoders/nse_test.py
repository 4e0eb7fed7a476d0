"""The `nse` encoder against the literal per-example form of eq. 1-6 and 7-15 of Munkhdalai & Yu (2017)
(`memplugins.modules.nse.reference`), and its behaviour as a `Seq2SeqEncoder`."""
import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder
from allennlp.nn.util import masked_softmax

from memplugins.encoders import NseEncoder
from memplugins.modules.masked_lstm import run_masked_lstm
from memplugins.modules.nse.reference import nse_reference
from tests.helpers import padded, randomize

LENGTHS = [5, 2, 1, 4]
EXTRA_LENGTHS = [3, 6, 2, 1]


@pytest.mark.parametrize(
    "options",
    [
        {"input_size": 4, "hidden_size": 4},
        {"input_size": 6, "hidden_size": 4, "num_read_layers": 2, "num_write_layers": 2},
        # the authors' compose: linear, keeping its input's size 2k, so f_w reads 2k
        {"input_size": 4, "hidden_size": 4, "compose_size": 8, "compose_activation": "linear", "num_write_layers": 2},
    ],
)
def test_nse_equals_reference_of_eq_1_to_6(options):
    encoder = randomize(NseEncoder(**options)).eval()
    x, mask = padded(LENGTHS, options["input_size"], seed=3)
    out = encoder.encode(x, mask)
    for b, length in enumerate(LENGTHS):
        H, M, Z, _, _ = nse_reference(encoder.weights(), x[b, :length])
        torch.testing.assert_close(out.hidden[b, :length], H, atol=1e-5, rtol=0)
        torch.testing.assert_close(out.memory[b, :length], M, atol=1e-5, rtol=0)
        torch.testing.assert_close(out.keys[b, :length, :length], Z, atol=1e-5, rtol=0)
        assert (out.hidden[b, length:] == 0).all() and (out.keys[b, :, length:] == 0).all()
        assert (out.memory[b, length:] == 0).all()  # padded slots: zero at the start, never written


@pytest.mark.parametrize("write_extra", [True, False])
def test_mma_nse_equals_reference_of_eq_7_to_15(write_extra):
    compose = {"compose_size": 16, "compose_activation": "linear"} if write_extra else {}  # (2 + 2) k, as the authors'
    encoder = randomize(NseEncoder(4, 4, num_extra_memories=2, write_extra_memories=write_extra, **compose), seed=5).eval()
    x, mask = padded(LENGTHS, 4, seed=1)
    first, first_mask = padded(EXTRA_LENGTHS, 4, seed=2, garbage=-9.0)
    second, second_mask = padded([2, 2, 3, 1], 4, seed=4, garbage=11.0)
    out = encoder.encode(x, mask, [(first, first_mask), (second, second_mask)])
    for b, length in enumerate(LENGTHS):
        lengths = (EXTRA_LENGTHS[b], [2, 2, 3, 1][b])
        extras = (first[b, : lengths[0]], second[b, : lengths[1]])
        H, M, Z, E, ZN = nse_reference(encoder.weights(), x[b, :length], extras)
        torch.testing.assert_close(out.hidden[b, :length], H, atol=1e-5, rtol=0)
        torch.testing.assert_close(out.memory[b, :length], M, atol=1e-5, rtol=0)
        for n in range(2):
            torch.testing.assert_close(out.extra_memories[n][b, : lengths[n]], E[n], atol=1e-5, rtol=0)
            torch.testing.assert_close(out.extra_keys[n][b, :length, : lengths[n]], ZN[n], atol=1e-5, rtol=0)
    # padded slots of the extra memories are never written
    torch.testing.assert_close(out.extra_memories[0][~first_mask], first[~first_mask])
    if not write_extra:
        torch.testing.assert_close(out.extra_memories[0], first)


@pytest.mark.parametrize("num_write_layers", [1, 2], ids=["fast", "deep"])
def test_a_read_only_memory_stays_m0_and_each_key_attends_over_it(num_write_layers):
    """write_memory=False: eq. 6 left out, so M_T = M_0 and z_t = softmax(o_t^T M_0) over the real slots, computed
    here from the read LSTM's outputs with allennlp's masked_softmax (independently of the encoder's loop)."""
    from allennlp.nn.util import masked_softmax

    encoder = randomize(NseEncoder(6, 4, num_write_layers=num_write_layers, write_memory=False), seed=11).eval()
    x, mask = padded(LENGTHS, 6, seed=12)
    out = encoder.encode(x, mask)
    initial = encoder.initial_memory(x, mask)
    torch.testing.assert_close(out.memory, initial, atol=0, rtol=0)
    queries = torch.stack([  # o_t (eq. 1), each sequence alone, zero past its end
        torch.nn.functional.pad(encoder.read_lstm(x[b : b + 1, :length])[0][0], (0, 0, 0, max(LENGTHS) - length))
        for b, length in enumerate(LENGTHS)
    ])
    expected = masked_softmax(torch.bmm(queries, initial.transpose(1, 2)), mask.unsqueeze(1)) * mask.unsqueeze(-1)
    torch.testing.assert_close(out.keys, expected, atol=1e-6, rtol=0)
    writing = NseEncoder(6, 4, num_write_layers=num_write_layers)
    writing.load_state_dict(encoder.state_dict())
    written = writing.eval().encode(x, mask)
    torch.testing.assert_close(written.keys[:, 0], out.keys[:, 0])  # step 1 reads M_0 either way ...
    assert not torch.allclose(written.hidden, out.hidden, atol=1e-4)  # ... and the writes change what follows


@pytest.mark.parametrize("num_write_layers", [1, 2], ids=["fast", "deep"])
def test_read_states_initialise_the_memory_with_each_words_read_lstm_output(num_write_layers):
    """initial_memory="read_states": M_0 = [o_1; ...; o_T], with o_t the read LSTM's output computed here for each
    sequence alone (by the encoder, and by `initial_memory` called alone). Read-only, M_T = M_0 and
    z_t = masked_softmax(o_t^T M_0) (allennlp's, independent of the encoder's loop), and M_T's gradient reaches the
    read LSTM through M_0 alone; written, step 1 reads the same M_0."""
    encoder = randomize(NseEncoder(6, 4, num_write_layers=num_write_layers, initial_memory="read_states",
                                   write_memory=False), seed=13).eval()
    assert encoder.memory_projection is None  # o_t already has k features
    x, mask = padded(LENGTHS, 6, seed=14)
    out = encoder.encode(x, mask)
    states = torch.stack([  # o_t (eq. 1), each sequence alone, zero past its end
        torch.nn.functional.pad(encoder.read_lstm(x[b : b + 1, :length])[0][0], (0, 0, 0, max(LENGTHS) - length))
        for b, length in enumerate(LENGTHS)
    ])
    torch.testing.assert_close(out.memory, states, atol=1e-6, rtol=0)
    # called without the caller's o_t (every caller in the repo passes it), initial_memory runs the read LSTM itself
    torch.testing.assert_close(encoder.initial_memory(x, mask), states, atol=1e-6, rtol=0)
    expected = masked_softmax(torch.bmm(states, states.transpose(1, 2)), mask.unsqueeze(1)) * mask.unsqueeze(-1)
    torch.testing.assert_close(out.keys, expected, atol=1e-6, rtol=0)

    writing = NseEncoder(6, 4, num_write_layers=num_write_layers, initial_memory="read_states")
    writing.load_state_dict(encoder.state_dict())
    written = writing.eval().encode(x, mask)
    torch.testing.assert_close(written.keys[:, 0], out.keys[:, 0])
    # M_0 from the inputs (the paper's) gives other keys from the same read LSTM
    paper = NseEncoder(6, 4, num_write_layers=num_write_layers)
    paper.load_state_dict(encoder.state_dict(), strict=False)  # all but its memory projection
    assert not torch.allclose(paper.eval().encode(x, mask).keys, out.keys, atol=1e-3)
    # read-only, M_T = M_0 = O: its gradient reaches the read LSTM, and nothing downstream of the loop
    out.memory.sum().backward()
    assert encoder.read_lstm.weight_ih_l0.grad.abs().sum() > 0
    assert all(p.grad is None or not p.grad.any()
               for p in list(encoder.write_cells.parameters()) + list(encoder.compose.parameters()))
    both_ways = NseEncoder(6, 4, bidirectional=True, initial_memory="read_states")
    assert both_ways.backward_encoder._initial_memory == "read_states" and both_ways.memory_projection is None
    with pytest.raises(ConfigurationError, match="initial_memory"):
        NseEncoder(6, 4, initial_memory="embeddings")


@pytest.mark.parametrize("num_write_layers", [1, 2], ids=["fast", "deep"])
def test_key_strength_starts_at_the_papers_keys_and_scales_every_keys_scores(num_write_layers):
    """key_strength: β_t = softplus(w_β^T o_t + b_β) starts at 1, so a new encoder computes what the same weights
    without it compute; β_t → 0 makes every key uniform over the real slots, written or not (eq. 2' with β_t = 0);
    β_t = softplus(5) makes step 1's key (M_0 still unwritten) masked_softmax(β_t o_1^T M_0), sharper than β_t = 1's."""
    encoder = randomize(NseEncoder(6, 4, num_write_layers=num_write_layers, num_extra_memories=1), seed=15).eval()
    strong = NseEncoder(6, 4, num_write_layers=num_write_layers, num_extra_memories=1, key_strength=True).eval()
    assert not strong.key_strength.weight.any()
    torch.testing.assert_close(torch.nn.functional.softplus(strong.key_strength.bias), torch.ones(1))
    strong.load_state_dict(encoder.state_dict(), strict=False)  # all but w_β, b_β
    x, mask = padded(LENGTHS, 6, seed=16)
    extra, extra_mask = padded(EXTRA_LENGTHS, 4, seed=17)
    plain, keyed = encoder.encode(x, mask, [(extra, extra_mask)]), strong.encode(x, mask, [(extra, extra_mask)])
    for got, expected in zip(keyed[:3], plain[:3]):
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(keyed.extra_keys[0], plain.extra_keys[0], atol=1e-6, rtol=1e-6)

    with torch.no_grad():
        strong.key_strength.bias.fill_(-60.0)  # β_t = softplus(-60) ≈ 1e-26
    flat = strong.encode(x, mask, [(extra, extra_mask)])
    lengths = mask.sum(-1, keepdim=True).to(x.dtype)
    torch.testing.assert_close(flat.keys, (mask.unsqueeze(1) & mask.unsqueeze(-1)).to(x.dtype) / lengths.unsqueeze(-1))
    extra_lengths = extra_mask.sum(-1, keepdim=True).to(x.dtype)
    torch.testing.assert_close(flat.extra_keys[0], (mask.unsqueeze(-1) & extra_mask.unsqueeze(1)).to(x.dtype)
                               / extra_lengths.unsqueeze(-1))

    with torch.no_grad():
        strong.key_strength.bias.fill_(5.0)  # β_t = softplus(5) ≈ 5.007: sharper keys
    sharp = strong.encode(x, mask, [(extra, extra_mask)])
    read, _ = run_masked_lstm(strong.read_lstm, x, mask)
    scores = torch.einsum("btk,bk->bt", strong.initial_memory(x, mask, read), read[:, 0])  # o_1^T M_0
    beta = torch.nn.functional.softplus(torch.tensor(5.0))
    torch.testing.assert_close(sharp.keys[:, 0], masked_softmax(beta * scores, mask), atol=1e-6, rtol=0)
    entropy = lambda z: -(z * z.clamp(min=1e-30).log()).sum(-1)  # noqa: E731
    assert (entropy(sharp.keys[:, 0]) < entropy(plain.keys[:, 0]) - 1e-3)[mask.sum(-1) > 1].all()

    both_ways = NseEncoder(6, 4, bidirectional=True, key_strength=True)
    assert both_ways.backward_encoder.key_strength is not None
    assert not any("key_strength" in name for name in NseEncoder(6, 4).state_dict())  # old archives load as before


def test_padding_invariance():
    encoder = randomize(NseEncoder(6, 4, num_extra_memories=1), seed=7).eval()
    x, mask = padded(LENGTHS, 6, seed=8)
    extra, extra_mask = padded(EXTRA_LENGTHS, 4, seed=9)
    batched = encoder.encode(x, mask, [(extra, extra_mask)])
    for b, length in enumerate(LENGTHS):
        alone = encoder.encode(
            x[b : b + 1, :length], mask[b : b + 1, :length],
            [(extra[b : b + 1, : EXTRA_LENGTHS[b]], extra_mask[b : b + 1, : EXTRA_LENGTHS[b]])],
        )
        torch.testing.assert_close(batched.hidden[b : b + 1, :length], alone.hidden, atol=1e-6, rtol=0)
        torch.testing.assert_close(batched.memory[b : b + 1, :length], alone.memory, atol=1e-6, rtol=0)
        torch.testing.assert_close(
            batched.extra_memories[0][b : b + 1, : EXTRA_LENGTHS[b]], alone.extra_memories[0], atol=1e-6, rtol=0
        )


def test_gradients_reach_every_parameter():
    encoder = NseEncoder(6, 4, num_read_layers=2, num_write_layers=2, num_extra_memories=1)
    x, mask = padded(LENGTHS, 6, seed=8)
    extra, extra_mask = padded(EXTRA_LENGTHS, 4, seed=9)
    out = encoder.encode(x, mask, [(extra, extra_mask)])
    (out.hidden.sum() + out.memory.sum() + out.extra_memories[0].sum()).backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_seq2seq_encoder_interface_and_outputs():
    encoder = Seq2SeqEncoder.from_params(Params({"type": "nse", "input_size": 6, "hidden_size": 4}))
    x, mask = padded(LENGTHS, 6, seed=8)
    hidden = encoder(x, mask)
    assert hidden.shape == (4, 5, 4) and encoder.get_output_dim() == 4 and not encoder.is_bidirectional()
    assert encoder.last_output.keys.shape == (4, 5, 5)
    memory_encoder = NseEncoder(6, 4, output="memory")
    memory_encoder.load_state_dict(encoder.state_dict())
    torch.testing.assert_close(memory_encoder(x, mask), encoder.last_output.memory)
    with pytest.raises(ConfigurationError, match="call encode"):
        NseEncoder(4, 4, num_extra_memories=1)(x[..., :4], mask)
    with pytest.raises(ConfigurationError, match="output must be one of"):
        NseEncoder(4, 4, output="keys")


def test_gradients_equal_the_reference():
    """The fast path's hand-written backward against autograd through the literal eq. 1-15."""
    encoder = randomize(NseEncoder(6, 4, num_extra_memories=1), seed=11).double().eval()
    x, mask = padded(LENGTHS, 6, seed=12)
    extra, extra_mask = padded(EXTRA_LENGTHS, 4, seed=13)
    x, extra = x.double().requires_grad_(), extra.double().requires_grad_()
    out = encoder.encode(x, mask, [(extra, extra_mask)])
    generator = torch.Generator().manual_seed(14)
    probes = [torch.randn(t.shape, generator=generator, dtype=torch.double)
              for t in (out.hidden, out.memory, out.keys, out.extra_memories[0], out.extra_keys[0])]
    fast_loss = sum((t * p).sum() for t, p in zip(
        (out.hidden, out.memory, out.keys, out.extra_memories[0], out.extra_keys[0]), probes))
    slow_loss = 0
    for b, length in enumerate(LENGTHS):
        n = EXTRA_LENGTHS[b]
        H, M, Z, E, ZN = nse_reference(encoder.weights(), x[b, :length], [extra[b, :n]])
        slow_loss = slow_loss + (H * probes[0][b, :length]).sum() + (M * probes[1][b, :length]).sum()
        slow_loss = slow_loss + (Z * probes[2][b, :length, :length]).sum()
        # slots the reference does not see (padding) are returned unchanged by the encoder
        slow_loss = slow_loss + (E[0] * probes[3][b, :n]).sum() + (extra[b, n:] * probes[3][b, n:]).sum()
        slow_loss = slow_loss + (ZN[0] * probes[4][b, :length, :n]).sum()
    inputs = [x, extra, *encoder.parameters()]
    fast = torch.autograd.grad(fast_loss, inputs)
    slow = torch.autograd.grad(slow_loss, inputs, allow_unused=True)
    for f, s in zip(fast, slow):
        torch.testing.assert_close(f, torch.zeros_like(f) if s is None else s, atol=1e-10, rtol=0)
