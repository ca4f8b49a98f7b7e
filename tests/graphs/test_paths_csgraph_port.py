"""scipy.sparse.csgraph's shortest-path tests, ported to graphs.shortest_paths(weight="given").

Source: scipy/scipy, scipy/sparse/csgraph/tests/test_shortest_path.py (each test names the case it
ports). The graphs and expected arrays are scipy's; every method of the toolkit runs each case
(csgraph's "auto", "FW", "D", "J" map to "auto", "floyd-warshall", "dijkstra", "johnson"; "BF"
has no counterpart; "min-plus" is the toolkit's own array-namespace Floyd-Warshall). Not ported:
``min_only`` (test_dijkstra_indices_min_only, test_dijkstra_min_only_random), ``return_sparse_dist``
(test_dijkstra_sparse_dist), ``yen`` (test_yen_*): the toolkit has no such options. Decided
differently: a NaN entry is refused (csgraph reads it as no edge: test_NaN_warnings), and Floyd-
Warshall accepts ``indices`` (all pairs computed, the rows kept; csgraph raises).
"""

import numpy as np
import pytest
import scipy.sparse
from scipy.io import mmread
from scipy.sparse.csgraph import construct_dist_matrix, dijkstra

from graphs import path, shortest_paths
from spectral.floor.validation import InputError

directed_G = np.array([[0, 3, 3, 0, 0],
                       [0, 0, 0, 2, 4],
                       [0, 0, 0, 0, 0],
                       [1, 0, 0, 0, 0],
                       [2, 0, 0, 2, 0]], dtype=float)
undirected_G = np.array([[0, 3, 3, 1, 2],
                         [3, 0, 0, 2, 4],
                         [3, 0, 0, 0, 0],
                         [1, 2, 0, 0, 2],
                         [2, 4, 0, 2, 0]], dtype=float)
unweighted_G = (directed_G > 0).astype(float)
inf = np.inf
directed_SP = [[0, 3, 3, 5, 7],
               [3, 0, 6, 2, 4],
               [inf, inf, 0, inf, inf],
               [1, 4, 4, 0, 8],
               [2, 5, 5, 2, 0]]
directed_sparse_zero_G = scipy.sparse.csr_matrix(([0, 1, 2, 3, 1], ([0, 1, 2, 3, 4], [1, 2, 0, 4, 3])), shape=(5, 5))
directed_sparse_zero_SP = [[0, 0, 1, inf, inf],
                           [3, 0, 1, inf, inf],
                           [2, 2, 0, inf, inf],
                           [inf, inf, inf, 0, 3],
                           [inf, inf, inf, 1, 0]]
undirected_sparse_zero_G = scipy.sparse.csr_matrix(
    ([0, 0, 1, 1, 2, 2, 1, 1], ([0, 1, 1, 2, 2, 0, 3, 4], [1, 0, 2, 1, 0, 2, 4, 3])), shape=(5, 5))
undirected_sparse_zero_SP = [[0, 0, 1, inf, inf],
                             [0, 0, 1, inf, inf],
                             [1, 1, 0, inf, inf],
                             [inf, inf, inf, 0, 1],
                             [inf, inf, inf, 1, 0]]
directed_pred = np.array([[-9999, 0, 0, 1, 1],
                          [3, -9999, 0, 1, 1],
                          [-9999, -9999, -9999, -9999, -9999],
                          [3, 0, 0, -9999, 1],
                          [4, 0, 0, 4, -9999]])
undirected_SP = np.array([[0, 3, 3, 1, 2],
                          [3, 0, 6, 2, 4],
                          [3, 6, 0, 4, 5],
                          [1, 2, 4, 0, 2],
                          [2, 4, 5, 2, 0]], dtype=float)
undirected_SP_limit_2 = np.array([[0, inf, inf, 1, 2],
                                  [inf, 0, inf, 2, inf],
                                  [inf, inf, 0, inf, inf],
                                  [1, 2, inf, 0, 2],
                                  [2, inf, inf, 2, 0]], dtype=float)
undirected_SP_limit_0 = np.ones((5, 5), dtype=float) - np.eye(5)
undirected_SP_limit_0[undirected_SP_limit_0 > 0] = inf
undirected_pred = np.array([[-9999, 0, 0, 0, 0],
                            [1, -9999, 0, 1, 1],
                            [2, 0, -9999, 0, 0],
                            [3, 3, 0, -9999, 3],
                            [4, 4, 0, 4, -9999]])
