"""
A Triton kernel for the backward of one memory's read at step t in the NSE fast path (eq. 2-3, or 10-11 for an
MMA-NSE extra memory, in reverse; the adjoints are tabulated in `memplugins.modules.nse.fast`'s docstring), used by
`memplugins.modules.nse.backward` on CUDA where its `_read_backward` launches about fifteen operations per
memory and step. One program per batch row, looping over the memory slots and the written history in blocks (the
layout of `memplugins.modules.nse.read_kernel`, the forward). For row b, with g_r the read's gradient, g_z the
key's gradient from the write, z, a = a_{t-1}, W = W_{t-1} (l × t), q = H_{<t} o_t and S0 as the forward kept them:

    pass 1 (written, t > 0):  g_c,i = <h_i, g_r>  (the coefficients' gradient, through r = (zᵀ W) H);
             ∂h_i += c_i g_r  (the written values' gradient through r, with c = zᵀ W as the forward kept it)
    pass 2:  g_w,j = <M_0,j, g_r>;  record z_j a_j (M_0's read weight);
             g_j = g_z,j + g_w,j a_j + Σ_i W_ji g_c,i   (read-only: g_j = g_z,j + g_w,j)
             ∂a_j += g_w,j z_j;  ∂W_ji += z_j g_c,i;  d = Σ_j z_j g_j
    pass 3:  g_s,j = z_j (g_j - d)  (softmax);  ∂S0_j,t = g_s,j a_j;  ∂a_j += g_s,j S0_j;  ∂W_ji += g_s,j q_i
    pass 4 (written, t > 0):  ∂q_i += Σ_j g_s,j W_ji  (the history scores' gradient, summed over the memories)
    pass 5 (the last written memory's launch, t > 0: ∂q is complete):  through q = H_{<t} o_t,
             g_o_t = Σ_i ∂q_i h_i;  ∂h_i += ∂q_i o_t

Why equal to the plain backward: the same formulas, each sum added in the same order of terms (∂a and ∂W get their
two addends in the plain order); only the order inside the dot products differs (blocked reductions), which moves
results by rounding. Passes that read what an earlier pass stored are separated by `tl.debug_barrier()`, and so
are pass 3's loads of g and its in-place store of g_s over them (a block may be held by several warps but is stored
by one thread; `tape_read_kernel`'s module doc).
`tests/modules/nse/read_kernel_test.py` checks it with the forward kernel under Triton's interpreter.
"""
import triton
import triton.language as tl

from memplugins.modules.fast_path.launch import given
from memplugins.modules.nse.read_kernel import slot_weighted_columns

MAX_BLOCK = 64  # slots and history steps per block of the loops (fewer when k is wide); the tests lower it


@triton.jit
def _add_to_value_grads(value_grads, ss, ks, block, column, row, stride_vgt):
    """∂h_i += column_i row for the history rows i = ss (pointers at the row; ∂h's rows `stride_vgt` apart): each
    element loaded and stored back by itself."""
    offsets = ss[:, None] * stride_vgt + ks[None, :]
    tl.store(value_grads + offsets, tl.load(value_grads + offsets, mask=block, other=0.0)
             + column[:, None] * row[None, :], mask=block)


