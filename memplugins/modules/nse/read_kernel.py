"""
A Triton kernel for one step of the NSE fast path's memory access (Munkhdalai and Yu 2017, eq. 6 of step t-1, then
eq. 2-3 of step t; with MMA-NSE's extra memories eq. 14-15 and 10-11), used by `memplugins.modules.nse.fast` on
CUDA. In the plain fast path one memory's read of a step is about a dozen launches (two batched products for the
scores, the mask, softmax, the decay, the M_0 read, the coefficients, the H read, the copies and the clones kept
for the backward) and its write three more; on a GPU at B = 32, k = 300 each is a few microseconds of work behind
a launch. Here they are one launch per memory and step, one program per batch row, looping over the memory slots
and the written history in blocks, as flash-linear-attention's fused recurrent kernels loop over time.

The memory is kept factored as in the fast path: M_{t-1} = diag(a) M_0 + W H_{<t} (a: decay (B, l); W: write weights
(B, l, T), first t-1 columns used; H: the written values (B, T, k)). For row b at step t, with o_t's history scores
q = H_{<t} o_t (computed by the first written memory's launch, before its pass 0, and read by the others) and
S0 = M_0 o_t (all steps, before the loop):

    pass 0 (written, t > 0): the deferred write of step t-1, eq. 6 with z' = its key z ⊙ its step mask:
             a ← a ⊙ (1 - z');  W[:, <t-1] ← W[:, <t-1] ⊙ (1 - z');  W[:, t-1] = z'
             (a and W[:, <t] are also copied out: the backward's a_{t-1} and W_{t-1})
    pass 1:  s_j = a_j S0_j + Σ_{i<t} W_ji q_i  (eq. 2's M_{t-1} o_t, factored; read-only memory: s_j = S0_j);
             s_j = -1e30 at a padding slot (the fast path fills finfo.min: both give exp(s_j - max) = 0 next to a
             real slot, and a uniform softmax when no slot is real, which the mask then zeroes, as there)
    pass 2:  m = max_j s_j;  Z = Σ_j exp(s_j - m)
    pass 3:  z_j = exp(s_j - m) / Z ⊙ mask_j  (eq. 2);  r = Σ_j (z_j a_j) M_0,j  (eq. 3, the M_0 part)
    pass 4 (written, t > 0):  c_i = Σ_j z_j W_ji (the coefficients zᵀ W, kept for the backward);
             r += Σ_i c_i h_i  (eq. 3, the H part)

So the write of step t happens at the start of step t+1's launch (the fast path applies the last one after its
loop); between them only step t's cell runs, which reads neither a nor W. Values a pass stores and a later pass
loads may sit in different threads in the two layouts, so `tl.debug_barrier()` separates the passes. Where a pass
updates memory in place and uses the loaded value beyond its own store (pass 3 replaces the scores in `keys_out`
with z and reads with z), a barrier also separates every warp's load from the store: a 1-D block of slots may be
held by every warp of the program (each loads it for its own columns of M_0) but is stored by one thread, so a
warp that runs late would otherwise load z where it needed s (as `tape_read_kernel` did until 2026-11-26).
Pass 0's in-place updates of a and W use each loaded value only for its own element's stores, which is safe.

Why equal to the plain fast path: the same formulas in the same order per element; only the order of the sums
inside the dot products differs (blocked reductions instead of matrix products), which moves results by rounding.
The backward is the fast path's own (`memplugins.modules.nse.backward`), fed with what this kernel stores.
`tests/modules/nse/read_kernel_test.py` compares the NSE encoder with the kernel against the literal reference
under Triton's interpreter on the CPU (outputs and every gradient in float64, padded, extra memories written and
read-only), and `tests/gpu_test.py` on CUDA.
"""
from typing import NamedTuple, Optional

import torch
import triton
import triton.language as tl

from memplugins.modules.fast_path.launch import given, row_stride


