"""graphs.spectral_gap on networkx's graph families: both gaps, plain and lazy walks, dense and sparse.

References are independent of the code under test: closed forms of the walk's eigenvalues where they
exist (cycle ``cos(2 pi k / n)``, path ``cos(pi k / (n - 1))``, complete graph ``-1 / (n - 1)``,
complete bipartite ``{1, 0, -1}``), otherwise ``numpy.linalg.eigvals`` of the transition matrix built
from networkx's adjacency matrix, and networkx's own normalised algebraic connectivity (the one-sided
gap of the walk). The absolute gap is ``1 - max_{k >= 2} |eta_k|``, the one-sided gap ``1 - lambda_2``.
"""

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import graphs
from graphs import spectral_gap
from spectral.floor.validation import InputError

#: Dense LAPACK gaps of these walks (n <= 60) match the closed forms and numpy.linalg.eigvals to <= 1.3e-15
#: (measured over every case of this file); 1e-12 keeps a margin of ~800 and still sees any wrong
#: eigenvalue choice (the two gaps differ by >= 0.06 wherever they differ here).
ATOL = 1e-12
#: ARPACK (tol=0) against the dense solver and eigvals on the same walks: <= 1.6e-15 measured; 1e-10 leaves
#: room for other BLAS builds and start vectors.
ARPACK_ATOL = 1e-10


def walk(G):
    """Transition matrix ``D^-1 A`` of the simple random walk on ``G`` (from networkx's adjacency)."""
    a = nx.to_numpy_array(G, nodelist=sorted(G))
    return a / a.sum(axis=1, keepdims=True)


def lazy(P):
    return 0.5 * (np.eye(P.shape[0]) + P)


def reference_gaps(P):
    """(absolute, one-sided) gaps from numpy.linalg.eigvals of P (one copy of 1 removed)."""
    eta = np.linalg.eigvals(P)
    rest = np.delete(eta, np.argmin(np.abs(eta - 1)))
    return 1 - np.max(np.abs(rest)), 1 - np.max(rest.real)


def closed_form(family, n):
    """Eigenvalues of the plain walk on networkx's family, from the closed forms."""
    k = np.arange(n)
    if family == "cycle":
        return np.cos(2 * np.pi * k / n)
    if family == "path":
        return np.cos(np.pi * k / (n - 1))
    if family == "complete":
        return np.r_[1.0, np.full(n - 1, -1.0 / (n - 1))]
    raise AssertionError(family)


def gaps_of(eta):
    eta = np.sort(np.asarray(eta))[::-1]
    rest = eta[1:]
    return 1 - np.max(np.abs(rest)), 1 - rest[0]


FAMILIES = [
    ("cycle", 7, nx.cycle_graph(7)),       # odd: aperiodic, smallest eigenvalue cos(6 pi / 7) = -0.90
    ("cycle", 8, nx.cycle_graph(8)),       # even: bipartite, eigenvalue -1, absolute gap 0
    ("cycle", 4, nx.cycle_graph(4)),       # eigenvalues 1, 0, 0, -1 (the issue's example: gap was 1.0)
    ("path", 9, nx.path_graph(9)),         # bipartite: -1
    ("complete", 6, nx.complete_graph(6)),  # eigenvalue -1/5 (n - 1 times)
]


@pytest.mark.parametrize("family, n, G", FAMILIES, ids=[f"{f}{n}" for f, n, _ in FAMILIES])
def test_closed_form_families(family, n, G):
    abs_gap, one_sided = gaps_of(closed_form(family, n))
    res = spectral_gap(walk(G))
    assert res.gap == pytest.approx(abs_gap, abs=ATOL)
    assert res.one_sided_gap == pytest.approx(one_sided, abs=ATOL)
    assert res.absolute_gap == res.gap and res.reversible and res.n_components == 1
    assert abs(res.eta2) == pytest.approx(1 - abs_gap, abs=ATOL)
    assert res.lambda2.real == pytest.approx(1 - one_sided, abs=ATOL)
    # lazy walk (I + P) / 2: eigenvalues (1 + eta) / 2 >= 0, so both gaps are half the one-sided gap
    lz = spectral_gap(lazy(walk(G)))
    assert lz.gap == pytest.approx(one_sided / 2, abs=ATOL)
    assert lz.one_sided_gap == pytest.approx(one_sided / 2, abs=ATOL)


