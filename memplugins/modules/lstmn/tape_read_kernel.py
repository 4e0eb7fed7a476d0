"""
Triton kernels for one step's read of the LSTMN tape (Cheng et al. 2016, eq. 4-6), forward and backward, used by
`memplugins.modules.lstmn.fast` on CUDA. A step of the plain fast path reads the tape in seven launches forward
(σ, the scorer product, the mask, softmax, the weighted sum, two copies) and about ten backward; on a GPU at
B = 32, h = 300 each is a few microseconds of work behind a launch, so the step loop is launch-bound. Here each is
one launch, one program per batch row looping over the tape in blocks (the pattern of flash-linear-attention's
fused recurrent kernels), with nothing but the step's own values leaving the chip.

Forward, for a row b at step t (keys k_i = 2 W_h h_i, query q = 2 (W_x x_t + W_h~ h~_{t-1}), as the fast path
holds them; see its docstring for the σ form of eq. 4):

    pass 1:  act_i = σ(k_i + q)  (stored: the backward needs it);  a_i = 2 vᵀ act_i  (eq. 4, up to a constant)
             (+ β on slot t-1 where the layer has the optional recency score)
             a_i = -1e30 where slot i is padding (the fast path fills finfo.min: both give exp(a_i - max) = 0 next
             to a real slot, and a uniform read when no slot is real, as torch.softmax does), -inf past t
    pass 2:  m = max_i a_i;  Z = Σ_i exp(a_i - m)
    pass 3:  s_i = exp(a_i - m) / Z  (eq. 5);  [h~; c~] = Σ_i s_i [h_i; c_i]  (eq. 6)

Backward, given g = ∂L/∂[h~; c~] (the fast path's chain rule, written per row):

    pass 1:  g_s_i = <[h_i; c_i], g>;  ∂[h_i; c_i] += s_i g;  d = Σ_i s_i g_s_i
    pass 2:  g_a_i = s_i (g_s_i - d)  (softmax);  g_pre_i = 4 g_a_i act_i (1 - act_i) ⊙ v
             ∂k-tape_i += g_pre_i;  ∂q = Σ_i g_pre_i;  ∂v (per row, summed over rows by the caller) += Σ_i g_a_i act_i
             with β: ∂β (per row and step, summed by the caller) = g_a_{t-1}, written, not accumulated

Within a program, values one pass stores and a later pass loads (the scores, the backward's scratch) may sit in
different threads in the two layouts, so a `tl.debug_barrier()` separates the passes. And no pass stores over
memory that a pass of the same program loads without a barrier between them: a 1-D block such as a row of scores
may be held by every warp of the program (each warp loads it for its own columns of the tape) but is stored by one
thread, so an in-place update lets a warp that runs late load the new value where it needed the old one. The
forward's scores therefore go to a scratch row of their own, not into `weights` (where they went until
2026-11-26: a warp that loaded a softmax weight as a score then weighted its columns of [h~; c~] by
exp(s_i - m) / Z with s_i in [0, 1], and overflowed to inf when m < -88: the source of the NaN losses
of the LSTMN on CUDA before the fix). The backward's in-place updates (∂ tape, ∂ keys, ∂ v's row) each load and
store one element in the same thread and use the loaded value nowhere else, which is safe.

Why equal to the plain fast path: the same values by the same formulas; only the order of the sums inside a dot
product differs (a blocked reduction instead of a matrix product), which moves results by rounding.
`tests/modules/lstmn/tape_read_kernel_test.py` compares the two under Triton's interpreter on the CPU (outputs and
every gradient of the whole LSTMN layer in float64, padded), and `tests/gpu_test.py` on CUDA.
"""
import triton
import triton.language as tl


@triton.jit
def _columns(h, BLOCK_H: tl.constexpr, BLOCK_2H: tl.constexpr):
    """The column offsets of an h-wide row (keys, activations) and of a 2h-wide one (the tape), and their masks."""
    cols = tl.arange(0, BLOCK_H)
    cols2 = tl.arange(0, BLOCK_2H)
    return cols, cols < h, cols2, cols2 < 2 * h


