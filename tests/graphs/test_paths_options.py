"""graphs.shortest_paths: sparse inputs, sources, limit, hop counting and undirected reading of attention graphs.

Oracle: networkx (``all_pairs_dijkstra`` on the graph built by ``to_networkx``, ``single_source_dijkstra``
with ``cutoff``, breadth-first ``shortest_path_length``), never the code under test.
"""

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import graphs
from graphs import edge_weights, path, shortest_paths, to_networkx
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError

RTOL = 4 * math.sqrt(np.finfo(float).eps)
FORMATS = ["csr_array", "csc_array", "coo_array", "lil_array", "csr_matrix", "csc_matrix", "coo_matrix", "lil_matrix"]


def attention(rng, n, drop=0.7):
    c = np.exp(rng.standard_normal((n, n)))
    c[rng.random((n, n)) < drop] = 0.0
    np.fill_diagonal(c, 1.0)
    return c / c.sum(axis=1, keepdims=True)


def nx_reference(G, sources, cutoff=None, weight="weight"):
    n = G.number_of_nodes()
    lengths = np.full((len(sources), n), np.inf)
    hops = np.full((len(sources), n), -1)
    for r, s in enumerate(sources):
        dist, paths = nx.single_source_dijkstra(G, s, cutoff=cutoff, weight=weight)
        for j, v in dist.items():
            lengths[r, j] = v
            hops[r, j] = len(paths[j]) - 1
    return lengths, hops


@pytest.mark.parametrize("fmt", FORMATS)
def test_sparse_attention_gives_the_dense_answer(rng, fmt):
    A = attention(rng, 40)
    dense = shortest_paths(A)
    res = shortest_paths(getattr(sp, fmt)(A))
    np.testing.assert_allclose(res.lengths, dense.lengths, rtol=RTOL)
    np.testing.assert_array_equal(res.hops, dense.hops)
    assert isinstance(res.lengths, np.ndarray) and res.method in ("dijkstra", "floyd-warshall")


def test_sparse_attention_stored_zeros_are_no_edges_and_diagonal_ignored(rng):
    A = attention(rng, 30)
    S = sp.csr_array(A)
    S.data[::5] = 0.0  # stored zero attention ...
    S.setdiag(S.diagonal())
    dense = S.toarray()
    dense /= dense.sum(axis=1, keepdims=True)
    S = sp.csr_array(S / S.sum(axis=1)[:, None])
    assert np.any(S.data == 0)
    ref = shortest_paths(dense)
    for method in ("auto", "dijkstra", "floyd-warshall", "min-plus"):
        res = shortest_paths(S, method=method)
        np.testing.assert_array_equal(res.hops, ref.hops)  # ... is no edge (not an edge of length inf)
        np.testing.assert_allclose(res.lengths, ref.lengths, rtol=RTOL)


@pytest.mark.parametrize("bad, match", [
    (sp.csr_array(np.array([[0.5, 0.6], [0.5, 0.5]])), "row-stochastic"),
    (sp.csr_array(np.array([[1.5, -0.5], [0.5, 0.5]])), "nonnegative"),
    (sp.csr_array(np.array([[np.inf, 1.0], [0.5, 0.5]])), "finite"),
    (sp.csr_array(np.ones((2, 3)) / 3), "square"),
    ([[0.5, 0.5], [0.5, 0.5]], r"scipy.sparse array or matrix \(csr, csc, coo, lil"),
    ((0.5, 0.5), "got builtins.tuple"),
    (memoryview(np.full((2, 2), 0.5)), r"NumPy, CuPy or another array-API library .* got builtins.memoryview"),
    (np.array([["a", "b"], ["c", "d"]]), "numeric"),
])
def test_unsupported_and_bad_inputs(bad, match):
    with pytest.raises(InputError, match=match):
        shortest_paths(bad)


