"""
The Long Short-Term Memory-Network (Cheng, Dong and Lapata 2016, "Long Short-Term Memory-Networks for
Machine Reading", EMNLP), section 3.2, with the hook that attention fusion (section 4) needs.

For t = 1..T, with hidden tape H_{t-1} = (h_1..h_{t-1}) and memory tape C_{t-1} = (c_1..c_{t-1}):

    a_i^t = v^T tanh(W_h h_i + W_x x_t + W_h~ h~_{t-1})                 (4)   (x_t is h_t^k of the layer below: eq. 10)
    s^t   = softmax(a^t)                                                (5)
    [h~_t; c~_t] = sum_{i<t} s_i^t [h_i; c_i]                           (6)
    [i_t; f_t; o_t; c^_t] = [σ; σ; σ; tanh](W [h~_t, x_t] + b)          (7)
    c_t = f_t ⊙ c~_t + i_t ⊙ c^_t  (+ m_t, an optional per-step addend)  (8)  (deep fusion passes m_t = r_t ⊙ α~_t, eq. 15)
    h_t = o_t ⊙ tanh(c_t)                                               (9)

Choices the paper leaves open, and deviations:

* The first step. The tape is empty at t = 1, so there is nothing to attend to: s^1 is all zero and
  h~_1 = c~_1 = 0, which makes step 1 an ordinary LSTM step from a zero state. h~_0 = 0 in eq. 4.
* The tape holds every previous step (no memory-span bound: sentences are short).
* Padding. The paper's equations have none. Tape slots whose mask is 0 are never attended to (masked softmax),
  and a masked step leaves h~ unchanged, so a right-padded batch gives the same outputs as each sequence alone and
  outputs at padded positions are 0.
* Biases: eq. 7 as printed has none; we add the usual LSTM bias b (forget-gate part initialised to 1, other
  matrices Xavier-uniform). Eq. 4's projections have no bias, as printed.
* The authors' Torch code drops the h~_{t-1} term of eq. 4 in its encoder; we keep it, as the paper writes it.
* An option that is not the paper's, off by default: `recency_start` adds one learned score β to the most recent
  slot's in eq. 4, a_{t-1}^t += β (β a parameter, `recency_score`, started at `recency_start`). β = 0 is eq. 4; as
  β grows s^t goes to 1 on slot t-1 and the layer to an LSTM with eq. 7's weights (h~_t = h_{t-1}, c~_t = c_{t-1}),
  while the whole tape stays in reach. It keeps an LSTMN whose near-uniform start would otherwise learn to read far
  back reading near its last slot (why it was added: docs/research/sst_lstmn.md).

The folder: `layer.py` (`LstmnLayer`, eq. 4-9 as a module), `inter_attention.py` (eq. 11-13, the decoder's read of
a source's tapes), `fast.py` (the recurrence as one autograd Function with a hand-written backward, and why it is
equal to the equations), `tape_read_kernel.py` (the tape read of eq. 4-6 as one Triton launch), `reference.py`
(eq. 4-9 written literally, one example at a time, from explicit weights; the tests compare the fast path with it).

Speed: W_x x_t and the x part of eq. 7 do not depend on the recurrence, so they are computed for all t in one
matmul; W_h h_i is computed once per slot as the tape grows; W_h~ h~_t (eq. 4 at t+1) and the h~ part of eq. 7 (at
t) come from one stacked matmul. A step costs two small matmuls plus the attention over the tape.
"""
from memplugins.modules.lstmn.fast import lstmn_recurrence
from memplugins.modules.lstmn.inter_attention import LstmnInterAttention
from memplugins.modules.lstmn.layer import LstmnLayer, LstmnWeights

__all__ = ["LstmnInterAttention", "LstmnLayer", "LstmnWeights", "lstmn_recurrence"]