@triton.jit
def _read_forward(keys, query, scorer, recency, tape, valid, activation, weights, scores, summary, t, h,
                  stride_kb, stride_kt, stride_tb, stride_tt, stride_vb, stride_sb,
                  HAS_RECENCY: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_2H: tl.constexpr):
    b = tl.program_id(0)
    dtype = keys.dtype.element_ty
    cols, in_h, cols2, in_2h = _columns(h, BLOCK_H, BLOCK_2H)
    q = tl.load(query + b * h + cols, mask=in_h, other=0.0)
    v = tl.load(scorer + cols, mask=in_h, other=0.0)
    if HAS_RECENCY:
        beta = tl.load(recency)
    best = tl.full((BLOCK_T,), float("-inf"), dtype)
    for start in range(0, t, BLOCK_T):
        rows = start + tl.arange(0, BLOCK_T)
        in_t = rows < t
        block = in_t[:, None] & in_h[None, :]
        k = tl.load(keys + b * stride_kb + rows[:, None] * stride_kt + cols[None, :], mask=block, other=0.0)
        act = tl.sigmoid(k + q[None, :])
        tl.store(activation + (b * t + rows[:, None]) * h + cols[None, :], act, mask=block)
        score = 2 * tl.sum(act * v[None, :], axis=1)
        if HAS_RECENCY:
            score = tl.where(rows == t - 1, score + beta, score)
        real = tl.load(valid + b * stride_vb + rows, mask=in_t, other=0) != 0
        score = tl.where(real, score, -1e30)
        score = tl.where(in_t, score, float("-inf"))
        tl.store(scores + b * t + rows, score, mask=in_t)
        best = tl.maximum(best, score)
    tl.debug_barrier()  # the scores just stored are read back in another layout, maybe by other threads
    top = tl.max(best, axis=0)
    total = tl.zeros((BLOCK_T,), dtype)
    for start in range(0, t, BLOCK_T):
        rows = start + tl.arange(0, BLOCK_T)
        score = tl.load(scores + b * t + rows, mask=rows < t, other=float("-inf"))
        total += tl.exp(score - top)
    norm = tl.sum(total, axis=0)
    read = tl.zeros((BLOCK_2H,), dtype)
    for start in range(0, t, BLOCK_T):
        rows = start + tl.arange(0, BLOCK_T)
        in_t = rows < t
        weight = tl.exp(tl.load(scores + b * t + rows, mask=in_t, other=float("-inf")) - top) / norm
        tl.store(weights + b * t + rows, weight, mask=in_t)
        slots = tl.load(tape + b * stride_tb + rows[:, None] * stride_tt + cols2[None, :],
                        mask=in_t[:, None] & in_2h[None, :], other=0.0)
        read += tl.sum(weight[:, None] * slots, axis=0)
    tl.store(summary + b * stride_sb + cols2, read, mask=in_2h)


@triton.jit
def _read_backward(grad_summary, tape, weights, activation, scorer, grad_tape, grad_keys, grad_query,
                   grad_scorer_rows, grad_recency, scratch, t, h, stride_tb, stride_tt, stride_kb, stride_kt,
                   stride_qb, stride_rb,
                   HAS_RECENCY: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_2H: tl.constexpr):
    b = tl.program_id(0)
    dtype = tape.dtype.element_ty
    cols, in_h, cols2, in_2h = _columns(h, BLOCK_H, BLOCK_2H)
    g = tl.load(grad_summary + b * 2 * h + cols2, mask=in_2h, other=0.0)
    dot = tl.zeros((BLOCK_T,), dtype)
    for start in range(0, t, BLOCK_T):
        rows = start + tl.arange(0, BLOCK_T)
        in_t = rows < t
        block = in_t[:, None] & in_2h[None, :]
        offsets = b * stride_tb + rows[:, None] * stride_tt + cols2[None, :]
        slots = tl.load(tape + offsets, mask=block, other=0.0)
        grad_weight = tl.sum(slots * g[None, :], axis=1)
        weight = tl.load(weights + b * t + rows, mask=in_t, other=0.0)
        tl.store(grad_tape + offsets, tl.load(grad_tape + offsets, mask=block, other=0.0)
                 + weight[:, None] * g[None, :], mask=block)
        tl.store(scratch + b * t + rows, grad_weight, mask=in_t)
        dot += weight * grad_weight
    tl.debug_barrier()  # as in the forward: scratch is read back in another layout
    total = tl.sum(dot, axis=0)
    v = tl.load(scorer + cols, mask=in_h, other=0.0)
    query_grad = tl.zeros((BLOCK_H,), dtype)
    scorer_grad = tl.zeros((BLOCK_H,), dtype)
    recent_grad = tl.zeros((BLOCK_T,), dtype)
    for start in range(0, t, BLOCK_T):
        rows = start + tl.arange(0, BLOCK_T)
        in_t = rows < t
        block = in_t[:, None] & in_h[None, :]
        weight = tl.load(weights + b * t + rows, mask=in_t, other=0.0)
        grad_score = weight * (tl.load(scratch + b * t + rows, mask=in_t, other=0.0) - total)
        if HAS_RECENCY:
            recent_grad += tl.where(rows == t - 1, grad_score, 0.0)
        act = tl.load(activation + (b * t + rows[:, None]) * h + cols[None, :], mask=block, other=0.0)
        scorer_grad += tl.sum(grad_score[:, None] * act, axis=0)
        grad_pre = (act - act * act) * (4 * grad_score)[:, None] * v[None, :]
        offsets = b * stride_kb + rows[:, None] * stride_kt + cols[None, :]
        tl.store(grad_keys + offsets, tl.load(grad_keys + offsets, mask=block, other=0.0) + grad_pre, mask=block)
        query_grad += tl.sum(grad_pre, axis=0)
    tl.store(grad_query + b * stride_qb + cols, query_grad, mask=in_h)
    row = grad_scorer_rows + b * h + cols
    tl.store(row, tl.load(row, mask=in_h, other=0.0) + scorer_grad, mask=in_h)
    if HAS_RECENCY:  # a store of one value, no load: threads holding it all store the same
        tl.store(grad_recency + b * stride_rb, tl.sum(recent_grad, axis=0))


