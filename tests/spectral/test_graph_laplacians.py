"""spectral.graph_laplacians: graphs against brute force, paths against each other, constants, bad input.

The graphs are held to their definitions computed by brute force (all pairwise distances, a sort for the
k-NN radii); the sparse, dense and streamed paths to each other; the constants to their closed forms; the
eigenpairs to a dense generalised eigensolver. The spectra against the exact continuum operators are
verify.gl_constants' job.
"""

import math

import numpy as np
import pytest
import scipy.linalg as sla

import spectral
import spectral.graph_laplacians as gl
from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import InputError

P2 = 1.0 / (4.0 * math.pi)


def _sphere(n, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _sq(x):
    return np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)


@pytest.fixture(scope="module")
def cloud():
    return _sphere(400)


def test_exports():
    for name in ("graph_laplacian", "GraphLaplacian", "PatternMatrix", "ball_volume", "indicator_moment",
                 "gaussian_moments", "knn_radius"):
        assert getattr(spectral, name) is getattr(gl, name)


def test_constants_closed_forms():
    assert gl.ball_volume(1) == pytest.approx(2.0) and gl.ball_volume(2) == pytest.approx(math.pi)
    assert gl.ball_volume(3) == pytest.approx(4 * math.pi / 3)
    assert gl.indicator_moment(1) == pytest.approx(2 / 3) and gl.indicator_moment(2) == pytest.approx(math.pi / 4)
    assert gl.gaussian_moments(3) == (1.0, 2.0)
    # k points expected in the ball of radius eps_k
    eps = gl.knn_radius(50, 1000, P2, 2)
    assert 1000 * P2 * math.pi * eps**2 == pytest.approx(50)


def test_eps_graph_is_the_definition(cloud):
    lap = gl.graph_laplacian(cloud, graph="eps", m=2, eps=0.3, density=P2)
    want = (_sq(cloud) <= 0.09) & ~np.eye(len(cloud), dtype=bool)
    np.testing.assert_array_equal(lap.weights.tocsr().toarray().astype(bool), want)
    np.testing.assert_array_equal(lap.degrees, want.sum(axis=1))
    assert lap.edges == want.sum()


def test_knn_graph_is_the_union_of_the_directed_relations(cloud):
    k = 12
    lap = gl.graph_laplacian(cloud, graph="knn", m=2, k=k, density=P2)
    d2 = _sq(cloud)
    np.fill_diagonal(d2, np.inf)
    r2 = np.sort(d2, axis=1)[:, k - 1]
    directed = d2 <= r2[:, None]
    assert (directed.sum(axis=1) == k).all()
    np.testing.assert_array_equal(lap.weights.tocsr().toarray().astype(bool), directed | directed.T)
    np.testing.assert_allclose(lap.radii, np.sqrt(r2), rtol=1e-15)
    assert lap.eps == pytest.approx(gl.knn_radius(k, len(cloud), P2, 2))


def test_duplicate_points_do_not_break_the_knn_graph():
    x = _sphere(60)
    x = np.concatenate([x, x[:5]])  # five exact duplicates: each is its twin's nearest neighbour at distance 0
    lap = gl.graph_laplacian(x, graph="knn", m=2, k=6, density=P2)
    w = lap.weights.tocsr().toarray()
    assert np.all(np.diag(w) == 0) and (w.sum(axis=1) >= 6).all()


CASES = [(g, kw, norm) for g, kw in (("eps", {"eps": 0.35}), ("knn", {"k": 15}), ("gaussian", {"eps": 0.02}))
         for norm in gl.NORMALIZATIONS if g != "knn" or norm == "unnormalized"]


