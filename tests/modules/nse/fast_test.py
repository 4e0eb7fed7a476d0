"""
The NSE fast path (`memplugins.modules.nse.fast`) against the literal per-example reference of eq. 1-15
(`memplugins.modules.nse.reference`): hidden states, keys, final memories and every gradient, padded and unpadded,
with the own and extra memories written or read-only, M_0 from the inputs or from the read LSTM's states, both compose
settings, a learned key strength, and dropout given the same masks.
"""
import pytest
import torch
from allennlp.common.checks import ConfigurationError

from memplugins.encoders import NseEncoder
from memplugins.modules.nse.reference import nse_reference_batch
from tests.modules.fast_path.cases import EXTRA_LENGTHS, LENGTHS, padded, randomize

CASES = {
    "nse": dict(extras=0),
    "mma_written": dict(extras=2, write_extra_memories=True),
    "mma_read_only": dict(extras=1, write_extra_memories=False),
    "linear_wide": dict(extras=1, compose_size=12, compose_activation="linear"),
    # the write_memory=False ablation: the own memory read-only, alone, beside a written extra, and with nothing
    # written at all (the factored state then has no written memory)
    "nse_read_only": dict(extras=0, write_memory=False),
    "read_only_beside_written_extra": dict(extras=1, write_memory=False),
    "nothing_written": dict(extras=1, write_memory=False, write_extra_memories=False),
    # initial_memory="read_states": M_0 = o_1..o_T (the gradient reaches f_r through M_0 too), written and read-only
    "read_states": dict(extras=0, initial_memory="read_states"),
    "read_states_read_only_beside_written_extra": dict(extras=1, initial_memory="read_states", write_memory=False),
    # key_strength: queries β_t o_t (eq. 2'), on the own memory alone and on the own and a written extra memory
    "key_strength": dict(extras=0, key_strength=True),
    "key_strength_mma_read_states": dict(extras=1, key_strength=True, initial_memory="read_states"),
}


def batch(extras: int, full: bool = False, lengths=LENGTHS):
    x, mask = padded(lengths, 5, seed=1)
    if full:
        mask = torch.ones_like(mask)
    extra_memories = []
    for n in range(extras):
        memory, memory_mask = padded(EXTRA_LENGTHS, 4, seed=10 + n, garbage=0.0)
        extra_memories.append((memory, memory_mask))
    return x, mask, extra_memories


def run(outputs, encoder, x, extras, seed=3):
    tensors = [outputs[0], outputs[1], outputs[2], *outputs[3], *outputs[4]]
    generator = torch.Generator().manual_seed(seed)
    loss = sum((t.tanh() * torch.randn(t.shape, generator=generator, dtype=t.dtype)).sum() for t in tensors)
    leaves = [x, *[m for m, _ in extras], *encoder.parameters()]
    return tensors, torch.autograd.grad(loss, leaves, allow_unused=True)


def assert_equal_to_reference(got, got_grads, expected, expected_grads, names):
    """Outputs equal, and every named gradient non-zero and equal (float64 tolerances)."""
    for got_tensor, expected_tensor in zip(got, expected):
        torch.testing.assert_close(got_tensor, expected_tensor, atol=1e-12, rtol=1e-10)
    for name, got_grad, expected_grad in zip(names, got_grads, expected_grads):
        assert got_grad is not None and got_grad.abs().sum() > 0, name
        torch.testing.assert_close(got_grad, expected_grad, atol=1e-11, rtol=1e-9, msg=name)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("full", [False, True], ids=["padded", "unpadded"])
def test_fast_path_equals_the_literal_reference(case, full):
    options = dict(CASES[case])
    extras = options.pop("extras")
    encoder = randomize(NseEncoder(5, 4, num_extra_memories=extras, **options).double(), seed=2)
    x, mask, extra_memories = batch(extras, full)
    fast, fast_grads = run(encoder.encode(x, mask, extra_memories), encoder, x, extra_memories)
    reference, reference_grads = run(nse_reference_batch(encoder.weights(), x, mask, extra_memories), encoder, x, extra_memories)
    names = ["x"] + [f"extra {i}" for i in range(extras)] + [n for n, _ in encoder.named_parameters()]
    assert_equal_to_reference(fast, fast_grads, reference, reference_grads, names)


# one write layer: the fast path; two: memplugins.modules.nse.deep's step loop
@pytest.mark.parametrize("num_write_layers", [1, 2], ids=["fast", "deep"])
@pytest.mark.parametrize("options", [dict(), dict(initial_memory="read_states"), dict(key_strength=True)],
                         ids=["inputs", "read_states", "key_strength"])
