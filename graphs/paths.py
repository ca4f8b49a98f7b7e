"""Shortest paths on the attention graph, with the number of hops on each path.

FNA ("Fractional neural attention", section "Mechanistic explanation", Figs. 5c-5e) reads an
attention matrix ``A`` as a directed graph: token i -> token j with edge weight ``1 / A[i, j]``
("strongly attending tokens are closer"; zero attention = no edge). The claim under test (ledger
FNA-18) is about the number of hops on the weighted shortest paths, so :func:`shortest_paths`
returns both the path lengths and the hop counts.

Host boundary: Dijkstra runs in ``scipy.sparse.csgraph`` on the host (``spectral.backend.to_numpy``);
the hop counts are computed on the host from the predecessor matrix by pointer doubling (no loop
over pairs), and all results are moved back to the input's namespace. networkx is used only by
:func:`to_networkx` (interoperability) and as the test oracle, never as the engine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from spectral.backend import from_numpy, to_numpy
from spectral.display import array_summary, result_repr
from spectral.scores import check_row_stochastic
from spectral.validation import InputError, check_int, check_option

__all__ = ["ShortestPaths", "WEIGHTS", "edge_weights", "shortest_paths", "hops_from_predecessors", "path",
           "to_networkx"]

WEIGHTS = ("inverse", "neg-log")


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
    w = np.full(a.shape, np.inf)
    pos = a > 0
    w[pos] = 1.0 / a[pos] if weight == "inverse" else -np.log(a[pos])
    np.fill_diagonal(w, np.inf)
    return w


def hops_from_predecessors(predecessors) -> np.ndarray:
    """Hop counts from a shortest-path predecessor matrix, vectorised by pointer doubling.

    Parameters
    ----------
    predecessors : array of int, shape (n, n)
        ``predecessors[i, j]``: node before j on the path from i; negative for i == j and for
        unreachable j (scipy uses -9999).

    Returns
    -------
    numpy array of int, shape (n, n)
        Hops on each path (0 on the diagonal, -1 where unreachable).

    Notes
    -----
    Each pair (i, j) keeps a pointer ``p`` (initially the predecessor of j, or i itself at the
    root) and a partial count ``h`` (1 for a real edge, 0 at the root). One doubling step sets
    ``h <- h + h[i, p]`` and ``p <- p[i, p]`` simultaneously for every pair, so after
    ``ceil(log2(max hops)) + 1`` steps every pointer reaches the root and ``h`` is the hop count:
    O(n^2 log(max hops)) work in whole-array operations, no loop over pairs.
    """
    pred = np.asarray(to_numpy(predecessors), dtype=np.int64)
    if pred.ndim != 2 or pred.shape[0] != pred.shape[1]:
        raise InputError(f"predecessors must be a square (n, n) integer matrix, got shape {pred.shape}")
    n = pred.shape[0]
    if pred.size and pred.max() >= n:
        raise InputError(f"predecessors entries must be node indices in [0, {n - 1}] or negative")
    rows = np.arange(n)[:, None]
    missing = pred < 0
    unreachable = missing & (rows != np.arange(n)[None, :])
    p = np.where(missing, rows, pred)
    h = np.where(missing, 0, 1).astype(np.int64)
    for _ in range(64):  # 2^64 > any hop count
        done = p == rows
        if done.all():
            break
        h = h + np.take_along_axis(h, p, axis=1)
        p = np.take_along_axis(p, p, axis=1)
    else:  # pragma: no cover - only a predecessor matrix with a cycle gets here
        raise InputError("predecessors contain a cycle (not a shortest-path tree)")
    h[unreachable] = -1
    return h


def shortest_paths(A, *, weight: str = "inverse") -> ShortestPaths:
    """All-pairs weighted shortest paths and hop counts on the attention graph of ``A``.

    Parameters
    ----------
    A : array of shape (n, n)
        Row-stochastic attention matrix (any array namespace). ``A[i, j] > 0`` is a directed
        edge i -> j (query i attends to key j); zeros are missing edges; the diagonal is ignored.
    weight : {"inverse", "neg-log"}
        Edge weights ``1 / A_ij`` (FNA, default) or ``-log A_ij``.

    Returns
    -------
    ShortestPaths
        ``lengths``, ``hops`` and ``predecessors`` in ``A``'s namespace.

    Raises
    ------
    spectral.validation.InputError
        ``A`` not square, not finite, with negative entries, or not row-stochastic (row sums
        within ``4 sqrt(eps)`` of 1); unknown ``weight``.

    Notes
    -----
    Host boundary: Dijkstra (``scipy.sparse.csgraph.shortest_path(method="D", directed=True)``)
    runs on the host on a CSR copy with explicit edge weights (so zero-weight ``neg-log`` edges of
    a one-hot row are kept). Cost O(n (E + n log n)) = O(n^3) for a dense attention matrix.

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
    from scipy.sparse.csgraph import shortest_path

    w = edge_weights(A, weight=weight)
    i, j = np.nonzero(np.isfinite(w))
    graph = sparse.csr_array((w[i, j], (i, j)), shape=w.shape)
    lengths, pred = shortest_path(graph, method="D", directed=True, return_predecessors=True)
    hops = hops_from_predecessors(pred)
    pred = np.where(pred < 0, -1, pred).astype(np.int64)
    return ShortestPaths(from_numpy(lengths, like=A), from_numpy(hops, like=A), from_numpy(pred, like=A), weight)


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