directed_negative_weighted_G = np.array([[0, 0, 0], [-1, 0, 0], [0, -1, 0]], dtype=float)
directed_negative_weighted_SP = np.array([[0, inf, inf], [-1, 0, inf], [-2, -1, 0]], dtype=float)

METHODS = ["auto", "floyd-warshall", "dijkstra", "johnson", "min-plus"]
NONNEGATIVE_FREE = ["floyd-warshall", "johnson", "min-plus"]  # csgraph's FW, J (and BF): negative lengths


def given(G, **kw):
    return shortest_paths(G, weight="given", **kw)


def hops_of_lengths(SP):
    """Hop counts consistent with integer-length paths are not unique; -1 exactly where unreachable."""
    return np.where(np.isinf(np.asarray(SP, dtype=float)), -1, 0)


def check_tree(res, G, SP, directed):
    """Every predecessor row rebuilds the distances (csgraph's construct_dist_matrix, the oracle of
    test_construct_shortest_path) and the hop count is the number of edges on the rebuilt path."""
    pred = np.where(res.predecessors < 0, -9999, res.predecessors).astype(np.int32)
    rebuilt = construct_dist_matrix(G, pred, directed=directed)
    np.testing.assert_array_equal(rebuilt, np.asarray(SP, dtype=float))
    for i in range(len(SP)):
        for j in range(len(SP)):
            nodes = path(res, i, j)
            assert (len(nodes) - 1 if nodes else -1) == res.hops[i, j]


@pytest.mark.parametrize("limit, result", [(0, undirected_SP_limit_0), (2, undirected_SP_limit_2), (np.inf, undirected_SP)])
@pytest.mark.parametrize("method", METHODS)
def test_dijkstra_limit(limit, result, method):
    # test_dijkstra_limit: limit 0 / 2 / inf on undirected_G, directed=False (a length equal to the limit is kept)
    res = given(undirected_G, directed=False, limit=limit, method=method)
    np.testing.assert_array_equal(res.lengths, result)
    np.testing.assert_array_equal(res.hops < 0, np.isinf(result))
    np.testing.assert_array_equal(res.predecessors < 0, np.isinf(result) | np.eye(5, dtype=bool))


@pytest.mark.parametrize("method", METHODS)
def test_directed(method):
    # test_directed
    res = given(directed_G, method=method, directed=True)
    np.testing.assert_array_equal(res.lengths, directed_SP)
    check_tree(res, directed_G, directed_SP, True)


@pytest.mark.parametrize("method", METHODS)
def test_undirected(method):
    # test_undirected: directed_G read undirected, and undirected_G read directed, both give undirected_SP
    np.testing.assert_array_equal(given(directed_G, method=method, directed=False).lengths, undirected_SP)
    np.testing.assert_array_equal(given(undirected_G, method=method, directed=True).lengths, undirected_SP)


@pytest.mark.parametrize("method", METHODS)
def test_directed_sparse_zero(method):
    # test_directed_sparse_zero: a stored zero of a sparse graph is an edge of length 0; two components
    res = given(directed_sparse_zero_G, method=method, directed=True)
    np.testing.assert_array_equal(res.lengths, directed_sparse_zero_SP)
    assert res.hops[0, 1] == 1 and res.hops[0, 2] == 2 and path(res, 0, 2) == [0, 1, 2]


@pytest.mark.parametrize("method", METHODS)
def test_undirected_sparse_zero(method):
    # test_undirected_sparse_zero
    np.testing.assert_array_equal(given(directed_sparse_zero_G, method=method, directed=False).lengths,
                                  undirected_sparse_zero_SP)
    np.testing.assert_array_equal(given(undirected_sparse_zero_G, method=method, directed=True).lengths,
                                  undirected_sparse_zero_SP)


@pytest.mark.parametrize("method", METHODS)
def test_shortest_path_indices(method):
    # test_shortest_path_indices: indices 0..3, directed=False (1-D indices only; csgraph also takes (4, 1), (2, 2)
    # shapes and refuses indices for FW; here Floyd-Warshall computes all pairs and keeps the rows)
    indices = np.arange(4)
    res = given(directed_G, directed=False, indices=indices, method=method)
    np.testing.assert_array_equal(res.lengths, undirected_SP[indices])
    np.testing.assert_array_equal(res.sources, indices)
    assert res.lengths.shape == res.hops.shape == res.predecessors.shape == (4, 5)
    # repeated sources, as csgraph's [0, 0] (test_dijkstra_indices_min_only's index sets)
    for idx in ([0, 2, 4], [0, 4], [3, 4], [0, 0], 3):
        r = given(directed_G, indices=idx, method=method)
        np.testing.assert_array_equal(r.lengths, np.asarray(directed_SP)[np.atleast_1d(idx)])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("directed", [True, False])