def test_the_gap_is_by_modulus_not_by_value():
    """The bug this guards against: the second eigenvalue taken by value misses -1 on even cycles."""
    res = spectral_gap(walk(nx.cycle_graph(8)))
    assert res.gap == pytest.approx(0.0, abs=ATOL)  # by value it would be 1 - cos(pi / 4) = 0.29
    assert res.eta2.real == pytest.approx(-1.0, abs=ATOL)
    assert res.relaxation_time > 1e12 and res.mixing_time_upper > 1e12  # never mixes (periodic)
    assert res.one_sided_gap == pytest.approx(1 - math.cos(math.pi / 4), abs=ATOL)
    four = spectral_gap(walk(nx.cycle_graph(4)))
    assert four.gap == pytest.approx(0.0, abs=ATOL) and four.one_sided_gap == pytest.approx(1.0, abs=ATOL)


@pytest.mark.parametrize("G", [nx.barbell_graph(5, 2), nx.complete_bipartite_graph(3, 5),
                               nx.lollipop_graph(6, 3), nx.star_graph(5)],
                         ids=["barbell", "complete_bipartite", "lollipop", "star"])
@pytest.mark.parametrize("laziness", [0.0, 0.5, 0.3])
def test_families_against_eigvals(G, laziness):
    P = walk(G)
    P = (1 - laziness) * P + laziness * np.eye(P.shape[0])
    abs_ref, one_ref = reference_gaps(P)
    res = spectral_gap(P)
    assert res.gap == pytest.approx(abs_ref, abs=ATOL)
    assert res.one_sided_gap == pytest.approx(one_ref, abs=ATOL)
    if laziness >= 0.5:  # nonnegative spectrum: the two gaps coincide
        assert res.gap == pytest.approx(res.one_sided_gap, abs=ATOL)


def test_complete_bipartite_is_periodic():
    res = spectral_gap(walk(nx.complete_bipartite_graph(3, 5)))  # eigenvalues 1, 0 (x6), -1
    assert res.gap == pytest.approx(0.0, abs=ATOL) and res.one_sided_gap == pytest.approx(1.0, abs=ATOL)


def test_disconnected_family():
    G = nx.disjoint_union(nx.cycle_graph(5), nx.complete_graph(4))
    for P in (walk(G), lazy(walk(G))):
        res = spectral_gap(P)
        assert res.gap == 0.0 and res.one_sided_gap == 0.0 and res.n_components == 2
        assert res.stationary is None and math.isnan(res.mixing_time_upper)


def test_one_sided_gap_is_the_normalised_algebraic_connectivity():
    """networkx's algebraic_connectivity(normalized=True) is 1 - lambda_2 of the walk."""
    for G in (nx.barbell_graph(4, 1), nx.lollipop_graph(5, 2), nx.petersen_graph()):
        expected = nx.algebraic_connectivity(G, normalized=True, tol=1e-12, method="lanczos")
        # measured difference <= 4e-16; 1e-9 allows for networkx's iterative solver (its tol is 1e-12)
        assert spectral_gap(walk(G)).one_sided_gap == pytest.approx(expected, abs=1e-9)


def test_symmetrised_sinkhorn_attention_with_an_eigenvalue_near_minus_one(rng):
    """Two token groups attending across (a nearly bipartite doubly stochastic attention): the issue's case."""
    n = 20
    group = np.arange(n) % 2
    c = np.where(group[:, None] != group[None, :], 1.0, 1e-3) * np.exp(0.3 * rng.standard_normal((n, n)))
    c = 0.5 * (c + c.T)
    for _ in range(500):  # Sinkhorn-Knopp, symmetric scaling
        r = 1 / np.sqrt(c.sum(axis=1))
        c = r[:, None] * c * r[None, :]
    P = 0.5 * (c + c.T)
    P /= P.sum(axis=1, keepdims=True)
    w = np.sort(np.linalg.eigvals(P).real)  # P = D^-1 C, C symmetric: a real spectrum
    assert w[0] < -0.99  # the eigenvalue near -1
    res = spectral_gap(P)
    assert res.gap == pytest.approx(1 - abs(w[0]), abs=ATOL)
    assert res.gap < 0.01 and res.one_sided_gap > 0.5  # by value the "gap" would be 1 - w[-2]
    assert res.one_sided_gap == pytest.approx(1 - w[-2], abs=ATOL)


# ----------------------------------------------------------------- networkx's algebraic-connectivity cases
# networkx/linalg/tests/test_algebraic_connectivity.py, TestAlgebraicConnectivity: the walk's one-sided gap
# is the normalised-Laplacian algebraic connectivity; for a d-regular graph it is a(G) / d.

