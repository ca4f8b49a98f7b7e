"""Neural attention scores: a shared-weight MLP of the concatenated query and key.

``s_ij = w_a^T sigma(W_h [q_i; k_j] + b_h) + b_a`` (NEURAL eqs. 3-4). Since
``W_h [q; k] = W_1 q + W_2 k`` the factored form never builds the ``(n, m, d_q + d_k)`` tensor; it
is additive (Bahdanau) attention.

References
----------
The neural-attention paper (NEURAL), eqs. (3)-(4).
"""

from __future__ import annotations

import math

import numpy as np

from spectral.activations import ACTIVATIONS, activation_function
from spectral.floor.arrays import as_float_array, like_array, matrix_transpose, numpy_dtype
from spectral.floor.memory import check_dense_memory, memory_device
from spectral.floor.pairwise_memory import check_pairwise_memory
from spectral.floor.validation import InputError, as_generator, check_int, check_option, check_real

__all__ = ["ScoreMLP", "neural_scores"]

NEURAL_FORMS = ("factored", "concat")
# Working-memory budget of one block of the factored form: the (b, m, hidden) pre-activations.
BLOCK_BYTES = 64 << 20


class ScoreMLP:
    r"""Shared-weight MLP score function of NEURAL eqs. (3)-(4).

    Holds ``W_h = [W_1 | W_2]`` of shape ``(hidden, d_q + d_k)``, ``b_h`` (hidden,),
    ``w_a`` (hidden,) and the scalar ``b_a``; the score of a query ``q`` and a key
    ``k`` is :math:`w_a^\top \sigma(W_h [q; k] + b_h) + b_a`.

    Parameters
    ----------
    d_q, d_k : int
        Query and key dimensions (``>= 1``).
    hidden : int
        Hidden width ``h`` (``>= 1``).
    rng : numpy.random.Generator or int, optional
        Weights: ``W_h ~ N(0, 1/(d_q+d_k))``, ``b_h ~ N(0, 1)``,
        ``w_a ~ N(0, 1/hidden)``, ``b_a ~ N(0, 1)``.
    activation : {"tanh", "relu", "gelu", "identity", "square", "exp"}
        ``sigma`` ("gelu" is the tanh approximation).
    """

    def __init__(self, d_q, d_k, hidden, *, rng=None, activation="tanh"):
        self.d_q = check_int("d_q", d_q, low=1)
        self.d_k = check_int("d_k", d_k, low=1)
        self.hidden = check_int("hidden", hidden, low=1)
        self.activation = check_option("activation", activation, ACTIVATIONS)
        g = as_generator(rng)
        self.W_h = g.standard_normal((self.hidden, self.d_q + self.d_k)) / math.sqrt(self.d_q + self.d_k)
        self.b_h = g.standard_normal(self.hidden)
        self.w_a = g.standard_normal(self.hidden) / math.sqrt(self.hidden)
        self.b_a = float(g.standard_normal())

    @property
    def W1(self) -> np.ndarray:
        """Query block ``W_h[:, :d_q]``."""
        return self.W_h[:, : self.d_q]

    @property
    def W2(self) -> np.ndarray:
        """Key block ``W_h[:, d_q:]``."""
        return self.W_h[:, self.d_q :]


