"""Exact softmax attention in float64: the mechanism every attention implementation is held to.

``softmax(q k^T / sqrt(d)) v`` written from its definition (Vaswani et al. 2017, eq. 1), row block by
row block, in float64 with the row maximum of the logits subtracted before ``exp`` (no overflow or
underflow to ``0/0`` for any finite logits), with an optional causal mask (query ``i`` attends to
keys ``j <= i``, the diagonal included) and an optional boolean mask (``mask[i, j]`` true where query
``i`` may attend to key ``j``; every row must allow at least one key). Nothing here imports the
toolkit; :mod:`verify.attention_contract` holds implementations to it.

Host-only NumPy code. Memory: the inputs in float64 and one block of at most :data:`BLOCK_ENTRIES`
logits (32 MiB), whatever ``n``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["exact_attention", "exact_weights", "weight_blocks", "BLOCK_ENTRIES"]

#: logits per row block of the reference (32 MiB of float64)
BLOCK_ENTRIES = 1 << 22


def _allowed(rows: slice, n_keys: int, causal: bool, mask) -> np.ndarray | None:
    """The (block, n_keys) boolean array of keys each query of ``rows`` may attend to (None: all)."""
    allowed = None
    if causal:
        allowed = np.arange(n_keys)[None, :] <= np.arange(rows.start, rows.stop)[:, None]
    if mask is not None:
        block = np.asarray(mask[rows], dtype=bool)
        allowed = block if allowed is None else allowed & block
    return allowed


def _block(q64, k64, rows: slice, causal: bool, mask):
    """The logits, the softmax weights (float64, the row maximum subtracted) and the allowed keys of ``rows``
    (None: every key)."""
    logits = q64[rows] @ k64.T
    logits /= math.sqrt(q64.shape[1])
    allowed = _allowed(rows, k64.shape[0], causal, mask)
    if allowed is None:
        weights = logits - logits.max(axis=1, keepdims=True)
    else:
        if not np.all(allowed.any(axis=1)):
            bad = rows.start + int(np.flatnonzero(~allowed.any(axis=1))[0])
            raise ValueError(f"query {bad} may attend to no key: every row of the mask must allow one")
        weights = np.where(allowed, logits, -np.inf)
        weights -= weights.max(axis=1, keepdims=True)
    np.exp(weights, out=weights)
    weights /= weights.sum(axis=1, keepdims=True)
    return logits, weights, allowed


def _prepared(q, k, v=None):
    q64, k64 = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    if q64.ndim != 2 or k64.ndim != 2 or q64.shape[1] != k64.shape[1]:
        raise ValueError(f"q and k must be (n, d) and (m, d) arrays, got {q64.shape} and {k64.shape}")
    if v is None:
        return q64, k64, None
    v64 = np.asarray(v, dtype=np.float64)
    if v64.ndim != 2 or v64.shape[0] != k64.shape[0]:
        raise ValueError(f"v must be an (m, dv) array with m = {k64.shape[0]} rows, got {v64.shape}")
    return q64, k64, v64


def _blocks(n_queries: int, n_keys: int):
    step = max(1, BLOCK_ENTRIES // max(n_keys, 1))
    for start in range(0, n_queries, step):
        yield slice(start, min(start + step, n_queries))


def weight_blocks(q, k, *, causal: bool = False, mask=None):
    """The exact attention weights row block by row block: yields ``(rows, logits, weights, allowed)``.

    ``rows`` is a slice of the queries (at most :data:`BLOCK_ENTRIES` logits per block), ``logits``
    the float64 ``q k^T / sqrt(d)`` of those rows (masked keys included), ``weights`` their softmax
    over the allowed keys (0 elsewhere) and ``allowed`` the boolean keys each row may attend to
    (None when every key is allowed: neither causal nor masked).
    """
    q64, k64, _ = _prepared(q, k)
    for rows in _blocks(q64.shape[0], k64.shape[0]):
        yield (rows, *_block(q64, k64, rows, causal, mask))


def exact_attention(q, k, v, *, causal: bool = False, mask=None) -> np.ndarray:
    """``softmax(q k^T / sqrt(d)) v`` in float64 (row maximum subtracted), optionally causal and/or masked.

    Parameters
    ----------
    q : array of shape (n, d)
        Queries (any real dtype; converted to float64 exactly).
    k : array of shape (m, d)
        Keys.
    v : array of shape (m, dv)
        Values.
    causal : bool
        Query ``i`` attends to keys ``j <= i`` only (queries and keys indexed alike).
    mask : boolean array of shape (n, m), optional
        ``mask[i, j]`` true where query ``i`` may attend to key ``j`` (combined with ``causal``).

    Returns
    -------
    ndarray of shape (n, dv), float64
    """
    q64, k64, v64 = _prepared(q, k, v)
    out = np.empty((q64.shape[0], v64.shape[1]))
    for rows, _, weights, _ in weight_blocks(q64, k64, causal=causal, mask=mask):
        out[rows] = weights @ v64
    return out


def exact_weights(q, k, *, causal: bool = False, mask=None) -> np.ndarray:
    """The (n, m) softmax weights ``softmax(q k^T / sqrt(d))`` in float64 (for small n: the full matrix)."""
    q64, k64, _ = _prepared(q, k)
    out = np.empty((q64.shape[0], k64.shape[0]))
    for rows, _, weights, _ in weight_blocks(q64, k64, causal=causal, mask=mask):
        out[rows] = weights
    return out