def test_predecessors(method, directed):
    # test_predecessors: csgraph's predecessor matrices, from every method (min-plus included: its ties fall
    # as csgraph's here), and every tree rebuilds the distances (construct_dist_matrix)
    SP = directed_SP if directed else undirected_SP
    pred = directed_pred if directed else undirected_pred
    res = given(directed_G, method=method, directed=directed)
    np.testing.assert_array_equal(res.lengths, SP)
    check_tree(res, directed_G, SP, directed)
    np.testing.assert_array_equal(np.where(res.predecessors < 0, -9999, res.predecessors), pred)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("directed", [True, False])
def test_unweighted_path(method, directed):
    # test_unweighted_path: unweighted=True on directed_G equals the weighted paths of its 0/1 graph
    res = given(directed_G, directed=directed, unweighted=True, method=method)
    ref = given(unweighted_G, directed=directed, method=method)
    np.testing.assert_array_equal(res.lengths, ref.lengths)
    reach = np.isfinite(res.lengths)
    np.testing.assert_array_equal(res.hops[reach], res.lengths[reach])  # hop counts are the lengths


@pytest.mark.parametrize("method", NONNEGATIVE_FREE + ["auto"])
@pytest.mark.parametrize("directed", [True, False])
def test_negative_cycles(method, directed):
    # test_negative_cycles: a 5-clique of unit lengths with graph[1, 2] = -2 (1 -> 2 -> 1 has length -1)
    graph = np.ones([5, 5])
    graph.flat[::6] = 0
    graph[1, 2] = -2
    with pytest.raises(InputError, match="negative cycle"):
        given(graph, method=method, directed=directed)


@pytest.mark.parametrize("method", NONNEGATIVE_FREE + ["auto"])
def test_negative_weights(method):
    # test_negative_weights (csgraph: FW, J, BF)
    res = given(directed_negative_weighted_G, method=method, directed=True)
    np.testing.assert_allclose(res.lengths, directed_negative_weighted_SP, atol=1e-10)
    assert res.hops[2, 0] == 2 and path(res, 2, 0) == [2, 1, 0]


def test_negative_weights_refused_where_unsupported():
    # Dijkstra and limit need nonnegative lengths (csgraph's dijkstra warns and answers wrongly)
    with pytest.raises(InputError, match="method='dijkstra' needs nonnegative"):
        given(directed_negative_weighted_G, method="dijkstra")
    for method in ("auto", "johnson", "min-plus"):
        with pytest.raises(InputError, match="limit needs nonnegative"):
            given(directed_negative_weighted_G, method=method, limit=5.0)


@pytest.mark.parametrize("method", METHODS)
def test_masked_input(method):
    # test_masked_input: a masked array (masked entries: no edge)
    masked = np.ma.masked_equal(directed_G, 0)
    np.testing.assert_array_equal(given(masked, method=method).lengths, directed_SP)
    hidden = np.ma.masked_array(directed_G, mask=directed_G == 3)  # the two edges of length 3 are masked
    np.testing.assert_array_equal(given(hidden, method=method).lengths[0], [0, inf, inf, inf, inf])


@pytest.mark.parametrize("method", METHODS)
def test_overwrite(method):
    # test_overwrite: the input is never modified
    G = undirected_G.copy()
    given(G, method=method)
    np.testing.assert_array_equal(G, undirected_G)
    S = scipy.sparse.csr_array(undirected_G)
    data = S.data.copy()
    given(S, method=method)
    np.testing.assert_array_equal(S.data, data)


@pytest.mark.parametrize("method", METHODS)
def test_buffer(method):
    # test_buffer: a sparse matrix with a read-only buffer
    G = scipy.sparse.csr_matrix([[1.0]])
    G.data.flags["WRITEABLE"] = False
    res = given(G, method=method)
    assert res.lengths.tolist() == [[0.0]] and res.hops.tolist() == [[0]]


