"""Tests for spectral.components: structural components (networkx oracle, closed classes,
operator breadth-first search) and numerical disconnection on every eigensolver path."""


import functools

import numpy as np
import pytest
import scipy.sparse as sp

from manifolds import Circle
from spectral import (
    DisconnectedGraphError,
    DisconnectedGraphWarning,
    KernelOperator,
    circulant_spectrum,
    count_components,
    heat_kernel,
    markov_spectrum,
)
from spectral.components import sparse_components
from spectral.floor.backend import to_numpy

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()



def block_diagonal(fna_on):
    x = CIRCLE.sample(40, rng=3)
    B, _ = fna_on(x)
    C = np.zeros((80, 80))
    C[:40, :40] = B
    C[40:, 40:] = B
    return C


@pytest.mark.parametrize("method", ["dense", "lanczos", "matrix-free"])
def test_disconnected_graph_warns_and_raises(method, fna_on):
    C = block_diagonal(fna_on)
    with pytest.warns(DisconnectedGraphWarning, match="2 connected components"):
        spec = markov_spectrum(C, 4, method=method, rng=0)
    assert spec.n_components == 2
    ev = to_numpy(spec.eigenvalues)
    assert np.sum(np.abs(ev - 1.0) <= 1e3 * EPS) == 2  # eigenvalue 1 twice
    with pytest.raises(DisconnectedGraphError, match="strict"):
        markov_spectrum(C, 4, method=method, strict=True)
    # negative control: the connected block alone does not warn (filterwarnings=error would fail)
    assert markov_spectrum(C[:40, :40], 4, method=method, rng=0).n_components == 1


def test_count_components_against_networkx(rng):
    import networkx as nx

    n = 120
    mask = rng.uniform(size=(n, n)) < 0.012
    W = np.where(mask | mask.T, 1.0, 0.0) + np.eye(n)
    G = nx.from_numpy_array(W)
    assert count_components(W, symmetric=True) == nx.number_connected_components(G)
    assert nx.number_connected_components(G) > 3  # the test graph really is fragmented


def test_closed_classes_nonsymmetric():
    # 0 -> 1 (transient 0); {1} and {2, 3} closed: eigenvalue 1 has multiplicity 2
    C = np.array(
        [[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 2.0, 1.0]]
    )
    A = C / C.sum(axis=1, keepdims=True)
    mult = int(np.sum(np.abs(np.linalg.eigvals(A) - 1.0) < 1e-12))
    assert count_components(C) == mult == 2
    with pytest.warns(DisconnectedGraphWarning):
        spec = markov_spectrum(C)
    assert spec.n_components == 2
    # stored sparse scores: the same count from their entries (exact, no matvec search)
    from spectral import SparseScores

    with pytest.warns(DisconnectedGraphWarning, match="has 2 connected"):
        spec = markov_spectrum(SparseScores(sp.csr_array(C), symmetric=False), 2, rng=0)
    assert spec.n_components == 2


def closed_classes_networkx(W):
    """Independent oracle: strong components of W > 0 with no edge leaving them (networkx condensation)."""
    import networkx as nx

    G = nx.from_numpy_array((W > 0).astype(int), create_using=nx.DiGraph)
    H = nx.condensation(G)
    return sum(1 for c in H.nodes if H.out_degree(c) == 0)


@pytest.mark.parametrize("tile", [None, 64])  # default tiles, and tiles of a row or less (many tiles)
def test_count_components_random_patterns_against_networkx(rng, tile, monkeypatch):
    import networkx as nx

    import spectral.components as components

    if tile is not None:
        monkeypatch.setattr(components, "COMPONENT_TILE_ENTRIES", tile)
    n = 90
    for p in (0.01, 0.03, 0.2):
        mask = rng.uniform(size=(n, n)) < p
        W = np.where(mask, rng.uniform(0.5, 2.0, size=(n, n)), 0.0)
        S = np.maximum(W, W.T)
        expected_sym = nx.number_connected_components(nx.from_numpy_array(S))
        assert count_components(S, symmetric=True) == expected_sym
        assert count_components(W, symmetric=False) == closed_classes_networkx(W)
        assert sparse_components(sp.csr_array(S), symmetric=True) == expected_sym
        assert sparse_components(sp.csr_array(W), symmetric=False) == closed_classes_networkx(W)
    assert expected_sym == 1 and closed_classes_networkx(np.where(rng.uniform(size=(n, n)) < 0.01, 1.0, 0.0)) > 3