@pytest.mark.parametrize("method", ["auto", "dijkstra", "floyd-warshall", "johnson", "min-plus"])
def test_sources_and_limit_against_networkx(rng, method):
    A = attention(rng, 50, drop=0.85)
    G = to_networkx(A)
    sources = [7, 0, 49, 7]
    for limit in (None, 2.0, 8.0):
        res = shortest_paths(A, method=method, indices=sources, limit=limit)
        ref_len, ref_hops = nx_reference(G, sources, cutoff=limit)
        np.testing.assert_array_equal(np.isfinite(res.lengths), np.isfinite(ref_len))
        fin = np.isfinite(ref_len)
        np.testing.assert_allclose(res.lengths[fin], ref_len[fin], rtol=RTOL)
        np.testing.assert_array_equal(res.hops, ref_hops)
        assert res.lengths.shape == (4, 50) and res.sources.tolist() == sources
        for r, s in enumerate(sources):
            for t in (0, 13, 49):
                nodes = path(res, s, t)
                assert (len(nodes) - 1 if nodes else -1) == res.hops[r, t]


@pytest.mark.parametrize("method", ["auto", "dijkstra", "floyd-warshall", "min-plus"])
def test_unweighted_counts_fewest_hops(rng, method):
    A = attention(rng, 40, drop=0.9)
    res = shortest_paths(A, unweighted=True, method=method)
    G = nx.from_numpy_array((A > 0) & ~np.eye(40, dtype=bool), create_using=nx.DiGraph)
    ref = np.full((40, 40), np.inf)
    for i, d in nx.all_pairs_shortest_path_length(G):
        for j, v in d.items():
            ref[i, j] = v
    np.testing.assert_array_equal(res.lengths, ref)
    np.testing.assert_array_equal(res.hops, np.where(np.isinf(ref), -1, ref).astype(int))
    weighted = shortest_paths(A, method=method)
    assert (weighted.hops >= res.hops).all() and (weighted.hops > res.hops).any()  # the weighted paths detour


@pytest.mark.parametrize("method", ["auto", "dijkstra", "floyd-warshall", "min-plus"])
def test_undirected_reading_of_attention(rng, method):
    A = attention(rng, 35, drop=0.85)
    res = shortest_paths(A, directed=False, method=method)
    W = edge_weights(A)
    G = nx.Graph()
    G.add_nodes_from(range(35))
    for i, j in zip(*np.nonzero(np.isfinite(W))):  # edge i -- j of length min(W_ij, W_ji)
        w = min(W[i, j], W[j, i])
        if not G.has_edge(i, j) or G[i][j]["weight"] > w:
            G.add_edge(int(i), int(j), weight=float(w))
    ref_len, ref_hops = nx_reference(G, list(range(35)))
    np.testing.assert_allclose(res.lengths, ref_len, rtol=RTOL)
    np.testing.assert_array_equal(res.hops, ref_hops)
    np.testing.assert_allclose(res.lengths, res.lengths.T, rtol=RTOL)


def test_mean_hops_with_sources_excludes_the_sources():
    A = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])  # the directed 3-cycle
    res = shortest_paths(A, indices=[2, 0])
    assert res.hops.tolist() == [[1, 2, 0], [0, 1, 2]]
    assert res.mean_hops() == 1.5 and res.mean_hops(off_diagonal=False) == 1.0 and res.max_hops() == 2
    assert path(res, 2, 1) == [2, 0, 1]
    with pytest.raises(InputError, match=r"source must be one of the computed sources \[2, 0\]"):
        path(res, 1, 0)
    assert repr(res).startswith("ShortestPaths(n=3, weight='inverse', mean_hops=1.5, max_hops=2")