def _blocks(hidden: int):
    block_h = triton.next_power_of_2(hidden)
    block_2h = triton.next_power_of_2(2 * hidden)
    return max(1, min(64, 8192 // block_2h)), block_h, block_2h


def tape_read_forward(keys, query, scorer, tape, valid, t: int, summary, recency=None):
    """
    keys `(B, T, h)` (2 W_h h_i), query `(B, h)` contiguous, scorer v `(h,)`, tape `(B, T, 2h)` ([h_i; c_i]),
    valid `(B, T)` uint8 (the mask), recency β `()` or None; writes [h~; c~] into `summary` `(B, 2h)` (a view is
    fine: rows may be strided) and returns (act `(B, t, h)`, s `(B, t)`): what the backward needs.
    """
    batch_size, _, hidden = keys.size()
    activation = keys.new_empty(batch_size, t, hidden)
    weights = keys.new_empty(batch_size, t)
    scores = keys.new_empty(batch_size, t)  # pass 1's, apart from `weights` (module doc: no in-place pass)
    block_t, block_h, block_2h = _blocks(hidden)
    _read_forward[(batch_size,)](
        keys, query, scorer, recency if recency is not None else scorer, tape, valid, activation, weights, scores,
        summary, t, hidden, keys.stride(0), keys.stride(1), tape.stride(0), tape.stride(1), valid.stride(0),
        summary.stride(0), HAS_RECENCY=recency is not None, BLOCK_T=block_t, BLOCK_H=block_h, BLOCK_2H=block_2h,
    )
    return activation, weights


def tape_read_backward(grad_summary, tape, weights, activation, scorer, grad_tape, grad_keys, grad_query,
                       grad_scorer_rows, t: int, grad_recency=None) -> None:
    """
    The backward of `tape_read_forward` for g = grad_summary `(B, 2h)` (contiguous): adds s_i g into grad_tape
    `(B, T, 2h)`, the key-tape gradient into grad_keys `(B, T, h)` and Σ_i g_a_i act_i into grad_scorer_rows
    `(B, h)` (sum over rows, times 2, is v's gradient), and writes the query's gradient into grad_query `(B, h)`
    (a view is fine) and, where the forward had β, g_a_{t-1} into grad_recency `(B,)` (a view is fine; summed
    over rows and steps, β's gradient). grad_tape and grad_keys must be contiguous in their last dimension.
    """
    batch_size, _, double_hidden = tape.size()
    hidden = double_hidden // 2
    scratch = tape.new_empty(batch_size, t)
    block_t, block_h, block_2h = _blocks(hidden)
    has_recency = grad_recency is not None
    _read_backward[(batch_size,)](
        grad_summary, tape, weights, activation, scorer, grad_tape, grad_keys, grad_query, grad_scorer_rows,
        grad_recency if has_recency else scratch, scratch, t, hidden, tape.stride(0), tape.stride(1),
        grad_keys.stride(0), grad_keys.stride(1), grad_query.stride(0), grad_recency.stride(0) if has_recency else 0,
        HAS_RECENCY=has_recency, BLOCK_T=block_t, BLOCK_H=block_h, BLOCK_2H=block_2h,
    )