def test_dropout_draws_one_mask_for_all_steps_and_matches_the_reference_given_it(num_write_layers, options):
    """With M_0 from the read states, M_0 holds o_t before its dropout (the reference builds it so); with
    key_strength, β_t comes from the dropped o_t, the query."""
    encoder = NseEncoder(5, 4, num_extra_memories=1, dropout=0.3, num_write_layers=num_write_layers, **options)
    encoder = randomize(encoder.double(), seed=4).train()
    x, mask, extras = batch(1)
    torch.manual_seed(0)
    fast, fast_grads = run(encoder.encode(x, mask, extras), encoder, x, extras)
    torch.manual_seed(0)  # the same draws, in the same order: o_t's dropout, then h_t's mask
    shape = (len(LENGTHS), max(LENGTHS), 4)
    read_mask = encoder._dropout(torch.ones(shape, dtype=torch.float64))
    value_mask = encoder._dropout(torch.ones(shape, dtype=torch.float64))
    assert 0.15 < (value_mask == 0).double().mean() < 0.45
    reference, reference_grads = run(nse_reference_batch(encoder.weights(), x, mask, extras, read_mask, value_mask),
                                     encoder, x, extras)
    names = ["x", "extra 0"] + [n for n, _ in encoder.named_parameters()]
    assert_equal_to_reference(fast, fast_grads, reference, reference_grads, names)


@pytest.mark.parametrize("num_write_layers", [1, 2], ids=["fast", "deep"])
@pytest.mark.parametrize("compose", [dict(), dict(compose_size=12, compose_activation="linear"),
                                     dict(initial_memory="read_states"), dict(key_strength=True)],
                         ids=["relu", "linear", "read_states", "key_strength"])
def test_dropout_on_the_lstms_inputs_matches_the_reference_given_its_masks(num_write_layers, compose):
    """`dropout_placement="inputs"` (the authors' code): x_t into f_r and c_t into f_w are dropped; o_t (so the
    keys), the written h_t and the memory's initial x are not (with `initial_memory="read_states"`, M_0 holds the
    o_t computed from the dropped x)."""
    encoder = NseEncoder(5, 4, num_extra_memories=1, dropout=0.3, dropout_placement="inputs",
                         num_write_layers=num_write_layers, **compose)
    encoder = randomize(encoder.double(), seed=4).train()
    x, mask, extras = batch(1)
    torch.manual_seed(0)
    fast, fast_grads = run(encoder.encode(x, mask, extras), encoder, x, extras)
    torch.manual_seed(0)  # the same draws, in the same order: x_t's mask, then c_t's
    batch_shape = (len(LENGTHS), max(LENGTHS))
    input_mask = encoder._dropout(torch.ones(*batch_shape, 5, dtype=torch.float64))
    compose_mask = encoder._dropout(torch.ones(*batch_shape, encoder.compose.out_features, dtype=torch.float64))
    assert 0.15 < (compose_mask == 0).double().mean() < 0.45
    reference, reference_grads = run(
        nse_reference_batch(encoder.weights(), x, mask, extras, input_dropout=input_mask, compose_dropout=compose_mask),
        encoder, x, extras)
    names = ["x", "extra 0"] + [n for n, _ in encoder.named_parameters()]
    assert_equal_to_reference(fast, fast_grads, reference, reference_grads, names)
    # the masks matter: without them (the same weights) the outputs differ
    plain = nse_reference_batch(encoder.weights(), x, mask, extras)
    assert not torch.allclose(plain[0], fast[0])
    # and the written values are not dropped: no h_t is exactly 0 at a real step (as "outputs" would make ~30 %)
    assert (fast[0][mask] != 0).all()


def test_dropout_placement_is_checked():
    with pytest.raises(ConfigurationError, match="dropout_placement"):
        NseEncoder(5, 4, dropout=0.3, dropout_placement="everywhere")


def _recurrence_inputs(compose: str = "relu", seed: int = 0):
    """Random arguments of `nse_recurrence` (k = 4, c = 5, T = 6): two written memories of 3 and 2 slots, dropout
    masks on h_t and c_t; float64, each a leaf that needs its gradient."""
    from memplugins.modules.nse.state import CellWeights, Memory

    generator = torch.Generator().manual_seed(seed)

    def leaf(*size, scale=0.5):
        return (torch.randn(*size, generator=generator, dtype=torch.float64) * scale).requires_grad_()

    def dropout_mask(*size):
        return (torch.rand(*size, generator=generator, dtype=torch.float64) > 0.3).double() / 0.7

    batch_size, steps, k, c = 2, 6, 4, 5
    slots = [3, 2]
    memories = [Memory(leaf(batch_size, n, steps), leaf(batch_size, n, k), torch.ones(batch_size, n, dtype=torch.bool),
                       True) for n in slots]
    cell = CellWeights(leaf(c, k * len(slots)), leaf(4 * k, c), leaf(4 * k, k), leaf(4 * k))
    return (leaf(batch_size, steps, k), leaf(batch_size, steps, c), dropout_mask(batch_size, steps, k), memories, cell,
            compose, dropout_mask(batch_size, steps, c))


