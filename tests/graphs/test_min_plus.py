"""The blocked min-plus Floyd-Warshall in the input's array namespace, against csgraph (the oracle).

Runs on NumPy and array_api_strict (the ``xp`` fixture): array_api_strict refuses every call outside
the array-API standard, so passing there is what "runs on CuPy unchanged" rests on here (no GPU on
this machine; the ``gpu`` test runs on a device). Integer lengths make every path length exact, so
lengths are compared exactly; continuous random lengths make shortest paths unique, so hop counts
and predecessors are compared exactly.
"""

import math

import numpy as np
import pytest
from scipy.sparse.csgraph import construct_dist_matrix, floyd_warshall

import graphs.paths as gp
from graphs import hops_from_predecessors, shortest_paths
from graphs.paths import MIN_PLUS_BYTES_PER_ENTRY, min_plus_floyd_warshall
from spectral.floor.backend import to_numpy
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError

RTOL = 4 * math.sqrt(np.finfo(float).eps)


def integer_graph(rng, n, density):
    W = rng.integers(1, 30, (n, n)).astype(float) * (rng.random((n, n)) < density)
    return W


def as_input(W):
    """Min-plus input: inf for no edge, 0 on the diagonal (csgraph's dense reading of W)."""
    D = np.where(W > 0, W, np.inf)
    np.fill_diagonal(D, 0.0)
    return D


@pytest.mark.parametrize("n, density, block, workspace", [
    (37, 0.15, 8, 1 << 12),    # several blocks, a partial last block, row chunks of a few rows
    (37, 0.6, 128, 1 << 22),   # one block (the whole matrix closed by the rank-one loop)
    (64, 0.05, 16, 1 << 10),   # sparse: many unreachable pairs; one-row chunks
])
def test_lengths_exact_and_trees_valid(xp, rng, n, density, block, workspace):
    W = integer_graph(rng, n, density)
    ref, ref_pred = floyd_warshall(W, directed=True, return_predecessors=True)
    D, P = min_plus_floyd_warshall(xp.asarray(as_input(W)), block=block, workspace_bytes=workspace)
    assert D.dtype == xp.float64 and P.dtype == xp.int64
    np.testing.assert_array_equal(to_numpy(D), ref)  # integer lengths: exact
    pred = to_numpy(P)
    rebuilt = construct_dist_matrix(W, np.where(pred < 0, -9999, pred).astype(np.int32), directed=True)
    np.testing.assert_array_equal(rebuilt, ref)  # every predecessor tree is a shortest-path tree
    np.testing.assert_array_equal(pred < 0, ref_pred < 0)


@pytest.mark.parametrize("block", [5, 32])
def test_hops_and_predecessors_match_csgraph_on_unique_paths(xp, rng, block):
    n = 50
    c = np.exp(rng.standard_normal((n, n))) * (rng.random((n, n)) < 0.3)
    W = np.where(c > 0, 1.0 / np.where(c > 0, c, 1.0), 0.0)
    ref, ref_pred = floyd_warshall(W, directed=True, return_predecessors=True)
    D, P = min_plus_floyd_warshall(xp.asarray(as_input(W)), block=block, workspace_bytes=1 << 14)
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(np.isfinite(to_numpy(D)), fin)
    # re-associated sums of <= n positive terms: measured <= 4.3e-16 relative (10 seeds); 4 sqrt(eps) as elsewhere
    np.testing.assert_allclose(to_numpy(D)[fin], ref[fin], rtol=RTOL)
    np.testing.assert_array_equal(np.where(to_numpy(P) < 0, -9999, to_numpy(P)), ref_pred)
    src = xp.arange(n, dtype=xp.int64)
    np.testing.assert_array_equal(to_numpy(gp._xp_hops(P, src, xp)), hops_from_predecessors(ref_pred))


def test_pointer_doubling_in_the_namespace_matches_walking(xp, rng):
    """_xp_hops against the definition (walk every pointer), on csgraph predecessors from 5 sources."""
    from scipy.sparse.csgraph import dijkstra

    n = 60
    W = integer_graph(rng, n, 0.08)
    sources = np.array([0, 7, 7, 59, 30])
    _, pred = dijkstra(W, directed=True, indices=sources, return_predecessors=True)
    walked = np.full(pred.shape, -1)
    for r, s in enumerate(sources):
        for j in range(n):
            if j == s:
                walked[r, j] = 0
            elif pred[r, j] >= 0:
                k, h = j, 0
                while k != s:
                    k, h = pred[r, k], h + 1
                walked[r, j] = h
    P = xp.asarray(np.maximum(pred, -1).astype(np.int64))
    got = gp._xp_hops(P, xp.asarray(sources), xp)
    np.testing.assert_array_equal(to_numpy(got), walked)
    np.testing.assert_array_equal(hops_from_predecessors(pred, sources), walked)


