"""Tests for spectral.components: structural components (networkx oracle, closed classes,
operator breadth-first search) and numerical disconnection on every eigensolver path."""

import functools

import numpy as np
import pytest

from manifolds import Circle
from spectral import (
    DisconnectedGraphError,
    DisconnectedGraphWarning,
    KernelOperator,
    count_components,
    fna_kernel,
    heat_kernel,
    markov_spectrum,
    pairwise,
)
from spectral.backend import to_numpy

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()


def fna_on(points, *, alpha=1.2, scale=0.05):
    kern = functools.partial(fna_kernel, alpha=alpha, scale=scale, dim=1)
    return pairwise(points, kernel=kern, distance=CIRCLE.distance), kern


def block_diagonal():
    x = CIRCLE.sample(40, rng=3)
    B, _ = fna_on(x)
    C = np.zeros((80, 80))
    C[:40, :40] = B
    C[40:, 40:] = B
    return C


@pytest.mark.parametrize("method", ["dense", "lanczos", "matrix-free"])
def test_disconnected_graph_warns_and_raises(method):
    C = block_diagonal()
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
