"""Shortest paths on the attention graph (or any weighted graph), with the number of hops on each path.

FNA ("Fractional neural attention", section "Mechanistic explanation", Figs. 5c-5e) reads an
attention matrix ``A`` as a directed graph: token i -> token j with edge weight ``1 / A[i, j]``
("strongly attending tokens are closer"; zero attention = no edge). The claim under test (ledger
FNA-18) is about the number of hops on the weighted shortest paths, so :func:`shortest_paths`
returns both the path lengths and the hop counts. The same function takes a general weight matrix
(``weight="given"``, the entries are the edge lengths, as ``scipy.sparse.csgraph`` reads them), dense
or scipy.sparse, with csgraph's ``directed``, ``indices``, ``limit`` and ``unweighted``.

Algorithms: on the host (NumPy or scipy.sparse input) ``scipy.sparse.csgraph``: Dijkstra from every
source on sparse graphs and Floyd-Warshall on dense ones, chosen by the edge density and the size
(:func:`floyd_warshall_from_density`; the crossover was measured, see its docstring), Johnson when
some lengths are negative. For a dense input of another namespace (CuPy, array_api_strict) a blocked
min-plus Floyd-Warshall written with the input's own array namespace (:func:`min_plus_floyd_warshall`):
a CuPy array stays on the GPU, lengths, predecessors and hop counts included. The hop counts are
computed from the predecessor matrix by pointer doubling (no loop over pairs; on the host on
cache-sized blocks of rows, or on the reachable pairs only when few are reachable). networkx is used
only by :func:`to_networkx` (interoperability) and as the test oracle, never as the engine.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from graphs._inputs import check_flag, input_kind, sparse_csr, sparse_stochastic
from spectral.floor.backend import array_namespace, copy_of, creation_device, from_numpy, is_cupy_array, to_numpy
from spectral.floor.display import array_summary, result_repr
from spectral.floor.memory import check_memory, memory_device
from spectral.scores import check_row_stochastic
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = [
    "MIN_PLUS_BYTES_PER_ENTRY",
    "METHODS",
    "ShortestPaths",
    "WEIGHTS",
    "edge_weights",
    "hops_from_predecessors",
    "min_plus_floyd_warshall",
    "path",
    "shortest_paths",
    "to_networkx",
]

WEIGHTS = ("inverse", "neg-log", "given")
METHODS = ("auto", "dijkstra", "floyd-warshall", "johnson", "min-plus")

#: Peak bytes per matrix entry of :func:`shortest_paths` on the host (n x n): csgraph's outputs (float64
#: lengths, int32 predecessors; Floyd-Warshall computes the lengths in the float64 weights), the
#: edge mask, the int64 hops and predecessors, and the hop workspace (cache-sized row blocks, or
#: an intp slot per pair when at most 1/4 of the pairs are reachable); tracemalloc measured 28.2-30.0
#: (Floyd-Warshall; Dijkstra on sparse graphs) and 32.0 (Dijkstra on the complete graph: its CSR
#: copy) bytes per entry at n = 1000 and 2000, densities 0.001, 0.01, 0.1 and 1. With ``indices`` on a
#: dense input the graph building (mask and CSR arrays, O(n^2)) stays within the same bound.
PEAK_BYTES_PER_ENTRY = 36
#: Bytes per stored entry of a scipy.sparse input on the host (its canonical float64 CSR copy, the
#: edge mask and weights, csgraph's own copy): added to ``PEAK_BYTES_PER_ENTRY`` per output entry.
#: tracemalloc, 3 sources, n = 300-1000: 23-38 bytes per edge at density 0.01, 48.6-48.9 at density 1.
SPARSE_BYTES_PER_EDGE = 56
#: Peak bytes per n x n entry of the min-plus path (lengths, predecessors, the hop count's doubling),
#: plus two product workspaces: tracemalloc on NumPy measured 40.0-40.1 (n = 600-1500); 42 leaves 5 %.
MIN_PLUS_BYTES_PER_ENTRY = 42
#: Bytes of one (rows, n, block) temporary of the min-plus products, by where the arrays live: on the
#: host (NumPy, array_api_strict) cache-sized, on a GPU (CuPy) large, so that each product is a few
#: kernel launches (the product loop makes about ``8 n^3 / workspace`` chunk iterations).
MIN_PLUS_WORKSPACE_BYTES = {"host": 4 << 20, "gpu": 1 << 30}
#: Pivot-block width of the min-plus Floyd-Warshall. Host: 128 (NumPy, n = 1000, one BLAS thread, a
#: loaded 2-core machine: block 64 / 128 / 256 took 2.2-3.0 / 1.1-2.0 / 1.0-1.4 s against csgraph's
#: Floyd-Warshall 0.8-1.2 s in the same runs). GPU: 256, not yet measured on a device (the
#: benchmark's ``--device`` run reports it).
MIN_PLUS_BLOCK = {"host": 128, "gpu": 256}


@dataclasses.dataclass(frozen=True, repr=False)
class ShortestPaths:
    """Weighted shortest paths from every source (or the given ``sources``) of a graph.

    Attributes
    ----------
    lengths : array of shape (m, n)
        ``lengths[k, j]``: weight of the shortest directed path ``sources[k] -> j`` (0 at the source,
        ``inf`` when j is unreachable or farther than ``limit``). m = n and ``sources[k] = k`` for
        all pairs.
    hops : array of int, shape (m, n)
        Number of edges on that path (0 at the source, -1 when unreachable).
    predecessors : array of int, shape (m, n)
        ``predecessors[k, j]``: the node before j on the path from ``sources[k]`` (-1 at the source
        and when unreachable), as ``scipy.sparse.csgraph.shortest_path`` returns it (-9999 -> -1).
    weight : str
        The edge weight used (``"inverse"``: ``1 / A_ij``; ``"neg-log"``: ``-log A_ij``;
        ``"given"``: ``A_ij``), and hops count as lengths when ``unweighted``.
    sources : numpy array of int64, shape (m,), or None
        The source of each row (``indices``); None for all pairs (row k is node k).
    method : str
        The algorithm that ran: ``"dijkstra"``, ``"floyd-warshall"``, ``"johnson"`` or ``"min-plus"``.
    """

    lengths: Any
    hops: Any
    predecessors: Any
    weight: str
    sources: Any = None
    method: str = ""

    def __repr__(self) -> str:
        return result_repr(self, n=int(self.lengths.shape[1]), weight=repr(self.weight),
                           mean_hops=f"{self.mean_hops():.4g}", max_hops=self.max_hops(),
                           lengths=array_summary(self.lengths))

    def source_of_rows(self) -> np.ndarray:
        """The source node of each row (host int64): ``sources``, or ``0..n-1`` for all pairs."""
        if self.sources is not None:
            return np.asarray(self.sources, dtype=np.int64)
        return np.arange(int(self.lengths.shape[0]), dtype=np.int64)

    def mean_hops(self, *, off_diagonal: bool = True) -> float:
        """Mean hop count over reachable (source, target) pairs (source != target by default)."""
        h = to_numpy(self.hops)
        mask = h >= 0
        if off_diagonal:
            mask[np.arange(h.shape[0]), self.source_of_rows()] = False
        return float(h[mask].mean()) if mask.any() else float("nan")

    def max_hops(self) -> int:
        """Largest hop count over reachable pairs."""
        return int(to_numpy(self.hops).max())


# ----------------------------------------------------------------------------------------- inputs


def _unmasked(A):
    """A NumPy masked array with its masked entries set to 0 (no edge, as csgraph reads a masked entry)."""
    return A.filled(0) if isinstance(A, np.ma.MaskedArray) else A


def _check_indices(indices, n: int, name: str = "indices"):
    """``indices`` (called ``name`` in messages) as a host int64 array of shape (m,) in [0, n), or None."""
    if indices is None:
        return None
    if isinstance(indices, (bool, np.bool_)):
        raise InputError(f"{name} must be a node index or a 1-D sequence of node indices in [0, {n - 1}], "
                         f"got {indices!r}")
    idx = np.asarray(to_numpy(indices) if hasattr(indices, "shape") else indices)
    if idx.ndim == 0:
        idx = idx.reshape(1)
    if idx.ndim != 1 or idx.size == 0 or not (np.issubdtype(idx.dtype, np.integer)):
        raise InputError(f"{name} must be a node index or a non-empty 1-D sequence of integer node indices in "
                         f"[0, {n - 1}], got {indices!r}")
    if idx.min() < 0 or idx.max() >= n:
        raise InputError(f"{name} must be node indices in [0, {n - 1}], got range [{idx.min()}, {idx.max()}]")
    return idx.astype(np.int64)


def _check_limit(limit):
    """``limit`` as a float (None and inf: no limit -> None)."""
    if limit is None:
        return None
    value = check_real("limit", limit, low=0.0, finite=False)
    return None if math.isinf(value) else value


def _host_graph(A, kind: str, weight: str, unweighted: bool):
    """Edges of ``A`` on the host: ``(a, present, csr, info)``.

    Dense input: ``a`` (float64) and ``present`` (edge mask, diagonal off); ``csr`` None. Sparse input: ``csr``, a canonical CSR of
    the edge lengths with the diagonal removed (explicit zero lengths kept); ``a``/``present`` None.
    ``info``: ``{"zero": any zero length, "negative": any negative length, "edges": E}``.
    """
    if kind == "sparse":
        g = sparse_stochastic(A) if weight != "given" else sparse_csr(A)
        if weight == "given":
            _check_given_values(g.data, g.diagonal())
            keep = ~np.isposinf(g.data)  # +inf: no edge
        else:
            keep = g.data > 0  # stored zeros are zero attention: no edge
        rows = np.repeat(np.arange(g.shape[0]), np.diff(g.indptr))
        keep &= g.indices != rows
        from scipy import sparse

        data = g.data[keep]
        csr = sparse.csr_array((np.ones_like(data) if unweighted else
                                (data if weight == "given" else _weight_values(data, weight)),
                                g.indices[keep], np.r_[0, np.cumsum(np.bincount(rows[keep], minlength=g.shape[0]))]),
                               shape=g.shape)
        return None, None, csr, {"zero": bool(np.any(csr.data == 0)), "negative": bool(np.any(csr.data < 0)),
                                 "edges": int(csr.nnz)}
    if weight == "given":
        a = np.asarray(to_numpy(A))
        if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) or np.iscomplexobj(a):
            raise InputError(f"A must have real entries for weight='given', got dtype {a.dtype}")
        a = np.asarray(a, dtype=np.float64)
        _check_given_values(a, np.diagonal(a))
        present = (a != 0) & ~np.isposinf(a)  # csgraph's dense convention: 0 and inf are no edge
    else:
        check_row_stochastic(A)
        a = np.asarray(to_numpy(A), dtype=np.float64)
        present = a > 0
    np.fill_diagonal(present, False)
    if unweighted:
        info = {"zero": False, "negative": False}
    elif weight == "given":
        info = {"zero": False, "negative": bool(np.any(a[present] < 0))}
    else:
        # -log A_ij = 0 for a one-hot row (A_ij = 1): an edge of length 0
        info = {"zero": weight == "neg-log" and bool(np.any(a[present] == 1.0)), "negative": False}
    info["edges"] = int(np.count_nonzero(present))
    return a, present, None, info


def _check_given_values(values: np.ndarray, diagonal: np.ndarray) -> None:
    """Edge lengths of ``weight="given"``: no NaN, no -inf, no negative self-loop (a negative cycle)."""
    if values.size and np.isnan(values).any():
        raise InputError("A must not contain NaN for weight='given' (a missing edge is 0 or inf)")
    if values.size and np.isneginf(values).any():
        raise InputError("A must not contain -inf for weight='given' (edge lengths are finite; inf is no edge)")
    if diagonal.size and diagonal.min() < 0:
        i = int(np.argmin(diagonal))
        raise InputError(f"A has a negative cycle (the self-loop A[{i}, {i}] = {diagonal[i]:g} < 0): "
                         "shortest paths are unbounded")


def _weight_values(values: np.ndarray, weight: str) -> np.ndarray:
    """Edge weights ``1 / A_ij`` or ``-log A_ij`` of positive attention values (new array)."""
    if weight == "inverse":
        return np.divide(1.0, values)
    out = np.log(values)
    return np.negative(out, out=out)


def _weights(a: np.ndarray, present: np.ndarray, weight: str, unweighted: bool = False) -> np.ndarray:
    """Dense host weights of a checked float64 ``a``: ``inf`` off ``present`` (no edge, diagonal)."""
    w = np.full(a.shape, np.inf)
    if unweighted:
        w[present] = 1.0
    elif weight == "inverse":
        np.divide(1.0, a, out=w, where=present)
    elif weight == "neg-log":
        np.log(a, out=w, where=present)
        np.negative(w, out=w, where=present)
    else:
        np.copyto(w, a, where=present)
    return w


def edge_weights(A, *, weight: str = "inverse") -> np.ndarray:
    """Host array of edge weights, ``inf`` where there is no edge and on the diagonal.

    ``"inverse"``: ``W_ij = 1 / A_ij`` (FNA Fig. 5c, "edge weights equal to the reciprocal of
    attention weights"). ``"neg-log"``: ``W_ij = -log A_ij`` (the shortest path is then the most
    probable walk; an alternative reading, not the paper's). For these ``A`` is row-stochastic and
    ``A_ij = 0`` is no edge. ``"given"``: ``W_ij = A_ij``, the entries are the lengths (dense: 0 and
    inf are no edge; sparse: stored entries are edges, a stored zero an edge of length 0).

    Parameters
    ----------
    A : array of shape (n, n) or scipy.sparse array/matrix
        Attention (or, ``weight="given"``, weight) matrix; a sparse one is densified (n x n float64).
    weight : {"inverse", "neg-log", "given"}
    """
    check_option("weight", weight, WEIGHTS)
    kind = input_kind(A)
    a, present, csr, _ = _host_graph(_unmasked(A), kind, weight, False)
    if csr is not None:
        _check_memory_bytes(16 * csr.shape[0] ** 2, None, what=f"dense weights of the sparse A (n = {csr.shape[0]})",
                            alternative="use shortest_paths on the sparse A directly", device="cpu")
        w = np.full(csr.shape, np.inf)
        coo = csr.tocoo()
        w[coo.row, coo.col] = coo.data
        return w
    return _weights(a, present, weight)


# ------------------------------------------------------------------------------------- hop counts


def hops_from_predecessors(predecessors, sources=None) -> np.ndarray:
    """Hop counts from a shortest-path predecessor matrix, vectorised by pointer doubling.

    Parameters
    ----------
    predecessors : array of int, shape (n, n), or (m, n) with ``sources``
        ``predecessors[k, j]``: node before j on the path from source k (or ``sources[k]``);
        negative at the source and for unreachable j (scipy uses -9999).
    sources : array of int, shape (m,), optional
        The source of each row, as csgraph's ``indices`` (default: row k is node k, square input).

    Returns
    -------
    numpy array of int64, shape (m, n)
        Hops on each path (0 at the source, -1 where unreachable).

    Notes
    -----
    Each pair (i, j) keeps a pointer ``p`` (initially the predecessor of j, or i itself at the
    root) and a partial count ``h`` (1 for a real edge, 0 at the root). One doubling step sets
    ``h <- h + h[i, p]`` and ``p <- p[i, p]`` simultaneously for every pair, so after
    ``ceil(log2(max hops)) + 1`` steps every pointer reaches the root and ``h`` is the hop count:
    O(n^2 log(max hops)) work in whole-array operations, no loop over pairs. Pointers never leave
    their row, so the rows are processed in blocks of about ``2^15`` pairs whose workspace stays
    in the processor's cache (about 1.5x faster than whole-matrix passes at n = 1000-2000).
    """
    pred = np.asarray(to_numpy(predecessors))
    if not (np.issubdtype(pred.dtype, np.integer) or pred.dtype == np.bool_):
        # a float matrix (a NaN among the indices, say) has no node index to follow
        nonfinite = " with NaN or inf entries" if pred.dtype.kind in "fc" and not np.all(np.isfinite(pred)) else ""
        raise InputError(f"predecessors must be an integer matrix of node indices (negative for none), got dtype "
                         f"{pred.dtype}{nonfinite}")
    if sources is None:
        if pred.ndim != 2 or pred.shape[0] != pred.shape[1]:
            raise InputError(f"predecessors must be a square (n, n) integer matrix, got shape {pred.shape}")
    elif pred.ndim != 2:
        raise InputError(f"predecessors must be an (m, n) integer matrix, got shape {pred.shape}")
    n = pred.shape[1]
    if pred.size and pred.max() >= n:
        raise InputError(f"predecessors entries must be node indices in [0, {n - 1}] or negative")
    src = None
    if sources is not None:
        src = _check_indices(sources, n, "sources")
        if src.size != pred.shape[0]:
            raise InputError(f"sources must have one entry per row of predecessors ({pred.shape[0]}), got {src.size}")
    return _hops_and_predecessors(pred, src)[0]


#: Pairs per block of rows in the hop count: 2^15 pairs take 20 bytes each of workspace (intp
#: pointers, their update, two int16 counters), 640 KiB, inside a 1-2 MiB L2 cache. Measured at
#: n = 1000 and 2000 (min of 7): 2^14-2^16 pairs all 1.3-1.6x faster than one block of all pairs.
_HOP_BLOCK_PAIRS = 1 << 15

#: The hop count runs on the reachable pairs only when they are fewer than 1 / 4 of all pairs.
#: Measured (min of 5, Dijkstra predecessors of the benchmark's top-k attention graphs): reachable
#: fraction 0.025 / 0.18 / 0.34 / 0.55 at n = 1000: 3.1 / 5.1 / 7.3 / 9.2 ms on the reachable pairs
#: against 9.3 / 7.4 / 7.1 / 6.7 ms in row blocks; at n = 2000, 0.028 / 0.18 / 0.39: 12 / 22 / 35 ms
#: against 38 / 25 / 25 ms (the slot lookup misses the cache at larger n).
_COMPACT_BELOW = 4


def _hops_and_predecessors(pred: np.ndarray, sources=None, *, compact: bool | None = None
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Hop counts (int64, -1 unreachable) and predecessors (int64, -1 for none) of a checked ``pred``.

    ``pred`` has shape (m, n); row k's source is ``sources[k]`` (default k, square ``pred``).

    The pointer doubling of :func:`hops_from_predecessors`, on the reachable pairs only when they are
    fewer than ``1 / _COMPACT_BELOW`` of all pairs (a sparse graph: most pairs unreachable) and else
    on blocks of rows (a pointer stays in its row), with the int64 predecessor output written in the
    same pass over each block. ``compact`` forces one way (tests).
    """
    m, n = pred.shape
    src = np.arange(m, dtype=np.int64) if sources is None else np.asarray(sources, dtype=np.int64)
    if compact is None:
        compact = _COMPACT_BELOW * int(np.count_nonzero(pred >= 0)) < m * n
    if compact:
        return _hops_of_reachable_pairs(pred, src)
    hops = np.empty((m, n), dtype=np.int64)
    pred_out = np.empty((m, n), dtype=np.int64)
    counter = _counter_dtype(n)
    rows = max(1, min(m, _HOP_BLOCK_PAIRS // max(n, 1)))
    # block layout: row r of the block at r (n + 1) + 1 + j, led by a sentinel at r (n + 1) with count
    # 0 that points to itself, so a missing predecessor (-1) points to its row's sentinel: the
    # pointers are one addition, with no masked select (masked selects cost 3-4x more here)
    width = n + 1
    lead = (np.arange(rows, dtype=np.intp) * width)[:, None]
    for start in range(0, m, rows):
        stop = min(m, start + rows)
        b = stop - start
        q = pred_out[start:stop]
        np.maximum(pred[start:stop], -1, out=q)  # the int64 output; scipy's -9999 -> -1
        pf = np.empty((b, width), dtype=np.intp)
        pf[:, :1] = lead[:b]
        np.add(q, lead[:b] + 1, out=pf[:, 1:])
        # counts: 1 per real edge, -1 (final) where unreachable (no pair points to an unreachable
        # one: it is nobody's predecessor; it points to the sentinel, so it keeps -1), 0 at the root
        # (i, i) and the sentinels
        hf = np.empty((b, width), dtype=counter)
        hf[:, 0] = 0
        body = hf[:, 1:]
        np.greater_equal(q, 0, out=body, casting="unsafe")  # 1 for a node, 0 for -1
        body *= 2
        body -= 1
        hf[np.arange(b), src[start:stop] + 1] = 0
        _pointer_doubling(hf.ravel(), pf.ravel())
        np.copyto(hops[start:stop], hf[:, 1:])
    return hops, pred_out


def _hops_of_reachable_pairs(pred: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_hops_and_predecessors` on the k reachable pairs (``pred[r, j] >= 0``) only.

    Each reachable pair gets a slot 0..k-1 (row-major), every root (r, src[r]) the extra slot k
    (count 0, pointing to itself); the doubling then runs on k + 1 entries instead of m n.
    """
    m, n = pred.shape
    reach = pred >= 0
    flat = np.flatnonzero(reach)
    k = flat.size
    row_start = np.repeat(np.arange(0, m * n, n, dtype=np.intp), np.count_nonzero(reach, axis=1))
    del reach
    slot = np.empty(m * n, dtype=np.intp)  # only the reachable pairs and the roots are written and read
    slot[flat] = np.arange(k, dtype=np.intp)
    slot[np.arange(m, dtype=np.intp) * n + src] = k
    pf = np.empty(k + 1, dtype=np.intp)
    np.take(slot, row_start + pred.ravel()[flat], out=pf[:k])  # slot of the pair (i, pred[i, j])
    pf[k] = k
    del slot, row_start
    hf = np.ones(k + 1, dtype=_counter_dtype(n))
    hf[k] = 0
    _pointer_doubling(hf, pf)
    hops = np.full((m, n), -1, dtype=np.int64)
    hops.ravel()[flat] = hf[:k]
    hops[np.arange(m), src] = 0
    pred_out = np.empty((m, n), dtype=np.int64)
    np.maximum(pred, -1, out=pred_out)  # scipy's -9999 -> -1
    return hops, pred_out


def _counter_dtype(n: int):
    """Smallest signed integer type for hop counts of an n-node graph (counts < n)."""
    return np.int16 if n < 2**15 else np.int32


def _pointer_doubling(hf: np.ndarray, pf: np.ndarray) -> None:
    """Add up ``hf`` in place along the pointers ``pf`` (used as workspace) until all reach their root.

    A root points to itself with count 0; one step sets ``hf <- hf + hf[pf]`` and ``pf <- pf[pf]``
    for every entry at once, so a path of h edges is summed after ``ceil(log2 h) + 1`` steps.
    """
    step, hop = np.empty_like(pf), np.empty_like(hf)
    for _ in range(64):  # 2^64 > any hop count
        np.take(hf, pf, out=hop, mode="wrap")  # indices are in range: "wrap" skips the bounds check (fastest)
        if not hop.any():  # every pointer is at its root (a non-root entry always counts >= 1 hop)
            return
        hf += hop  # hop holds the old counts: a simultaneous update
        np.take(pf, pf, out=step, mode="wrap")
        pf, step = step, pf
    raise InputError("predecessors contain a cycle (not a shortest-path tree)")  # pragma: no cover




def floyd_warshall_from_density(n, density) -> bool:
    """Whether Floyd-Warshall beats Dijkstra-from-every-source for ``n`` nodes at this edge density.

    Dijkstra costs O(n (E + n log n)), Floyd-Warshall O(n^3) with a small constant; the crossover
    density (fraction of the ``n (n - 1)`` possible edges) measured with ``scipy.sparse.csgraph`` on
    top-k sparsified dot-product attention graphs (weights ``1 / A_ij``, one BLAS thread, min of 3)
    is 0.10 at n = 250, 0.15 at 500, 0.20 at 1000 and 0.26 at 2000, i.e.
    ``0.2 + 0.053 log2(n / 1000)``; at the crossover both take the same time, and 1.2x apart at
    densities 0.1 around it, so the rule stays within 1.2x of the faster method. At density 1 and
    n = 1000 Floyd-Warshall takes 0.60 s, Dijkstra 2.05 s.
    """
    n = check_int("n", n, low=1)
    density = check_real("density", density, low=0.0, high=1.0)
    crossover = min(0.5, max(0.05, 0.2 + 0.053 * math.log2(max(n, 2) / 1000)))
    return density >= crossover


# ----------------------------------------------------------------------------------- the function


def shortest_paths(A, *, weight: str = "inverse", method: str = "auto", directed: bool = True, indices=None,
                   limit=None, unweighted: bool = False, max_bytes=None) -> ShortestPaths:
    """Weighted shortest paths and hop counts on the attention graph of ``A`` (or a weight matrix).

    Parameters
    ----------
    A : array of shape (n, n) or scipy.sparse array/matrix
        Any array namespace (NumPy, CuPy, array_api_strict), or a scipy.sparse array or matrix (csr,
        csc, coo, lil, ...). For ``weight="inverse"``/``"neg-log"`` a row-stochastic attention
        matrix: ``A[i, j] > 0`` is a directed edge i -> j (query i attends to key j); zeros (stored
        or not) are missing edges; the diagonal is ignored. For ``weight="given"`` a general weight
        matrix, read as ``scipy.sparse.csgraph`` reads it: the entries are the edge lengths; in a
        dense ``A`` 0, ``inf`` and masked entries (``numpy.ma``) are no edge; in a sparse ``A`` every stored entry is an edge, a
        stored 0 an edge of length 0 (csgraph's convention) and a stored ``inf`` no edge; NaN and
        ``-inf`` are refused. Negative lengths are supported (Johnson or Floyd-Warshall), a negative
        cycle is refused.
    weight : {"inverse", "neg-log", "given"}
        Edge lengths ``1 / A_ij`` (FNA, default), ``-log A_ij``, or ``A_ij`` itself.
    method : {"auto", "dijkstra", "floyd-warshall", "johnson", "min-plus"}
        ``"dijkstra"``, ``"floyd-warshall"``, ``"johnson"``: ``scipy.sparse.csgraph`` on the host.
        ``"min-plus"``: the blocked min-plus Floyd-Warshall of :func:`min_plus_floyd_warshall` in the
        input's namespace (a CuPy array stays on the GPU). ``"auto"``: a dense input that is not
        NumPy (CuPy, array_api_strict) takes ``"min-plus"``; otherwise Johnson when a length is
        negative, Dijkstra when ``indices`` or ``limit`` is given, else Dijkstra or Floyd-Warshall by
        edge density and size (:func:`floyd_warshall_from_density`). All give the same lengths, and
        the same hops wherever the shortest path is unique.
    directed : bool
        False: every edge can be followed both ways (the length of i -- j is the smaller of
        ``W_ij`` and ``W_ji``), as csgraph's ``directed=False``.
    indices : int or 1-D sequence of int, optional
        The sources: the results have one row per entry (repeats allowed), as csgraph's
        ``indices`` (default: every node, ``m = n``). Floyd-Warshall and min-plus compute all pairs
        and keep these rows.
    limit : float >= 0, optional
        Paths longer than ``limit`` are not followed: those pairs get ``inf``, hop count -1 and no
        predecessor, as csgraph's ``limit`` (a length equal to ``limit`` is kept). Needs nonnegative
        lengths. None or ``inf``: no limit.
    unweighted : bool
        Count hops: every edge has length 1, so ``lengths`` are the hop counts of the fewest-hop
        paths (csgraph's ``unweighted=True``).
    max_bytes : float, optional
        Memory limit in bytes for the whole request (default: the memory available now, of the GPU
        for a CuPy input on the min-plus path).

    Returns
    -------
    ShortestPaths
        ``lengths`` (float64), ``hops`` and ``predecessors`` (int64) of shape (m, n), in ``A``'s
        namespace (NumPy for a sparse ``A``), with the ``sources`` and the ``method`` that ran.

    Raises
    ------
    spectral.floor.validation.InputError
        ``A`` not an accepted type or not square; for the attention readings not finite, negative,
        or not row-stochastic (row sums within ``4 sqrt(eps)`` of 1); for ``"given"`` NaN, ``-inf``
        or a negative cycle; negative lengths with ``method="dijkstra"`` or with ``limit``; unknown
        ``weight`` or ``method``; ``indices`` out of range; ``limit`` negative.
    spectral.floor.memory.DenseMemoryError
        The outputs and their workspace would not fit (``PEAK_BYTES_PER_ENTRY`` bytes per output entry on
        the host, ``MIN_PLUS_BYTES_PER_ENTRY`` per n x n entry on the min-plus path): raised before anything
        of size n x n is allocated.

    Notes
    -----
    Host boundary: ``scipy.sparse.csgraph`` runs on the host. Dijkstra and Johnson get a CSR copy
    with explicit edge lengths, so zero lengths (``neg-log`` of a one-hot row, stored zeros of a
    sparse ``"given"`` A) are edges; csgraph's Floyd-Warshall reads a zero of a dense matrix as no
    edge, so it gets the CSR copy as well when there are zero lengths (the dense masked matrix
    otherwise, measured faster). The min-plus path never leaves the input's namespace (NumPy for a
    sparse ``A``, which it densifies).
    Cost: Dijkstra O(m (E + n log n)), Floyd-Warshall and min-plus O(n^3), Johnson O(n E + m (E + n log n));
    hops O(m n log(max hops)), on the R reachable pairs O(m n + R log(max hops)) when R < m n / 4.

    References
    ----------
    FNA section "Mechanistic explanation", Figs. 5c-5e; scipy.sparse.csgraph.shortest_path (the
    ``directed``, ``indices``, ``limit`` and ``unweighted`` conventions).

    Examples
    --------
    Three tokens that attend mostly to the next one (0 -> 1 -> 2 -> 0):

    >>> import numpy as np
    >>> from graphs import path, shortest_paths
    >>> A = np.array([[0.0, 0.9, 0.1], [0.1, 0.0, 0.9], [0.9, 0.1, 0.0]])
    >>> sp = shortest_paths(A)

    The direct edge 0 -> 2 weighs ``1 / 0.1 = 10``; going through token 1 costs
    ``1/0.9 + 1/0.9 = 2.22`` in two hops, so the shortest path takes the detour:

    >>> float(sp.lengths[0, 2]), int(sp.hops[0, 2])
    (2.2222222222222223, 2)
    >>> path(sp, 0, 2)
    [0, 1, 2]
    >>> sp.mean_hops(), sp.max_hops()
    (1.5, 2)

    A weight matrix as csgraph takes it (zeros are no edge), from two sources, within a limit:

    >>> W = np.array([[0, 3, 3, 0, 0], [0, 0, 0, 2, 4], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [2, 0, 0, 2, 0]])
    >>> r = shortest_paths(W, weight="given", indices=[0, 3], limit=5)
    >>> r.lengths.tolist()
    [[0.0, 3.0, 3.0, 5.0, inf], [1.0, 4.0, 4.0, 0.0, inf]]
    >>> r.hops.tolist(), path(r, 0, 3)
    ([[0, 1, 1, 2, -1], [1, 2, 2, 0, -1]], [0, 1, 3])

    Attention from a softmax of scores ``exp(x_i . x_j)`` on random tokens:

    >>> from spectral import dot_product_scores, row_normalize
    >>> x = np.random.default_rng(0).standard_normal((20, 4))
    >>> sp = shortest_paths(row_normalize(dot_product_scores(x)))
    >>> sp.hops.shape, bool((sp.hops[~np.eye(20, dtype=bool)] >= 1).all())
    ((20, 20), True)
    """
    check_option("weight", weight, WEIGHTS)
    check_option("method", method, METHODS)
    directed = check_flag("directed", directed)
    unweighted = check_flag("unweighted", unweighted)
    kind = input_kind(A)
    A = _unmasked(A)
    n = int(A.shape[0])
    idx = _check_indices(indices, n)
    limit = _check_limit(limit)
    if method == "auto" and kind == "array":
        method = "min-plus"
    m = n if idx is None else idx.size
    if method == "min-plus":
        need = MIN_PLUS_BYTES_PER_ENTRY * n * n + 2 * _workspace_bytes(A)
        _check_memory_bytes(need, max_bytes, device=memory_device(A),
                            what=f"min-plus shortest paths on n = {n} nodes (weights, lengths, predecessors, hops: "
                                 f"{MIN_PLUS_BYTES_PER_ENTRY} bytes per pair, and the product workspace)",
                            alternative="every path of the min-plus method stores the n x n lengths; on the host "
                                        "method='dijkstra' with indices= stores only the rows asked for")
        return _min_plus_paths(A, kind, weight=weight, directed=directed, idx=idx, limit=limit, unweighted=unweighted)
    all_pairs = idx is None or method == "floyd-warshall"
    rows = n if all_pairs else m
    need = PEAK_BYTES_PER_ENTRY * (n * n if kind != "sparse" else rows * n)
    if kind == "sparse":
        need += SPARSE_BYTES_PER_EDGE * int(A.nnz)
    elif kind == "array":
        need += 8 * n * n  # the host copy
    _check_memory_bytes(need, max_bytes, device="cpu",
                        what=f"shortest paths on n = {n} nodes from {m} sources (lengths, hops, predecessors and "
                             f"workspace: {PEAK_BYTES_PER_ENTRY} bytes per pair)",
                        alternative=("give fewer sources (indices=) to method='dijkstra' on a sparse A"
                                     if kind == "sparse" and all_pairs else
                                     "every algorithm here stores the outputs and, for a dense A, O(n^2) "
                                     "workspace, so only a smaller graph (or a sparse A with few indices) fits"))
    lengths, pred, used = _host_paths(A, kind, weight=weight, method=method, directed=directed, idx=idx,
                                      limit=limit, unweighted=unweighted)
    hops, pred = _hops_and_predecessors(pred, idx)
    like = None if kind == "sparse" else A
    out = (lengths, hops, pred) if like is None else tuple(from_numpy(x, like=like) for x in (lengths, hops, pred))
    return ShortestPaths(*out, weight, None if idx is None else idx, used)


def _check_memory_bytes(need, max_bytes, *, what, alternative, device) -> None:
    check_memory(need, max_bytes=max_bytes, what=what, alternative=alternative, device=device)


def _negative_cycle(exc) -> InputError:
    return InputError(f"A has a negative cycle: shortest paths are unbounded ({exc})")


def _host_paths(A, kind, *, weight, method, directed, idx, limit, unweighted):
    """csgraph on the host: ``(lengths (m, n) float64, predecessors (m, n) int32 with -9999, method)``."""
    from scipy import sparse
    from scipy.sparse.csgraph import NegativeCycleError, dijkstra, floyd_warshall, johnson

    a, present, csr, info = _host_graph(A, kind, weight, unweighted)
    n = int(A.shape[0])
    negative = info["negative"]
    if negative and limit is not None:
        raise InputError("limit needs nonnegative edge lengths (paths beyond it are cut as they grow); "
                         "this A has negative lengths")
    if negative and method == "dijkstra":
        raise InputError("method='dijkstra' needs nonnegative edge lengths; this A has negative lengths: use "
                         "method='johnson', 'floyd-warshall' or 'auto'")
    if method == "auto":
        dense = floyd_warshall_from_density(n, info["edges"] / max(n * (n - 1), 1))
        if negative:
            method = "floyd-warshall" if dense and idx is None else "johnson"
        elif idx is not None or limit is not None:
            method = "dijkstra"
        else:
            method = "floyd-warshall" if dense and not info["zero"] else "dijkstra"
    if method == "floyd-warshall" and csr is None and not info["zero"]:
        w = _weights(a, present, weight, unweighted)
        np.logical_not(present, out=present)  # now the missing edges
        graph = np.ma.masked_array(w, mask=present)  # masked: no edge; overwrite=True works in w itself
    else:
        graph = csr if csr is not None else _csr_from_mask(a, present, weight, unweighted)
        if csr is None:
            del present
    try:
        if method == "floyd-warshall":
            lengths, pred = floyd_warshall(graph, directed=directed, return_predecessors=True, overwrite=True)
            if idx is not None:
                lengths, pred = lengths[idx], pred[idx]
        elif method == "johnson":
            lengths, pred = johnson(graph, directed=directed, indices=idx, return_predecessors=True)
        else:
            lengths, pred = dijkstra(graph, directed=directed, indices=idx, return_predecessors=True,
                                     limit=np.inf if limit is None else limit)
    except NegativeCycleError as exc:
        raise _negative_cycle(exc) from None
    del graph
    lengths = np.asarray(lengths, dtype=np.float64).reshape(-1, n)
    pred = np.asarray(pred).reshape(-1, n)
    if limit is not None and method != "dijkstra":
        far = lengths > limit
        lengths[far] = np.inf
        pred[far] = -9999
    if sparse.issparse(lengths):  # pragma: no cover - csgraph returns dense arrays here
        lengths = lengths.toarray()
    return lengths, pred, method


def _csr_from_mask(a: np.ndarray, present: np.ndarray, weight: str, unweighted: bool):
    """CSR straight from the mask (rows in order: no sort), explicit zero lengths kept as edges.

    Only the E edge lengths are computed (the same float operations as :func:`edge_weights`).
    """
    from scipy import sparse

    n = a.shape[0]
    flat = np.flatnonzero(present)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.count_nonzero(present, axis=1), out=indptr[1:])
    data = a.ravel()[flat]
    columns = flat - np.repeat(np.arange(0, n * n, n, dtype=flat.dtype), np.diff(indptr))
    del flat
    if unweighted:
        values = np.ones_like(data)
    elif weight == "given":
        values = data
    else:
        values = _weight_values(data, weight)
    return sparse.csr_array((values, columns, indptr), shape=(n, n))


# ---------------------------------------------------------------------- min-plus, in any namespace


def _where(x) -> str:
    """``"gpu"`` for a CuPy array, ``"host"`` for anything else (the keys of the min-plus settings)."""
    return "gpu" if is_cupy_array(x) else "host"


def _workspace_bytes(A) -> int:
    return MIN_PLUS_WORKSPACE_BYTES[_where(A)]


def _device_kw(like) -> dict:
    """``device=`` for array creation like ``like`` (:func:`spectral.floor.backend.creation_device`)."""
    return creation_device(like)


# The bare CuPy module (what spectral.floor.backend.array_namespace gives for a CuPy array) predates some
# array-API names in CuPy 13 (``astype``, ``concat``, ``isdtype``, ``asarray(copy=)``); these use
# the standard name when the namespace has it and CuPy's NumPy-style spelling otherwise.

def _astype(x, dtype, xp):
    return xp.astype(x, dtype) if hasattr(xp, "astype") else x.astype(dtype)


def _concat(arrays, xp):
    return xp.concat(arrays, axis=1) if hasattr(xp, "concat") else xp.concatenate(arrays, axis=1)


def _copy(x, xp):
    return copy_of(x)


def _real_dtype(A, xp) -> bool:
    if hasattr(xp, "isdtype"):
        return bool(xp.isdtype(A.dtype, ("real floating", "integral", "bool")))
    return (np.issubdtype(A.dtype, np.number) and not np.issubdtype(A.dtype, np.complexfloating)) or A.dtype == np.bool_


def _device_weights(A, kind, *, weight, directed, unweighted):
    """``(W, xp)``: the n x n float64 lengths in the input's namespace, ``inf`` = no edge, 0 on the diagonal."""
    if kind == "sparse":
        a, present, csr, _ = _host_graph(A, kind, weight, unweighted)
        w = np.full(csr.shape, np.inf)
        coo = csr.tocoo()
        w[coo.row, coo.col] = coo.data
        W, xp = w, np
    else:
        xp = np if kind == "numpy" else array_namespace(A)
        n = A.shape[0]
        kw = _device_kw(A)
        idx = xp.arange(n, **kw)
        off = idx[:, None] != idx[None, :]
        if weight == "given":
            if not _real_dtype(A, xp):
                raise InputError(f"A must have real entries for weight='given', got dtype {A.dtype}")
            a = _astype(A, xp.float64, xp)
            if bool(xp.any(xp.isnan(a))):
                raise InputError("A must not contain NaN for weight='given' (a missing edge is 0 or inf)")
            if bool(xp.any(a == -xp.inf)):
                raise InputError("A must not contain -inf for weight='given' (edge lengths are finite; inf is no edge)")
            diag = xp.take(xp.reshape(a, (-1,)), idx * (n + 1))
            if bool(xp.any(diag < 0)):
                i = int(to_numpy(xp.argmin(diag)))
                raise InputError(f"A has a negative cycle (the self-loop A[{i}, {i}] < 0): shortest paths are unbounded")
            present = (a != 0) & (a != xp.inf) & off
            W = xp.where(present, xp.ones_like(a) if unweighted else a, xp.inf)
        else:
            check_row_stochastic(A)
            a = _astype(A, xp.float64, xp)
            present = (a > 0) & off
            safe = xp.where(present, a, 1.0)
            if unweighted:
                W = xp.where(present, xp.ones_like(a), xp.inf)
            elif weight == "inverse":
                W = xp.where(present, 1.0 / safe, xp.inf)
            else:
                W = xp.where(present, -xp.log(safe), xp.inf)
            del safe
        del a, present
    if not directed:
        W = xp.minimum(W, W.T)
    n = W.shape[0]
    kw = _device_kw(W)
    idx = xp.arange(n, **kw)
    W = xp.where(idx[:, None] == idx[None, :], 0.0, W)
    return W, xp


def min_plus_floyd_warshall(W, *, block: int | None = None, workspace_bytes: int | None = None,
                            overwrite: bool = False):
    """All-pairs shortest paths by a blocked min-plus Floyd-Warshall in the namespace of ``W``.

    Parameters
    ----------
    W : array of shape (n, n), float64
        Edge lengths (``inf``: no edge; the diagonal is the length of the empty path, normally 0), any
        array namespace (NumPy, CuPy, array_api_strict): every operation is an array-API call on
        ``W``'s namespace (slicing, ``where``, ``argmin``, ``take``, ``reshape``), so a CuPy ``W`` is
        computed on the GPU.
    block : int, optional
        Pivot-block width b (default :data:`MIN_PLUS_BLOCK`: 128 on the host, 256 on a GPU).
    workspace_bytes : int, optional
        Bytes of one (rows, n, b) temporary of a min-plus product (default
        :data:`MIN_PLUS_WORKSPACE_BYTES`: 4 MiB on the host, 1 GiB on a GPU).
    overwrite : bool
        Compute the lengths in ``W`` itself (no n x n copy), as csgraph's ``overwrite``; ``W`` then
        holds the lengths afterwards.

    Returns
    -------
    (lengths, predecessors) : arrays of shape (n, n)
        float64 lengths (``inf`` unreachable) and int64 predecessors (-1 at the source and where
        unreachable; ``predecessors[i, j]`` is the node before j on the path from i), in ``W``'s
        namespace.

    Raises
    ------
    spectral.floor.validation.InputError
        ``W`` is not a square float64 matrix, it holds a NaN (a NaN length compares false, so the paths
        through that edge would be dropped while the others came back finite), or it has a negative cycle
        (a negative length on the diagonal of the result).

    Notes
    -----
    The vertices are taken in blocks K of b pivots. For each block: (1) the b x b block ``D[K, K]``
    is closed by b rank-one updates ``D <- min(D, D[:, k] + D[k, :])`` (classical Floyd-Warshall
    inside the block); (2) the rows K are relaxed through it, ``D[K, :] <- min(D[K, :], D[K, K] (x) D[K, :])``;
    (3) every other row is relaxed through the block, ``D[I, :] <- min(D[I, :], D[I, K] (x) D[K, :])``,
    where ``(x)`` is the min-plus product ``(L (x) R)_ij = min_k L_ik + R_kj``, computed as one
    broadcast sum of shape (rows, n, b) and an ``argmin`` over its last axis, in row chunks of
    ``workspace_bytes``. After block K, ``D[i, j]`` is the shortest path whose intermediate
    vertices are in the blocks processed so far (the invariant of Floyd-Warshall, kept because
    (1)-(2) close the paths from K and (3) extends every other row through K once), so after the
    last block it is the shortest path. Predecessors follow the argmin: when ``D[i, j]`` improves
    through pivot k, the node before j becomes the node before j on the path from k. Work O(n^3)
    in n/b + (n/b) (n / rows) array operations (instead of the n of the classical loop), memory
    two n x n arrays plus the workspace.

    References
    ----------
    Venkataraman, Sahni & Mukhopadhyaya (2003), "A blocked all-pairs shortest-paths algorithm",
    ACM J. Exp. Algorithmics 8; Katz & Kider (2008), "All-pairs shortest-paths for large graphs
    on the GPU".
    """
    xp = array_namespace(W)
    if len(W.shape) != 2 or W.shape[0] != W.shape[1] or W.dtype != xp.float64:
        raise InputError(f"W must be a square float64 matrix, got shape {tuple(W.shape)} and dtype {W.dtype}")
    if bool(xp.any(xp.isnan(W))):
        raise InputError("W must not contain NaN (inf is no edge)")
    key = _where(W)
    b = MIN_PLUS_BLOCK[key] if block is None else check_int("block", block, low=1)
    budget = MIN_PLUS_WORKSPACE_BYTES[key] if workspace_bytes is None else check_int("workspace_bytes",
                                                                                      workspace_bytes, low=1)
    n = W.shape[0]
    kw = _device_kw(W)
    D = W if check_flag("overwrite", overwrite) else _copy(W, xp)
    cols = xp.arange(n, dtype=xp.int64, **kw)
    rows = xp.broadcast_to(cols[:, None], (n, n))
    P = xp.where((D < xp.inf) & (rows != cols[None, :]), rows, -1)
    for k0 in range(0, n, b):
        k1 = min(n, k0 + b)
        _close_block(D, P, k0, k1, xp)
        _relax_rows(D, P, k0, k1, k0, k1, xp, budget)  # the pivot rows, through the closed block
        _relax_rows(D, P, 0, k0, k0, k1, xp, budget)
        _relax_rows(D, P, k1, n, k0, k1, xp, budget)
    diag = xp.take(xp.reshape(D, (-1,)), cols * (n + 1))
    if bool(xp.any(diag < 0)):
        i = int(to_numpy(xp.argmin(diag)))
        raise InputError(f"A has a negative cycle through node {i}: shortest paths are unbounded")
    return D, P


def _close_block(D, P, k0: int, k1: int, xp) -> None:
    """Floyd-Warshall inside the diagonal block ``D[k0:k1, k0:k1]`` (paths through its own vertices)."""
    Dk = D[k0:k1, k0:k1]
    Pk = P[k0:k1, k0:k1]
    for t in range(k1 - k0):
        cand = Dk[:, t:t + 1] + Dk[t:t + 1, :]
        better = cand < Dk
        Dk = xp.where(better, cand, Dk)
        Pk = xp.where(better, Pk[t:t + 1, :], Pk)
    D[k0:k1, k0:k1] = Dk
    P[k0:k1, k0:k1] = Pk


def _relax_rows(D, P, r0: int, r1: int, k0: int, k1: int, xp, budget: int) -> None:
    """``D[r, :] <- min(D[r, :], D[r, K] (x) D[K, :])`` for rows r0..r1, K = k0..k1, with predecessors."""
    if r1 <= r0:
        return
    n = D.shape[1]
    b = k1 - k0
    # (n, b), laid out row-major (a reshape through 1-D is a C-order copy in every namespace): the sum
    # below is then row-major too and the argmin runs over its contiguous last axis (NumPy: 1.9 ns per
    # entry, against 20 ns when the transposed view makes the sum column-major)
    right_t = xp.reshape(xp.reshape(D[k0:k1, :].T, (-1,)), (n, b))
    pivot_pred = xp.reshape(P[k0:k1, :], (-1,))
    chunk = max(1, budget // (8 * n * b))
    kw = _device_kw(D)
    cols = xp.arange(n, dtype=xp.int64, **kw)
    for s in range(r0, r1, chunk):
        e = min(r1, s + chunk)
        left = D[s:e, k0:k1]  # (r, b)
        T = left[:, None, :] + right_t[None, :, :]  # (r, n, b)
        k = xp.argmin(T, axis=2)  # (r, n)
        r = e - s
        flat = (xp.arange(r, dtype=xp.int64, **kw)[:, None] * n + cols[None, :]) * b + k
        best = xp.reshape(xp.take(xp.reshape(T, (-1,)), xp.reshape(flat, (-1,))), (r, n))
        del T, flat
        cur = D[s:e, :]
        better = best < cur
        D[s:e, :] = xp.where(better, best, cur)
        via = xp.reshape(xp.take(pivot_pred, xp.reshape(k * n + cols[None, :], (-1,))), (r, n))
        P[s:e, :] = xp.where(better, via, P[s:e, :])


def _xp_hops(P, src, xp):
    """Hop counts (int64, -1 unreachable) from predecessors ``P`` (m, n) in ``P``'s namespace.

    The pointer doubling of :func:`hops_from_predecessors` written with array-API calls: row r of the
    flat layout at ``r (n + 1)`` is a sentinel (count 0, pointing to itself), followed by the n pairs;
    a pair points to the pair of its predecessor (or its row's sentinel), its count is 1 (-1 when
    unreachable, 0 at the source). Each step adds the count of the target and jumps the pointer to the
    target's target: ``ceil(log2(max hops)) + 1`` steps.
    """
    m, n = P.shape
    w = n + 1
    kw = _device_kw(P)
    itype = xp.int32 if m * w < 2**31 else xp.int64
    base = xp.arange(m, dtype=itype, **kw)[:, None] * w
    reach = P >= 0
    body_p = xp.where(reach, _astype(P, itype, xp) + 1, 0) + base
    body_h = _astype(reach, itype, xp) * 2 - 1  # 1 for a real edge, -1 where unreachable
    body_h = xp.where(xp.arange(n, dtype=xp.int64, **kw)[None, :] == src[:, None], 0, body_h)
    pf = xp.reshape(_concat([base, body_p], xp), (-1,))
    hf = xp.reshape(_concat([xp.zeros((m, 1), dtype=itype, **kw), body_h], xp), (-1,))
    del reach, body_p, body_h
    for _ in range(64):
        hop = xp.take(hf, pf)
        if not bool(xp.any(hop != 0)):
            break
        hf = hf + hop
        pf = xp.take(pf, pf)
    else:  # pragma: no cover - a shortest-path tree has no cycle
        raise InputError("predecessors contain a cycle (not a shortest-path tree)")
    return _astype(xp.reshape(hf, (m, w))[:, 1:], xp.int64, xp)


def _min_plus_paths(A, kind, *, weight, directed, idx, limit, unweighted) -> ShortestPaths:
    W, xp = _device_weights(A, kind, weight=weight, directed=directed, unweighted=unweighted)
    if limit is not None and bool(xp.any(W < 0)):
        raise InputError("limit needs nonnegative edge lengths (paths beyond it are cut as they grow); "
                         "this A has negative lengths")
    D, P = min_plus_floyd_warshall(W, overwrite=True)  # W is ours: no copy
    del W
    n = D.shape[0]
    kw = _device_kw(D)
    if idx is None:
        src = xp.arange(n, dtype=xp.int64, **kw)
    else:
        src = from_numpy(idx, like=D) if xp is not np else idx
        D = xp.take(D, src, axis=0)
        P = xp.take(P, src, axis=0)
    if limit is not None:
        far = D > limit
        D = xp.where(far, xp.inf, D)
        P = xp.where(far, -1, P)
    hops = _xp_hops(P, src, xp)
    return ShortestPaths(D, hops, P, weight, None if idx is None else idx, "min-plus")


# -------------------------------------------------------------------------------- paths and export


def path(result: ShortestPaths, source: int, target: int) -> list[int]:
    """Node sequence of the shortest path ``source -> target`` (empty if unreachable).

    ``source`` must be one of the result's sources (every node for all pairs).
    """
    pred = to_numpy(result.predecessors)
    n = pred.shape[1]
    source = check_int("source", source, low=0, high=n - 1)
    target = check_int("target", target, low=0, high=n - 1)
    if result.sources is None:
        row = source
    else:
        hits = np.flatnonzero(np.asarray(result.sources) == source)
        if hits.size == 0:
            raise InputError(f"source must be one of the computed sources {list(map(int, result.sources))}, "
                             f"got {source}")
        row = int(hits[0])
    if source == target:
        return [int(source)]
    if pred[row, target] < 0:
        return []
    nodes = [int(target)]
    while nodes[-1] != source:
        nodes.append(int(pred[row, nodes[-1]]))
    return nodes[::-1]


def to_networkx(A, *, weight: str = "inverse"):
    """The graph of ``A`` as a ``networkx.DiGraph`` (host copy; diagonal self-loops omitted).

    Each edge i -> j carries ``weight`` (its length: ``1 / A_ij``, ``-log A_ij`` or, for
    ``weight="given"``, ``A_ij``; see :func:`edge_weights` for which entries are edges) and
    ``attention`` (``A_ij``). ``A`` may be dense or scipy.sparse.
    """
    import networkx as nx

    w = edge_weights(A, weight=weight)
    a = A.toarray() if input_kind(A) == "sparse" else np.asarray(to_numpy(A), dtype=np.float64)
    g = nx.DiGraph()
    g.add_nodes_from(range(a.shape[0]))
    i, j = np.nonzero(np.isfinite(w))
    g.add_edges_from((int(s), int(t), {"weight": float(w[s, t]), "attention": float(a[s, t])}) for s, t in zip(i, j))
    return g