def neural_scores(q, k, mlp, *, form="factored", max_bytes=None):
    r"""Neural attention scores :math:`s_{ij} = w_a^\top \sigma(W_h [q_i; k_j] + b_h) + b_a` (NEURAL eqs. 3-4).

    Parameters
    ----------
    q : array of shape (n, d_q)
        Queries.
    k : array of shape (m, d_k)
        Keys.
    mlp : ScoreMLP
        The shared weights.
    form : {"factored", "concat"}
        ``"factored"`` uses ``W_h [q; k] = W_1 q + W_2 k`` and never builds the
        ``(n, m, d_q + d_k)`` tensor (query blocks bound the ``(b, m, hidden)``
        working set to 64 MiB); ``"concat"`` materialises the concatenated
        tensor literally as the paper writes it (for checking; memory-guarded).
    max_bytes : int, optional
        Memory limit for the ``"concat"`` tensor (default: memory available now).

    Returns
    -------
    array of shape (n, m)
        Raw scores (logits); ``softmax_j(s_ij) = N_R(exp(s - rowmax))`` is the
        attention matrix, and ``b_a`` cancels in it.

    Notes
    -----
    The factored form is additive (Bahdanau) attention ``w_a . sigma(W_1 q + W_2 k + b_h) + b_a``
    (ledger NEURAL-3).
    """
    check_option("form", form, NEURAL_FORMS)
    if max_bytes is not None:
        max_bytes = check_real("max_bytes", max_bytes, low=0.0, low_open=True)
    if not isinstance(mlp, ScoreMLP):
        raise InputError(f"mlp must be a ScoreMLP, got {type(mlp).__name__}")
    xp, q = as_float_array(q, "q", ndim=2)
    k = like_array(k, "k", like=q)
    if q.shape[1] != mlp.d_q:
        raise InputError(f"q must have shape (n, {mlp.d_q}) (mlp.d_q), got {tuple(q.shape)}")
    if k.ndim != 2 or k.shape[1] != mlp.d_k:
        raise InputError(f"k must have shape (m, {mlp.d_k}) (mlp.d_k), got {tuple(k.shape)}")
    act = activation_function(mlp.activation)
    b_h = like_array(mlp.b_h, "b_h", like=q)
    w_a = like_array(mlp.w_a, "w_a", like=q)
    n, m, h = q.shape[0], k.shape[0], mlp.hidden
    if form == "concat":
        check_dense_memory(n, m * (mlp.d_q + mlp.d_k), dtype=q.dtype, copies=2, max_bytes=max_bytes,
                           what="concatenated [q; k] tensor",
                           alternative="use form='factored' (same scores, no (n, m, d_q + d_k) tensor)",
                           device=memory_device(q))
        W_h = like_array(mlp.W_h, "W_h", like=q)
        qq = xp.broadcast_to(xp.reshape(q, (n, 1, mlp.d_q)), (n, m, mlp.d_q))
        kk = xp.broadcast_to(xp.reshape(k, (1, m, mlp.d_k)), (n, m, mlp.d_k))
        z = xp.concat([qq, kk], axis=2)  # (n, m, d_q + d_k): [q_i; k_j]
        pre = z @ matrix_transpose(W_h) + b_h
        return act(xp, pre) @ w_a + mlp.b_a
    itemsize = numpy_dtype(q.dtype).itemsize
    # the row blocks and their concatenation (two (n, m) copies) plus one block of (rows, m, h) temporaries:
    # tracemalloc measured 2 n m float64 + 16-55 MiB at n = m = 1000, 3000, h = 16, 64
    check_pairwise_memory(n, m, bytes_per_pair=2 * itemsize, extra_bytes=min(BLOCK_BYTES, 2 * n * m * h * itemsize),
                          max_bytes=max_bytes, like=q, what="MLP scores",
                          alternative="score row blocks of the queries, neural_scores(q[i:j], k, mlp)")
    w1 = like_array(mlp.W1, "W1", like=q)
    w2 = like_array(mlp.W2, "W2", like=q)
    pq = q @ matrix_transpose(w1)  # (n, h)
    pk = k @ matrix_transpose(w2) + b_h  # (m, h)
    block = max(1, BLOCK_BYTES // max(1, 2 * m * h * itemsize))
    pk3 = xp.reshape(pk, (1, m, h))
    rows = []
    for start in range(0, n, block):
        stop = min(n, start + block)
        pre = xp.reshape(pq[start:stop, :], (stop - start, 1, h)) + pk3
        rows.append(act(xp, pre) @ w_a + mlp.b_a)
    return rows[0] if len(rows) == 1 else xp.concat(rows, axis=0)
