"""
CUDA graphs over a fast path's whole step loop, forward and backward: the "graphs" backend (`backend.py`).

Why: on a GPU our recurrences are bound by launches, not arithmetic. With the Triton kernels a step of the LSTMN is
still about ten launches forward and ten backward (`benchmarks/speed/launch_count.py`), and each costs the host a few
microseconds of Python and driver work, about as long as the GPU work it starts. A CUDA graph records the launches of
the whole loop once and replays them with one host call, so the host's cost no longer grows with T.

How, per fast path and per key (the tensor arguments' shapes, dtypes and device, the other arguments' values):
- The first call captures the forward loop as a graph that reads static copies of the arguments and writes static
  outputs and saved state, after two warm-up runs on a side stream (they compile the Triton kernels and set up
  cuBLAS). The first backward captures the backward loop as a second graph that reads the forward's static saved
  state and static output gradients.
- Every call copies its arguments into the static ones, replays, and clones what it returns and what its backward
  needs: a call's saved state must outlive later calls (a pair model encodes premise and hypothesis with the same
  encoder before one backward). Of its arguments, a call keeps only those in the saved state (the backward reads
  nothing else). A backward copies these, the call's saved state and the output gradients back in, replays, and
  clones the input gradients (autograd may keep one as a parameter's `.grad`). These copies are a fixed number of
  memcpy-like launches whatever T is.
- Lengths (T, and the NSE's memory slots) are padded up to a multiple of the backend's `graph_bucket` (default 8)
  with masked steps and slots, and outputs and gradients are cut back. This is exact for a fast path whose masked
  trailing steps and slots change no real output and add nothing to any gradient (the padding invariance its
  tests check), and it keeps one graph pair per bucket instead of one per length.

Why it equals the eager fast path: a replay performs exactly the launches of the eager loop on the same values,
with one difference. While capturing, `step_is_full` reports every step as possibly padded (its host
synchronisation cannot be captured), and the masked path multiplies by a mask of ones and `where` keeps the new
value, which changes no value. `tests/modules/fast_path/step_graphs_test.py` checks outputs and every gradient against the
eager path on the CPU with a simulated capture (a replay re-runs the recorded function into the static buffers):
two forwards before one backward, retained graphs, `no_grad`, bucket padding, the cache. `tests/gpu_test.py`
captures real graphs on CUDA.

Costs: memory (a key keeps its graphs' pools and static buffers, about three times one call's saved state) and the
capture of each new key (about three eager calls). At most the backend's `graph_cache` keys (default 64) are kept
per fast path; the least recently used goes first. Not graphed: anything off CUDA, calls under
`torch.inference_mode` (`no_grad` is graphed), and calls made while another graph is being captured (the eager loop
itself is capturable then, through `step_is_full`).

The tree LSTM's levels follow each batch's tree shapes, so its caller pads them itself, with `length_dims` None:
leaves and levels to the bucket, each level to a size fixed by the key (`memplugins.modules.tree_lstm.layout.
level_capacities`), padding nodes reading a zero row and writing a row nothing reads (`tree_lstm_nodes`).

The default backend: a capture that fails (an operation that cannot be captured, no memory for the graph's pool)
is logged once with its reason, and that fast path runs its eager loop for the rest of the process.
"""
import collections
import logging
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.utils import _pytree as pytree

from memplugins.modules.fast_path import backend
from memplugins.modules.fast_path.contract import first_order_backward

logger = logging.getLogger(__name__)

# tests: capture on the CPU by recording the function (module doc); never set in training
SIMULATE_ON_CPU = False

_state = threading.local()


def capturing() -> bool:
    """Whether a graph is being captured or warmed up here (ours, or the current CUDA stream's)."""
    if getattr(_state, "capturing", False):
        return True
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def step_is_full(mask: torch.BoolTensor) -> List[bool]:
    """Per step, whether no sequence is padded there (`mask.all(0)` on the host), so that full steps skip the
    masking. That is a host synchronisation, which a capture cannot hold: while capturing, every step is reported
    as possibly padded, and the masked path gives the same values (module doc)."""
    if capturing():
        return [False] * mask.size(1)
    return mask.all(0).tolist()