def test_NaN_warnings():
    # test_NaN_warnings: csgraph reads NaN as no edge; here a NaN is refused (a non-finite number never passes)
    with pytest.raises(InputError, match="NaN"):
        given(np.array([[0, 1], [np.nan, 0]]))
    with pytest.raises(InputError, match="NaN"):
        given(scipy.sparse.csr_array(np.array([[0, 1], [np.nan, 0]])))


@pytest.mark.parametrize("fmt", ["csr_matrix", "csc_matrix", "lil_matrix", "coo_matrix", "csr_array", "dok_array"])
def test_sparse_matrices(fmt):
    # test_sparse_matrices: lil, csr, csc (and coo, dok, the array classes) give the dense answer; a negative edge
    G_dense = np.array([[0, 3, 0, 0, 0],
                        [0, 0, -1, 0, 0],
                        [0, 0, 0, 2, 0],
                        [0, 0, 0, 0, 4],
                        [0, 0, 0, 0, 0]], dtype=float)
    SP = given(G_dense)
    res = given(getattr(scipy.sparse, fmt)(G_dense))
    np.testing.assert_array_equal(res.lengths, SP.lengths)
    np.testing.assert_array_equal(res.hops, SP.hops)
    assert isinstance(res.lengths, np.ndarray) and res.lengths[0, 4] == 8.0 and res.hops[0, 4] == 4


@pytest.mark.parametrize("method", METHODS)
def test_dijkstra_random(method):
    # test_dijkstra_random (gh-17782, a graph that made csgraph's dijkstra hang): every method, against csgraph
    n = 10
    indices = [0, 4, 4, 5, 7, 9, 0, 6, 2, 3, 7, 9, 1, 2, 9, 2, 5, 6]
    indptr = [0, 0, 2, 5, 6, 7, 8, 12, 15, 18, 18]
    data = [0.33629, 0.40458, 0.47493, 0.42757, 0.11497, 0.91653, 0.69084, 0.64979, 0.62555, 0.743, 0.01724,
            0.99945, 0.31095, 0.15557, 0.02439, 0.65814, 0.23478, 0.24072]
    graph = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n, n))
    ref = dijkstra(graph, directed=True)
    res = given(graph, method=method)
    fin = np.isfinite(ref)
    np.testing.assert_array_equal(np.isfinite(res.lengths), fin)
    np.testing.assert_allclose(res.lengths[fin], ref[fin], rtol=4e-16 * 8)  # sums of <= 8 terms, re-associated


def test_gh_17782_segfault():
    # test_gh_17782_segfault: an 84-node MatrixMarket graph (csgraph's dijkstra crashed on it)
    text = """%%MatrixMarket matrix coordinate real general
                84 84 22
                2 1 4.699999809265137e+00
                6 14 1.199999973177910e-01
                9 6 1.199999973177910e-01
                10 16 2.012000083923340e+01
                11 10 1.422000026702881e+01
                12 1 9.645999908447266e+01
                13 18 2.012000083923340e+01
                14 13 4.679999828338623e+00
                15 11 1.199999973177910e-01
                16 12 1.199999973177910e-01
                18 15 1.199999973177910e-01
                32 2 2.299999952316284e+00
                33 20 6.000000000000000e+00
                33 32 5.000000000000000e+00
                36 9 3.720000028610229e+00
                36 37 3.720000028610229e+00
                36 38 3.720000028610229e+00
                37 44 8.159999847412109e+00
                38 32 7.903999328613281e+01
                43 20 2.400000000000000e+01
                43 33 4.000000000000000e+00
                44 43 6.028000259399414e+01
    """
    from io import StringIO

    import networkx as nx

    data = mmread(StringIO(text))
    ref = dijkstra(data, directed=True)
    hops = np.full(ref.shape, -1)  # the oracle's hop counts: networkx's paths (unique on this graph)
    for i, (_, paths) in nx.all_pairs_dijkstra(nx.from_scipy_sparse_array(data, create_using=nx.DiGraph)):
        for j, p in paths.items():
            hops[i, j] = len(p) - 1
    for method in ("auto", "dijkstra", "min-plus"):
        res = given(data, method=method)
        fin = np.isfinite(ref)
        np.testing.assert_array_equal(np.isfinite(res.lengths), fin)
        np.testing.assert_allclose(res.lengths[fin], ref[fin], rtol=1e-15)
        np.testing.assert_array_equal(res.hops, hops)
