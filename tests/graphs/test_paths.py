"""graphs.paths: shortest paths and hop counts against networkx (the oracle, never the engine)."""

import networkx as nx
import numpy as np
import pytest

from graphs.paths import (
    PEAK_BYTES_PER_ENTRY,
    edge_weights,
    floyd_warshall_from_density,
    hops_from_predecessors,
    path,
    shortest_paths,
    to_networkx,
)
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError
from spectral.testing import assert_close


def _sparse_stochastic(rng, n, drop=0.3):
    c = np.exp(-3 * rng.random((n, n)))
    c[rng.random((n, n)) < drop] = 0.0
    np.fill_diagonal(c, 1.0)
    return c / c.sum(axis=1, keepdims=True)


def _networkx_reference(A, weight="inverse"):
    g = to_networkx(A, weight=weight)
    n = A.shape[0]
    lengths = np.full((n, n), np.inf)
    hops = np.full((n, n), -1)
    for i, (dist, paths) in nx.all_pairs_dijkstra(g):
        for j, v in dist.items():
            lengths[i, j] = v
            hops[i, j] = len(paths[j]) - 1
    return lengths, hops


@pytest.mark.parametrize("method", ["auto", "dijkstra", "floyd-warshall"])
@pytest.mark.parametrize("weight", ["inverse", "neg-log"])
def test_matches_networkx(rng, weight, method):
    A = _sparse_stochastic(rng, 50)
    sp = shortest_paths(A, weight=weight, method=method)
    ref_len, ref_hops = _networkx_reference(A, weight)
    fin = np.isfinite(ref_len)
    np.testing.assert_array_equal(np.isfinite(sp.lengths), fin)
    # exact algebra: sums of a few O(1..100) weights, 4 sqrt(eps) relative
    np.testing.assert_allclose(sp.lengths[fin], ref_len[fin], rtol=4 * np.sqrt(np.finfo(float).eps))
    # random continuous weights: shortest paths are unique, so hop counts must agree exactly
    np.testing.assert_array_equal(sp.hops, ref_hops)
    assert sp.weight == weight


@pytest.mark.parametrize("drop", [0.0, 0.5, 0.97])
def test_both_algorithms_give_the_same_lengths_and_hops(rng, drop):
    """Dense and sparse graphs: Floyd-Warshall and Dijkstra agree (continuous weights: unique paths)."""
    A = _sparse_stochastic(rng, 120, drop=drop)
    fw, dj = shortest_paths(A, method="floyd-warshall"), shortest_paths(A, method="dijkstra")
    np.testing.assert_array_equal(np.isfinite(fw.lengths), np.isfinite(dj.lengths))
    fin = np.isfinite(dj.lengths)
    np.testing.assert_allclose(fw.lengths[fin], dj.lengths[fin], rtol=4 * np.sqrt(np.finfo(float).eps))
    np.testing.assert_array_equal(fw.hops, dj.hops)
    assert fw.hops.dtype == np.int64 and fw.predecessors.dtype == np.int64


def test_zero_weight_edges_are_kept():
    # neg-log weight of a one-hot row is -log 1 = 0: an edge of weight 0, not a missing edge; csgraph's
    # Floyd-Warshall reads a zero of a dense matrix as no edge, so auto takes Dijkstra on this dense graph
    # and an explicit Floyd-Warshall gets the CSR lengths (explicit zeros are edges there)
    A = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    for method in ("auto", "dijkstra", "floyd-warshall", "johnson", "min-plus"):
        sp = shortest_paths(A, weight="neg-log", method=method)
        assert sp.lengths[0, 2] == 0.0 and sp.hops[0, 2] == 2 and path(sp, 0, 2) == [0, 1, 2], method
    assert shortest_paths(A, weight="neg-log").method == "dijkstra"
    assert shortest_paths(A, method="floyd-warshall").hops[0, 2] == 2  # inverse weights are never 0


def test_the_algorithm_follows_the_measured_crossover():
    # crossover density 0.2 + 0.053 log2(n / 1000): 0.094 at 250, 0.2 at 1000, 0.253 at 2000
    assert not floyd_warshall_from_density(1000, 0.19) and floyd_warshall_from_density(1000, 0.21)
    assert floyd_warshall_from_density(250, 0.1) and not floyd_warshall_from_density(250, 0.09)
    assert not floyd_warshall_from_density(2000, 0.25) and floyd_warshall_from_density(2000, 0.26)
    assert floyd_warshall_from_density(10, 1.0) and not floyd_warshall_from_density(10**6, 0.4)


def test_memory_is_refused_before_anything_n_by_n_is_allocated():
    A = np.full((300, 300), 1 / 300)
    need = PEAK_BYTES_PER_ENTRY * 300 * 300
    with pytest.raises(DenseMemoryError, match=r"n = 300 nodes .* needs an estimated 3.09 MiB, over the limit max_bytes = 3.09 MiB"):
        shortest_paths(A, max_bytes=need - 1)
    with pytest.raises(InputError, match="max_bytes"):
        shortest_paths(A, max_bytes=0)
    assert shortest_paths(A, max_bytes=need).max_hops() == 1