@triton.jit
def _pending_write(decay, weights, previous_keys, previous_mask, decay_saved, weights_saved, t, num_slots,
                   stride_wl, HAS_HISTORY: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr):
    """Pass 0 for one row (pointers at the row): step t-1's write, and the copies of a and W[:, <t]."""
    if HAS_HISTORY:
        mu = tl.load(previous_mask)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        a = tl.load(decay + js, mask=in_l, other=0.0)
        if HAS_HISTORY:
            written_key = tl.load(previous_keys + js, mask=in_l, other=0.0) * mu  # z' = z ⊙ mask_{t-1}
            keep = 1 - written_key
            a = a * keep
            tl.store(decay + js, a, mask=in_l)
            for s0 in range(0, t, BLOCK_S):
                ss = s0 + tl.arange(0, BLOCK_S)
                block = in_l[:, None] & (ss < t)[None, :]
                offsets = js[:, None] * stride_wl + ss[None, :]
                w = tl.load(weights + offsets, mask=block, other=0.0)
                w = tl.where((ss == t - 1)[None, :], written_key[:, None], w * keep[:, None])
                tl.store(weights + offsets, w, mask=block)
                tl.store(weights_saved + js[:, None] * t + ss[None, :], w, mask=block)
        tl.store(decay_saved + js, a, mask=in_l)