def check_steps_masked_inside_a_sequence_are_skipped(compose: str = "relu"):
    """A step masked between real ones writes nothing and leaves the write LSTM's state as it was: each sequence's
    outputs and gradients are those of the sequence without its masked steps (the state the masked step passed
    through is what the backward's 'kept' adjoints carry; with the padding at the end only, they are 0)."""
    from memplugins.modules.nse.fast import nse_recurrence

    queries, composed, dropout, memories, cell, compose, compose_dropout = _recurrence_inputs(compose)
    mask = torch.tensor([[1, 0, 1, 1, 0, 1], [1, 1, 0, 1, 0, 0]], dtype=torch.bool)  # steps 0 and 3 full
    leaves = [queries, composed, *(m.initial_scores for m in memories), *(m.initial for m in memories), *cell]
    generator = torch.Generator().manual_seed(1)

    def weights_like(tensor):
        return torch.randn(tensor.shape, generator=generator, dtype=tensor.dtype)

    values, keys, decays, write_weights = nse_recurrence(queries, composed, mask, dropout, memories, cell, compose,
                                                         compose_dropout)
    outputs = [values, *keys, *decays, *write_weights]
    loss_weights = [weights_like(t) for t in outputs]
    grads = torch.autograd.grad(sum((t * w).sum() for t, w in zip(outputs, loss_weights)), leaves)
    assert (values[~mask] == 0).all() and all((key[~mask] == 0).all() for key in keys)
    summed = [torch.zeros_like(g) for g in grads[-4:]]  # the weights' gradients: the rows' sum
    for b in range(mask.size(0)):
        real = mask[b].nonzero().squeeze(1)

        def row(tensor, dim=1):
            return tensor[b : b + 1].index_select(dim, real)

        row_memories = [m._replace(initial_scores=row(m.initial_scores, 2), initial=m.initial[b : b + 1],
                                   mask=m.mask[b : b + 1]) for m in memories]
        row_outputs = nse_recurrence(row(queries), row(composed), mask[b : b + 1, real], row(dropout), row_memories,
                                     cell, compose, row(compose_dropout))
        row_outputs = [row_outputs[0], *row_outputs[1], *row_outputs[2], *row_outputs[3]]
        row_weights = [row(w) for w in loss_weights[:3]] + [w[b : b + 1] for w in loss_weights[3:5]] + \
            [row(w, 2) for w in loss_weights[5:]]
        for got, expected in zip([row(values), *(row(key) for key in keys), *(d[b : b + 1] for d in decays),
                                  *(row(w, 2) for w in write_weights)], row_outputs):
            torch.testing.assert_close(got, expected, atol=1e-12, rtol=1e-10)
        row_loss = sum((t * w).sum() for t, w in zip(row_outputs, row_weights))
        row_grads = torch.autograd.grad(row_loss, leaves)
        def row_parts(gradients):  # the leaves' gradients are whole tensors: row b's real steps of them
            return [row(gradients[0]), row(gradients[1]), *(row(g, 2) for g in gradients[2:4]),
                    *(g[b : b + 1] for g in gradients[4:6])]

        for got, expected in zip(row_parts(grads), row_parts(row_grads)):
            torch.testing.assert_close(got, expected, atol=1e-11, rtol=1e-9)
        for g in row_grads[:6]:  # nothing of the other row reaches this row's loss
            assert (g[1 - b] == 0).all()
        assert (grads[0][b, ~mask[b]] == 0).all() and (grads[1][b, ~mask[b]] == 0).all()
        summed = [total + g for total, g in zip(summed, row_grads[-4:])]
    for got, expected in zip(grads[-4:], summed):
        assert got.abs().sum() > 0
        torch.testing.assert_close(got, expected, atol=1e-11, rtol=1e-9)


@pytest.mark.parametrize("compose", ["relu", "linear"])
def test_steps_masked_inside_a_sequence_are_skipped(compose):
    check_steps_masked_inside_a_sequence_are_skipped(compose)