def test_count_components_zero_diagonal_and_stored_zeros():
    # i.i.d. points: the kernel drops its self-loops, min(C) = 0 on the diagonal only -> connected
    C = np.ones((6, 6)) - np.eye(6)
    assert count_components(C, symmetric=True) == 1 and count_components(C, symmetric=False) == 1
    # negative control: cutting node 5 off (row and column) gives two components, one fewer edge one
    cut = C.copy()
    cut[5, :] = cut[:, 5] = 0.0
    assert count_components(cut, symmetric=True) == 2
    one_way = C.copy()
    one_way[5, :] = 0.0  # 5 has no out-edges: {5} closed, the rest leak into it
    assert count_components(one_way, symmetric=False) == 1
    one_way[5, 5] = 1.0
    assert count_components(one_way, symmetric=False) == closed_classes_networkx(one_way) == 1
    # a stored zero of a sparse matrix is not an edge
    r, c = np.nonzero(cut)
    stored = sp.csr_array((np.r_[cut[r, c], 0.0, 0.0], (np.r_[r, 5, 0], np.r_[c, 0, 5])), shape=(6, 6))
    assert stored.nnz == np.count_nonzero(cut) + 2
    assert sparse_components(stored, symmetric=True) == 2
    assert sparse_components(sp.csr_array(C), symmetric=True) == 1


def test_count_components_peak_memory(monkeypatch):
    import tracemalloc

    import spectral.components as components

    monkeypatch.setattr(components, "COMPONENT_TILE_ENTRIES", 1 << 14)  # tiles of 16 rows: ~0.03 copies
    n = 1000
    C = np.ones((n, n)) - np.eye(n)
    copy = C.nbytes
    peaks = {}
    for name, M in (("zero diagonal", C), ("one more zero", C.copy())):
        if name == "one more zero":
            M[0, 1] = M[1, 0] = 0.0
        tracemalloc.start()
        assert count_components(M, symmetric=True, cmin=0.0) == 1
        peaks[name] = tracemalloc.get_traced_memory()[1] / copy
        tracemalloc.stop()
    # zero diagonal only: one pass of row tiles, no edge list (measured 0.011 copies of C)
    assert peaks["zero diagonal"] < 0.05, peaks
    # otherwise int32 column indices of every edge: 4 bytes per entry = 0.5 float64 copies plus tiles
    # (measured 0.53); the former edge list with its float64 conversion took ~3 copies
    assert peaks["one more zero"] < 0.65, peaks


def test_operator_components_by_matvec_bfs():
    # two clusters 100 apart; heat kernel with eps = 0.01 underflows to exact 0 between them
    x = np.concatenate([np.linspace(0, 1, 30), np.linspace(100, 101, 30)])[:, None]

    def dist(a, b):
        return np.abs(a[:, :1] - b[:, :1].T)

    op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=0.01), distance=dist)
    with pytest.warns(DisconnectedGraphWarning, match="2 connected"):
        spec = markov_spectrum(op, 3, rng=0)
    assert spec.n_components == 2 and spec.components_exact
    with pytest.raises(DisconnectedGraphError):
        markov_spectrum(op, 3, strict=True)
    one = KernelOperator(x[:30], kernel=functools.partial(heat_kernel, eps=0.01), distance=dist)
    assert markov_spectrum(one, 3, rng=0).n_components == 1


# ----------------------------------------------------------------------------- numerical disconnection


