"""
One small, padded case per fast path (and the decoder's step memory, which keeps the same contract): the module, a
forward that returns the outputs a loss is put on, and the leaves whose gradients the tests compare. Used by the
fast-path tests beside this file and by `contract_test.py`.
"""
from typing import Callable, Dict, List, NamedTuple

import torch

from memplugins.encoders import LstmnEncoder, NseEncoder, TreeLstmEncoder
from memplugins.fields import BinaryTree, batch_trees
from memplugins.modules import LstmnLayer, memory_read, memory_write
from memplugins.readers import parse_sst_tree
from tests import helpers
from tests.helpers import randomize  # noqa: F401  (the cases' modules use it; importers take it from here)

LENGTHS = [6, 3, 1, 5]
EXTRA_LENGTHS = [4, 2, 3, 1]
TREES = [
    "(3 (2 It) (4 (2 's) (3 lovely)))",  # small
    "(2 word)",  # a one-word sentence: the root is a leaf
    "(1 (1 (1 (1 (1 (2 a) (2 b)) (2 c)) (2 d)) (2 e)) (2 f))",  # deep left-branching
    "(2 (2 (2 a) (2 b)) (2 (2 c) (2 (2 d) (2 (2 e) (2 (2 f) (2 g))))))",  # mixed
]


def padded(lengths, size: int, seed: int, dtype=torch.float64, garbage: float = 37.0, device="cpu"):
    """`tests.helpers.padded` in float64 with gradients: the fast-path comparisons' inputs."""
    return helpers.padded(lengths, size, seed, dtype=dtype, garbage=garbage, requires_grad=True, device=device)


def sst_trees() -> List[BinaryTree]:
    return [parse_sst_tree(text) for text in TREES]


class Case(NamedTuple):
    module: torch.nn.Module
    run: Callable[[], List[torch.Tensor]]  # the forward: the outputs a loss is put on
    leaves: List[torch.Tensor]  # inputs and parameters whose gradients are compared


def lstmn_case(dtype=torch.float64, device="cpu", recency_start=None) -> Case:
    """With `recency_start`, the layer has the recency score β (drawn by `randomize` as every parameter)."""
    layer = randomize(LstmnLayer(5, 4, recency_start=recency_start).to(dtype)).to(device)
    x, mask = padded(LENGTHS, 5, seed=1, dtype=dtype, device=device)
    addend = torch.randn(len(LENGTHS), max(LENGTHS), 4, dtype=dtype, generator=torch.Generator().manual_seed(2))
    addend = addend.to(device).requires_grad_()
    return Case(layer, lambda: list(layer(x, mask, addend)[:2]), [x, addend, *layer.parameters()])


def nse_case(dtype=torch.float64, device="cpu", num_write_layers: int = 1) -> Case:
    encoder = NseEncoder(5, 4, num_extra_memories=1, num_write_layers=num_write_layers)
    encoder = randomize(encoder.to(dtype), seed=2).to(device)
    x, mask = padded(LENGTHS, 5, seed=3, dtype=dtype, device=device)
    extra, extra_mask = padded(EXTRA_LENGTHS, 4, seed=4, dtype=dtype, garbage=0.0, device=device)

    def run():
        output = encoder.encode(x, mask, [(extra, extra_mask)])
        return [output.hidden, output.memory, output.keys, output.extra_memories[0], output.extra_keys[0]]

    return Case(encoder, run, [x, extra, *encoder.parameters()])


def tree_lstm_case(dtype=torch.float64, device="cpu") -> Case:
    encoder = randomize(TreeLstmEncoder(6, 5).to(dtype), seed=5).to(device)
    tensors, mask = batch_trees(sst_trees())
    tensors, mask = {key: value.to(device) for key, value in tensors.items()}, mask.to(device)
    x = torch.randn(len(TREES), mask.size(1), 6, dtype=dtype, generator=torch.Generator().manual_seed(6))
    x = x.to(device).requires_grad_()
    return Case(encoder, lambda: [encoder.encode(x, mask, tensors).node_states], [x, *encoder.parameters()])


def memory_case(dtype=torch.float64, device="cpu") -> Case:
    """Three read-write steps of the NSE decoder's memory (`memplugins.modules.nse.memory`)."""
    memory, mask = padded(EXTRA_LENGTHS, 4, seed=7, dtype=dtype, garbage=0.0, device=device)
    queries = torch.randn(3, len(EXTRA_LENGTHS), 4, dtype=dtype, generator=torch.Generator().manual_seed(8))
    queries = queries.to(device).requires_grad_()

    def run():
        current, outputs = memory, []
        for query in queries:
            keys, retrieved = memory_read(current, mask, query)
            current = memory_write(current, keys, torch.tanh(retrieved + query))
            outputs += [keys, retrieved]
        return outputs + [current]

    return Case(torch.nn.Module(), run, [memory, queries])


CASES: Dict[str, Callable[..., Case]] = {
    "lstmn": lstmn_case, "nse": nse_case, "tree_lstm": tree_lstm_case, "memory": memory_case,
    # the lstmn's opt-in recency score β on slot t-1 (memplugins.modules.lstmn)
    "lstmn_recency": lambda dtype=torch.float64, device="cpu": lstmn_case(dtype, device, recency_start=0.0),
    # two write-LSTM layers: the batched step loop (memplugins.modules.nse.deep) instead of the one-layer Function
    "nse_deep": lambda dtype=torch.float64, device="cpu": nse_case(dtype, device, num_write_layers=2),
}


def loss_and_gradients(case: Case, seed: int = 9, **grad_options):
    """The case's outputs, a loss that weighs every output entry differently, and the leaves' gradients."""
    outputs = case.run()
    generator = torch.Generator().manual_seed(seed)
    loss = sum((torch.tanh(t) * torch.randn(t.shape, generator=generator, dtype=t.dtype).to(t.device)).sum()
               for t in outputs)
    return outputs, loss, torch.autograd.grad(loss, case.leaves, **grad_options)


# the encoders as plain Seq2Seq / Seq2Vec modules, for DDP (which wraps `forward`)
ENCODERS = {
    "lstmn": lambda: LstmnEncoder(7, 6, num_layers=2),
    "nse": lambda: NseEncoder(7, 6),
    "nse_deep": lambda: NseEncoder(7, 6, num_write_layers=2),  # memplugins.modules.nse.deep runs it
    "tree_lstm": lambda: TreeLstmEncoder(7, 5),
}