def test_nx_two_nodes():
    # test_two_nodes: one edge, a(G) = 2; the walk flips (eigenvalues 1, -1): one-sided 2, absolute 0
    res = spectral_gap(walk(nx.path_graph(2)))
    assert res.one_sided_gap == pytest.approx(2.0, abs=ATOL) and res.gap == pytest.approx(0.0, abs=ATOL)


def test_nx_path():
    # test_path: path_graph(8), a(G) = 2 - sqrt(2 + sqrt(2)); normalised: 1 - cos(pi / 7)
    res = spectral_gap(walk(nx.path_graph(8)))
    assert res.one_sided_gap == pytest.approx(1 - math.cos(math.pi / 7), abs=ATOL)


def test_nx_cycle():
    # test_cycle: cycle_graph(8), a(G) = 2 - sqrt(2); 2-regular, so the walk's one-sided gap is a(G) / 2
    assert spectral_gap(walk(nx.cycle_graph(8))).one_sided_gap == pytest.approx((2 - math.sqrt(2)) / 2, abs=ATOL)


def test_nx_problematic_graph_issue_2381():
    # test_problematic_graph_issue_2381: path_graph(4) plus edges (4, 2), (5, 1); reference: eigvalsh of
    # networkx's normalised Laplacian
    G = nx.path_graph(4)
    G.add_edges_from([(4, 2), (5, 1)])
    L = nx.normalized_laplacian_matrix(G, nodelist=sorted(G)).toarray()
    assert spectral_gap(walk(G)).one_sided_gap == pytest.approx(np.linalg.eigvalsh(L)[1], abs=ATOL)


def test_nx_buckminsterfullerene():
    # test_buckminsterfullerene: the 3-regular C60 graph; normalised sigma = 0.08113391537997749 (networkx's
    # value), a(G) / 3 = 0.2434017461399311 / 3
    G = nx.Graph([(1, 10), (1, 41), (1, 59), (2, 12), (2, 42), (2, 60), (3, 6), (3, 43), (3, 57), (4, 8),
                  (4, 44), (4, 58), (5, 13), (5, 56), (5, 57), (6, 10), (6, 31), (7, 14), (7, 56), (7, 58),
                  (8, 12), (8, 32), (9, 23), (9, 53), (9, 59), (10, 15), (11, 24), (11, 53), (11, 60), (12, 16),
                  (13, 14), (13, 25), (14, 26), (15, 27), (15, 49), (16, 28), (16, 50), (17, 18), (17, 19),
                  (17, 54), (18, 20), (18, 55), (19, 23), (19, 41), (20, 24), (20, 42), (21, 31), (21, 33),
                  (21, 57), (22, 32), (22, 34), (22, 58), (23, 24), (25, 35), (25, 43), (26, 36), (26, 44),
                  (27, 51), (27, 59), (28, 52), (28, 60), (29, 33), (29, 34), (29, 56), (30, 51), (30, 52),
                  (30, 53), (31, 47), (32, 48), (33, 45), (34, 46), (35, 36), (35, 37), (36, 38), (37, 39),
                  (37, 49), (38, 40), (38, 50), (39, 40), (39, 51), (40, 52), (41, 47), (42, 48), (43, 49),
                  (44, 50), (45, 46), (45, 54), (46, 55), (47, 54), (48, 55)])
    P = walk(G)
    for method in ("dense", "arpack"):
        res = spectral_gap(sp.csr_array(P), method=method)
        assert res.one_sided_gap == pytest.approx(0.08113391537997749, abs=1e-12)
        assert res.one_sided_gap == pytest.approx(0.2434017461399311 / 3, abs=1e-12)


def test_nx_disconnected_null_and_singleton():
    # test_disconnected / test_null_and_singleton: isolated nodes have no walk (zero rows), a single node no gap
    with pytest.raises(InputError, match="row-stochastic"):
        spectral_gap(np.zeros((2, 2)))
    with pytest.raises(InputError, match="2 x 2"):
        spectral_gap(np.ones((1, 1)))
    with pytest.raises(InputError, match="square"):
        spectral_gap(np.zeros((0, 0)))
    res = spectral_gap(walk(nx.disjoint_union(nx.path_graph(2), nx.path_graph(2))))
    assert res.gap == 0.0 and res.one_sided_gap == 0.0


# ---------------------------------------------------------------------------------------- sparse inputs