@triton.jit
def _history_scores(query, values, history, t, k, stride_ht, BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    """The first written memory's pass, before pass 0, for one row (pointers at the row): q = H_{<t} o_t."""
    ks = tl.arange(0, BLOCK_K)
    o = tl.load(query + ks, mask=ks < k, other=0.0)
    for s0 in range(0, t, BLOCK_S):
        ss = s0 + tl.arange(0, BLOCK_S)
        in_s = ss < t
        h = tl.load(values + ss[:, None] * stride_ht + ks[None, :], mask=in_s[:, None] & (ks < k)[None, :],
                    other=0.0)
        tl.store(history + ss, tl.sum(h * o[None, :], axis=1), mask=in_s)


@triton.jit
def _scores(initial_scores, decay, weights, history, slot_mask, keys, t, num_slots, stride_sl, stride_wl,
            WRITTEN: tl.constexpr, HAS_HISTORY: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr):
    """Pass 1 for one row: the masked scores s into `keys`; returns their maximum."""
    dtype = keys.dtype.element_ty
    best = tl.full((BLOCK_L,), float("-inf"), dtype)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        score = tl.load(initial_scores + js * stride_sl, mask=in_l, other=0.0)
        if WRITTEN:
            score = score * tl.load(decay + js, mask=in_l, other=0.0)
            if HAS_HISTORY:
                product = tl.zeros((BLOCK_L,), dtype)
                for s0 in range(0, t, BLOCK_S):
                    ss = s0 + tl.arange(0, BLOCK_S)
                    in_s = ss < t
                    w = tl.load(weights + js[:, None] * stride_wl + ss[None, :], mask=in_l[:, None] & in_s[None, :],
                                other=0.0)
                    product += tl.sum(w * tl.load(history + ss, mask=in_s, other=0.0)[None, :], axis=1)
                score = score + product
        real = tl.load(slot_mask + js, mask=in_l, other=0) != 0
        score = tl.where(in_l, tl.where(real, score, -1e30), float("-inf"))
        tl.store(keys + js, score, mask=in_l)
        best = tl.maximum(best, score)
    return tl.max(best, axis=0)


@triton.jit
def _softmax_and_read(keys, slot_mask, decay, initial, top, num_slots, k, stride_ml,
                      WRITTEN: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_K: tl.constexpr):
    """Passes 2 and 3 for one row: z over the scores in `keys`, stored there; returns the M_0 part of the read."""
    dtype = keys.dtype.element_ty
    total = tl.zeros((BLOCK_L,), dtype)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        total += tl.exp(tl.load(keys + js, mask=js < num_slots, other=float("-inf")) - top)
    norm = tl.sum(total, axis=0)
    tl.debug_barrier()  # every warp has loaded the scores before any stores z over them
    ks = tl.arange(0, BLOCK_K)
    read = tl.zeros((BLOCK_K,), dtype)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        score = tl.load(keys + js, mask=in_l, other=float("-inf"))
        real = tl.load(slot_mask + js, mask=in_l, other=0) != 0
        z = tl.where(real, tl.exp(score - top) / norm, 0.0)
        tl.debug_barrier()  # the same: this block's scores are loaded by every warp before z replaces them
        tl.store(keys + js, z, mask=in_l)
        if WRITTEN:
            z = z * tl.load(decay + js, mask=in_l, other=0.0)
        rows = tl.load(initial + js[:, None] * stride_ml + ks[None, :], mask=in_l[:, None] & (ks < k)[None, :],
                       other=0.0)
        read += tl.sum(z[:, None] * rows, axis=0)
    return read


@triton.jit
def slot_weighted_columns(vector, weights, stride_wl, ss, in_s, num_slots, BLOCK_L: tl.constexpr,
                          BLOCK_S: tl.constexpr):
    """Σ_j v_j W[j, i] for one block of history columns i = ss (pointers at the row; W's rows `stride_wl` apart):
    zᵀ W here, g_sᵀ W in the backward."""
    total = tl.zeros((BLOCK_S,), vector.dtype.element_ty)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        v = tl.load(vector + js, mask=in_l, other=0.0)
        w = tl.load(weights + js[:, None] * stride_wl + ss[None, :], mask=in_l[:, None] & in_s[None, :], other=0.0)
        total += tl.sum(v[:, None] * w, axis=0)
    return total


@triton.jit
def _history_read(keys, weights, values, coefficients, read, t, num_slots, k, stride_wl, stride_ht,
                  BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pass 4 for one row: the coefficients zᵀ W into `coefficients`; returns the read plus its H part."""
    ks = tl.arange(0, BLOCK_K)
    for s0 in range(0, t, BLOCK_S):
        ss = s0 + tl.arange(0, BLOCK_S)
        in_s = ss < t
        coefficient = slot_weighted_columns(keys, weights, stride_wl, ss, in_s, num_slots, BLOCK_L, BLOCK_S)
        tl.store(coefficients + ss, coefficient, mask=in_s)
        h = tl.load(values + ss[:, None] * stride_ht + ks[None, :], mask=in_s[:, None] & (ks < k)[None, :],
                    other=0.0)
        read += tl.sum(coefficient[:, None] * h, axis=0)
    return read


@triton.jit
def _write_and_read(initial_scores, decay, weights, previous_keys, previous_mask, history, query, initial, values,
                    slot_mask, keys_out, read_out, decay_saved, weights_saved, coefficients,
                    t, num_slots, k,
                    stride_sb, stride_sl, stride_st, stride_wb, stride_wl, stride_pb, stride_pm, stride_qb, stride_mb,
                    stride_ml, stride_hb, stride_ht, stride_vb, stride_kb, stride_rb,
                    WRITTEN: tl.constexpr, HAS_HISTORY: tl.constexpr, COMPUTE_HISTORY: tl.constexpr,
                    BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0)
    decay_row, weights_row, keys_row = decay + b * num_slots, weights + b * stride_wb, keys_out + b * stride_kb
    mask_row = slot_mask + b * stride_vb
    if COMPUTE_HISTORY:  # pass 1 reads q after the barrier below
        _history_scores(query + b * stride_qb, values + b * stride_hb, history + b * t, t, k, stride_ht, BLOCK_S,
                        BLOCK_K)
    if WRITTEN:
        _pending_write(decay_row, weights_row, previous_keys + b * stride_pb, previous_mask + b * stride_pm,
                       decay_saved + b * num_slots, weights_saved + b * num_slots * t, t, num_slots, stride_wl,
                       HAS_HISTORY, BLOCK_L, BLOCK_S)
        tl.debug_barrier()
    top = _scores(initial_scores + b * stride_sb + t * stride_st, decay_row, weights_row, history + b * t, mask_row,
                  keys_row, t, num_slots, stride_sl, stride_wl, WRITTEN, HAS_HISTORY, BLOCK_L, BLOCK_S)
    tl.debug_barrier()
    read = _softmax_and_read(keys_row, mask_row, decay_row, initial + b * stride_mb, top, num_slots, k, stride_ml,
                             WRITTEN, BLOCK_L, BLOCK_K)
    if HAS_HISTORY:
        tl.debug_barrier()
        read = _history_read(keys_row, weights_row, values + b * stride_hb, coefficients + b * t, read, t, num_slots,
                             k, stride_wl, stride_ht, BLOCK_L, BLOCK_S, BLOCK_K)
    ks = tl.arange(0, BLOCK_K)
    tl.store(read_out + b * stride_rb + ks, read, mask=ks < k)


MAX_BLOCK = 64  # slots and history steps per block of the loops (fewer when k is wide); the tests lower it


class SavedRead(NamedTuple):
    """What one written memory's step keeps for the backward (None for a read-only memory)."""

    decay: Optional[torch.Tensor]  # a_{t-1}, (B, l)
    weights: Optional[torch.Tensor]  # W_{t-1}, (B, l, t); None at t = 0
    coefficients: Optional[torch.Tensor]  # zᵀ W_{t-1}, (B, t); None at t = 0


def write_and_read(t: int, initial_scores, initial, slot_mask, decay, weights, previous_keys, previous_mask, history,
                   values, keys_out, read_out, query=None) -> SavedRead:
    """
    One memory at step t (module doc). initial_scores S0 `(B, l, T)`, initial M_0 `(B, l, k)` (rows contiguous),
    slot_mask `(B, l)` uint8; for a written memory decay a `(B, l)` and weights W `(B, l, T)`, both contiguous and
    updated in place by step t-1's write with z' = previous_keys z `(B, l)` ⊙ previous_mask `(B, 1)` float (None at
    t = 0 or for a read-only memory);
    history q `(B, t)` contiguous (None at t = 0 or read-only), which the launch first computes as H_{<t} o_t when
    given query o_t `(B, k)` (the first written memory's launch; the others read it); values H `(B, T, k)`.
    Writes z into keys_out `(B, l)` and the read r into read_out `(B, k)` (views are fine: rows may be strided).
    """
    batch_size, num_slots, k = initial.size()
    written = decay is not None
    unit_strides = [initial.stride(2), values.stride(2), keys_out.stride(1), read_out.stride(1), slot_mask.stride(1)]
    unit_strides += [query.stride(1)] if query is not None else []
    if written:
        unit_strides += [previous_keys.stride(1)] if t > 0 else []
        if not (decay.is_contiguous() and weights.is_contiguous() and (t == 0 or history.is_contiguous())):
            raise ValueError("the NSE read kernel updates a contiguous decay and write-weight state in place")
    if any(stride != 1 for stride in unit_strides):
        raise ValueError(f"the NSE read kernel needs rows with unit stride, got {unit_strides}")
    has_history = written and t > 0
    empty = initial.new_empty(0)
    decay_saved = initial.new_empty(batch_size, num_slots) if written else None
    weights_saved = initial.new_empty(batch_size, num_slots, t) if has_history else None
    coefficients = initial.new_empty(batch_size, t) if has_history else None
    block_k = triton.next_power_of_2(k)
    block = max(1, min(MAX_BLOCK, 8192 // block_k))
    _write_and_read[(batch_size,)](
        initial_scores, decay if written else empty, weights if written else empty,
        previous_keys if has_history else empty, previous_mask if has_history else empty,
        history if has_history else empty, given(query, empty), initial, values, slot_mask,
        keys_out, read_out, decay_saved if written else empty, weights_saved if has_history else empty,
        coefficients if has_history else empty, t, num_slots, k,
        initial_scores.stride(0), initial_scores.stride(1), initial_scores.stride(2),
        weights.stride(0) if written else 0, weights.stride(1) if written else 0,
        previous_keys.stride(0) if has_history else 0, previous_mask.stride(0) if has_history else 0,
        row_stride(query), initial.stride(0), initial.stride(1),
        values.stride(0), values.stride(1), slot_mask.stride(0), keys_out.stride(0), read_out.stride(0),
        WRITTEN=written, HAS_HISTORY=has_history, COMPUTE_HISTORY=has_history and query is not None, BLOCK_L=block,
        BLOCK_S=block, BLOCK_K=block_k,
    )
    return SavedRead(decay_saved, weights_saved, coefficients)