def test_shortest_paths_on_a_non_numpy_array_runs_min_plus_in_its_namespace(xp, rng):
    n = 40
    c = np.exp(rng.standard_normal((n, n)))
    c[rng.random((n, n)) < 0.6] = 0.0
    np.fill_diagonal(c, 1.0)
    A = c / c.sum(axis=1, keepdims=True)
    for kw in ({}, {"weight": "neg-log"}, {"directed": False}, {"indices": [3, 0, 3]}, {"limit": 4.0},
               {"unweighted": True}, {"indices": 5, "limit": 6.0, "directed": False}):
        ref = shortest_paths(A, method="dijkstra", **kw)
        got = shortest_paths(xp.asarray(A), **kw)
        assert (got.method == "min-plus") == (xp is not np)
        fin = np.isfinite(ref.lengths)
        np.testing.assert_array_equal(np.isfinite(to_numpy(got.lengths)), fin)
        np.testing.assert_allclose(to_numpy(got.lengths)[fin], ref.lengths[fin], rtol=RTOL)
        np.testing.assert_array_equal(to_numpy(got.hops), ref.hops)
        if not kw.get("unweighted"):  # unit lengths tie: any shortest-path tree is right there
            np.testing.assert_array_equal(to_numpy(got.predecessors), ref.predecessors)
        if xp is not np:
            assert type(got.lengths) is type(xp.asarray(A)) and type(got.hops) is type(got.lengths)
    explicit = shortest_paths(A, method="min-plus")
    assert explicit.method == "min-plus" and isinstance(explicit.lengths, np.ndarray)


def test_given_weights_on_array_api_strict_exact(xp, rng):
    W = integer_graph(rng, 30, 0.2)
    ref = floyd_warshall(W, directed=False)
    got = shortest_paths(xp.asarray(W), weight="given", directed=False)
    np.testing.assert_array_equal(to_numpy(got.lengths), ref)
    neg = np.array([[0, 0, 0], [-1, 0, 0], [0, -1, 0]], dtype=float)  # csgraph's directed_negative_weighted_G
    np.testing.assert_array_equal(to_numpy(shortest_paths(xp.asarray(neg), weight="given").lengths),
                                  [[0, np.inf, np.inf], [-1, 0, np.inf], [-2, -1, 0]])
    cyc = np.array([[0, -1.0], [0.5, 0]])
    with pytest.raises(InputError, match="negative cycle"):
        shortest_paths(xp.asarray(cyc), weight="given")
    with pytest.raises(InputError, match="NaN"):
        shortest_paths(xp.asarray(np.array([[0, np.nan], [1.0, 0]])), weight="given")
    with pytest.raises(InputError, match="negative cycle"):
        shortest_paths(xp.asarray(np.array([[-1.0, 1.0], [1.0, 0]])), weight="given")


def test_float32_attention_on_array_api_strict(xp, rng):
    n = 20
    c = np.exp(rng.standard_normal((n, n))).astype(np.float32)
    A32 = c / c.sum(axis=1, keepdims=True)
    got = shortest_paths(xp.asarray(A32))
    ref = shortest_paths(A32, method="dijkstra")
    assert got.lengths.dtype == xp.float64
    np.testing.assert_allclose(to_numpy(got.lengths), ref.lengths, rtol=RTOL)
    np.testing.assert_array_equal(to_numpy(got.hops), ref.hops)


def test_min_plus_memory_guard_refuses_before_allocating():
    n = 200
    A = np.full((n, n), 1 / n)
    need = MIN_PLUS_BYTES_PER_ENTRY * n * n + 2 * gp.MIN_PLUS_WORKSPACE_BYTES["host"]
    with pytest.raises(DenseMemoryError, match=r"min-plus shortest paths on n = 200 nodes .* indices="):
        shortest_paths(A, method="min-plus", max_bytes=need - 1)
    assert shortest_paths(A, method="min-plus", max_bytes=need).max_hops() == 1


def test_min_plus_peak_memory_within_the_estimate(rng):
    """tracemalloc peak of the whole min-plus request <= its estimate (the numbers in MIN_PLUS_BYTES_PER_ENTRY)."""
    import tracemalloc

    n = 400
    c = np.exp(rng.standard_normal((n, n)))
    A = c / c.sum(axis=1, keepdims=True)
    shortest_paths(A[:8, :8] / A[:8, :8].sum(axis=1, keepdims=True), method="min-plus")  # imports
    tracemalloc.start()
    tracemalloc.reset_peak()
    shortest_paths(A, method="min-plus")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    estimate = MIN_PLUS_BYTES_PER_ENTRY * n * n + 2 * gp.MIN_PLUS_WORKSPACE_BYTES["host"]
    assert 0.3 * estimate < peak <= estimate


def test_min_plus_bad_input():
    with pytest.raises(InputError, match="square float64"):
        min_plus_floyd_warshall(np.zeros((3, 3), dtype=np.float32))
    with pytest.raises(InputError, match="block"):
        min_plus_floyd_warshall(np.zeros((3, 3)), block=0)
    with pytest.raises(InputError, match="overwrite"):
        min_plus_floyd_warshall(np.zeros((3, 3)), overwrite=1)


@pytest.mark.gpu
def test_cupy_stays_on_the_device(rng):
    import cupy as cp

    n = 300
    c = np.exp(rng.standard_normal((n, n)))
    c[rng.random((n, n)) < 0.5] = 0.0
    np.fill_diagonal(c, 1.0)
    A = c / c.sum(axis=1, keepdims=True)
    got = shortest_paths(cp.asarray(A))
    assert got.method == "min-plus" and isinstance(got.lengths, cp.ndarray) and isinstance(got.hops, cp.ndarray)
    ref = shortest_paths(A, method="dijkstra")
    np.testing.assert_allclose(cp.asnumpy(got.lengths), ref.lengths, rtol=RTOL)
    np.testing.assert_array_equal(cp.asnumpy(got.hops), ref.hops)
    np.testing.assert_array_equal(cp.asnumpy(got.predecessors), ref.predecessors)