def enabled() -> bool:
    return backend.current().cuda_graphs


Dims = Dict[int, int]  # a tensor's padded dimensions: dimension -> length group


def _cut(tensor: torch.Tensor, dims: Dims, lengths: Optional[Dict[int, int]]) -> torch.Tensor:
    """The front of `tensor` that holds the real lengths (the whole tensor without padding)."""
    if not lengths or not dims:
        return tensor
    index: List[Any] = [slice(None)] * tensor.dim()
    for dim, group in dims.items():
        index[dim] = slice(0, lengths[group])
    return tensor[tuple(index)]


def _copy_all(destinations: List[torch.Tensor], sources: List[torch.Tensor]) -> None:
    if destinations:
        torch._foreach_copy_(destinations, sources)


def _clone_all(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
    copies = [torch.empty(t.size(), dtype=t.dtype, device=t.device) for t in tensors]
    _copy_all(copies, tensors)
    return copies


def _tensors(tree: Any) -> List[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(tree) if isinstance(leaf, torch.Tensor)]


class GraphCaptureError(RuntimeError):
    """A loop that could not be captured (an unsupported operation, memory): the eager loop runs instead."""


def _capture(function: Callable[[], Any], device: torch.device) -> Tuple[Callable[[], None], Any]:
    """Records `function` (no arguments: it reads static tensors) and returns (replay, its static result)."""
    _state.capturing = True
    try:
        with torch.no_grad():
            if device.type == "cpu":  # SIMULATE_ON_CPU: a replay re-runs it and writes into the first result
                function()
                result = function()
                static = _tensors(result)

                def replay() -> None:
                    _state.capturing = True
                    try:
                        with torch.no_grad():
                            _copy_all(static, _tensors(function()))
                    finally:
                        _state.capturing = False

                return replay, result
            with torch.cuda.device(device):
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(2):  # compiles the Triton kernels, sets up cuBLAS, outside the capture
                        function()
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                # thread_local: a backward is captured on autograd's device thread while others may run
                with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                    result = function()
            return graph.replay, result
    finally:
        _state.capturing = False


class StepGraphs:
    """
    The graphs of one fast path (module doc).

    forward: `(*args) -> (outputs, saved)`: the eager forward loop; outputs a tuple of tensors, saved any tree
        (tuples, lists, NamedTuples) of tensors and constants; a saved tensor may be an argument or an output.
    backward: `(saved, grads) -> input gradients`, one per argument (None where there is none); grads has one
        tensor per output (zeros for the non-differentiable ones). It must not change `saved` in place.
    non_differentiable: indices of outputs that carry no gradient.
    length_dims: `(args) -> (per argument, per output: {dimension: length group})`, the dimensions that hold a
        length (T, a memory's slots): each group is padded to a bucket and cut back. None: no padding, one key per
        shape.
    """

    def __init__(self, name: str, forward: Callable, backward: Callable, non_differentiable: Sequence[int] = (),
                 length_dims: Optional[Callable[[Sequence[Any]], Tuple[List[Dims], List[Dims]]]] = None) -> None:
        self.name = name
        self.forward = forward
        self.backward = backward
        self.non_differentiable = tuple(non_differentiable)
        self.length_dims = length_dims
        self.cache: "collections.OrderedDict[Any, _Entry]" = collections.OrderedDict()
        self.captures = 0  # graphs captured so far (forward and backward): for tests and benchmarks
        self.failed: Optional[str] = None  # why a capture failed: the eager loop runs from then on

    def applies(self, args: Sequence[Any]) -> bool:
        # not under inference_mode: static buffers made there could not be written outside it later
        if self.failed is not None or not enabled() or capturing() or torch.is_inference_mode_enabled():
            return False
        tensor = next(a for a in args if isinstance(a, torch.Tensor))
        return tensor.is_cuda or (SIMULATE_ON_CPU and tensor.device.type == "cpu")

    def __call__(self, args: Sequence[Any], needs_backward: bool) -> Optional[Tuple[torch.Tensor, ...]]:
        """The loop's outputs through the graphs; None where a capture failed (the caller runs the eager loop, and
        so does every later call: graphs are the default, so a setting they cannot capture must still train)."""
        try:
            entry, lengths = self._entry(args)
            if needs_backward:
                entry.capture_backward()  # now, in the forward, where a failure can still fall back
        except GraphCaptureError as error:
            self.failed = str(error)
            self.cache.clear()
            logger.warning("%s; this process runs the %s loop eagerly from now on (MEMPLUGINS_BACKEND=triton "
                           "turns the graphs off without this warning)", error, self.name)
            return None
        if needs_backward:
            return _GraphedLoop.apply(entry, lengths, *args)
        return entry.forward(args, lengths, keep_saved=False)[0]

    def _entry(self, args: Sequence[Any]) -> Tuple["_Entry", Optional[Dict[int, int]]]:
        arg_dims: List[Dims] = [{} for _ in args]
        output_dims: List[Dims] = []
        lengths: Optional[Dict[int, int]] = None
        buckets: Dict[int, int] = {}
        if self.length_dims is not None:
            arg_dims, output_dims = self.length_dims(args)
            lengths = {}
            for arg, dims in zip(args, arg_dims):
                for dim, group in dims.items():
                    lengths.setdefault(group, arg.size(dim))
            step = backend.current().graph_bucket
            buckets = {group: -(-length // step) * step for group, length in lengths.items()}

        def padded_size(tensor: torch.Tensor, dims: Dims) -> Tuple[int, ...]:
            return tuple(buckets[dims[d]] if d in dims else size for d, size in enumerate(tensor.size()))

        key = tuple((padded_size(a, dims), a.dtype, a.device) if isinstance(a, torch.Tensor) else ("value", a)
                    for a, dims in zip(args, arg_dims))
        entry = self.cache.get(key)
        if entry is None:
            static_args = [a.new_zeros(padded_size(a, dims)) if isinstance(a, torch.Tensor) else a
                           for a, dims in zip(args, arg_dims)]
            entry = _Entry(self, static_args, arg_dims, output_dims)
            self.cache[key] = entry
            while len(self.cache) > backend.current().graph_cache:
                self.cache.popitem(last=False)
        self.cache.move_to_end(key)
        return entry, lengths


class _Entry:
    """One key's static buffers and graphs."""

    def __init__(self, graphs: StepGraphs, static_args: List[Any], arg_dims: List[Dims],
                 output_dims: List[Dims]) -> None:
        self.graphs = graphs
        self.static_args = static_args
        self.arg_dims = arg_dims
        self.device = next(a for a in static_args if isinstance(a, torch.Tensor)).device
        self.replay_forward, (outputs, saved) = self._record(lambda: graphs.forward(*self.static_args), "forward")
        self.static_outputs: Tuple[torch.Tensor, ...] = tuple(outputs)
        self.output_dims = output_dims or [{} for _ in self.static_outputs]
        self.static_saved = saved
        # what a call must keep for its backward (which reads only `saved`): the arguments among the saved tensors
        # (by position: the call keeps its own), and the other saved tensors, once each
        saved_ids = {id(leaf) for leaf in _tensors(saved)}
        self.saved_args = [i for i, a in enumerate(self.static_args) if id(a) in saved_ids]
        seen = {id(self.static_args[i]) for i in self.saved_args}
        self.kept: List[torch.Tensor] = []
        for leaf in _tensors(saved):
            if id(leaf) not in seen:
                seen.add(id(leaf))
                self.kept.append(leaf)
        # a kept tensor that is also an output is not copied twice where the output is returned whole
        output_index = {id(o): n for n, o in enumerate(self.static_outputs)}
        self.kept_output = [output_index.get(id(leaf)) for leaf in self.kept]
        self.replay_backward: Optional[Callable[[], None]] = None
        self.static_grads: List[torch.Tensor] = []
        self.static_input_grads: Tuple[Optional[torch.Tensor], ...] = ()

    def _record(self, function: Callable[[], Any], what: str) -> Tuple[Callable[[], None], Any]:
        """`_capture`, with an error that names the switch."""
        try:
            replay, result = _capture(function, self.device)
        except Exception as error:
            raise GraphCaptureError(
                f"the graphs backend: capturing the {self.graphs.name} loop's {what} as a CUDA graph failed "
                f"({type(error).__name__}: {error})"
            ) from error
        self.graphs.captures += 1
        return replay, result

    def capture_backward(self) -> None:
        if self.replay_backward is None:
            self.static_grads = [torch.zeros_like(o) for o in self.static_outputs]
            self.replay_backward, self.static_input_grads = self._record(
                lambda: self.graphs.backward(self.static_saved, tuple(self.static_grads)), "backward"
            )

    @staticmethod
    def _load(statics: Sequence[Any], values: Sequence[Any], dims: Sequence[Dims],
              lengths: Optional[Dict[int, int]]) -> None:
        """Copies values into the static tensors; a shorter value fills the front of its padded dimensions, the
        rest is zeroed (masked steps and slots, zero gradients)."""
        destinations, sources = [], []
        for static, value, value_dims in zip(statics, values, dims):
            if not isinstance(static, torch.Tensor):
                continue
            if value is None:  # an output that got no gradient
                static.zero_()
            elif value.size() != static.size():
                static.zero_()
                _cut(static, value_dims, lengths).copy_(value)
            else:
                destinations.append(static)
                sources.append(value)
        _copy_all(destinations, sources)

    def forward(self, args: Sequence[Any], lengths: Optional[Dict[int, int]], keep_saved: bool):
        self._load(self.static_args, args, self.arg_dims, lengths)
        self.replay_forward()
        cut = [_cut(o, dims, lengths) for o, dims in zip(self.static_outputs, self.output_dims)]
        outputs = _clone_all(cut)
        if not keep_saved:
            return tuple(outputs), None
        whole = [c.size() == o.size() for c, o in zip(cut, self.static_outputs)]
        shared = [n is not None and whole[n] for n in self.kept_output]
        copies = iter(_clone_all([leaf for leaf, s in zip(self.kept, shared) if not s]))
        kept = [outputs[n] if s else next(copies) for n, s in zip(self.kept_output, shared)]
        return tuple(outputs), kept

    def backward(self, saved_args: Sequence[torch.Tensor], kept: Sequence[torch.Tensor],
                 grads: Sequence[Optional[torch.Tensor]],
                 lengths: Optional[Dict[int, int]]) -> List[Optional[torch.Tensor]]:
        """saved_args: the call's arguments at `self.saved_args`; kept: what `forward` kept."""
        graphs = self.graphs
        self.capture_backward()
        self._load([self.static_args[i] for i in self.saved_args], saved_args,
                   [self.arg_dims[i] for i in self.saved_args], lengths)
        _copy_all(self.kept, list(kept))
        grads = [None if n in graphs.non_differentiable else g for n, g in enumerate(grads)]
        self._load(self.static_grads, grads, self.output_dims, lengths)
        self.replay_backward()
        present = [n for n, g in enumerate(self.static_input_grads) if g is not None]
        copies = _clone_all([_cut(self.static_input_grads[n], self.arg_dims[n], lengths) for n in present])
        gradients: List[Optional[torch.Tensor]] = [None] * len(self.static_args)
        for n, copy in zip(present, copies):
            gradients[n] = copy
        return gradients


class _GraphedLoop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, entry: _Entry, lengths: Optional[Dict[int, int]], *args):
        outputs, kept = entry.forward(args, lengths, keep_saved=True)
        ctx.entry, ctx.lengths = entry, lengths
        ctx.save_for_backward(*(args[i] for i in entry.saved_args), *kept)
        non_differentiable = [outputs[n] for n in entry.graphs.non_differentiable]
        if non_differentiable:
            ctx.mark_non_differentiable(*non_differentiable)
        return outputs

    @staticmethod
    @first_order_backward
    def backward(ctx, *grads):
        saved, count = ctx.saved_tensors, len(ctx.entry.saved_args)
        return (None, None, *ctx.entry.backward(saved[:count], saved[count:], grads, ctx.lengths))