@pytest.mark.parametrize("graph, kw, normalization", CASES)
def test_paths_agree_and_eigenpairs_solve_the_generalised_problem(cloud, graph, kw, normalization):
    first = "dense" if graph == "gaussian" else "sparse"
    a = gl.graph_laplacian(cloud, graph=graph, m=2, density=P2, normalization=normalization, method=first, **kw)
    b = gl.graph_laplacian(cloud, graph=graph, m=2, density=P2, normalization=normalization, method="streamed", **kw)
    lam_a, vec_a = a.eigenpairs(6)
    lam_b, _ = b.eigenpairs(6)
    np.testing.assert_allclose(lam_a, lam_b, rtol=1e-9, atol=1e-9)
    # brute force: the dense generalised problem c (D - W) v = lambda v, or (D - W) v = (lambda / c) D v
    eye = np.eye(len(cloud))
    w = a.apply(eye)
    dmat = np.diag(w.sum(axis=1))
    if normalization == "unnormalized":
        want = sla.eigh(a.scale * (dmat - w), eigvals_only=True, subset_by_index=[0, 5])
        gram = vec_a.T @ vec_a
    else:
        want = a.scale * sla.eigh(dmat - w, dmat, eigvals_only=True, subset_by_index=[0, 5])
        gram = vec_a.T @ (a.inner_weights[:, None] * vec_a)
    np.testing.assert_allclose(lam_a, want, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(gram, np.eye(6), atol=1e-8)
    assert abs(lam_a[0]) < 1e-8  # constants are in the kernel


def test_scales_are_the_papers_constants(cloud):
    n = len(cloud)
    eps = gl.graph_laplacian(cloud, graph="eps", m=2, eps=0.3, density=P2)
    assert eps.scale == pytest.approx(2.0 / ((math.pi / 4) * P2 * n * 0.3**4))
    assert gl.graph_laplacian(cloud, graph="eps", m=2, eps=0.3, normalization="random_walk").scale == \
        pytest.approx(8.0 / 0.09)
    un = gl.graph_laplacian(cloud, graph="gaussian", m=2, eps=0.02, density=P2)
    assert un.scale == pytest.approx(1.0 / (0.02 * P2 * n))
    rw = gl.graph_laplacian(cloud, graph="gaussian", m=2, eps=0.02, normalization="random_walk")
    assert rw.scale == pytest.approx(1.0 / 0.02)
    # Cheng & Wu's kernel: eps^(-d/2) exp(-r/4) / (4 pi)^(d/2), the diagonal kept
    w = un.weights
    d2 = _sq(cloud)
    np.testing.assert_allclose(w, 0.02**-1 * np.exp(-d2 / 0.08) / (4 * math.pi), rtol=1e-12)


def test_density_correction_divides_by_the_degrees_twice(cloud):
    plain = gl.graph_laplacian(cloud, graph="gaussian", m=2, eps=0.02, normalization="random_walk")
    corr = gl.graph_laplacian(cloud, graph="gaussian", m=2, eps=0.02, normalization="density_corrected")
    d = plain.degrees
    want = plain.weights / np.outer(d, d)
    eye = np.eye(len(cloud))
    np.testing.assert_allclose(corr.apply(eye), want, rtol=1e-12)
    np.testing.assert_allclose(corr.degrees, want.sum(axis=1), rtol=1e-12)


def test_pattern_matrix_products_without_the_csr_array(cloud, monkeypatch):
    lap = gl.graph_laplacian(cloud, graph="eps", m=2, eps=0.3, density=P2)
    v = np.random.default_rng(2).standard_normal((len(cloud), 3))
    want = lap.weights.tocsr() @ v
    monkeypatch.setattr(gl, "CSR_DATA_BYTES", 0)
    monkeypatch.setattr(gl, "REDUCE_BLOCK_ELEMENTS", 1000)  # several blocks
    fresh = gl.PatternMatrix(lap.weights.indptr, lap.weights.indices, len(cloud))
    np.testing.assert_allclose(fresh @ v, want, rtol=1e-13)
    np.testing.assert_allclose(fresh @ v[:, 0], want[:, 0], rtol=1e-13)


def test_array_api_namespace_on_the_dense_and_streamed_paths(cloud):
    xs = pytest.importorskip("array_api_strict")
    for graph, kw, method in (("gaussian", {"eps": 0.02}, "dense"), ("eps", {"eps": 0.35}, "streamed"),
                              ("knn", {"k": 15}, "streamed")):
        want = gl.graph_laplacian(cloud, graph=graph, m=2, density=P2, method=method, **kw).eigenpairs(4)[0]
        lap = gl.graph_laplacian(xs.asarray(cloud), graph=graph, m=2, density=P2, method=method, **kw)
        lam, _ = lap.eigenpairs(4)
        assert type(lam).__module__.startswith("array_api_strict")
        np.testing.assert_allclose(np.asarray(lam), want, rtol=1e-9, atol=1e-9)


def test_memory_is_refused_before_the_graph_is_built(cloud):
    with pytest.raises(DenseMemoryError, match="k-NN graph"):
        gl.graph_laplacian(cloud, graph="knn", m=2, k=50, density=P2, max_bytes=1000)
    with pytest.raises(DenseMemoryError, match="eps-graph"):
        gl.graph_laplacian(cloud, graph="eps", m=2, eps=0.5, density=P2, max_bytes=1000)
    with pytest.raises(DenseMemoryError, match="dense Gaussian"):
        gl.graph_laplacian(cloud, graph="gaussian", m=2, eps=0.02, density=P2, max_bytes=1000)


@pytest.mark.parametrize("kwargs, match", [
    ({"graph": "ring"}, "graph"),
    ({"graph": "eps", "eps": 0.3, "density": P2, "normalization": "sym"}, "normalization"),
    ({"graph": "eps", "eps": 0.3, "density": P2, "method": "gpu"}, "method"),
    ({"graph": "eps", "density": P2}, "eps is required"),
    ({"graph": "eps", "eps": 0.0, "density": P2}, "eps"),
    ({"graph": "eps", "eps": True, "density": P2}, "eps"),
    ({"graph": "eps", "eps": 0.3}, "density is required"),
    ({"graph": "eps", "eps": 0.3, "density": -1.0}, "density"),
    ({"graph": "knn", "density": P2}, "k is required"),
    ({"graph": "knn", "k": 0, "density": P2}, "k"),
    ({"graph": "knn", "k": 400, "density": P2}, "k"),
    ({"graph": "knn", "k": True, "density": P2}, "k"),
    ({"graph": "knn", "k": 5, "density": P2, "normalization": "random_walk"}, "normalization"),
    ({"graph": "gaussian", "eps": 0.1, "density": P2, "method": "sparse"}, "method"),
    ({"graph": "eps", "eps": 0.3, "density": P2, "method": "dense"}, "method"),
    ({"graph": "eps", "eps": 1e-4, "density": P2}, "isolated"),
    ({"graph": "eps", "eps": 0.3, "density": P2, "m": 0}, "m"),
    ({"graph": "eps", "eps": 0.3, "density": P2, "m": True}, "m"),
])
def test_bad_input(cloud, kwargs, match):
    kwargs = {"m": 2, **kwargs}
    with pytest.raises(InputError, match=match):
        gl.graph_laplacian(cloud, **kwargs)


def test_bad_points_and_counts(cloud):
    with pytest.raises(InputError, match="x"):
        gl.graph_laplacian(np.array([[0.0, np.nan, 1.0]] * 5), graph="eps", m=2, eps=0.3, density=P2)
    with pytest.raises(InputError, match="at least 3"):
        gl.graph_laplacian(cloud[:2], graph="eps", m=2, eps=0.3, density=P2)
    lap = gl.graph_laplacian(cloud, graph="eps", m=2, eps=0.3, density=P2)
    for bad in (0, len(cloud), True):
        with pytest.raises(InputError, match="count"):
            lap.eigenpairs(bad)
    for call in (lambda v: gl.ball_volume(v), lambda v: gl.indicator_moment(v), lambda v: gl.gaussian_moments(v),
                 lambda v: gl.knn_radius(v, 100, P2, 2), lambda v: gl.knn_radius(5, v, P2, 2),
                 lambda v: gl.knn_radius(5, 100, v, 2), lambda v: gl.knn_radius(5, 100, P2, v)):
        with pytest.raises(InputError):
            call(True)
