"""
The Neural Semantic Encoder (Munkhdalai and Yu 2017, "Neural Semantic Encoders", EACL): its equations, fast path,
kernels and literal reference. The registered encoder is `memplugins.encoders.nse.NseEncoder` ("nse"), the decoder
net of translation `memplugins.decoders.nse_decoder_net`.

With multiple memory access (MMA-NSE, section 3.2). The encoding memory M_0 holds one slot per input token,
initialised from the inputs (through a linear projection when `input_size != hidden_size`). For t = 1..T:

    o_t = f_r^LSTM(x_t)                                  (1)  read LSTM over the inputs
    z_t = softmax(o_t^T M_{t-1})                          (2)  key over the memory slots
    m_{r,t} = z_t^T M_{t-1}                               (3)  retrieved slot
    z_t^n = softmax(o_t^T M^n_{t-1}),  m^n_{r,t} = z_t^{nT} M^n_{t-1}       (10, 11) each extra memory n
    c_t = f_c^MLP(o_t, m_{r,t}, m^1_{r,t}, ...)           (4, 12)  compose: ReLU(W [o_t; m_r; m^1_r; ...] + b)
    h_t = f_w^LSTM(c_t)                                   (5, 13)  write LSTM
    M_t = M_{t-1} ⊙ (1 - z_t e_k^T) + z_t h_t^T           (6, 14)  erase and write where the key points
    M^n_t likewise with z^n_t                             (15)     (if `write_extra_memories`)

`write_memory=False` (not in the paper; an ablation) leaves out eq. 6: M_t = M_0 for every t, so each step
attends over the (projected) inputs and nothing it composes is written back. Between the NSE and the same
network without any memory, it separates what the reads cost or bring from what the writes do.

`initial_memory="read_states"` (not in the paper; an ablation) initialises slot t with the read LSTM's o_t
(eq. 1, before any dropout on o_t) instead of x_t: M_0 = [o_1; ...; o_T], each slot the word in its left
context rather than the word alone. The paper initialises with the embeddings (section 2: "the memory is
initialized by the embedding vectors") and leaves other initialisations to future work (section 6). Since o_t
depends only on x, M_0 is still known before the loop, and the gradient reaches f_r through M_0 as well as
through the queries.

`key_strength=True` (not in the paper; an ablation) scales each key's scores by a key strength, as the Neural
Turing Machine's content addressing does (Graves et al. 2014, eq. 5, there with cosine similarity):

    β_t = softplus(w_β^T o_t + b_β) ≥ 0,   z_t = softmax(β_t o_t^T M_{t-1}),   z^n_t likewise     (2'), (10')

one scalar per step, from the query o_t (after its dropout, as the query is), for every memory read; f_c still
reads o_t itself. w_β starts at 0 and b_β at log(e - 1), so β_t = 1 and training starts from the paper's keys;
β_t > 1 sharpens a key, β_t < 1 flattens it: it asks whether an NSE whose keys stay near uniform addresses by
content once it can sharpen them. Since β_t o_t depends only on o_t, it is computed before the loop, and the loop
reads with it as its query: nothing else changes.

The read LSTM depends only on x, so it runs as one fused, packed call over the whole sequence; only the
read-compose-write loop steps. Because every query o_t is known before the loop and every written memory
receives the same h_t, the memories are kept in the exactly equivalent factored form
M_t = diag(a_t) M_0 + W_t [h_1; ...; h_t]: a step reads the fixed M_0 and the written history instead of
building a new (T × k) memory, and M_T is formed once at the end. With one write-LSTM layer (the paper's for
every task but answer selection) the loop runs as one autograd Function with a hand-written backward
(`fast.py`, whose docstring derives the factored form and tabulates the adjoints, with `backward.py` and
`state.py`; dropout on h_t uses one mask drawn for all steps; the Triton kernels `read_kernel.py`,
`read_backward_kernel.py`, `write_backward_kernel.py`, `cell_backward_kernel.py` on CUDA). Deeper f_w (the paper's
two layers for answer selection) runs a batched step loop over the full memory with autograd's backward
(`deep.py`, over `memory.py`'s read and write, which the NSE decoder of translation also steps). `reference.py`
writes eq. 1-15 literally, one example at a time, from explicit weights (`weights.py`): the tests compare both with
it.

Deviations from the authors' code, which crops/pads every sequence to a fixed length and masks nothing: slots
of padding tokens are never read (masked softmax) and never written (their key weight is 0), extra memories are
masked the same way, and a padded step changes nothing, so a padded batch gives the same outputs as each sequence
alone. The paper does not specify the compose MLP beyond "MLP". By default we use one ReLU layer of size k; the
authors' released SNLI code uses one linear layer that keeps the size of its input, (2 + n) k (so f_w reads a
(2 + n) k vector), which is what the paper's parameter counts (3.4M / 6.3M / 6.5M) imply: `compose_size` and
`compose_activation` select it.
"""
from memplugins.modules.nse.deep import nse_deep_write
from memplugins.modules.nse.fast import CellWeights, Memory, nse_recurrence
from memplugins.modules.nse.memory import memory_read, memory_write
from memplugins.modules.nse.weights import NseWeights

__all__ = ["CellWeights", "Memory", "NseWeights", "memory_read", "memory_write", "nse_deep_write", "nse_recurrence"]
