"""Fast Multipole Attention (FMA): the near/far-field hierarchy in 1-D and 2-D, and its attention.

Kang, Tran and De Sterck, "Fast Multipole Attention: A Scalable Multilevel Attention Mechanism for
Text and Images", section 3 ("FMA in 1D", "FMA in 2D", eqs. 3-6, "Coarse level rank p").

Structure (1-D, ``n`` tokens, base cell ``r``): ``L = ceil(log2(n / r))``; level-``l`` blocks
``b_l(i) = floor(i / (r 2^l))``; the near field ``N(i) = {j : |b_0(j) - b_0(i)| <= 1}``; the far
field of level ``l`` (``1 <= l < L``) ``F_l(i) = {j : |b_l(j) - b_l(i)| <= 1}`` minus the near
field and the far fields of the finer levels. ``F_l(i)`` is tiled by at most 3 level-``l`` groups
``G_{l,m} = [m g, (m + 1) g) ∩ [n]`` of length ``g = r 2^(l-1)``: in units of groups, with ``c``
the group holding ``i``, they are ``c + (-2, 2, 3)`` for even ``c`` and ``c + (-3, -2, 2)`` for
odd ``c`` (those inside ``[0, ceil(n / g))``). In 2-D (a ``W x W`` image flattened row-major,
pixel ``x W + y``) the same holds per axis: the near field is 3 x 3 base cells and each level adds
the 6 x 6 window of squares of side ``g`` minus the inner 3 x 3, at most 27 squares.

Attention (eq. 4 / eq. 6): exact softmax over ``N(i)`` plus one interaction per far group with the
group summary ``k̄_G = sum_j pi^k_j k_j``, ``v̄_G = sum_j pi^v_j v_j`` (eq. 3 / eq. 5; rank ``p``:
``p`` summaries per group). Two normalisations are implemented:

* ``"per-level"`` (as printed): one softmax over ``N(i)`` and a separate softmax over the groups of
  each level. The effective row sums are ``1 + (number of non-empty levels)`` when every
  ``pi^v`` sums to one (FMA-8): not a convex combination of the values.
* ``"joint"``: one softmax over ``N(i)`` and every group representative, the logit of a
  representative corrected by ``+ log m`` with ``m`` the number of tokens it stands for
  (``|G|`` for ``p = 1``). Row sums are 1, and the output equals full softmax attention whenever
  the keys are constant on every far group (FMA-9).

Query downsampling (FMA-linear, the toolkit's reading of "downsampling the queries on every coarser
level"): at level ``l`` the queries of each group-sized block are replaced by their mean, the
block's pooled query attends to the block's (shared) far groups, and the result is used by every
token of the block. Causal masking drops the groups after the query wholesale (no far group
straddles its query, FMA-10) and masks the near field by ``j <= i``.

All attention code is vectorised (block reshapes and batched matrix products; Python loops run over
levels, the few neighbour slots and, in 1-D, chunks of queries) and takes its array namespace and device
from the inputs; the index structure depends on ``(n, r)`` alone, is built on the host with NumPy and
moved to the inputs' device once per call. 1-D attention works through chunks of ``r 2^a`` queries, so
its extra memory is the output plus a few MiB (:data:`_CHUNK_SCORES`) plus the ``O(n p d / r)`` group
summaries, whatever ``n``: at ``n = 2^14 .. 2^16``, ``d = 64``, float64, within 1.3x of the peak of
PyTorch's CPU ``scaled_dot_product_attention`` (``benchmarks/bench_fma.py``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from spectral.floor.backend import array_namespace, dtype_name, empty_on, from_numpy, zeros_on
from spectral.floor.pairwise_memory import check_pairwise_memory
from spectral.floor.validation import InputError, check_int, check_option

__all__ = [
    "FMAGroups",
    "fma_attention",
    "fma_attention_2d",
    "fma_depth",
    "fma_groups",
    "fma_groups_2d",
    "fma_levels",
    "fma_levels_2d",
    "fma_matrix",
    "fma_matrix_2d",
]

NORMALISATIONS = ("per-level", "joint")

#: far-group offsets (in groups of the level) for a query whose own group index c is even / odd
_OFFSETS_1D = {0: (-2, 2, 3), 1: (-3, -2, 2)}
#: the 6 group cells per axis of the level window, relative to c, for even / odd c
_WINDOW_AXIS = {0: tuple(range(-2, 4)), 1: tuple(range(-3, 3))}


def _put(xp, host, like, dtype=None):
    """A host (NumPy) value moved to the namespace and device of ``like`` (one transfer), optionally cast."""
    out = from_numpy(np.asarray(host), like=like)
    return out if dtype is None else xp.astype(out, dtype)


# --------------------------------------------------------------------------------------------
# structure (host, NumPy): depends on n (or W) and r only
# --------------------------------------------------------------------------------------------
def _size_and_cell(n, r, *, size_name="n"):
    n = check_int(size_name, n, low=1)
    r = check_int("r", r, low=1)
    if r > n:
        raise InputError(f"r must be an integer in [1, {size_name}] = [1, {n}], got {r}")
    return n, r


def _depth(n: int, r: int) -> int:
    depth = 0
    while r << depth < n:  # smallest L >= 0 with r 2^L >= n, i.e. ceil(log2(n / r)) without floats
        depth += 1
    return depth


def fma_depth(n, *, r) -> int:
    """Number of hierarchy levels ``L = ceil(log2(n / r))`` (FMA "FMA in 1D"; ``W`` for 2-D).

    Levels ``1 .. L-1`` are far-field levels; ``L <= 1`` means the near field is everything.
    Computed in integers (the smallest ``L >= 0`` with ``r 2^L >= n``).

    Examples
    --------
    >>> [fma_depth(1024, r=r) for r in (16, 32, 64)]   # FMA Table 6: 6, 5, 4 levels
    [6, 5, 4]
    """
    n, r = _size_and_cell(n, r)
    return _depth(n, r)


def _axis_levels(n: int, r: int, depth: int) -> np.ndarray:
    """(n, n) level of key j for query i on one axis: the number of levels l < L whose window misses j."""
    i = np.arange(n)
    lev = np.zeros((n, n), dtype=np.int8)
    for level in range(depth):
        b = i // (r << level)
        lev += np.abs(b[:, None] - b[None, :]) > 1
    return lev


def fma_levels(n, *, r) -> np.ndarray:
    """The (n, n) matrix of hierarchy levels of FMA in 1-D (FMA Fig. 2).

    Entry ``(i, j)`` is 0 when key ``j`` is in the near field ``N(i)`` and ``l >= 1`` when it is in
    the far field ``F_l(i)``; every entry is in ``[0, L - 1]`` because the sets form a disjoint
    cover of ``[n]`` (FMA-1). Any ``n >= r >= 1`` is allowed (``r`` need not divide ``n``).

    Parameters
    ----------
    n : int
        Sequence length, ``>= 1``.
    r : int
        Base cell size, in ``[1, n]``.

    Returns
    -------
    numpy.ndarray of shape (n, n), dtype int8

    Examples
    --------
    >>> fma_levels(8, r=1)[0].tolist()
    [0, 0, 1, 1, 2, 2, 2, 2]
    """
    n, r = _size_and_cell(n, r)
    return _axis_levels(n, r, _depth(n, r))


def fma_levels_2d(width, *, r) -> np.ndarray:
    """The (W^2, W^2) matrix of quadtree levels of FMA in 2-D (FMA Fig. 3b).

    Pixel ``(x, y)`` of a ``W x W`` image is token ``x W + y`` (row-major). Entry ``(i, j)`` is 0 in
    the 3 x 3-cell near field and ``l`` in ``F_l(i)``; it is the larger of the two per-axis 1-D
    levels, because the level-``l`` window is the product of the two axis windows.

    Parameters
    ----------
    width : int
        Image width ``W`` (``n = W^2`` tokens), ``>= 1``.
    r : int
        Base cell side, in ``[1, W]``.

    Returns
    -------
    numpy.ndarray of shape (W^2, W^2), dtype int8
    """
    width, r = _size_and_cell(width, r, size_name="width")
    lev = _axis_levels(width, r, _depth(width, r))
    x, y = np.divmod(np.arange(width * width), width)
    return np.maximum(lev[np.ix_(x, x)], lev[np.ix_(y, y)])


def _candidates_1d(m_groups: int, causal: bool) -> np.ndarray:
    """(M, 3) far-group indices of the query block c at one level (-1 where none)."""
    c = np.arange(m_groups)[:, None]
    off = np.where(c % 2 == 0, np.array(_OFFSETS_1D[0]), np.array(_OFFSETS_1D[1]))
    idx = c + off
    ok = (idx >= 0) & (idx < m_groups)
    if causal:
        ok &= idx < c  # whole groups before the query block (FMA-10: none straddles it)
    return np.where(ok, idx, -1)


def _candidates_2d(m_groups: int) -> np.ndarray:
    """(M^2, 27) far-square indices (u M + v) of the query square (cx, cy) at one level (-1: none)."""
    out = np.empty((m_groups, m_groups, 27), dtype=np.int64)
    for px in (0, 1):
        for py in (0, 1):
            ox, oy = np.meshgrid(np.array(_WINDOW_AXIS[px]), np.array(_WINDOW_AXIS[py]), indexing="ij")
            keep = ~((np.abs(ox) <= 1) & (np.abs(oy) <= 1))
            ox, oy = ox[keep], oy[keep]  # 27 offsets
            cx = np.arange(px, m_groups, 2)[:, None, None]
            cy = np.arange(py, m_groups, 2)[None, :, None]
            u, v = cx + ox, cy + oy
            ok = (u >= 0) & (u < m_groups) & (v >= 0) & (v < m_groups)
            out[px::2, py::2] = np.where(ok, u * m_groups + v, -1)
    return out.reshape(m_groups * m_groups, 27)


@dataclasses.dataclass(frozen=True, repr=False)
class FMAGroups:
    """Per-query near-field size and far groups of the FMA hierarchy (1-D or 2-D).

    Attributes
    ----------
    n : int
        Number of tokens (``W^2`` in 2-D).
    r : int
        Base cell size (side in 2-D).
    width : int or None
        Image width ``W`` for the 2-D quadtree, None in 1-D.
    depth : int
        ``L = ceil(log2(n / r))`` (``log2(W / r)`` in 2-D); far levels are ``1 .. L-1``.
    causal : bool
        Whether groups after the query (and near keys ``j > i``) are dropped.
    near : numpy.ndarray of shape (n,)
        ``|N(i)|`` (causal: ``|{j in N(i) : j <= i}|``).
    group_size : tuple of int
        Group length ``r 2^(l-1)`` (square side in 2-D) of levels ``l = 1 .. L-1``.
    groups : tuple of numpy.ndarray
        Per level, shape (n, S) with ``S = 3`` (1-D) or 27 (2-D): the indices ``m`` of the groups
        ``G_{l,m}`` in ``G_l(i)`` (``u M_l + v`` for squares), -1 for an empty slot.
    block_groups : tuple of numpy.ndarray
        Per level, shape (number of query blocks, S): the same for each group-sized block of
        queries (all queries of a block share their far groups); what a pooled query of
        FMA-linear attends to.
    """

    n: int
    r: int
    width: int | None
    depth: int
    causal: bool
    near: np.ndarray
    group_size: tuple[int, ...]
    groups: tuple[np.ndarray, ...]
    block_groups: tuple[np.ndarray, ...]

    def __repr__(self) -> str:
        shape = f"width={self.width}" if self.width is not None else f"n={self.n}"
        return (f"FMAGroups({shape}, r={self.r}, L={self.depth}, causal={self.causal}, "
                f"max sources (p=1)={int(self.sources().max())})")

    def group_counts(self) -> np.ndarray:
        """(n, L-1) number of far groups ``|G_l(i)|`` per query and level."""
        if not self.groups:
            return np.zeros((self.n, 0), dtype=np.int64)
        return np.stack([np.count_nonzero(g >= 0, axis=1) for g in self.groups], axis=1)

    def sources(self, p: int = 1) -> np.ndarray:
        """(n,) sources per query: ``|N(i)| + p sum_l |G_l(i)|`` (rank-``p`` summaries)."""
        p = check_int("p", p, low=1)
        return self.near + p * self.group_counts().sum(axis=1)

    def stored_scores(self, p: int = 1, *, downsample_queries: bool = False) -> int:
        """Total attention scores: ``sum_i sources(i)``, or with pooled queries (FMA-linear)
        ``sum_i |N(i)| + p sum_l sum_blocks |G_l(block)|``."""
        p = check_int("p", p, low=1)
        if not downsample_queries:
            return int(self.sources(p).sum())
        far = sum(int(np.count_nonzero(b >= 0)) for b in self.block_groups)
        return int(self.near.sum()) + p * far


def _near_counts_1d(n: int, r: int, causal: bool) -> np.ndarray:
    i = np.arange(n)
    start = np.maximum(i // r - 1, 0) * r
    stop = np.minimum((i // r + 2) * r, n)
    return (np.minimum(stop, i + 1) if causal else stop) - start


def fma_groups(n, *, r, causal=False) -> FMAGroups:
    """Near-field sizes and far groups ``G_l(i)`` of every query of 1-D FMA, with source counts.

    Parameters
    ----------
    n : int
        Sequence length, ``>= 1``.
    r : int
        Base cell size, in ``[1, n]``.
    causal : bool
        Keep only groups before the query and near keys ``j <= i``.

    Returns
    -------
    FMAGroups

    Examples
    --------
    >>> g = fma_groups(1024, r=64)
    >>> int(g.sources().max()), 3 * 64 + 3 * (g.depth - 1)    # FMA-3: max <= 3r + 3(L-1)
    (199, 201)
    """
    n, r = _size_and_cell(n, r)
    if not isinstance(causal, (bool, np.bool_)):
        raise InputError(f"causal must be True or False, got {causal!r}")
    depth = _depth(n, r)
    sizes, groups, blocks = [], [], []
    for level in range(1, depth):
        g = r << (level - 1)
        cand = _candidates_1d(-(-n // g), bool(causal))
        sizes.append(g)
        blocks.append(cand)
        groups.append(cand[np.arange(n) // g])
    return FMAGroups(n, r, None, depth, bool(causal), _near_counts_1d(n, r, bool(causal)), tuple(sizes),
                     tuple(groups), tuple(blocks))


def fma_groups_2d(width, *, r) -> FMAGroups:
    """Near-field sizes and far squares ``Q_l(i)`` of every pixel of 2-D FMA (row-major ``x W + y``).

    Parameters
    ----------
    width : int
        Image width ``W`` (``n = W^2``), ``>= 1``.
    r : int
        Base cell side, in ``[1, W]``.

    Returns
    -------
    FMAGroups
        ``groups[l-1][i]`` holds up to 27 square indices ``u M_l + v`` (``M_l = ceil(W / g)``).

    Examples
    --------
    >>> g = fma_groups_2d(64, r=4)
    >>> int(g.sources().max()), 9 * 4**2 + 27 * (g.depth - 1)   # FMA-5: max <= 9 r^2 + 27 (L-1)
    (205, 225)
    """
    width, r = _size_and_cell(width, r, size_name="width")
    depth = _depth(width, r)
    x, y = np.divmod(np.arange(width * width), width)
    near_axis = _near_counts_1d(width, r, False)
    sizes, groups, blocks = [], [], []
    for level in range(1, depth):
        g = r << (level - 1)
        m = -(-width // g)
        cand = _candidates_2d(m)
        sizes.append(g)
        blocks.append(cand)
        groups.append(cand[(x // g) * m + (y // g)])
    return FMAGroups(width * width, r, width, depth, False, near_axis[x] * near_axis[y], tuple(sizes),
                     tuple(groups), tuple(blocks))


# --------------------------------------------------------------------------------------------
# token layouts: group-sized blocks of tokens (1-D intervals, 2-D squares) in the array namespace
# --------------------------------------------------------------------------------------------
class _Layout1D:
    dim = 1

    def __init__(self, n: int):
        self.n = n
        self.side = n

    def count(self, g: int) -> int:
        return -(-self.n // g)

    def blocks(self, xp, x, g: int):
        """(n, ...) -> (M, g, ...), zero-padded."""
        m = self.count(g)
        pad = m * g - self.n
        if pad:
            x = xp.concat([x, zeros_on(x, (pad, *x.shape[1:]), x.dtype)], axis=0)
        return xp.reshape(x, (m, g, *x.shape[1:]))

    def unblocks(self, xp, xb, g: int):
        """(M, g, ...) -> (n, ...)."""
        x = xp.reshape(xb, (xb.shape[0] * g, *xb.shape[2:]))
        return x[:self.n, ...]

    def neighbours(self, xp, x, r: int):
        """(n, d) -> (M0, 3r, d): the keys of the base cells c-1, c, c+1 (zeros outside [n])."""
        xb = self.blocks(xp, x, r)
        zero = zeros_on(xb, (1, *xb.shape[1:]), xb.dtype)
        padded = xp.concat([zero, xb, zero], axis=0)
        m = xb.shape[0]
        return xp.concat([padded[0:m, ...], padded[1:m + 1, ...], padded[2:m + 2, ...]], axis=1)

    def candidates(self, g: int, causal: bool) -> np.ndarray:
        return _candidates_1d(self.count(g), causal)


class _Layout2D:
    dim = 2

    def __init__(self, width: int):
        self.side = width
        self.n = width * width

    def count(self, g: int) -> int:
        return (-(-self.side // g)) ** 2

    def blocks(self, xp, x, g: int):
        """(W^2, ...) -> (M^2, g^2, ...): squares of side g in row-major order, zero-padded."""
        w, rest = self.side, tuple(x.shape[1:])
        m = -(-w // g)
        grid = xp.reshape(x, (w, w, *rest))
        pad = m * g - w
        if pad:
            grid = xp.concat([grid, zeros_on(x, (pad, w, *rest), x.dtype)], axis=0)
            grid = xp.concat([grid, zeros_on(x, (m * g, pad, *rest), x.dtype)], axis=1)
        grid = xp.reshape(grid, (m, g, m, g, *rest))
        order = (0, 2, 1, 3, *range(4, 4 + len(rest)))
        return xp.reshape(xp.permute_dims(grid, order), (m * m, g * g, *rest))

    def unblocks(self, xp, xb, g: int):
        w, rest = self.side, tuple(xb.shape[2:])
        m = -(-w // g)
        grid = xp.reshape(xb, (m, m, g, g, *rest))
        order = (0, 2, 1, 3, *range(4, 4 + len(rest)))
        grid = xp.reshape(xp.permute_dims(grid, order), (m * g, m * g, *rest))
        return xp.reshape(grid[:w, :w, ...], (self.n, *rest))

    def neighbours(self, xp, x, r: int):
        """(W^2, d) -> (M0^2, 9 r^2, d): keys of the 3 x 3 base cells around each cell."""
        xb = self.blocks(xp, x, r)
        m = -(-self.side // r)
        cells = xp.reshape(xb, (m, m, *xb.shape[1:]))
        zrow = zeros_on(xb, (1, m, *xb.shape[1:]), xb.dtype)
        cells = xp.concat([zrow, cells, zrow], axis=0)
        zcol = zeros_on(xb, (m + 2, 1, *xb.shape[1:]), xb.dtype)
        cells = xp.concat([zcol, cells, zcol], axis=1)
        parts = [cells[1 + dx:1 + dx + m, 1 + dy:1 + dy + m, ...] for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
        out = xp.concat(parts, axis=2)
        return xp.reshape(out, (m * m, *out.shape[2:]))

    def candidates(self, g: int, causal: bool) -> np.ndarray:
        return _candidates_2d(-(-self.side // g))


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------
def _check_arrays(q, k, v):
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a is None:
            continue
        shape = tuple(getattr(a, "shape", ()))
        if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
            raise InputError(f"{name} must be a 2-D array of shape (n, d) with n, d >= 1, got shape {shape}")
    try:
        xp = array_namespace(q, k, v)
    except TypeError as exc:
        raise InputError(f"q, k and v must come from one array library: {exc}") from None
    if q.dtype not in (xp.float32, xp.float64):
        raise InputError(f"q must have a real floating dtype (float32 or float64), got {q.dtype}")
    for name, a in (("k", k), ("v", v)):
        if a is not None and a.dtype != q.dtype:
            raise InputError(f"{name} must have the dtype of q ({q.dtype}), got {a.dtype}")
    if tuple(k.shape) != tuple(q.shape):
        raise InputError(f"k must have the shape of q {tuple(q.shape)}, got {tuple(k.shape)}")
    if v is not None and v.shape[0] != q.shape[0]:
        raise InputError(f"v must have n = {q.shape[0]} rows like q and k, got shape {tuple(v.shape)}")
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a is not None and not bool(xp.all(xp.isfinite(a))):
            raise InputError(f"{name} must be finite; it contains NaN or inf")
    return xp


def _check_options(p, normalisation, causal, downsample_queries):
    p = check_int("p", p, low=1)
    check_option("normalisation", normalisation, NORMALISATIONS)
    for name, flag in (("causal", causal), ("downsample_queries", downsample_queries)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InputError(f"{name} must be True or False, got {flag!r}")
    return p


def _check_weights(weights, xp, like, sizes, p, dim):
    """``weights[l-1] = (pi_k, pi_v)``, each of shape (p, g) in 1-D, (p, g, g) in 2-D."""
    if weights is None:
        return None
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") or len(weights) != len(sizes):
        raise InputError(f"weights must hold one (pi_k, pi_v) pair per far level ({len(sizes)} levels), "
                         f"got {weights!r:.80}")
    out = []
    for level, (pair, g) in enumerate(zip(weights, sizes), start=1):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise InputError(f"weights[{level - 1}] must be a pair (pi_k, pi_v), got {pair!r:.80}")
        conv = []
        for w in pair:
            try:
                same = array_namespace(w) is xp
            except TypeError:
                same = False
            arr = xp.asarray(w, dtype=like.dtype) if same else from_numpy(np.asarray(w, dtype=np.float64), like=like)
            if not same:
                arr = xp.astype(arr, like.dtype)
            expected = (p, g) if dim == 1 else (p, g, g)
            if tuple(arr.shape) != expected:
                raise InputError(f"weights for level {level} must have shape {expected} (p, group size"
                                 f"{'' if dim == 1 else ', group size'}), got {tuple(arr.shape)}")
            if not bool(xp.all(xp.isfinite(arr))):
                raise InputError(f"weights for level {level} must be finite")
            conv.append(xp.reshape(arr, (p, g ** dim)))
        out.append(tuple(conv))
    return out


# --------------------------------------------------------------------------------------------
# the mechanism
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Part:
    """One softmax part in blocked form: the near field or one far level.

    ``logits`` (B, t, s) with -inf on masked slots; ``values`` (B, s, dv) or None (matrix only);
    ``g`` the block size used by the layout; for far levels ``idx`` (B, S) numpy group indices and
    ``pv_tokens`` (n, p) the weight of each token in its group's value summaries.
    """

    logits: Any
    g: int
    values: Any = None
    idx: np.ndarray | None = None
    pv_tokens: Any = None


def _default_pool(xp, valid, p, dtype, like):
    """(B, p, t) sub-block mean weights and (B, p) token counts for blocks with ``valid`` (B, t) tokens."""
    t = valid.shape[1]
    sub = (np.arange(t) * p) // t  # p equal sub-blocks (strips of the square in 2-D)
    ind = (sub[None, :] == np.arange(p)[:, None])[None, :, :] & valid[:, None, :]
    counts = ind.sum(axis=2)
    w = ind / np.maximum(counts, 1)[:, :, None]
    return _put(xp, w, like, dtype), counts


def _parts(layout, q, k, v, *, r, p, weights, causal, downsample_queries, normalisation):
    xp = array_namespace(q, k, v)
    dtype, scale = q.dtype, 1.0 / math.sqrt(q.shape[1])
    n = layout.n
    depth = _depth(layout.side, r)
    sizes = [r << (level - 1) for level in range(1, depth)]
    weights = _check_weights(weights, xp, q, sizes, p, layout.dim)
    tok = np.arange(n)
    # near field
    qb = layout.blocks(xp, q, r)
    kn = layout.neighbours(xp, k, r)
    ids_b = layout.blocks(np, tok[:, None] + 1, r)[:, :, 0] - 1  # token ids per block, -1 = padding
    key_ids = layout.neighbours(np, tok[:, None] + 1, r)[:, :, 0] - 1  # (B0, s0) neighbour key ids, -1 = none
    mask = (key_ids >= 0)[:, None, :]  # (B0, 1, s0), broadcast over the block's queries
    if causal:
        mask = mask & (key_ids[:, None, :] <= ids_b[:, :, None])
    logits = xp.matmul(qb, xp.permute_dims(kn, (0, 2, 1))) * scale
    neg = _put(xp, -math.inf, q, dtype)
    logits = xp.where(_put(xp, mask, q), logits, neg)
    parts = [_Part(logits, r, layout.neighbours(xp, v, r) if v is not None else None)]
    # far levels
    for level, g in enumerate(sizes, start=1):
        valid = layout.blocks(np, np.ones((n, 1), dtype=bool), g)[:, :, 0]  # (B, t)
        kb = layout.blocks(xp, k, g)
        if weights is None:
            pk, counts = _default_pool(xp, valid, p, dtype, q)
            pv = pk
            logmult = np.where(counts > 0, np.log(np.maximum(counts, 1)), -np.inf)
        else:
            vmask = _put(xp, valid[:, None, :].astype(np.float64), q, dtype)
            pk = xp.reshape(weights[level - 1][0], (1, p, -1)) * vmask
            pv = xp.reshape(weights[level - 1][1], (1, p, -1)) * vmask
            size = valid.sum(axis=1, keepdims=True)
            logmult = np.broadcast_to(np.log(size / p), (valid.shape[0], p))
        kbar = xp.matmul(pk, kb)  # (B, p, d)
        idx = layout.candidates(g, causal)  # (B, S)
        slots = idx.shape[1]
        take = _put(xp, np.where(idx >= 0, idx, 0).reshape(-1), q)
        d = k.shape[1]
        kg = xp.reshape(xp.take(xp.reshape(kbar, (kbar.shape[0], p * d)), take, axis=0),
                        (idx.shape[0], slots * p, d))
        slot_ok = (idx >= 0)[:, :, None] & np.isfinite(logmult[np.where(idx >= 0, idx, 0)])
        if normalisation == "joint":
            corr = np.where(slot_ok, logmult[np.where(idx >= 0, idx, 0)], 0.0)
        else:
            corr = np.zeros(slot_ok.shape)
        qg = layout.blocks(xp, q, g)
        if downsample_queries:
            vq = _put(xp, valid[:, :, None].astype(np.float64), q, dtype)
            qg = xp.sum(qg * vq, axis=1, keepdims=True) / _put(
                xp, valid.sum(axis=1)[:, None, None].astype(np.float64), q, dtype)
        lg = xp.matmul(qg, xp.permute_dims(kg, (0, 2, 1))) * scale
        lg = lg + _put(xp, corr.reshape(idx.shape[0], 1, slots * p), q, dtype)
        lg = xp.where(_put(xp, slot_ok.reshape(idx.shape[0], 1, slots * p), q), lg, neg)
        if downsample_queries:
            lg = xp.broadcast_to(lg, (idx.shape[0], valid.shape[1], slots * p))
        vals = None
        if v is not None:
            vbar = xp.matmul(pv, layout.blocks(xp, v, g))  # (B, p, dv)
            dv = v.shape[1]
            vals = xp.reshape(xp.take(xp.reshape(vbar, (vbar.shape[0], p * dv)), take, axis=0),
                              (idx.shape[0], slots * p, dv))
        pv_tokens = layout.unblocks(xp, xp.permute_dims(pv, (0, 2, 1)), g)  # (n, p)
        parts.append(_Part(lg, g, vals, idx, pv_tokens))
    return xp, parts


def _safe_max(xp, x):
    m = xp.max(x, axis=-1, keepdims=True)
    return xp.where(xp.isfinite(m), m, xp.zeros_like(m))


def _normalised(xp, layout, parts, normalisation):
    """Per part: the normalised weights (B, t, s) of eq. (4) (per-level) or of the joint softmax."""
    if normalisation == "per-level":
        out = []
        for part in parts:
            e = xp.exp(part.logits - _safe_max(xp, part.logits))
            z = xp.sum(e, axis=-1, keepdims=True)
            out.append(e / xp.where(z > 0, z, xp.ones_like(z)))  # an empty level contributes nothing
        return out
    # joint: one max and one normaliser per token over every part
    maxima = [layout.unblocks(xp, _safe_max(xp, part.logits), part.g) for part in parts]
    m = maxima[0]
    for other in maxima[1:]:
        m = xp.maximum(m, other)
    exps = [xp.exp(part.logits - layout.blocks(xp, m, part.g)) for part in parts]
    z = layout.unblocks(xp, xp.sum(exps[0], axis=-1, keepdims=True), parts[0].g)
    for e, part in zip(exps[1:], parts[1:]):
        z = z + layout.unblocks(xp, xp.sum(e, axis=-1, keepdims=True), part.g)
    out = []
    for e, part in zip(exps, parts):
        zb = layout.blocks(xp, z, part.g)  # padding rows of a cut block have z = 0
        out.append(e / xp.where(zb > 0, zb, xp.ones_like(zb)))
    return out


def _attention(layout, q, k, v, *, r, p, normalisation, causal, weights, downsample_queries):
    xp, parts = _parts(layout, q, k, v, r=r, p=p, weights=weights, causal=causal,
                       downsample_queries=downsample_queries, normalisation=normalisation)
    out = None
    for w, part in zip(_normalised(xp, layout, parts, normalisation), parts):
        term = layout.unblocks(xp, xp.matmul(w, part.values), part.g)
        out = term if out is None else out + term
    return out


#: Near-field scores per query chunk of :func:`fma_attention` (float64: 1 MiB; with their exponentials,
#: weights and the far levels' scores the chunk's workspace is a few MiB, whatever n).
_CHUNK_SCORES = 1 << 17


def _chunk_length(n: int, r: int) -> int:
    """Queries per chunk: ``r 2^a`` (so that every level's blocks of queries tile a chunk or hold it whole),
    the largest with ``3 r`` near scores per query within :data:`_CHUNK_SCORES`, at least ``r``."""
    c = r
    while 2 * c * 3 * r <= _CHUNK_SCORES and c < n:
        c *= 2
    return c


class _Level:
    """One far level of 1-D FMA for the chunked attention: group summaries and candidate slots on the device.

    ``kbar``/``vbar`` (B, p * d) and (B, p * dv) summaries of the B groups of length ``g``; ``idx`` (B, 3)
    indices of the candidate far groups of each block of queries (0 where the slot is empty); ``ok`` (B, 1, 3p)
    whether a slot is used; ``corr`` (B, 1, 3p) the joint normalisation's ``+ log m``; ``qbar`` (B, d) the
    blocks' mean queries (FMA-linear) or None.
    """

    def __init__(self, xp, q, k, v, g, p, w_pair, causal, joint, pooled):
        n, d = q.shape
        nfull, rem = divmod(n, g)
        blocks = nfull + (rem > 0)
        if w_pair is None:  # means of p equal sub-blocks of the (possibly cut) group
            sub = (np.arange(g) * p) // g
            ind = sub[None, :] == np.arange(p)[:, None]  # (p, g)
            full_counts = ind.sum(axis=1)
            wk_full = ind / np.maximum(full_counts, 1)[:, None]
            last_ind = ind[:, :rem]
            last_counts = last_ind.sum(axis=1)
            wk_last = last_ind / np.maximum(last_counts, 1)[:, None]
            logm_full = np.where(full_counts > 0, np.log(np.maximum(full_counts, 1)), -np.inf)
            logm_last = np.where(last_counts > 0, np.log(np.maximum(last_counts, 1)), -np.inf)
            wk_full, wk_last = _put(xp, wk_full, q, q.dtype), _put(xp, wk_last, q, q.dtype)
            wv_full, wv_last = wk_full, wk_last
        else:
            (wk, wv) = w_pair  # (p, g) in the namespace of q
            wk_full, wv_full = wk, wv
            wk_last, wv_last = wk[:, :rem], wv[:, :rem]
            logm_full = np.full(p, math.log(g / p))
            logm_last = np.full(p, math.log(rem / p) if rem else -np.inf)
        logm = np.concatenate([np.broadcast_to(logm_full, (nfull, p)), logm_last[None, :]] if rem else
                              [np.broadcast_to(logm_full, (nfull, p))], axis=0)  # (B, p)
        self.kbar = _group_sums(xp, k, wk_full, wk_last, g, nfull, rem)  # (B, p d)
        self.vbar = _group_sums(xp, v, wv_full, wv_last, g, nfull, rem)
        cand = _candidates_1d(blocks, causal)  # (B, 3)
        safe = np.where(cand >= 0, cand, 0)
        ok = (cand >= 0)[:, :, None] & np.isfinite(logm[safe])  # (B, 3, p)
        corr = np.where(ok, logm[safe], 0.0) if joint else np.zeros(ok.shape)
        self.idx = _put(xp, safe, q)
        self.ok = _put(xp, ok.reshape(blocks, 1, 3 * p), q)
        self.corr = _put(xp, corr.reshape(blocks, 1, 3 * p), q, q.dtype)
        self.g, self.p, self.d, self.dv = g, p, d, v.shape[1]
        self.qbar = None
        if pooled:
            ones = _put(xp, np.ones((1, g)), q, q.dtype)
            self.qbar = _group_sums(xp, q, ones / g, ones[:, :rem] / max(rem, 1), g, nfull, rem)  # (B, d)

    def part(self, xp, qc, s, e, chunk, scale, neg):
        """The level's ``_Part`` for the queries ``s:e`` (a chunk starting at a multiple of ``chunk``)."""
        g, p = self.g, self.p
        t = min(g, chunk)
        b0, b1 = s // g, -(-e // g)
        idx = xp.reshape(self.idx[b0:b1, ...], (-1,))
        nb = b1 - b0
        kg = xp.reshape(xp.take(self.kbar, idx, axis=0), (nb, 3 * p, self.d))
        vg = xp.reshape(xp.take(self.vbar, idx, axis=0), (nb, 3 * p, self.dv))
        if self.qbar is not None:
            lg = xp.matmul(xp.reshape(self.qbar[b0:b1, ...], (nb, 1, self.d)), xp.permute_dims(kg, (0, 2, 1)))
        else:
            lg = xp.matmul(_Layout1D(e - s).blocks(xp, qc, t), xp.permute_dims(kg, (0, 2, 1)))
        lg = xp.where(self.ok[b0:b1, ...], lg * scale + self.corr[b0:b1, ...], neg)
        if self.qbar is not None:
            lg = xp.broadcast_to(lg, (nb, t, 3 * p))
        return _Part(lg, t, vg)


def _group_sums(xp, x, w_full, w_last, g, nfull, rem):
    """(B, p * dx): ``sum_j w_j x_j`` over each group of ``g`` rows of ``x`` (the last one cut to ``rem``),
    without padding a copy of ``x``."""
    dx = x.shape[1]
    parts = []
    if nfull:
        blocks = xp.reshape(x[:nfull * g, ...], (nfull, g, dx))
        parts.append(xp.reshape(xp.matmul(xp.reshape(w_full, (1, *w_full.shape)), blocks), (nfull, -1)))
    if rem:
        last = xp.reshape(x[nfull * g:, ...], (1, rem, dx))
        parts.append(xp.reshape(xp.matmul(xp.reshape(w_last, (1, *w_last.shape)), last), (1, -1)))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)