@triton.jit
def _coefficient_gradients(values, grad_read, scratch_gc, coefficients, value_grads, t, k, stride_ht, stride_vgt,
                           BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pass 1 for one row (pointers at the row): g_c into `scratch_gc`; adds c_i g_r to each ∂h_i."""
    ks = tl.arange(0, BLOCK_K)
    g_r = tl.load(grad_read + ks, mask=ks < k, other=0.0)
    for s0 in range(0, t, BLOCK_S):
        ss = s0 + tl.arange(0, BLOCK_S)
        in_s = ss < t
        block = in_s[:, None] & (ks < k)[None, :]
        h = tl.load(values + ss[:, None] * stride_ht + ks[None, :], mask=block, other=0.0)
        tl.store(scratch_gc + ss, tl.sum(h * g_r[None, :], axis=1), mask=in_s)
        c = tl.load(coefficients + ss, mask=in_s, other=0.0)
        _add_to_value_grads(value_grads, ss, ks, block, c, g_r, stride_vgt)


@triton.jit
def _key_gradients(keys, grad_keys, grad_read, initial, decay, weights, scratch_gc, scratch_g, read_weights,
                   grad_decay, grad_weights, t, num_slots, k, stride_ml, stride_gwl,
                   WRITTEN: tl.constexpr, HAS_HISTORY: tl.constexpr,
                   BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pass 2 for one row: g into `scratch_g`, the first addends of ∂a and ∂W; returns d = Σ_j z_j g_j."""
    dtype = keys.dtype.element_ty
    ks = tl.arange(0, BLOCK_K)
    g_r = tl.load(grad_read + ks, mask=ks < k, other=0.0)
    dot = tl.zeros((BLOCK_L,), dtype)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        rows = tl.load(initial + js[:, None] * stride_ml + ks[None, :], mask=in_l[:, None] & (ks < k)[None, :],
                       other=0.0)
        g_w = tl.sum(rows * g_r[None, :], axis=1)
        z = tl.load(keys + js, mask=in_l, other=0.0)
        g = tl.load(grad_keys + js, mask=in_l, other=0.0)
        if WRITTEN:
            a = tl.load(decay + js, mask=in_l, other=0.0)
            tl.store(read_weights + js, z * a, mask=in_l)
            g = g + g_w * a
            tl.store(grad_decay + js, tl.load(grad_decay + js, mask=in_l, other=0.0) + g_w * z, mask=in_l)
            if HAS_HISTORY:
                product = tl.zeros((BLOCK_L,), dtype)
                for s0 in range(0, t, BLOCK_S):
                    ss = s0 + tl.arange(0, BLOCK_S)
                    in_s = ss < t
                    block = in_l[:, None] & in_s[None, :]
                    g_c = tl.load(scratch_gc + ss, mask=in_s, other=0.0)
                    w = tl.load(weights + js[:, None] * t + ss[None, :], mask=block, other=0.0)
                    product += tl.sum(w * g_c[None, :], axis=1)
                    offsets = js[:, None] * stride_gwl + ss[None, :]
                    tl.store(grad_weights + offsets, tl.load(grad_weights + offsets, mask=block, other=0.0)
                             + z[:, None] * g_c[None, :], mask=block)
                g = g + product
        else:
            tl.store(read_weights + js, z, mask=in_l)
            g = g + g_w
        tl.store(scratch_g + js, g, mask=in_l)
        dot += z * g
    return tl.sum(dot, axis=0)


@triton.jit
def _score_gradients(keys, decay, initial_scores, history, scratch_g, grad_scores, grad_decay, grad_weights, dot,
                     t, num_slots, stride_sl, stride_gwl, stride_gsl,
                     WRITTEN: tl.constexpr, HAS_HISTORY: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr):
    """Pass 3 for one row: g_s into `scratch_g` (over g), ∂S0 at t, the second addends of ∂a and ∂W."""
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        z = tl.load(keys + js, mask=in_l, other=0.0)
        g_s = z * (tl.load(scratch_g + js, mask=in_l, other=0.0) - dot)
        tl.debug_barrier()  # g_s replaces g in place: every warp loads g first (module doc)
        tl.store(scratch_g + js, g_s, mask=in_l)
        if WRITTEN:
            tl.store(grad_scores + js * stride_gsl, g_s * tl.load(decay + js, mask=in_l, other=0.0), mask=in_l)
            s0_t = tl.load(initial_scores + js * stride_sl, mask=in_l, other=0.0)
            tl.store(grad_decay + js, tl.load(grad_decay + js, mask=in_l, other=0.0) + g_s * s0_t, mask=in_l)
            if HAS_HISTORY:
                for s0 in range(0, t, BLOCK_S):
                    ss = s0 + tl.arange(0, BLOCK_S)
                    in_s = ss < t
                    block = in_l[:, None] & in_s[None, :]
                    q = tl.load(history + ss, mask=in_s, other=0.0)
                    offsets = js[:, None] * stride_gwl + ss[None, :]
                    tl.store(grad_weights + offsets, tl.load(grad_weights + offsets, mask=block, other=0.0)
                             + g_s[:, None] * q[None, :], mask=block)
        else:
            tl.store(grad_scores + js * stride_gsl, g_s, mask=in_l)


@triton.jit
def _history_gradients(scratch_g, weights, grad_history, t, num_slots, BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr):
    """Pass 4 for one row: ∂q += g_sᵀ W (W_{t-1} as saved: rows t apart)."""
    for s0 in range(0, t, BLOCK_S):
        ss = s0 + tl.arange(0, BLOCK_S)
        in_s = ss < t
        total = slot_weighted_columns(scratch_g, weights, t, ss, in_s, num_slots, BLOCK_L, BLOCK_S)
        tl.store(grad_history + ss, tl.load(grad_history + ss, mask=in_s, other=0.0) + total, mask=in_s)


@triton.jit
def _history_query_gradients(grad_history, values, query, grad_query, value_grads, t, k, stride_ht, stride_vgt,
                             BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pass 5 for one row (pointers at the row): o_t's gradient through q into `grad_query`; adds ∂q_i o_t to ∂h_i."""
    ks = tl.arange(0, BLOCK_K)
    in_k = ks < k
    o = tl.load(query + ks, mask=in_k, other=0.0)
    g_o = tl.zeros((BLOCK_K,), o.dtype)
    for s0 in range(0, t, BLOCK_S):
        ss = s0 + tl.arange(0, BLOCK_S)
        in_s = ss < t
        block = in_s[:, None] & in_k[None, :]
        g_q = tl.load(grad_history + ss, mask=in_s, other=0.0)
        h = tl.load(values + ss[:, None] * stride_ht + ks[None, :], mask=block, other=0.0)
        g_o += tl.sum(g_q[:, None] * h, axis=0)
        _add_to_value_grads(value_grads, ss, ks, block, g_q, o, stride_vgt)
    tl.store(grad_query + ks, g_o, mask=in_k)


@triton.jit
def _read_backward(keys, grad_keys, grad_read, initial, decay, weights, coefficients, history, values,
                   initial_scores, read_weights, value_grads, grad_scores, grad_decay, grad_weights,
                   grad_history, query, grad_query, scratch_g, scratch_gc, t, num_slots, k,
                   stride_zb, stride_gb, stride_rb, stride_mb, stride_ml, stride_hb, stride_ht, stride_sb, stride_sl,
                   stride_st, stride_wb, stride_vgb, stride_vgt, stride_qb, stride_gsb, stride_gsl, stride_gst,
                   stride_gwb, stride_gwl, stride_ob, stride_gob,
                   WRITTEN: tl.constexpr, HAS_HISTORY: tl.constexpr, FINISH_HISTORY: tl.constexpr,
                   BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    keys_row, grad_read_row, weights_row = keys + b * stride_zb, grad_read + b * stride_rb, weights + b * num_slots * t
    decay_row, grad_decay_row = decay + b * num_slots, grad_decay + b * num_slots
    grad_weights_row, scratch_row, scratch_gc_row = grad_weights + b * stride_gwb, scratch_g + b * num_slots, \
        scratch_gc + b * t
    if HAS_HISTORY:
        _coefficient_gradients(values + b * stride_hb, grad_read_row, scratch_gc_row, coefficients + b * t,
                               value_grads + b * stride_vgb, t, k, stride_ht, stride_vgt, BLOCK_S, BLOCK_K)
        tl.debug_barrier()
    dot = _key_gradients(keys_row, grad_keys + b * stride_gb, grad_read_row, initial + b * stride_mb, decay_row,
                         weights_row, scratch_gc_row, scratch_row, read_weights + b * stride_wb, grad_decay_row,
                         grad_weights_row, t, num_slots, k, stride_ml, stride_gwl, WRITTEN, HAS_HISTORY, BLOCK_L,
                         BLOCK_S, BLOCK_K)
    tl.debug_barrier()
    _score_gradients(keys_row, decay_row, initial_scores + b * stride_sb + t * stride_st, history + b * t,
                     scratch_row, grad_scores + b * stride_gsb + t * stride_gst, grad_decay_row, grad_weights_row,
                     dot, t, num_slots, stride_sl, stride_gwl, stride_gsl, WRITTEN, HAS_HISTORY, BLOCK_L, BLOCK_S)
    if HAS_HISTORY:
        tl.debug_barrier()
        _history_gradients(scratch_row, weights_row, grad_history + b * stride_qb, t, num_slots, BLOCK_L, BLOCK_S)
    if FINISH_HISTORY:
        tl.debug_barrier()  # pass 4's ∂q (and pass 1's ∂h) stored before pass 5 loads them
        _history_query_gradients(grad_history + b * stride_qb, values + b * stride_hb, query + b * stride_ob,
                                 grad_query + b * stride_gob, value_grads + b * stride_vgb, t, k, stride_ht,
                                 stride_vgt, BLOCK_S, BLOCK_K)


def read_backward(t: int, keys, grad_keys, grad_read, initial, initial_scores, decay, weights, coefficients, history,
                  values, read_weights, value_grads, grad_scores, grad_decay, grad_weights, grad_history, query=None,
                  grad_query=None) -> None:
    """
    One memory's read at step t in reverse (module doc). keys z `(B, l)`, grad_keys g_z `(B, l)`, grad_read g_r
    `(B, k)` (views with unit-stride rows are fine), initial M_0 `(B, l, k)`, initial_scores S0 `(B, l, T)`; for a
    written memory the forward's a_{t-1} `(B, l)`, W_{t-1} `(B, l, t)`, zᵀ W `(B, t)` and q `(B, t)` (contiguous;
    None for a read-only one or at t = 0), values H `(B, T, k)`. Writes the record read_weights `(B, l)` (z ⊙ a)
    and grad_scores `(B, l, T)` (∂S0, column t); adds into value_grads `(B, T, k)` (∂H, first t rows), grad_decay
    `(B, l)`, grad_weights `(B, l, T)` (first t columns) and grad_history `(B, t)` (rows with unit stride; the
    others contiguous). With query o_t `(B, k)` (the last written memory's launch: grad_history is then complete),
    also writes o_t's gradient through q into grad_query `(B, k)` and adds ∂q_i o_t into value_grads (pass 5).
    """
    batch_size, num_slots, k = initial.size()
    written = decay is not None
    has_history = written and t > 0
    if written and not (decay.is_contiguous() and grad_decay.is_contiguous() and grad_weights.stride(2) == 1):
        raise ValueError("the NSE read-backward kernel updates a contiguous decay and write-weight adjoint in place")
    if has_history and not all(x.is_contiguous() for x in (weights, coefficients, history)):
        raise ValueError("the NSE read-backward kernel reads the forward's saved state as contiguous tensors")
    unit_strides = [keys.stride(1), grad_keys.stride(1), grad_read.stride(1), initial.stride(2), values.stride(2),
                    read_weights.stride(1)] + ([value_grads.stride(2), grad_history.stride(1)] if has_history else [])
    finish = has_history and query is not None
    unit_strides += [query.stride(1), grad_query.stride(1)] if finish else []
    if any(stride != 1 for stride in unit_strides):
        raise ValueError(f"the NSE read-backward kernel needs rows with unit stride, got {unit_strides}")
    empty = initial.new_empty(0)
    block_k = triton.next_power_of_2(k)
    block = max(1, min(MAX_BLOCK, 8192 // block_k))
    scratch_g = initial.new_empty(batch_size, num_slots)
    scratch_gc = initial.new_empty(batch_size, t) if has_history else empty
    _read_backward[(batch_size,)](
        keys, grad_keys, grad_read, initial, given(decay, empty), given(weights, empty), given(coefficients, empty),
        given(history, empty), values, initial_scores, read_weights, value_grads if has_history else empty,
        grad_scores, given(grad_decay, empty), given(grad_weights, empty), given(grad_history, empty),
        query if finish else empty, grad_query if finish else empty,
        scratch_g, scratch_gc, t, num_slots, k,
        keys.stride(0), grad_keys.stride(0), grad_read.stride(0), initial.stride(0), initial.stride(1),
        values.stride(0), values.stride(1), initial_scores.stride(0), initial_scores.stride(1),
        initial_scores.stride(2), read_weights.stride(0), value_grads.stride(0) if has_history else 0,
        value_grads.stride(1) if has_history else 0, grad_history.stride(0) if has_history else 0,
        grad_scores.stride(0), grad_scores.stride(1), grad_scores.stride(2),
        grad_weights.stride(0) if written else 0, grad_weights.stride(1) if written else 0,
        query.stride(0) if finish else 0, grad_query.stride(0) if finish else 0,
        WRITTEN=written, HAS_HISTORY=has_history, FINISH_HISTORY=finish, BLOCK_L=block, BLOCK_S=block, BLOCK_K=block_k,
    )