@pytest.mark.parametrize("fmt", ["csr_array", "csc_array", "coo_array", "lil_array", "csr_matrix", "dok_array"])
def test_sparse_input_gives_the_dense_answer(fmt):
    P = walk(nx.barbell_graph(4, 2))
    dense = spectral_gap(P)
    res = spectral_gap(getattr(sp, fmt)(P))
    assert res.gap == pytest.approx(dense.gap, abs=ATOL)
    assert res.one_sided_gap == pytest.approx(dense.one_sided_gap, abs=ATOL)
    assert res.reversible and isinstance(res.stationary, np.ndarray) and res.method == "dense"
    np.testing.assert_allclose(res.stationary, dense.stationary, rtol=1e-12)


@pytest.mark.parametrize("G", [nx.cycle_graph(9), nx.cycle_graph(10), nx.random_regular_graph(3, 40, seed=1),
                               nx.barbell_graph(6, 1)], ids=["cycle9", "cycle10", "regular", "barbell"])
@pytest.mark.parametrize("laziness", [0.0, 0.5])
def test_arpack_matches_dense_on_reversible_walks(G, laziness):
    P = (1 - laziness) * walk(G) + laziness * np.eye(len(G))
    dense = spectral_gap(P)
    res = spectral_gap(sp.csr_array(P), method="arpack", rng=3)
    assert res.method == "arpack" and res.reversible
    assert res.gap == pytest.approx(dense.gap, abs=ARPACK_ATOL)
    assert res.one_sided_gap == pytest.approx(dense.one_sided_gap, abs=ARPACK_ATOL)
    assert res.mixing_time_upper == pytest.approx(dense.mixing_time_upper, rel=1e-8)


def test_arpack_on_a_non_reversible_chain(rng):
    n = 40
    c = (rng.random((n, n)) < 0.15) * rng.random((n, n)) + np.eye(n) * 0.1
    c[np.arange(n), (np.arange(n) + 1) % n] += 1.0  # a directed ring keeps it irreducible
    P = c / c.sum(axis=1, keepdims=True)
    abs_ref, one_ref = reference_gaps(P)
    res = spectral_gap(sp.csr_array(P), method="arpack", rng=0)
    assert not res.reversible and math.isnan(res.mixing_time_upper)
    assert res.gap == pytest.approx(abs_ref, abs=ARPACK_ATOL)
    assert res.one_sided_gap == pytest.approx(one_ref, abs=ARPACK_ATOL)


def test_auto_takes_arpack_for_large_sparse(monkeypatch):
    monkeypatch.setattr(graphs.gap, "SPARSE_DENSE_MAX_N", 10)
    P = sp.csr_array(walk(nx.cycle_graph(11)))
    assert spectral_gap(P).method == "arpack"
    assert spectral_gap(P.toarray()).method == "dense"  # a dense input is always solved densely
    assert spectral_gap(P, method="dense").method == "dense"


def test_sparse_stationary_and_reversibility():
    P = walk(nx.lollipop_graph(4, 3))
    deg = nx.to_numpy_array(nx.lollipop_graph(4, 3)).sum(axis=1)
    pi = graphs.stationary_distribution(sp.csr_array(P))
    np.testing.assert_allclose(pi, deg / deg.sum(), rtol=1e-12)
    assert graphs.is_reversible(sp.csc_array(P))
    directed = sp.csr_array(np.roll(np.eye(5), 1, axis=1) * 0.5 + np.eye(5) * 0.5)
    assert not graphs.is_reversible(directed + sp.csr_array(np.diag([0.0] * 5)))  # doubly stochastic, not symmetric
    with pytest.raises(InputError, match="no unique stationary"):
        graphs.stationary_distribution(sp.csr_array(np.eye(3)))


@pytest.mark.parametrize("bad, match", [
    (sp.csr_array(np.array([[0.5, 0.6], [0.5, 0.5]])), "row-stochastic"),
    (sp.csr_array(np.array([[1.5, -0.5], [0.5, 0.5]])), "nonnegative"),
    (sp.csr_array(np.array([[np.nan, 1.0], [0.5, 0.5]])), "finite"),
    (sp.csr_array(np.ones((2, 3)) / 3), "square"),
    ([[0.5, 0.5], [0.5, 0.5]], "scipy.sparse"),
    ("A", "scipy.sparse"),
])
def test_sparse_and_unsupported_inputs_refused(bad, match):
    with pytest.raises(InputError, match=match):
        spectral_gap(bad)


def test_arpack_needs_four_nodes_and_method_is_checked():
    with pytest.raises(InputError, match="n >= 4"):
        spectral_gap(np.full((3, 3), 1 / 3), method="arpack")
    with pytest.raises(InputError, match="method must be one of"):
        spectral_gap(np.full((3, 3), 1 / 3), method="eig")