def _neighbour_cells(xp, x, c0, c1, r, zeros):
    """(c1 - c0, 3r, dx): the rows of the base cells ``c - 1, c, c + 1`` for the cells ``c0 <= c < c1`` (zero
    rows outside ``[0, n)``), from one slice of ``x``."""
    n = x.shape[0]
    lo, hi = (c0 - 1) * r, (c1 + 1) * r
    parts = [x[max(lo, 0):min(hi, n), ...]]
    if lo < 0:
        parts.insert(0, zeros[:-lo, ...])
    if hi > n:
        parts.append(zeros[:hi - n, ...])
    rows = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
    m = c1 - c0
    cells = xp.reshape(rows, (m + 2, r, x.shape[1]))
    return xp.concat([cells[0:m, ...], cells[1:m + 1, ...], cells[2:m + 2, ...]], axis=1)


def _attention_1d(q, k, v, *, r, p, normalisation, causal, weights, downsample_queries):
    """1-D FMA attention in chunks of queries: the workspace is a few MiB whatever ``n``.

    The group summaries of every level (``O(n p d / r)`` in all) and the masks are built once and moved to
    the device once; each chunk of ``r 2^a`` queries then forms its near-field and far-level scores, the
    normalisation and its rows of the output in place. No host transfer and no host synchronisation
    happen inside the loop.
    """
    xp = array_namespace(q, k, v)
    n, d = q.shape
    dv = v.shape[1]
    dtype, scale = q.dtype, 1.0 / math.sqrt(d)
    depth = _depth(n, r)
    sizes = [r << (level - 1) for level in range(1, depth)]
    weights = _check_weights(weights, xp, q, sizes, p, 1)
    joint = normalisation == "joint"
    levels = [_Level(xp, q, k, v, g, p, None if weights is None else weights[i], causal, joint, downsample_queries)
              for i, g in enumerate(sizes)]
    chunk = _chunk_length(n, r)
    cells = -(-n // r)
    # near-field masks: key slot s of cell c holds token (c - 1) r + s; causal: s <= r + t for query t
    slot = np.arange(3 * r)
    key_ids = (np.arange(cells)[:, None] - 1) * r + slot[None, :]
    valid = _put(xp, ((key_ids >= 0) & (key_ids < n))[:, None, :], q)  # (cells, 1, 3r)
    pattern = _put(xp, (slot[None, :] <= r + np.arange(r)[:, None])[None, :, :], q) if causal else None
    neg = _put(xp, -math.inf, q, dtype)
    zeros_k = zeros_on(q, (2 * r, d), dtype)
    zeros_v = zeros_on(q, (2 * r, dv), dtype)
    out = empty_on(q, (n, dv), dtype)
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        c0, c1 = s // r, -(-e // r)
        layout = _Layout1D(e - s)
        qc = q[s:e, ...]
        kn = _neighbour_cells(xp, k, c0, c1, r, zeros_k)
        mask = valid[c0:c1, ...] if pattern is None else valid[c0:c1, ...] & pattern
        logits = xp.where(mask, xp.matmul(layout.blocks(xp, qc, r), xp.permute_dims(kn, (0, 2, 1))) * scale, neg)
        parts = [_Part(logits, r, _neighbour_cells(xp, v, c0, c1, r, zeros_v))]
        parts += [level.part(xp, qc, s, e, chunk, scale, neg) for level in levels]
        acc = None
        for w, part in zip(_normalised(xp, layout, parts, normalisation), parts):
            term = layout.unblocks(xp, xp.matmul(w, part.values), part.g)
            acc = term if acc is None else acc + term
        out[s:e, ...] = acc
    return out


def _token_groups(layout, g: int) -> np.ndarray:
    """(n,) index of the group (block) of size ``g`` that holds each token."""
    ids = np.zeros((layout.n, 1), dtype=np.int64)
    blocks = layout.blocks(np, ids, g) + np.arange(layout.count(g))[:, None, None]
    return layout.unblocks(np, blocks, g)[:, 0]


#: Peak (n, n) arrays of :func:`fma_matrix` / :func:`fma_matrix_2d` (the one-hot near field, the far-field
#: coefficients and their masked copies, the sum): tracemalloc measured 7.1-8.1 n^2 float64 (1-D, n = 1000 to
#: 4096, r = 7 to 64, p = 1 and 2, causal, joint) and 13.4-15.9 (2-D, W = 32 to 56, r = 4 and 8).
MATRIX_COPIES_1D = 9
MATRIX_COPIES_2D = 17


def _check_matrix_memory(q, copies: int, name: str, instead: str) -> None:
    """Refuse the dense (n, n) FMA matrix before building it when its peak would not fit."""
    n = int(q.shape[0])
    check_pairwise_memory(n, n, bytes_per_pair=copies * np.dtype(dtype_name(q.dtype)).itemsize, what=f"{name}'s "
                          "dense attention matrix and its temporaries", like=q,
                          alternative=f"apply the attention without the matrix, {instead}")


def _matrix(layout, q, k, *, r, p, normalisation, causal, weights, downsample_queries):
    xp, parts = _parts(layout, q, k, None, r=r, p=p, weights=weights, causal=causal,
                       downsample_queries=downsample_queries, normalisation=normalisation)
    n = layout.n
    dtype = q.dtype
    tok = _put(xp, np.arange(n).reshape(1, 1, n), q)
    weights_all = _normalised(xp, layout, parts, normalisation)
    # near field: neighbour key ids per block, one-hot against the token axis
    key_ids = layout.neighbours(np, np.arange(n)[:, None] + 1, r)[:, :, 0] - 1  # (B0, s0)
    onehot = xp.astype(_put(xp, key_ids[:, :, None], q) == tok, dtype)  # (B0, s0, n)
    a = layout.unblocks(xp, xp.matmul(weights_all[0], onehot), r)
    for w, part in zip(weights_all[1:], parts[1:]):
        g = part.g
        slots = part.idx.shape[1]
        width = w.shape[2] // slots  # p
        own = _put(xp, _token_groups(layout, g).reshape(1, 1, n), q)
        pvt = xp.permute_dims(part.pv_tokens, (1, 0))  # (p, n)
        for s in range(slots):
            coef = xp.matmul(w[:, :, s * width:(s + 1) * width], pvt)  # (B, t, n)
            hit = _put(xp, part.idx[:, s:s + 1, None], q) == own  # (B, 1, n)
            a = a + layout.unblocks(xp, xp.where(hit, coef, xp.zeros_like(coef)), g)
    return a


def _prepare(q, k, v, r, p, normalisation, causal, downsample_queries, dim):
    xp = _check_arrays(q, k, v)
    p = _check_options(p, normalisation, causal, downsample_queries)
    n = q.shape[0]
    if dim == 1:
        n, r = _size_and_cell(n, r)
        layout = _Layout1D(n)
    else:
        width = math.isqrt(n)
        if width * width != n:
            raise InputError(f"q must have W^2 rows (a W x W image flattened row-major), got n = {n}")
        width, r = _size_and_cell(width, r, size_name="width")
        layout = _Layout2D(width)
    if p > r ** dim:
        raise InputError(f"p must be an integer in [1, {r ** dim}] (at most the smallest group size), got {p}")
    return xp, layout, r, p


def fma_attention(q, k, v, *, r, p=1, normalisation="per-level", causal=False, weights=None,
                  downsample_queries=False):
    """Fast Multipole Attention in 1-D: eq. (4) with the group summaries of eq. (3).

    ``x̂_i = sum_{j in N(i)} alpha_ij v_j + sum_l sum_{G in G_l(i)} sum_s beta^l_{i,G,s} v̄_G^(s)``
    with logits ``q_i . k_j / sqrt(d)`` (near) and ``q_i . k̄_G^(s) / sqrt(d)`` (far).

    Parameters
    ----------
    q, k : array of shape (n, d)
        Queries and keys (finite, float32 or float64).
    v : array of shape (n, dv)
        Values.
    r : int
        Base cell size, in ``[1, n]``; ``L = ceil(log2(n / r))`` levels.
    p : int
        Rank of the group summaries (``p`` representatives per group), in ``[1, r]``.
    normalisation : {"per-level", "joint"}
        ``"per-level"``: the paper's eqs. (4)/(6), a softmax over ``N(i)`` and a separate one per
        level (rows sum to ``1 +`` the number of non-empty levels). ``"joint"``: one softmax over
        ``N(i)`` and all representatives, each logit corrected by ``+ log m`` (``m`` = tokens the
        representative stands for: ``|G|`` for ``p = 1``, ``|G| / p`` with explicit ``weights``).
    causal : bool
        Autoregressive masking: groups after ``i`` are dropped wholesale, near keys ``j > i`` masked.
    weights : sequence of (pi_k, pi_v) pairs, optional
        Aggregation vectors of levels ``1 .. L-1``, each of shape ``(p, r 2^(l-1))`` (eq. 3;
        the rank-``p`` basis of "Coarse level rank p"); a group cut by the end of the sequence
        uses the leading entries. Default: the group mean (``p = 1``) or the means of ``p`` equal
        sub-blocks, with ``m`` the number of tokens averaged.
    downsample_queries : bool
        FMA-linear: at each far level a block's queries are replaced by their mean (O(n) scores).
        With ``causal=True`` the pooled query mixes later queries of the same block into earlier
        outputs.

    Returns
    -------
    array of shape (n, dv)
        Same namespace, device and dtype as ``q``.

    Notes
    -----
    Computed in chunks of ``r 2^a`` queries (about :data:`_CHUNK_SCORES` near-field scores each): the
    extra memory is the output, one chunk's scores and the group summaries of every level; inside the
    loop over chunks nothing is copied between host and device and nothing waits for the device.

    Raises
    ------
    InputError
        ``r`` outside ``[1, n]``, ``p`` outside ``[1, r]``, mismatched shapes or dtypes, non-finite
        ``q``/``k``/``v``/``weights``, an unknown ``normalisation``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.standard_normal((2, 64, 8))
    >>> ones = np.ones((64, 1))
    >>> float(fma_attention(q, k, ones, r=4)[0, 0])                         # 1 + (L - 1) = 4
    4.0
    >>> round(float(fma_attention(q, k, ones, r=4, normalisation="joint")[0, 0]), 12)
    1.0
    """
    xp, layout, r, p = _prepare(q, k, v, r, p, normalisation, causal, downsample_queries, 1)
    return _attention_1d(q, k, v, r=r, p=p, normalisation=normalisation, causal=bool(causal), weights=weights,
                         downsample_queries=bool(downsample_queries))


def fma_matrix(q, k, *, r, p=1, normalisation="per-level", causal=False, weights=None, downsample_queries=False):
    """The effective (n, n) attention matrix ``Â`` of 1-D FMA (its H-matrix form, FMA-7).

    ``Â_ij = alpha_ij`` for ``j in N(i)`` and ``Â_ij = sum_s beta^l_{i,G,s} pi^v(s)_{j - start(G)}``
    for ``j`` in a far group ``G``, so ``fma_attention(q, k, v) == fma_matrix(q, k) @ v``; every far
    block (the queries sharing ``G``, times ``G``) has rank at most ``p``. Parameters as in
    :func:`fma_attention`. Builds an ``n x n`` array: meant for small ``n``.

    Returns
    -------
    array of shape (n, n)
    """
    xp, layout, r, p = _prepare(q, k, None, r, p, normalisation, causal, downsample_queries, 1)
    _check_matrix_memory(q, MATRIX_COPIES_1D, "fma_matrix", "fma_attention(q, k, v)")
    return _matrix(layout, q, k, r=r, p=p, normalisation=normalisation, causal=bool(causal), weights=weights,
                   downsample_queries=bool(downsample_queries))


def fma_attention_2d(q, k, v, *, r, p=1, normalisation="per-level", weights=None, downsample_queries=False):
    """Fast Multipole Attention on a ``W x W`` quadtree: eq. (6) with the summaries of eq. (5).

    Tokens are the pixels of a square image flattened row-major (pixel ``(x, y)`` is row
    ``x W + y``); the near field is the 3 x 3 base cells of side ``r`` around the pixel's cell, and
    level ``l`` adds up to 27 squares of side ``r 2^(l-1)`` (clipped at the border when ``r 2^(l-1)``
    does not divide ``W``).

    Parameters
    ----------
    q, k : array of shape (W^2, d)
        Queries and keys.
    v : array of shape (W^2, dv)
        Values.
    r : int
        Base cell side, in ``[1, W]``; ``L = ceil(log2(W / r))``.
    p : int
        Rank of the square summaries, in ``[1, r^2]``.
    normalisation : {"per-level", "joint"}
        As in :func:`fma_attention`.
    weights : sequence of (Pi_k, Pi_v) pairs, optional
        Per level ``1 .. L-1`` kernels of shape ``(p, g, g)``, ``g = r 2^(l-1)``; the paper's
        separable kernel is ``Pi = pi^(x) ⊗ pi^(y)`` (``numpy.einsum("si,sj->sij", px, py)``).
        Default: the square mean (``p = 1``) or the means of ``p`` equal row strips.
    downsample_queries : bool
        Pool the queries of each square at each far level (linear cost).

    Returns
    -------
    array of shape (W^2, dv)
    """
    xp, layout, r, p = _prepare(q, k, v, r, p, normalisation, False, downsample_queries, 2)
    return _attention(layout, q, k, v, r=r, p=p, normalisation=normalisation, causal=False, weights=weights,
                      downsample_queries=bool(downsample_queries))


def fma_matrix_2d(q, k, *, r, p=1, normalisation="per-level", weights=None, downsample_queries=False):
    """The effective (W^2, W^2) attention matrix of 2-D FMA; ``fma_attention_2d(q, k, v) == Â @ v``.

    Parameters as in :func:`fma_attention_2d`. Builds an ``n x n`` array: meant for small images.

    Returns
    -------
    array of shape (W^2, W^2)
    """
    xp, layout, r, p = _prepare(q, k, None, r, p, normalisation, False, downsample_queries, 2)
    _check_matrix_memory(q, MATRIX_COPIES_2D, "fma_matrix_2d", "fma_attention_2d(q, k, v)")
    return _matrix(layout, q, k, r=r, p=p, normalisation=normalisation, causal=False, weights=weights,
                   downsample_queries=bool(downsample_queries))
