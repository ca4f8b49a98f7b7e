"""networkx's shortest-path tests that fit graphs.shortest_paths, ported to weight matrices.

Sources (networkx/networkx, networkx/algorithms/shortest_paths/tests/): test_dense.py (TestFloyd),
test_dense_numpy.py (TestFloydNumpy), test_weighted.py (WeightedTestBase graphs, TestWeightedPath,
TestBellmanFordAndGoldbergRadzik, TestJohnsonAlgorithm), test_unweighted.py (TestUnweightedPath);
each test names the case it ports. A networkx graph becomes a weight matrix over its sorted nodes
(``weight="given"``; an undirected graph is read with ``directed=False``); the expected numbers are
networkx's. Not ported: multigraphs (a matrix holds one edge per ordered pair: the ports take the
lightest parallel edge, which is what the shortest path uses), ignore_nodes/ignore_edges,
bidirectional and A* searches, weight functions (the ports apply the function to the matrix).
Decided differently: a negative cycle anywhere in the graph is refused, also when the sources cannot
reach it (networkx's single-source Bellman-Ford answers for the source's component).
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse

from graphs import path, shortest_paths
from spectral.floor.validation import InputError

METHODS = ["auto", "floyd-warshall", "dijkstra", "johnson", "min-plus"]
inf = np.inf


def matrix(G, weight="weight", sparse=False):
    """(weight matrix over the sorted nodes, node list); absent weights count 1, as networkx does."""
    nodes = sorted(G)
    pos = {v: i for i, v in enumerate(nodes)}
    rows, cols, vals = [], [], []
    for u, v, d in G.edges(data=True):
        for a, b in ((u, v),) if G.is_directed() else ((u, v), (v, u)):
            rows.append(pos[a])
            cols.append(pos[b])
            vals.append(float(d.get(weight, 1)))
    W = scipy.sparse.coo_array((vals, (rows, cols)), shape=(len(nodes), len(nodes))).tocsr()
    return (W if sparse else W.toarray()), nodes


def run(G, method="auto", weight="weight", sparse=False, **kw):
    W, nodes = matrix(G, weight, sparse)
    return shortest_paths(W, weight="given", method=method, directed=G.is_directed(), **kw), nodes


def dist(res, nodes):
    return {u: {v: float(res.lengths[i, j]) for j, v in enumerate(nodes)} for i, u in enumerate(nodes)}


def node_path(res, nodes, s, t):
    return [nodes[k] for k in path(res, nodes.index(s), nodes.index(t))]


def validate_path(G, s, t, soln_len, p, weight="weight"):
    """test_weighted.validate_path: the path runs s -> t and its edge lengths add up to soln_len."""
    assert p[0] == s and p[-1] == t
    assert sum(G[u][v].get(weight, 1) for u, v in zip(p[:-1], p[1:])) == soln_len


@pytest.fixture
def graphs():
    """test_weighted.WeightedTestBase.setup."""
    cnlti = nx.convert_node_labels_to_integers
    g = {"grid": cnlti(nx.grid_2d_graph(4, 4), first_label=1, ordering="sorted"),
         "cycle": nx.cycle_graph(7), "directed_cycle": nx.cycle_graph(7, create_using=nx.DiGraph())}
    g["XG"] = nx.DiGraph()
    g["XG"].add_weighted_edges_from([("s", "u", 10), ("s", "x", 5), ("u", "v", 1), ("u", "x", 2), ("v", "y", 1),
                                     ("x", "u", 3), ("x", "v", 5), ("x", "y", 2), ("y", "s", 7), ("y", "v", 6)])
    g["XG2"] = nx.DiGraph()
    g["XG2"].add_weighted_edges_from([[1, 4, 1], [4, 5, 1], [5, 6, 1], [6, 3, 1], [1, 3, 50], [1, 2, 100], [2, 3, 100]])
    g["XG3"] = nx.Graph()
    g["XG3"].add_weighted_edges_from([[0, 1, 2], [1, 2, 12], [2, 3, 1], [3, 4, 5], [4, 5, 1], [5, 0, 10]])
    g["XG4"] = nx.Graph()
    g["XG4"].add_weighted_edges_from([[0, 1, 2], [1, 2, 2], [2, 3, 1], [3, 4, 1], [4, 5, 1], [5, 6, 1], [6, 7, 1],
                                      [7, 0, 1]])
    g["G"] = nx.DiGraph()  # no weights
    g["G"].add_edges_from([("s", "u"), ("s", "x"), ("u", "v"), ("u", "x"), ("v", "y"), ("x", "u"), ("x", "v"),
                           ("x", "y"), ("y", "s"), ("y", "v")])
    return g


# ---------------------------------------------------------------------------------------- test_dense.py

@pytest.mark.parametrize("method", METHODS)
def test_floyd_warshall_predecessor_and_distance(graphs, method):
    # test_dense.py TestFloyd.test_floyd_warshall_predecessor_and_distance
    XG = graphs["XG"]
    res, nodes = run(XG, method)
    d = dist(res, nodes)
    assert d["s"]["v"] == 9 and nodes[res.predecessors[nodes.index("s"), nodes.index("v")]] == "u"
    assert d == {"y": {"y": 0, "x": 12, "s": 7, "u": 15, "v": 6},
                 "x": {"y": 2, "x": 0, "s": 9, "u": 3, "v": 4},
                 "s": {"y": 7, "x": 5, "s": 0, "u": 8, "v": 9},
                 "u": {"y": 2, "x": 2, "s": 9, "u": 0, "v": 1},
                 "v": {"y": 1, "x": 13, "s": 8, "u": 16, "v": 0}}
    GG = XG.to_undirected()
    GG["u"]["x"]["weight"] = 2  # the lower of the two weights, as networkx's test sets it
    res, nodes = run(GG, method)
    assert dist(res, nodes)["s"]["v"] == 8
    res, nodes = run(graphs["G"], method)  # no weights
    assert dist(res, nodes)["s"]["v"] == 2
    XG = nx.DiGraph()
    XG.add_weighted_edges_from([("v", "x", 5.0), ("y", "x", 5.0), ("v", "y", 6.0), ("x", "u", 2.0)])
    res, nodes = run(XG, method)
    assert dist(res, nodes) == {"v": {"v": 0, "x": 5.0, "y": 6.0, "u": 7.0},
                                "x": {"x": 0, "u": 2.0, "v": inf, "y": inf},
                                "y": {"y": 0, "x": 5.0, "v": inf, "u": 7.0},
                                "u": {"u": 0, "v": inf, "x": inf, "y": inf}}
    pred = {nodes[i]: {nodes[j]: nodes[p] for j, p in enumerate(row) if p >= 0}
            for i, row in enumerate(res.predecessors) if (row >= 0).any()}
    assert pred == {"v": {"x": "v", "y": "v", "u": "x"}, "x": {"u": "x"}, "y": {"x": "y", "u": "x"}}


@pytest.mark.parametrize("method", METHODS)
def test_reconstruct_path(graphs, method):
    # test_dense.py TestFloyd.test_reconstruct_path (s -> v is s, x, u, v; the empty path to itself)
    res, nodes = run(graphs["XG"], method)
    assert node_path(res, nodes, "s", "v") == ["s", "x", "u", "v"]
    assert node_path(res, nodes, "s", "s") == ["s"] and res.hops[nodes.index("s"), nodes.index("v")] == 3


@pytest.mark.parametrize("method", METHODS)
def test_cycle_weighted_weighted2(method):
    # test_dense.py TestFloyd.test_cycle, test_weighted, test_weighted2, test_weight_parameter
    res, _ = run(nx.cycle_graph(7), method)
    assert res.lengths[0, 3] == 3 and res.predecessors[0, 3] == 2 and res.lengths[0, 4] == 3
    XG3 = nx.Graph()
    XG3.add_weighted_edges_from([[0, 1, 2], [1, 2, 12], [2, 3, 1], [3, 4, 5], [4, 5, 1], [5, 0, 10]])
    res, _ = run(XG3, method)
    assert res.lengths[0, 3] == 15 and res.predecessors[0, 3] == 2
    XG4 = nx.Graph()
    XG4.add_edges_from([(0, 1, {"heavy": 2}), (1, 2, {"heavy": 2}), (2, 3, {"heavy": 1}), (3, 4, {"heavy": 1}),
                        (4, 5, {"heavy": 1}), (5, 6, {"heavy": 1}), (6, 7, {"heavy": 1}), (7, 0, {"heavy": 1})])
    res, _ = run(XG4, method, weight="heavy")
    assert res.lengths[0, 2] == 4 and res.predecessors[0, 2] == 1


@pytest.mark.parametrize("method", METHODS)
def test_zero_distance(graphs, method):
    # test_dense.py TestFloyd.test_zero_distance: a positive self-loop leaves the distance to itself 0
    XG = graphs["XG"]
    XG.add_edge("x", "x", weight=3)
    for G in (XG, XG.to_undirected()):
        res, _ = run(G, method)
        np.testing.assert_array_equal(np.diagonal(res.lengths), 0.0)
        np.testing.assert_array_equal(np.diagonal(res.hops), 0)


@pytest.mark.parametrize("method", ["auto", "floyd-warshall", "johnson", "min-plus"])
def test_zero_weight(method):
    # test_dense.py TestFloyd.test_zero_weight and test_dense_numpy.py test_zero_weight: negative lengths and a
    # zero-length edge 5 -> 4, dist 1 -> 3 = -14; the zero edge exists only in the sparse matrix (a dense 0 is
    # no edge, as in csgraph: then the best path is 1 -> 2 -> 3, -6)
    G = nx.DiGraph()
    G.add_weighted_edges_from([(1, 2, -2), (2, 3, -4), (1, 5, 1), (5, 4, 0), (4, 3, -5), (2, 5, -7)])
    res, nodes = run(G, method, sparse=True)
    assert res.lengths[nodes.index(1), nodes.index(3)] == -14 and res.lengths.min() == -14
    assert node_path(res, nodes, 1, 3) == [1, 2, 5, 4, 3]
    dense, nodes = run(G, method)
    assert dense.lengths[nodes.index(1), nodes.index(3)] == -6


@pytest.mark.parametrize("method", ["auto", "floyd-warshall", "johnson", "min-plus"])
def test_negative_cycle(method):
    # test_dense.py TestFloyd.test_negative_cycle (networkx raises NetworkXUnbounded)
    G = nx.cycle_graph(5, create_using=nx.DiGraph())
    G.add_edge(1, 2, weight=-7)
    cases = [G]
    G = nx.cycle_graph(5)  # undirected: a negative edge is a negative cycle
    G.add_edge(1, 2, weight=-3)
    cases.append(G)
    cases.append(nx.DiGraph([(1, 1, {"weight": -1})]))  # a negative self-loop (one node)
    G = nx.Graph()
    G.add_edge(0, 1, weight=-1)
    cases.append(G)
    for G in cases:
        for sparse in (False, True):
            with pytest.raises(InputError, match="negative cycle"):
                run(G, method, sparse=sparse)


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("n, prob", [(10, 0.2), (15, 0.4), (19, 0.8)])
def test_floyd_warshall_consistency(seed, n, prob):
    # test_dense.py test_floyd_warshall_consistency (a sample of its seeds, sizes and densities): every method
    # agrees exactly with networkx's floyd_warshall_numpy, unweighted and with integer weights 1..max_weight
    from random import Random

    rng = Random(seed)
    G = nx.erdos_renyi_graph(n, prob, seed=rng)
    cases = [(G.copy(), None)]
    for max_weight in (5, 10, 1000):
        for u, v in G.edges():
            G[u][v]["w"] = rng.randint(1, max_weight)
        cases.append((G.copy(), "w"))
    for H, weight in cases:
        ref = nx.floyd_warshall_numpy(H, nodelist=sorted(H), weight=weight or "weight")
        for method in METHODS:
            res, _ = run(H, method, weight=weight or "weight", unweighted=weight is None)
            np.testing.assert_array_equal(res.lengths, ref)


# ---------------------------------------------------------------------------------- test_dense_numpy.py

@pytest.mark.parametrize("method", METHODS)
def test_dense_numpy_cases(method):
    # test_dense_numpy.py TestFloydNumpy.test_cycle_numpy, test_weighted_numpy (XG3, XG4), test_directed_cycle_numpy
    res, _ = run(nx.cycle_graph(7), method)
    assert res.lengths[0, 3] == 3 and res.lengths[0, 4] == 3
    G = nx.DiGraph()
    nx.add_cycle(G, [0, 1, 2, 3])
    res, _ = run(G, method)
    np.testing.assert_array_equal(res.lengths, nx.floyd_warshall_numpy(G, nodelist=[0, 1, 2, 3]))
    np.testing.assert_array_equal(res.lengths, (np.arange(4)[None, :] - np.arange(4)[:, None]) % 4)
    np.testing.assert_array_equal(res.hops, res.lengths)


# ------------------------------------------------------------------------------------- test_weighted.py

@pytest.mark.parametrize("method", METHODS)
def test_dijkstra(graphs, method):
    # test_weighted.py TestWeightedPath.test_dijkstra (and TestJohnsonAlgorithm.test_graphs)
    XG = graphs["XG"]
    res, nodes = run(XG, method)
    validate_path(XG, "s", "v", 9, node_path(res, nodes, "s", "v"))
    assert dist(res, nodes)["s"]["v"] == 9
    GG = XG.to_undirected()
    GG["u"]["x"]["weight"] = 2
    res, nodes = run(GG, method)
    validate_path(GG, "s", "v", 8, node_path(res, nodes, "s", "v"))
    for name, s, t, length in (("XG2", 1, 3, 4), ("XG3", 0, 3, 15), ("XG4", 0, 2, 4)):
        G = graphs[name]
        res, nodes = run(G, method)
        validate_path(G, s, t, length, node_path(res, nodes, s, t))
        assert dist(res, nodes)[s][t] == length
    res, nodes = run(graphs["G"], method)
    validate_path(graphs["G"], "s", "v", 2, node_path(res, nodes, "s", "v"))
    res, nodes = run(graphs["cycle"], method)
    validate_path(graphs["cycle"], 0, 3, 3, node_path(res, nodes, 0, 3))
    validate_path(graphs["cycle"], 0, 4, 3, node_path(res, nodes, 0, 4))
    assert node_path(res, nodes, 0, 0) == [0]


@pytest.mark.parametrize("method", METHODS)
def test_dijkstra_predecessor(method):
    # test_weighted.py TestWeightedPath.test_dijkstra_predecessor (path_graph(4), grid_2d_graph(2, 2) from (0, 0),
    # XG with cutoff = 8: 'v' (at 9) is beyond the limit)
    res, _ = run(nx.path_graph(4), method, indices=0)
    assert res.predecessors.tolist() == [[-1, 0, 1, 2]] and res.lengths.tolist() == [[0, 1, 2, 3]]
    res, nodes = run(nx.grid_2d_graph(2, 2), method, indices=0)
    assert nodes == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert res.lengths.tolist() == [[0, 1, 1, 2]] and res.predecessors[0, 3] in (1, 2)  # either tie
    XG = nx.DiGraph()
    XG.add_weighted_edges_from([("s", "u", 10), ("s", "x", 5), ("u", "v", 1), ("u", "x", 2), ("v", "y", 1),
                                ("x", "u", 3), ("x", "v", 5), ("x", "y", 2), ("y", "s", 7), ("y", "v", 6)])
    W, nodes = matrix(XG)
    s, v = nodes.index("s"), nodes.index("v")
    full = shortest_paths(W, weight="given", method=method, indices=s)
    assert full.lengths[0, v] == 9 and nodes[full.predecessors[0, v]] == "u"
    cut = shortest_paths(W, weight="given", method=method, indices=s, limit=8)
    assert cut.lengths[0, v] == inf and cut.hops[0, v] == -1 and cut.predecessors[0, v] == -1
    assert path(cut, s, v) == [] and cut.lengths[0, nodes.index("u")] == 8  # a length equal to the limit is kept


@pytest.mark.parametrize("method", METHODS)
def test_single_source_dijkstra_path_length(method):
    # test_weighted.py TestWeightedPath.test_single_source_dijkstra_path_length: MXG4 (XG4 plus a parallel 0-1
    # edge of weight 3: the matrix keeps the lighter, 2); dist 0 -> 2 = 4, beyond cutoff 2
    G = nx.Graph()
    G.add_weighted_edges_from([[0, 1, 2], [1, 2, 2], [2, 3, 1], [3, 4, 1], [4, 5, 1], [5, 6, 1], [6, 7, 1], [7, 0, 1]])
    assert run(G, method, indices=0)[0].lengths[0, 2] == 4
    assert run(G, method, indices=0, limit=2)[0].lengths[0, 2] == inf


@pytest.mark.parametrize("method", ["auto", "floyd-warshall", "johnson", "min-plus"])
def test_negative_weight_cycle_and_negative_weights(method):
    # test_weighted.py TestBellmanFordAndGoldbergRadzik.test_negative_weight_cycle: refused; its "no negative
    # cycle but negative weight" part: a directed 5-cycle with 1 -> 2 of length -3
    G = nx.cycle_graph(5, create_using=nx.DiGraph())
    G.add_edge(1, 2, weight=-7)
    with pytest.raises(InputError, match="negative cycle"):
        run(G, method)
    G = nx.cycle_graph(5, create_using=nx.DiGraph())
    G.add_edge(1, 2, weight=-3)
    res, nodes = run(G, method, indices=0)
    assert res.lengths.tolist() == [[0, 1, -2, -1, 0]]
    assert [node_path(res, nodes, 0, t) for t in range(5)] == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3], [0, 1, 2, 3, 4]]
    assert res.predecessors.tolist() == [[-1, 0, 1, 2, 3]] and res.hops.tolist() == [[0, 1, 2, 3, 4]]


@pytest.mark.parametrize("method", METHODS)
def test_not_connected(method):
    # test_weighted.py TestBellmanFordAndGoldbergRadzik.test_not_connected: complete_graph(6) plus a separate
    # component {10, 11, 12}; from 0 every clique node is 1 away, the others unreachable
    G = nx.complete_graph(6)
    G.add_edge(10, 11)
    G.add_edge(10, 12)
    res, _ = run(G, method, indices=0)
    assert res.lengths.tolist() == [[0, 1, 1, 1, 1, 1, inf, inf, inf]]
    assert res.predecessors.tolist() == [[-1, 0, 0, 0, 0, 0, -1, -1, -1]]
    assert res.hops.tolist() == [[0, 1, 1, 1, 1, 1, -1, -1, -1]]


def test_not_connected_negative_cycle_elsewhere_is_refused():
    # the second part of test_not_connected: a negative cycle (A, B, C; load -10) in a component the source
    # cannot reach; networkx answers for the source, the toolkit refuses the graph (Johnson's reweighting sees
    # every cycle)
    G = nx.complete_graph(6)
    G.add_edges_from([("A", "B", {"load": 3}), ("B", "C", {"load": -10}), ("C", "A", {"load": 2})])
    W, nodes = matrix(nx.relabel_nodes(G, str), weight="load")
    with pytest.raises(InputError, match="negative cycle"):
        shortest_paths(W, weight="given", directed=False, indices=nodes.index("0"))


@pytest.mark.parametrize("method", METHODS)
def test_others(method):
    # test_weighted.py TestBellmanFordAndGoldbergRadzik.test_others: XG s -> v, path_graph(4) from 0 and 3,
    # grid_2d_graph(2, 2) from (0, 0)
    XG = nx.DiGraph()
    XG.add_weighted_edges_from([("s", "u", 10), ("s", "x", 5), ("u", "v", 1), ("u", "x", 2), ("v", "y", 1),
                                ("x", "u", 3), ("x", "v", 5), ("x", "y", 2), ("y", "s", 7), ("y", "v", 6)])
    res, nodes = run(XG, method)
    assert node_path(res, nodes, "s", "v") == ["s", "x", "u", "v"] and dist(res, nodes)["s"]["v"] == 9
    res, _ = run(nx.path_graph(4), method, indices=[0, 3])
    assert res.lengths.tolist() == [[0, 1, 2, 3], [3, 2, 1, 0]]
    assert res.predecessors.tolist() == [[-1, 0, 1, 2], [1, 2, 3, -1]]
    assert [path(res, 3, t) for t in range(4)] == [[3, 2, 1, 0], [3, 2, 1], [3, 2], [3]]
    res, _ = run(nx.grid_2d_graph(2, 2), method, indices=0)
    assert res.lengths.tolist() == [[0, 1, 1, 2]] and res.hops.tolist() == [[0, 1, 1, 2]]


@pytest.mark.parametrize("method", ["auto", "floyd-warshall", "johnson", "min-plus"])
def test_johnson_negative_weights_and_cycle(method):
    # test_weighted.py TestJohnsonAlgorithm.test_negative_weights (the paths dict) and test_negative_cycle
    G = nx.DiGraph()
    G.add_weighted_edges_from([("0", "3", 3), ("0", "1", -5), ("0", "2", 2), ("1", "2", 4), ("2", "3", 1)])
    res, nodes = run(G, method)
    paths = {s: {t: node_path(res, nodes, s, t) for t in nodes if node_path(res, nodes, s, t)} for s in nodes}
    assert paths == {"1": {"1": ["1"], "3": ["1", "2", "3"], "2": ["1", "2"]},
                     "0": {"1": ["0", "1"], "0": ["0"], "3": ["0", "1", "2", "3"], "2": ["0", "1", "2"]},
                     "3": {"3": ["3"]}, "2": {"3": ["2", "3"], "2": ["2"]}}
    G.add_weighted_edges_from([("1", "0", -5)])
    with pytest.raises(InputError, match="negative cycle"):
        run(G, method)
    with pytest.raises(InputError, match="negative cycle"):
        run(G.to_undirected(), method)


def test_weight_function():
    # test_weighted.py TestWeightedPath.test_weight_function: lengths 1 / weight make the direct edge 0 -> 2 the
    # shortest (1/10); the plain weights go round (0, 1, 2) with length 2
    W = np.array([[0, 1, 10], [1, 0, 1], [10, 1, 0]], dtype=float)
    plain = shortest_paths(W, weight="given", directed=False)
    assert plain.lengths[0, 2] == 2 and path(plain, 0, 2) == [0, 1, 2]
    inverse = shortest_paths(np.divide(1.0, W, out=np.zeros_like(W), where=W > 0), weight="given", directed=False)
    assert inverse.lengths[0, 2] == 1 / 10 and path(inverse, 0, 2) == [0, 2]


# ----------------------------------------------------------------------------------- test_unweighted.py

@pytest.mark.parametrize("method", METHODS)
def test_unweighted(graphs, method):
    # test_unweighted.py TestUnweightedPath: test_bidirectional_shortest_path, test_shortest_path_length,
    # test_single_source_shortest_path(_length), test_all_pairs_shortest_path(_length)
    res, _ = run(graphs["cycle"], method, unweighted=True)
    assert path(res, 0, 3) == [0, 1, 2, 3] and path(res, 0, 4) == [0, 6, 5, 4] and res.lengths[0, 3] == 3
    assert dict(enumerate(res.lengths[0].tolist())) == {0: 0, 1: 1, 2: 2, 3: 3, 4: 3, 5: 2, 6: 1}
    grid, gnodes = run(graphs["grid"], method, unweighted=True)
    p = node_path(grid, gnodes, 1, 12)
    validate_path(graphs["grid"], 1, 12, 5, p)  # networkx's is [1, 2, 3, 4, 8, 12]; several tie
    assert grid.lengths[gnodes.index(1), gnodes.index(12)] == 5 and grid.lengths[gnodes.index(1), gnodes.index(16)] == 6
    res, _ = run(graphs["directed_cycle"], method, unweighted=True)
    assert path(res, 0, 3) == [0, 1, 2, 3] and res.lengths[0, 4] == 4
    np.testing.assert_array_equal(res.hops, res.lengths)


@pytest.mark.parametrize("method", METHODS)
def test_predecessor_and_cutoff(method):
    # test_unweighted.py test_predecessor, test_predecessor_cutoff, test_predecessor_target: path_graph(4)
    res, _ = run(nx.path_graph(4), method, indices=0, unweighted=True)
    assert res.predecessors.tolist() == [[-1, 0, 1, 2]]
    cut, _ = run(nx.path_graph(4), method, indices=0, unweighted=True, limit=2)
    assert cut.lengths.tolist() == [[0, 1, 2, inf]] and path(cut, 0, 3) == [] and path(cut, 0, 2) == [0, 1, 2]
    res, _ = run(nx.grid_2d_graph(2, 2), method, indices=0, unweighted=True)
    assert res.predecessors[0, 1] == 0 and res.predecessors[0, 2] == 0 and res.predecessors[0, 3] in (1, 2)
