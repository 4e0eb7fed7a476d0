"""
A Triton kernel for the backward of one written memory's write at step t in the NSE fast path (eq. 6, or 14-15 for
an MMA-NSE extra memory, in reverse; the adjoints are tabulated in `memplugins.modules.nse.fast`'s docstring), used
by `memplugins.modules.nse.backward` on CUDA where its `_write_backward` launches about ten operations per
memory and step. One program per batch row, looping over the memory slots and the written history in blocks. With
z' the masked key of step t, a = a_{t-1} and W = W_{t-1} (l × t) as the forward kept them, and the adjoints ∂a, ∂W
of the state after the write:

    g_z'_j = g_key,j - ∂a_j a_j + ∂W_j,t - Σ_{i<t} ∂W_ji W_ji      (the key's gradient, times the step's mask)
    ∂W_ji ← ∂W_ji (1 - z'_j) for i < t;   ∂a_j ← ∂a_j (1 - z'_j)     (the adjoints of the state before the write)

Why equal to the plain backward: the same terms added in the same order; only the order inside the sum over i
differs (a blocked reduction), which moves results by rounding. The sum reads ∂W before the same program scales
it in place, and ∂a is read before it is scaled: a block may be held by several warps but is stored by one thread,
so a `tl.debug_barrier()` between the loads and each in-place store keeps a warp that runs late from loading the
scaled value (`tape_read_kernel`'s module doc). `tests/modules/nse/read_kernel_test.py` checks it with the NSE's other
kernels under Triton's interpreter.
"""
import torch
import triton
import triton.language as tl

MAX_BLOCK = 64  # slots and history steps per block of the loops; the tests lower it


@triton.jit
def _write_backward(keys, grad_keys, step_mask, decay, weights, grad_decay, grad_weights, grad_z, t, num_slots,
                    stride_zb, stride_zl, stride_gkb, stride_gkl, stride_mb, stride_gwb, stride_gwl,
                    HAS_GRAD: tl.constexpr, HAS_HISTORY: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_S: tl.constexpr):
    b = tl.program_id(0)
    dtype = decay.dtype.element_ty
    mask_value = tl.load(step_mask + b * stride_mb)
    for l0 in range(0, num_slots, BLOCK_L):
        js = l0 + tl.arange(0, BLOCK_L)
        in_l = js < num_slots
        keep = 1 - tl.load(keys + b * stride_zb + js * stride_zl, mask=in_l, other=0.0)
        if HAS_GRAD:
            g = tl.load(grad_keys + b * stride_gkb + js * stride_gkl, mask=in_l, other=0.0)
        else:
            g = tl.zeros((BLOCK_L,), dtype)
        adjoint_decay = tl.load(grad_decay + b * num_slots + js, mask=in_l, other=0.0)
        g = g - adjoint_decay * tl.load(decay + b * num_slots + js, mask=in_l, other=0.0)
        g = g + tl.load(grad_weights + b * stride_gwb + js * stride_gwl + t, mask=in_l, other=0.0)
        if HAS_HISTORY:
            total = tl.zeros((BLOCK_L,), dtype)
            for s0 in range(0, t, BLOCK_S):
                ss = s0 + tl.arange(0, BLOCK_S)
                block = in_l[:, None] & (ss < t)[None, :]
                offsets = b * stride_gwb + js[:, None] * stride_gwl + ss[None, :]
                adjoint = tl.load(grad_weights + offsets, mask=block, other=0.0)
                w = tl.load(weights + (b * num_slots + js[:, None]) * t + ss[None, :], mask=block, other=0.0)
                total += tl.sum(adjoint * w, axis=1)
                tl.debug_barrier()  # every warp has loaded this block of ∂W before it is scaled in place
                tl.store(grad_weights + offsets, adjoint * keep[:, None], mask=block)
            g = g - total
        tl.debug_barrier()  # and ∂a, loaded by every warp, before it is scaled in place
        tl.store(grad_decay + b * num_slots + js, adjoint_decay * keep, mask=in_l)
        tl.store(grad_z + b * num_slots + js, g * mask_value, mask=in_l)


def write_backward(t: int, keys, grad_keys, step_mask, decay, weights, grad_decay, grad_weights) -> torch.Tensor:
    """
    One written memory's write at step t in reverse (module doc). keys z' `(B, l)` and grad_keys `(B, l)` or None
    (any strides: a gradient from outside may have its own), step_mask `(B, 1)` float, the forward's a_{t-1} `(B, l)` and W_{t-1}
    `(B, l, t)` (None at t = 0), contiguous; updates grad_decay `(B, l)` (contiguous) and grad_weights `(B, l, T)`
    (unit stride along T) in place; returns g_z' `(B, l)`.
    """
    batch_size, num_slots = keys.size()
    has_history = t > 0
    if not (decay.is_contiguous() and grad_decay.is_contiguous() and grad_weights.stride(2) == 1
            and (not has_history or weights.is_contiguous())):
        raise ValueError("the NSE write-backward kernel updates contiguous adjoints in place")
    grad_z = keys.new_empty(batch_size, num_slots)
    block = max(1, min(MAX_BLOCK, num_slots))
    block = triton.next_power_of_2(block)
    empty = keys.new_empty(0)
    _write_backward[(batch_size,)](
        keys, grad_keys if grad_keys is not None else empty, step_mask, decay,
        weights if has_history else empty, grad_decay, grad_weights, grad_z, t, num_slots,
        keys.stride(0), keys.stride(1), grad_keys.stride(0) if grad_keys is not None else 0,
        grad_keys.stride(1) if grad_keys is not None else 0, step_mask.stride(0),
        grad_weights.stride(0), grad_weights.stride(1),
        HAS_GRAD=grad_keys is not None, HAS_HISTORY=has_history, BLOCK_L=block, BLOCK_S=block,
    )
    return grad_z
