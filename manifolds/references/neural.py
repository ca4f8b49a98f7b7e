"""Independent references for the NEURAL checks (Neural Attention, DiGiugno & Mahmood).

Everything here is written from the paper's equations with plain NumPy and explicit loops, apart
from the toolkit's :func:`spectral.neural_scores`, so that the checks compare the toolkit (and the
paper's statements) with a second, literal computation:

* :data:`ACTIVATIONS` and :func:`activation`: the hidden non-linearities sigma;
* :func:`mlp_score_loop`: eq. (4), ``w_a . sigma(W_h concat(q_i, k_j) + b_h) + b_a`` pair by pair;
* :func:`additive_score_loop`: Bahdanau's additive form ``w_a . sigma(W_1 q_i + W_2 k_j + b_h) + b_a``;
* :func:`per_pair_score_loop`: eq. (8), one weight set ``W_h[i, j]``, ``W_a[i, j]`` per pair;
* :func:`concat_loop`: the tensor ``C[i, j, :] = [q_i; k_j]`` of eq. (7), entry by entry;
* :func:`rank_profile`: numerical ranks at stated tolerances and the singular-value tail;
* :func:`softmax_rows`: the row softmax ``exp(a - max) / sum``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.validation import InputError, check_option, child_rng

__all__ = ["ACTIVATIONS", "RANK_TOLERANCES", "RankProfile", "activation", "check_activations", "mlp_score_loop",
           "additive_score_loop", "per_pair_score_loop", "concat_loop", "rank_profile", "softmax_rows", "mlp_cases"]

#: Hidden non-linearities of the score MLP ("gelu" is the tanh approximation).
ACTIVATIONS = ("tanh", "relu", "gelu", "identity", "square", "exp")

#: Relative tolerances of the numerical rank: rank = #{sigma_i > tol sigma_1}; "numpy" is
#: numpy.linalg.matrix_rank's default, sigma_1 max(n, m) eps(float64).
RANK_TOLERANCES = ("numpy", 1e-10, 1e-6)

_GELU_C = math.sqrt(2.0 / math.pi)


def activation(name: str):
    """sigma as a NumPy function of an array (written out here, not taken from the toolkit)."""
    check_option("activation", name, ACTIVATIONS)
    return {
        "tanh": np.tanh,
        "relu": lambda z: np.maximum(z, 0.0),
        "gelu": lambda z: 0.5 * z * (1.0 + np.tanh(_GELU_C * (z + 0.044715 * z**3))),
        "identity": lambda z: z,
        "square": lambda z: z * z,
        "exp": np.exp,
    }[name]


def check_activations(name: str, values) -> tuple[str, ...]:
    """A non-empty tuple of activation names (InputError naming ``name`` otherwise)."""
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        raise InputError(f"{name} must be a sequence of activation names from {ACTIVATIONS}, got {values!r}")
    out = tuple(values)
    if not out:
        raise InputError(f"{name} must name at least one activation from {ACTIVATIONS}")
    for v in out:
        check_option(name, v, ACTIVATIONS)
    return out


def _matrix(name: str, a, ndim: int) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.ndim != ndim:
        raise InputError(f"{name} must be a {ndim}-D array, got shape {a.shape}")
    return a


def concat_loop(q, k) -> np.ndarray:
    """``C[i, j, :] = [q_i; k_j]`` (eq. 7) filled entry by entry; shape ``(n, m, d_q + d_k)``."""
    q = _matrix("q", q, 2)
    k = _matrix("k", k, 2)
    n, dq = q.shape
    m, dk = k.shape
    c = np.empty((n, m, dq + dk))
    for i in range(n):
        for j in range(m):
            for a in range(dq):
                c[i, j, a] = q[i, a]
            for b in range(dk):
                c[i, j, dq + b] = k[j, b]
    return c


def _mlp_shapes(q, k, W_h, b_h, w_a):
    q = _matrix("q", q, 2)
    k = _matrix("k", k, 2)
    W_h = _matrix("W_h", W_h, 2)
    b_h = _matrix("b_h", b_h, 1)
    w_a = _matrix("w_a", w_a, 1)
    h, width = W_h.shape
    if q.shape[1] + k.shape[1] != width:
        raise InputError(f"q and k must have d_q + d_k = {width} columns (W_h has shape {W_h.shape}), got q "
                         f"{q.shape} and k {k.shape}")
    if b_h.shape != (h,) or w_a.shape != (h,):
        raise InputError(f"b_h and w_a must have shape ({h},), got {b_h.shape} and {w_a.shape}")
    return q, k, W_h, b_h, w_a


def mlp_score_loop(q, k, W_h, b_h, w_a, b_a, activation_name: str) -> np.ndarray:
    """Eq. (4) pair by pair: ``s_ij = w_a . sigma(W_h concat(q_i, k_j) + b_h) + b_a``.

    Parameters
    ----------
    q : array of shape (n, d_q)
    k : array of shape (m, d_k)
    W_h : array of shape (h, d_q + d_k)
    b_h, w_a : arrays of shape (h,)
    b_a : float
    activation_name : str
        One of :data:`ACTIVATIONS`.

    Returns
    -------
    array of shape (n, m)
    """
    q, k, W_h, b_h, w_a = _mlp_shapes(q, k, W_h, b_h, w_a)
    sigma = activation(activation_name)
    out = np.empty((q.shape[0], k.shape[0]))
    for i in range(q.shape[0]):
        for j in range(k.shape[0]):
            z = np.concatenate([q[i], k[j]])
            out[i, j] = w_a @ sigma(W_h @ z + b_h) + float(b_a)
    return out


def additive_score_loop(q, k, W_h, b_h, w_a, b_a, activation_name: str) -> np.ndarray:
    """Additive (Bahdanau) attention pair by pair: ``w_a . sigma(W_1 q_i + W_2 k_j + b_h) + b_a``.

    ``W_1`` and ``W_2`` are the column blocks of ``W_h`` acting on the query and on the key; each is
    applied to its own vector, no concatenation is formed. Bahdanau (2014) writes
    ``v^T tanh(W_1 q + W_2 k)``: ``sigma = tanh``, ``b_h = 0``, ``b_a = 0``.
    """
    q, k, W_h, b_h, w_a = _mlp_shapes(q, k, W_h, b_h, w_a)
    sigma = activation(activation_name)
    dq = q.shape[1]
    w1, w2 = W_h[:, :dq], W_h[:, dq:]
    out = np.empty((q.shape[0], k.shape[0]))
    for i in range(q.shape[0]):
        proj_q = w1 @ q[i]
        for j in range(k.shape[0]):
            out[i, j] = w_a @ sigma(proj_q + w2 @ k[j] + b_h) + float(b_a)
    return out


def per_pair_score_loop(c, W_h, W_a, activation_name: str, *, b_h=None, b_a=None) -> np.ndarray:
    """Eq. (8): ``A_ij = W_a[i, j] . sigma(W_h[i, j] C[i, j] + b_h[i, j]) + b_a[i, j]``, pair by pair.

    Parameters
    ----------
    c : array of shape (n, m, 2 d')
        The concatenated tensor of eq. (7).
    W_h : array of shape (n, m, h, 2 d')
        One hidden weight matrix per pair.
    W_a : array of shape (n, m, h)
        One output weight vector per pair.
    b_h : array of shape (n, m, h), optional
        Hidden biases (the paper leaves them out of eq. 8 "for simplicity").
    b_a : array of shape (n, m), optional
        Output biases.
    """
    c = _matrix("C", c, 3)
    W_h = _matrix("W_h", W_h, 4)
    W_a = _matrix("W_a", W_a, 3)
    n, m, width = c.shape
    h = W_h.shape[2]
    if W_h.shape != (n, m, h, width) or W_a.shape != (n, m, h):
        raise InputError(f"W_h must have shape ({n}, {m}, h, {width}) and W_a ({n}, {m}, h), got {W_h.shape} and "
                         f"{W_a.shape}")
    b_h = np.zeros((n, m, h)) if b_h is None else _matrix("b_h", b_h, 3)
    b_a = np.zeros((n, m)) if b_a is None else _matrix("b_a", b_a, 2)
    sigma = activation(activation_name)
    out = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            out[i, j] = W_a[i, j] @ sigma(W_h[i, j] @ c[i, j] + b_h[i, j]) + b_a[i, j]
    return out


def softmax_rows(a) -> np.ndarray:
    """Row softmax ``exp(a_ij - max_j a_ij) / sum_j exp(...)``."""
    a = _matrix("a", a, 2)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@dataclasses.dataclass(frozen=True)
class RankProfile:
    """Singular values of a matrix and its numerical rank at each tolerance of :data:`RANK_TOLERANCES`.

    Attributes
    ----------
    singular : ndarray
        Singular values, descending, divided by the largest (``sigma_i / sigma_1``).
    ranks : dict
        ``{"numpy": r0, 1e-10: r1, 1e-6: r2}``.
    numpy_tol : float
        The relative tolerance ``max(n, m) eps`` that numpy's default uses.
    """

    singular: np.ndarray
    ranks: dict
    numpy_tol: float

    def rank(self, tol) -> int:
        return self.ranks[tol]

    def ratio(self, index: int) -> float:
        """``sigma_(index+1) / sigma_1`` (0-based ``index``); 0.0 past the end."""
        return float(self.singular[index]) if index < self.singular.size else 0.0

    def __repr__(self) -> str:
        r = ", ".join(f"{k}: {v}" for k, v in self.ranks.items())
        return f"RankProfile({r})"


def rank_profile(a) -> RankProfile:
    """Numerical ranks of ``a`` at the tolerances of :data:`RANK_TOLERANCES` (SVD, relative to sigma_1)."""
    a = _matrix("a", a, 2)
    s = np.linalg.svd(a, compute_uv=False)
    if s.size == 0 or s[0] == 0:
        return RankProfile(np.zeros_like(s), {t: 0 for t in RANK_TOLERANCES}, 0.0)
    rel = s / s[0]
    numpy_tol = max(a.shape) * np.finfo(a.dtype).eps
    ranks = {"numpy": int(np.sum(s > numpy_tol * s[0]))}
    for tol in RANK_TOLERANCES[1:]:
        ranks[tol] = int(np.sum(rel > tol))
    return RankProfile(rel, ranks, float(numpy_tol))


def mlp_cases(seed: int, d_prime, hidden, activations, *, n: int, m: int):
    """Every (d', hidden width, activation) case of the NEURAL checks with its inputs and weight stream.

    Yields ``(dp, h, act, q, k, rng)``: ``q`` (n, d') and ``k`` (m, d') standard normal from the stream
    ``("mlp-inputs", d')`` (shared by every width and activation of that d'), and the generator of the
    stream ``("mlp", d', h, act)`` from which the checks draw the case's MLP weights
    (``spectral.ScoreMLP(d', d', h, rng=rng, activation=act)``), so a case has the same draws in every
    check and whatever other cases are asked for.
    """
    for dp in d_prime:
        irng = child_rng(seed, "mlp-inputs", dp)
        q = irng.standard_normal((n, dp))
        k = irng.standard_normal((m, dp))
        for h in hidden:
            for act in activations:
                yield dp, h, act, q, k, child_rng(seed, "mlp", dp, h, act)