def two_clusters(gap=10.0, n=30, seed=0):
    """Two clusters of n points (spread ~0.3) ``gap`` apart on a line; heat kernel at eps = 0.5.

    At gap 10 the cross-cluster scores are exp(-d^2) with d in about [9, 11]: 1e-53..1e-35, all
    positive (the graph C > 0 is connected) but below round-off next to the O(1) degrees.
    """
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(0.0, 0.3, n), rng.normal(gap, 0.3, n)])[:, None]
    return x, heat_kernel(np.abs(x - x.T), eps=0.5)


def test_two_clusters_are_connected_structurally_but_not_numerically():
    _, C = two_clusters()
    cross = C[:30, 30:]
    assert cross.min() > 0 and cross.max() < 1e-30  # positive, far below eps relative to the degrees
    assert count_components(C) == 1
    # independent check that eigenvalue 1 is double in floating point: numpy's eigvalsh of D^-1/2 C D^-1/2
    d = C.sum(axis=1)
    ref = np.sort(np.linalg.eigvalsh(C / np.sqrt(np.outer(d, d))))[::-1]
    assert abs(1.0 - ref[1]) <= 1e-15 and 1.0 - ref[2] > 1e-3


@pytest.mark.parametrize("method", ["dense", "lanczos", "matrix-free"])
def test_numerical_disconnection_warns_on_every_stored_path(method):
    _, C = two_clusters()
    with pytest.warns(DisconnectedGraphWarning, match=r"numerically disconnected: 2 eigenvalues lie within 2.2e-14 of 1"):
        spec = markov_spectrum(C, 4, method=method, rng=0)
    assert spec.n_components == 1 and spec.near_one == 2
    with pytest.raises(DisconnectedGraphError, match="numerically disconnected.*strict=True"):
        markov_spectrum(C, 4, method=method, strict=True, rng=0)
    # negative control: clusters 3 apart (cross scores ~1e-4) are resolved, nothing is reported
    # (a warning would fail this test under filterwarnings=error)
    _, C3 = two_clusters(gap=3.0)
    assert markov_spectrum(C3, 4, method=method, rng=0).near_one == 1


def test_numerical_disconnection_warns_for_operators_and_the_general_path():
    x, C = two_clusters()

    def dist(a, b):
        return np.abs(a[:, :1] - b[:, :1].T)

    op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=0.5), distance=dist)
    with pytest.warns(DisconnectedGraphWarning, match="numerically disconnected"):
        spec = markov_spectrum(op, 3, rng=0)
    assert spec.method == "matrix-free" and spec.n_components == 1 and spec.near_one == 2
    # Q != K: C diag(w) is not symmetric; its two clusters still give eigenvalue 1 twice (general path)
    w = np.linspace(0.5, 2.0, C.shape[0])
    with pytest.warns(DisconnectedGraphWarning, match="numerically disconnected"):
        spec = markov_spectrum(C * w[None, :], 4, method="dense")
    assert not spec.symmetric and spec.near_one == 2


def test_numerical_disconnection_warns_on_the_circulant_path():
    # 16 grid points 0.39 apart, heat kernel eps = 1e-3: c_1 = exp(-77) = 4e-34 > 0 (connected by gcd),
    # but every eta_m equals 1 in floating point: each point is its own part
    grid = CIRCLE.grid(16)
    row = heat_kernel(CIRCLE.distance(grid[:1], grid)[0], eps=1e-3)
    assert 0 < row[1] < 1e-30
    with pytest.warns(DisconnectedGraphWarning, match="numerically disconnected: 16 eigenvalues"):
        spec = circulant_spectrum(row, 3)
    assert spec.n_components == 1 and spec.near_one == 16
    # negative control: eps = 0.05 resolves every mode (1 - eta_1 = 1.5e-2)
    wide = heat_kernel(CIRCLE.distance(grid[:1], grid)[0], eps=0.05)
    assert circulant_spectrum(wide, 3).near_one == 1


def test_structural_disconnection_reported_once(fna_on):
    C = block_diagonal(fna_on)
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        markov_spectrum(C, 4, method="dense")
    assert [type(w.message) for w in caught] == [DisconnectedGraphWarning]
    assert "2 connected components" in str(caught[0].message)