@pytest.mark.parametrize("kwargs, match", [
    ({"indices": [0, 3]}, r"indices must be node indices in \[0, 2\]"),
    ({"indices": -1}, r"indices must be node indices in \[0, 2\]"),
    ({"indices": [[0, 1]]}, "1-D sequence"),
    ({"indices": []}, "non-empty"),
    ({"indices": [0.5]}, "integer"),
    ({"indices": True}, "indices must be"),
    ({"limit": -1.0}, "limit must be"),
    ({"limit": float("nan")}, "limit must be"),
    ({"directed": "yes"}, "directed must be True or False"),
    ({"unweighted": 1}, "unweighted must be True or False"),
    ({"weight": "log"}, "weight must be one of"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(InputError, match=match):
        shortest_paths(np.full((3, 3), 1 / 3), **kwargs)


def test_given_dense_conventions():
    # dense: 0 and inf are no edge, integers accepted; the attention readings refuse a non-stochastic matrix
    W = np.array([[0, 2, np.inf], [0, 0, 3], [1, 0, 0]])
    res = shortest_paths(W, weight="given")
    assert res.lengths.tolist() == [[0, 2, 5], [4, 0, 3], [1, 3, 0]]
    assert shortest_paths(np.array([[0, 2, 0], [0, 0, 3], [1, 0, 0]]), weight="given").lengths[0, 2] == 5
    with pytest.raises(InputError, match="row-stochastic"):
        shortest_paths(np.array([[0, 2, 0], [0, 0, 3], [1, 0, 0]], dtype=float))
    with pytest.raises(InputError, match="-inf"):
        shortest_paths(-W, weight="given")
    with pytest.raises(InputError, match="real entries"):
        shortest_paths(W.astype(complex), weight="given")


def test_sparse_memory_is_guarded_per_output_row():
    n = 1000
    S = sp.random_array((n, n), density=3e-3, random_state=0, format="csr") + sp.eye_array(n)
    S = sp.csr_array(S / S.sum(axis=1)[:, None])
    all_pairs = graphs.paths.PEAK_BYTES_PER_ENTRY * n * n
    with pytest.raises(DenseMemoryError, match="give fewer sources"):
        shortest_paths(S, max_bytes=all_pairs)  # 36 n^2 + the edges: over
    res = shortest_paths(S, indices=[0, 1], max_bytes=all_pairs / 100)
    assert res.lengths.shape == (2, n)


def test_edge_weights_and_to_networkx_take_given_and_sparse():
    S = sp.csr_array(([0.0, 2.0, 1.0], ([0, 1, 2], [1, 2, 0])), shape=(3, 3))  # a stored zero: an edge of length 0
    W = edge_weights(S, weight="given")
    assert W.tolist() == [[np.inf, 0.0, np.inf], [np.inf, np.inf, 2.0], [1.0, np.inf, np.inf]]
    g = to_networkx(S, weight="given")
    assert set(g.edges) == {(0, 1), (1, 2), (2, 0)} and g.edges[0, 1]["weight"] == 0.0
    A = sp.csr_array(np.array([[0.2, 0.8], [0.0, 1.0]]))
    assert set(to_networkx(A).edges) == {(0, 1)} and edge_weights(A)[0, 1] == pytest.approx(1.25)


@pytest.mark.parametrize("call", [
    lambda A: graphs.random_walk(A, start=0, steps=2, rng=0),
    lambda A: graphs.sample_next(A, np.array([0]), rng=0),
    lambda A: graphs.jump_lengths(A, np.zeros((2, 1)), size=3, rng=0),
    lambda A: graphs.iterate_attention(A, np.ones((2, 1)), steps=2),
    lambda A: graphs.ablate_edges(A, fraction=0.5, rng=0),
    lambda A: graphs.ablate_nodes(A, fraction=0.0, rng=0),
    lambda A: graphs.ablation_curve(A, [0.0], rng=0),
], ids=["random_walk", "sample_next", "jump_lengths", "iterate_attention", "ablate_edges", "ablate_nodes",
        "ablation_curve"])
def test_dense_only_analyses_refuse_sparse_and_foreign_types(call):
    A = np.full((2, 2), 0.5)
    call(A)  # the dense input works
    with pytest.raises(InputError, match=r"needs a dense A .* A.toarray\(\) \(shortest_paths and spectral_gap"):
        call(sp.csr_array(A))
    with pytest.raises(InputError, match="A must be a 2-D array .* got builtins.list"):
        call(A.tolist())