def test_unreachable_and_diagonal():
    # 0 <-> 1 connected, 2 absorbing (only a self-loop): nothing reaches 2, 2 reaches nothing
    A = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    sp = shortest_paths(A)
    np.testing.assert_array_equal(sp.hops, [[0, 1, -1], [1, 0, -1], [-1, -1, 0]])
    assert np.isinf(sp.lengths[0, 2]) and np.isinf(sp.lengths[2, 0])
    np.testing.assert_array_equal(np.diag(sp.lengths), 0.0)
    assert sp.predecessors[0, 2] == -1 and sp.predecessors[0, 0] == -1
    assert path(sp, 0, 2) == [] and path(sp, 1, 1) == [1]


def test_chain_hops_and_path():
    # strong attention to the next token, weak elsewhere: the shortest path follows the chain
    n = 12
    c = np.full((n, n), 1e-6)
    c[np.arange(n - 1), np.arange(1, n)] = 1.0
    c[n - 1, n - 1] = 1.0
    A = c / c.sum(axis=1, keepdims=True)
    sp = shortest_paths(A)
    assert sp.hops[0, n - 1] == n - 1
    assert path(sp, 0, n - 1) == list(range(n))
    assert sp.max_hops() == n - 1


def test_hops_from_predecessors_long_chain():
    # pointer doubling on a 1000-hop chain: pred[0, j] = j - 1
    n = 1001
    pred = np.full((n, n), -9999)
    pred[0, 1:] = np.arange(n - 1)
    h = hops_from_predecessors(pred)
    np.testing.assert_array_equal(h[0], np.arange(n))
    assert (h[1:, :][~np.eye(n, dtype=bool)[1:, :]] == -1).all()


def _walked_hops(pred):
    """Hops from the definition: follow every predecessor pointer one level at a time."""
    n = pred.shape[0]
    rows = np.arange(n)[:, None]
    hops = np.where(pred >= 0, 0, -1)
    cur = pred.copy()
    while (cur >= 0).any():
        live = cur >= 0
        hops[live] += 1
        cur = np.where(live, pred[rows, np.maximum(cur, 0)], -1)
    np.fill_diagonal(hops, 0)
    return hops


@pytest.mark.parametrize("groups", [1, 6])
def test_hops_from_predecessors_match_walking_every_path(rng, groups):
    """Every pair reachable (hops in row blocks, several blocks at n = 300) and 1/6 of the pairs
    reachable (6 disconnected groups: hops on the reachable pairs only): the same counts as walking
    the pointers."""
    from scipy.sparse.csgraph import dijkstra

    n = 300
    group = np.arange(n) * groups // n
    A = _sparse_stochastic(rng, n, drop=0.9) * (group[:, None] == group[None, :])
    A /= A.sum(axis=1, keepdims=True)
    _, pred = dijkstra(edge_weights(A), directed=True, return_predecessors=True)
    reachable = float(np.mean(pred >= 0))
    assert (reachable > 0.9) if groups == 1 else (reachable < 0.25)  # both ways of counting are exercised
    np.testing.assert_array_equal(hops_from_predecessors(pred), _walked_hops(pred))


def test_sparse_graph_matches_networkx(rng):
    """Two edges per row: most pairs unreachable (the hop count runs on the reachable pairs only)."""
    n = 120
    c = np.zeros((n, n))
    for i in range(n):
        c[i, rng.choice(n, size=2, replace=False)] = rng.random(2) + 0.1
    A = c / c.sum(axis=1, keepdims=True)
    sp = shortest_paths(A)
    ref_len, ref_hops = _networkx_reference(A)
    np.testing.assert_array_equal(sp.hops, ref_hops)
    fin = np.isfinite(ref_len)
    np.testing.assert_allclose(sp.lengths[fin], ref_len[fin], rtol=4 * np.sqrt(np.finfo(float).eps))
    np.testing.assert_array_equal(sp.predecessors >= 0, ref_hops > 0)


def test_backend_parity(xp, rng):
    A = _sparse_stochastic(rng, 20)
    ref = shortest_paths(A)
    got = shortest_paths(xp.asarray(A))
    assert_close(got.hops, xp.asarray(ref.hops), rtol=0)  # integers: exact
    assert_close(got.lengths, xp.asarray(ref.lengths))  # default rtol 4 sqrt(eps)


def test_mean_hops_excludes_diagonal_and_unreachable():
    A = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    assert shortest_paths(A).mean_hops() == 1.0


def test_to_networkx_edges():
    A = np.array([[0.2, 0.8], [0.0, 1.0]])
    g = to_networkx(A)
    assert set(g.edges) == {(0, 1)}
    assert g.edges[0, 1]["weight"] == pytest.approx(1.25) and g.edges[0, 1]["attention"] == 0.8


@pytest.mark.parametrize(
    "A, match",
    [
        (np.array([[0.5, 0.6], [0.5, 0.5]]), "row-stochastic"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), "nonnegative"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), "finite"),
        (np.ones((2, 3)) / 3, "square"),
    ],
)
def test_bad_input(A, match):
    with pytest.raises(InputError, match=match):
        shortest_paths(A)


def test_bad_weight_and_method():
    with pytest.raises(InputError, match="weight must be one of"):
        edge_weights(np.eye(2), weight="log")
    with pytest.raises(InputError, match="method must be one of"):
        shortest_paths(np.eye(2), method="bellman-ford")


def test_repr_is_short():
    A = np.full((100, 100), 0.01)
    text = repr(shortest_paths(A))
    assert len(text) < 200 and text.startswith("ShortestPaths(n=100, weight='inverse', mean_hops=1, max_hops=1"), text
