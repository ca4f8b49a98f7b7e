"""Shortest paths on the attention graph, with the number of hops on each path.

FNA ("Fractional neural attention", section "Mechanistic explanation", Figs. 5c-5e) reads an
attention matrix ``A`` as a directed graph: token i -> token j with edge weight ``1 / A[i, j]``
("strongly attending tokens are closer"; zero attention = no edge). The claim under test (ledger
FNA-18) is about the number of hops on the weighted shortest paths, so :func:`shortest_paths`
returns both the path lengths and the hop counts.

Algorithm: ``scipy.sparse.csgraph`` on the host (``spectral.backend.to_numpy``), Dijkstra from
every source on sparse graphs and Floyd-Warshall on dense ones, chosen by the edge density and the
size (:func:`floyd_warshall_from_density`; the crossover was measured, see its docstring). The hop
counts are computed on the host from the predecessor matrix by pointer doubling (no loop over
pairs; on cache-sized blocks of rows, or on the reachable pairs only when few are reachable), and
all results are moved back to the input's namespace. networkx is used only by
:func:`to_networkx` (interoperability) and as the test oracle, never as the engine.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from spectral.backend import from_numpy, to_numpy
from spectral.display import array_summary, result_repr
from spectral.memory import check_memory
from spectral.scores import check_row_stochastic
from spectral.validation import InputError, check_int, check_option, check_real

__all__ = [
    "ShortestPaths",
    "WEIGHTS",
    "edge_weights",
    "hops_from_predecessors",
    "path",
    "shortest_paths",
    "to_networkx",
]

WEIGHTS = ("inverse", "neg-log")
METHODS = ("auto", "dijkstra", "floyd-warshall")

#: Peak bytes per matrix entry of :func:`shortest_paths` (n x n): csgraph's outputs (float64
#: lengths, int32 predecessors; Floyd-Warshall computes the lengths in the float64 weights), the
#: edge mask, the int64 hops and predecessors, and the hop workspace (cache-sized row blocks, or
#: an intp slot per pair when at most 1/4 of the pairs are reachable); tracemalloc measured 28.2-30.0
#: (Floyd-Warshall; Dijkstra on sparse graphs) and 32.0 (Dijkstra on the complete graph: its CSR
#: copy) bytes per entry at n = 1000 and 2000, densities 0.001, 0.01, 0.1 and 1.
PEAK_BYTES_PER_ENTRY = 36


@dataclasses.dataclass(frozen=True, repr=False)
class ShortestPaths:
    """All-pairs weighted shortest paths of an attention graph.

    Attributes
    ----------
    lengths : array of shape (n, n)
        ``lengths[i, j]``: weight of the shortest directed path i -> j (0 on the diagonal,
        ``inf`` when j is unreachable from i).
    hops : array of int, shape (n, n)
        Number of edges on that path (0 on the diagonal, -1 when unreachable).
    predecessors : array of int, shape (n, n)
        ``predecessors[i, j]``: the node before j on the path from i (-1 on the diagonal and
        when unreachable), as returned by ``scipy.sparse.csgraph.shortest_path`` (-9999 -> -1).
    weight : str
        The edge weight used (``"inverse"``: ``1 / A_ij``; ``"neg-log"``: ``-log A_ij``).
    """

    lengths: Any
    hops: Any
    predecessors: Any
    weight: str

    def __repr__(self) -> str:
        return result_repr(self, n=int(self.lengths.shape[0]), weight=repr(self.weight),
                           mean_hops=f"{self.mean_hops():.4g}", max_hops=self.max_hops(),
                           lengths=array_summary(self.lengths))

    def mean_hops(self, *, off_diagonal: bool = True) -> float:
        """Mean hop count over reachable ordered pairs (i != j by default)."""
        h = to_numpy(self.hops)
        mask = h >= 0
        if off_diagonal:
            mask &= ~np.eye(h.shape[0], dtype=bool)
        return float(h[mask].mean()) if mask.any() else float("nan")

    def max_hops(self) -> int:
        """Largest hop count over reachable pairs."""
        return int(to_numpy(self.hops).max())


def edge_weights(A, *, weight: str = "inverse") -> np.ndarray:
    """Host array of edge weights, ``inf`` where ``A_ij = 0`` (no edge) and on the diagonal.

    ``"inverse"``: ``W_ij = 1 / A_ij`` (FNA Fig. 5c, "edge weights equal to the reciprocal of
    attention weights"). ``"neg-log"``: ``W_ij = -log A_ij`` (the shortest path is then the most
    probable walk; an alternative reading, not the paper's).
    """
    check_option("weight", weight, WEIGHTS)
    check_row_stochastic(A)
    a = np.asarray(to_numpy(A), dtype=np.float64)
    present = a > 0
    np.fill_diagonal(present, False)
    return _weights(a, present, weight)


def hops_from_predecessors(predecessors) -> np.ndarray:
    """Hop counts from a shortest-path predecessor matrix, vectorised by pointer doubling.

    Parameters
    ----------
    predecessors : array of int, shape (n, n)
        ``predecessors[i, j]``: node before j on the path from i; negative for i == j and for
        unreachable j (scipy uses -9999).

    Returns
    -------
    numpy array of int64, shape (n, n)
        Hops on each path (0 on the diagonal, -1 where unreachable).

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
    if pred.ndim != 2 or pred.shape[0] != pred.shape[1]:
        raise InputError(f"predecessors must be a square (n, n) integer matrix, got shape {pred.shape}")
    n = pred.shape[0]
    if pred.size and pred.max() >= n:
        raise InputError(f"predecessors entries must be node indices in [0, {n - 1}] or negative")
    return _hops_and_predecessors(pred)[0]


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


def _hops_and_predecessors(pred: np.ndarray, *, compact: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Hop counts (int64, -1 unreachable) and predecessors (int64, -1 for none) of a checked ``pred``.

    The pointer doubling of :func:`hops_from_predecessors`, on the reachable pairs only when they are
    fewer than ``1 / _COMPACT_BELOW`` of all pairs (a sparse graph: most pairs unreachable) and else
    on blocks of rows (a pointer stays in its row), with the int64 predecessor output written in the
    same pass over each block. ``compact`` forces one way (tests).
    """
    n = pred.shape[0]
    if compact is None:
        compact = _COMPACT_BELOW * int(np.count_nonzero(pred >= 0)) < n * n
    if compact:
        return _hops_of_reachable_pairs(pred)
    hops = np.empty((n, n), dtype=np.int64)
    pred_out = np.empty((n, n), dtype=np.int64)
    counter = _counter_dtype(n)
    rows = max(1, min(n, _HOP_BLOCK_PAIRS // max(n, 1)))
    # block layout: row r of the block at r (n + 1) + 1 + j, led by a sentinel at r (n + 1) with count
    # 0 that points to itself, so a missing predecessor (-1) points to its row's sentinel: the
    # pointers are one addition, with no masked select (masked selects cost 3-4x more here)
    width = n + 1
    lead = (np.arange(rows, dtype=np.intp) * width)[:, None]
    for start in range(0, n, rows):
        stop = min(n, start + rows)
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
        hf[np.arange(b), np.arange(start, stop) + 1] = 0
        _pointer_doubling(hf.ravel(), pf.ravel())
        np.copyto(hops[start:stop], hf[:, 1:])
    return hops, pred_out


def _hops_of_reachable_pairs(pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_hops_and_predecessors` on the k reachable pairs (i != j, ``pred[i, j] >= 0``) only.

    Each reachable pair gets a slot 0..k-1 (row-major), every root (i, i) the extra slot k (count 0,
    pointing to itself); the doubling then runs on k + 1 entries instead of n^2.
    """
    n = pred.shape[0]
    reach = pred >= 0
    flat = np.flatnonzero(reach)
    k = flat.size
    row_start = np.repeat(np.arange(0, n * n, n, dtype=np.intp), np.count_nonzero(reach, axis=1))
    del reach
    slot = np.empty(n * n, dtype=np.intp)  # only the reachable pairs and the roots are written and read
    slot[flat] = np.arange(k, dtype=np.intp)
    slot[:: n + 1] = k
    pf = np.empty(k + 1, dtype=np.intp)
    np.take(slot, row_start + pred.ravel()[flat], out=pf[:k])  # slot of the pair (i, pred[i, j])
    pf[k] = k
    del slot, row_start
    hf = np.ones(k + 1, dtype=_counter_dtype(n))
    hf[k] = 0
    _pointer_doubling(hf, pf)
    hops = np.full((n, n), -1, dtype=np.int64)
    hops.ravel()[flat] = hf[:k]
    np.fill_diagonal(hops, 0)
    pred_out = np.empty((n, n), dtype=np.int64)
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


def shortest_paths(A, *, weight: str = "inverse", method: str = "auto", max_bytes=None) -> ShortestPaths:
    """All-pairs weighted shortest paths and hop counts on the attention graph of ``A``.

    Parameters
    ----------
    A : array of shape (n, n)
        Row-stochastic attention matrix (any array namespace). ``A[i, j] > 0`` is a directed
        edge i -> j (query i attends to key j); zeros are missing edges; the diagonal is ignored.
    weight : {"inverse", "neg-log"}
        Edge weights ``1 / A_ij`` (FNA, default) or ``-log A_ij``.
    method : {"auto", "dijkstra", "floyd-warshall"}
        ``scipy.sparse.csgraph`` algorithm; ``"auto"`` picks by edge density and size
        (:func:`floyd_warshall_from_density`). All give the same lengths, and the same hops
        wherever the shortest path is unique.
    max_bytes : float, optional
        Memory limit in bytes for the whole request (default: the memory available now).

    Returns
    -------
    ShortestPaths
        ``lengths``, ``hops`` and ``predecessors`` in ``A``'s namespace.

    Raises
    ------
    spectral.validation.InputError
        ``A`` not square, not finite, with negative entries, or not row-stochastic (row sums
        within ``4 sqrt(eps)`` of 1); unknown ``weight`` or ``method``.
    spectral.memory.DenseMemoryError
        The n x n outputs and their workspace (``PEAK_BYTES_PER_ENTRY`` bytes per entry) would not
        fit: raised before anything n x n is allocated.

    Notes
    -----
    Host boundary: ``scipy.sparse.csgraph`` runs on the host. Dijkstra gets a CSR copy with
    explicit edge weights, so zero-weight ``neg-log`` edges of a one-hot row are kept; csgraph's
    Floyd-Warshall reads a zero weight as no edge, so ``"auto"`` uses Dijkstra when there are
    zero weights and an explicit ``"floyd-warshall"`` refuses them.
    Cost: Dijkstra O(n (E + n log n)), Floyd-Warshall O(n^3); hops O(n^2 log(max hops)), on the R
    reachable pairs O(n^2 + R log(max hops)) when R < n^2 / 4. Beyond the csgraph call, the work is
    one validation pass over ``A``, the edge mask and weights, and the hop count; on sparse graphs
    the CSR arrays are built from the E edges only.

    References
    ----------
    FNA section "Mechanistic explanation", Figs. 5c-5e.

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

    Attention from a softmax of scores ``exp(x_i . x_j)`` on random tokens:

    >>> from spectral import dot_product_scores, row_normalize
    >>> x = np.random.default_rng(0).standard_normal((20, 4))
    >>> sp = shortest_paths(row_normalize(dot_product_scores(x)))
    >>> sp.hops.shape, bool((sp.hops[~np.eye(20, dtype=bool)] >= 1).all())
    ((20, 20), True)
    """
    from scipy import sparse
    from scipy.sparse.csgraph import dijkstra, floyd_warshall

    check_option("method", method, METHODS)
    check_option("weight", weight, WEIGHTS)
    _check_memory(getattr(A, "shape", ()), max_bytes)
    check_row_stochastic(A)
    a = np.asarray(to_numpy(A), dtype=np.float64)
    n = a.shape[0]
    present = a > 0
    np.fill_diagonal(present, False)
    edges = int(np.count_nonzero(present))
    # csgraph's Floyd-Warshall reads a weight of 0 as a missing edge: -log A_ij = 0 (a one-hot row)
    zero_weights = weight == "neg-log" and bool(np.any(a[present] == 1.0))
    if method == "auto":
        dense = floyd_warshall_from_density(n, edges / max(n * (n - 1), 1))
        method = "floyd-warshall" if dense and not zero_weights else "dijkstra"
    elif method == "floyd-warshall" and zero_weights:
        raise InputError("method='floyd-warshall' cannot keep the zero-weight edges -log A_ij = 0 of this A "
                         "(csgraph reads a weight of 0 as no edge); use method='dijkstra' or 'auto'")
    if method == "floyd-warshall":
        w = _weights(a, present, weight)
        np.logical_not(present, out=present)  # now the missing edges
        # the masked entries are the missing edges; overwrite=True computes the lengths in w itself
        lengths, pred = floyd_warshall(np.ma.masked_array(w, mask=present), directed=True,
                                       return_predecessors=True, overwrite=True)
        del w
    else:
        # CSR straight from the mask (rows in order: no sort), explicit zero weights kept as edges;
        # only the E edge weights are computed (the same float operations as edge_weights)
        flat = np.flatnonzero(present)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.count_nonzero(present, axis=1), out=indptr[1:])
        del present
        data = a.ravel()[flat]
        columns = flat - np.repeat(np.arange(0, n * n, n, dtype=flat.dtype), np.diff(indptr))
        del flat
        graph = sparse.csr_array((_weight_values(data, weight), columns, indptr), shape=(n, n))
        del data, columns
        lengths, pred = dijkstra(graph, directed=True, return_predecessors=True)
        del graph
    hops, pred = _hops_and_predecessors(pred)
    return ShortestPaths(from_numpy(lengths, like=A), from_numpy(hops, like=A), from_numpy(pred, like=A), weight)


def _weight_values(values: np.ndarray, weight: str) -> np.ndarray:
    """Edge weights ``1 / A_ij`` or ``-log A_ij`` of positive attention values (new array)."""
    if weight == "inverse":
        return np.divide(1.0, values)
    out = np.log(values)
    return np.negative(out, out=out)


def _weights(a: np.ndarray, present: np.ndarray, weight: str) -> np.ndarray:
    """Dense host weights of a checked float64 ``a``: ``inf`` off ``present`` (no edge, diagonal)."""
    w = np.full(a.shape, np.inf)
    if weight == "inverse":
        np.divide(1.0, a, out=w, where=present)
    else:
        np.log(a, out=w, where=present)
        np.negative(w, out=w, where=present)
    return w


def _check_memory(shape, max_bytes) -> None:
    """Refuse, before anything n x n exists, a graph whose outputs and workspace would not fit."""
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        return  # not square: edge_weights says so
    n = int(shape[0])
    check_memory(PEAK_BYTES_PER_ENTRY * n * n, max_bytes=max_bytes,
                 what=f"all-pairs shortest paths on n = {n} nodes (lengths, hops, predecessors and workspace: "
                      f"{PEAK_BYTES_PER_ENTRY} bytes per pair)",
                 alternative="every algorithm here stores the n x n outputs, so only a smaller graph fits")


def path(result: ShortestPaths, source: int, target: int) -> list[int]:
    """Node sequence of the shortest path ``source -> target`` (empty if unreachable)."""
    pred = to_numpy(result.predecessors)
    n = pred.shape[0]
    source = check_int("source", source, low=0, high=n - 1)
    target = check_int("target", target, low=0, high=n - 1)
    if source == target:
        return [int(source)]
    if pred[source, target] < 0:
        return []
    nodes = [int(target)]
    while nodes[-1] != source:
        nodes.append(int(pred[source, nodes[-1]]))
    return nodes[::-1]


def to_networkx(A, *, weight: str = "inverse"):
    """The attention graph as a ``networkx.DiGraph`` (host copy; diagonal self-loops omitted).

    Each edge i -> j with ``A[i, j] > 0`` carries ``weight`` (``1 / A_ij`` or ``-log A_ij``) and
    ``attention`` (``A_ij``).
    """
    import networkx as nx

    w = edge_weights(A, weight=weight)
    a = np.asarray(to_numpy(A), dtype=np.float64)
    g = nx.DiGraph()
    g.add_nodes_from(range(a.shape[0]))
    i, j = np.nonzero(np.isfinite(w))
    g.add_edges_from((int(s), int(t), {"weight": float(w[s, t]), "attention": float(a[s, t])}) for s, t in zip(i, j))
    return g
