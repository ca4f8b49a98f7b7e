"""Dot-product (softmax) attention scores ``exp(q.k / T)``, row maximum subtracted.

References
----------
Vaswani et al., "Attention is all you need" (2017); the dot-product baseline of the FNA paper.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.arrays import as_float_array, flush_subnormal, like_array, matrix_transpose, numpy_dtype
from spectral.floor.pairwise_memory import check_pairwise_memory
from spectral.floor.validation import InputError, check_real

__all__ = ["dot_product_scores"]


def _project(x, w, name: str):
    """Rows ``W x_i``: ``x @ W^T`` for ``W`` of shape (d_out, d)."""
    if w is None:
        return x
    w = like_array(w, name, like=x)
    if w.ndim != 2 or w.shape[1] != x.shape[1]:
        raise InputError(f"{name} must have shape (d_out, {x.shape[1]}), got {tuple(w.shape)}")
    return x @ matrix_transpose(w)


#: Peak bytes per ``(n, m)`` entry of :func:`dot_product_scores`: ``copies`` arrays of the itemsize plus
#: ``mask_bytes`` of boolean masks (flushing subnormal scores). Measured with tracemalloc at
#: n x m = 1000 x 1500, 3000 x 2000 and 600 x 700 (float64; the last with most scores subnormal): NumPy
#: computes the scores in place, 8.0-9.0 bytes per entry (16 before the in-place path); other namespaces
#: (array_api_strict) hold the scores and one temporary (16.1), and flushing subnormals with ``where``
#: holds the exponential, a mask, a zero array and the result (33.5 while the exponent was still held,
#: hence its release before the flush).
DOT_PRODUCT_PEAK = {"numpy": {"copies": 1, "mask_bytes": 1}, "other": {"copies": 3, "mask_bytes": 2}}


def dot_product_scores(x, *, y=None, w_q=None, w_k=None, temperature=None, max_bytes=None):
    r"""Dot-product attention scores :math:`C_{ij} = \exp(q_i \cdot k_j / T - \max_l q_i \cdot k_l / T)`.

    Parameters
    ----------
    x : array of shape (n, d)
        Query tokens (rows).
    y : array of shape (m, d), optional
        Key tokens; default ``x`` (self-attention).
    w_q, w_k : array of shape (d_h, d), optional
        Projections, ``q_i = W_Q x_i``, ``k_j = W_K y_j``; default identity.
    temperature : float, optional
        ``T > 0``; default ``sqrt(d_h)`` with ``d_h`` the projected dimension
        (Vaswani et al.).
    max_bytes : int or float, optional
        Limit on the memory the scores may take (the result, its temporaries and the projected
        tokens, in bytes); default the memory available now.

    Returns
    -------
    array of shape (n, m)
        Scores in ``(0, 1]`` with a 1 in every row.

    Raises
    ------
    spectral.floor.memory.DenseMemoryError
        Before the ``(n, m)`` scores are allocated, if their estimated peak exceeds the limit.

    Notes
    -----
    Scores are defined up to a positive factor per row: subtracting the row
    maximum multiplies row ``i`` by ``exp(-max_l q_i.k_l / T)``, which the row
    normalisation ``A = N_R(C)`` removes, so ``N_R(C) = softmax(Q K^T / T)``
    exactly, without overflow.  ``C`` itself is therefore *not* the symmetric
    ``exp(Q K^T / T)`` even when ``Q = K``; use the row-normalised matrix (or
    multiply back by ``exp(rowmax)``) for anything that needs that symmetry.
    Underflow is flushed to exact 0.

    Examples
    --------
    >>> import numpy as np
    >>> C = dot_product_scores(np.array([[1.0, 0.0], [0.0, 1.0]]), temperature=1.0)
    >>> C / C.sum(axis=1, keepdims=True)  # softmax(X X^T)
    array([[0.73105858, 0.26894142],
           [0.26894142, 0.73105858]])
    """
    xp, x = as_float_array(x, "x", ndim=2)
    y = x if y is None else like_array(y, "y", like=x)
    if y.ndim != 2 or y.shape[1] != x.shape[1]:
        raise InputError(f"y must have shape (m, {x.shape[1]}) like x, got {tuple(y.shape)}")
    q = _project(x, w_q, "w_q")
    k = _project(y, w_k, "w_k")
    if q.shape[1] != k.shape[1]:
        raise InputError(f"w_q and w_k must project to the same dimension, got {q.shape[1]} and {k.shape[1]}")
    if temperature is None:
        temperature = math.sqrt(q.shape[1])
    temperature = check_real("temperature", temperature, low=0.0, low_open=True)
    n, m, itemsize = int(q.shape[0]), int(k.shape[0]), numpy_dtype(q.dtype).itemsize
    peak = DOT_PRODUCT_PEAK["numpy" if xp is np else "other"]
    check_pairwise_memory(n, m, bytes_per_pair=peak["copies"] * itemsize + peak["mask_bytes"],
                          extra_bytes=(n + m) * int(q.shape[1]) * itemsize, max_bytes=max_bytes, like=q,
                          what="dense dot-product scores",
                          alternative="compute them in row blocks, dot_product_scores(x[i:j], y=x, ...), "
                          "and reduce each block before the next")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below as InputError
        s = q @ matrix_transpose(k)
        if xp is np:  # the same operations in place (bitwise equal): one (n, m) array instead of two
            s /= temperature
            s -= np.max(s, axis=1, keepdims=True)
            finite = s.size == 0 or bool(np.isfinite(np.min(s)) and np.isfinite(np.max(s)))  # NaN propagates
        else:
            s = s / temperature
            s = s - xp.max(s, axis=1, keepdims=True)
            finite = bool(xp.all(xp.isfinite(s)))
    if not finite:
        raise InputError("scores q.k / temperature must be finite; got NaN or inf (temperature too small?)")
    s = np.exp(s, out=s) if xp is np else xp.exp(s)  # the exponent is released before the flush
    return flush_subnormal(s)
