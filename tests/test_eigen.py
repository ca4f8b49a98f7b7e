"""Tests for spectral.eigen: every path against numpy.linalg on A = D^-1 C, the circulant
path against dense eigvalsh and a direct cosine sum, connectivity and memory guards,
generator eigenvalues, backend neutrality and bad input.

Tolerances (kind (a), exact algebra): a backward-stable eigensolver perturbs the
eigenvalues of a symmetric matrix of norm 1 by <= c n eps; for the non-symmetric
reference ``numpy.linalg.eigvals(A)`` the bound is multiplied by cond(V) =
sqrt(max D / min D) (A = D^-1/2 S D^1/2).  Measured errors are quoted next to each
bound.
"""

import functools
import warnings

import numpy as np
import pytest

from manifolds import Circle
from spectral.backend import to_numpy
from spectral.eigen import (
    DisconnectedGraphError,
    DisconnectedGraphWarning,
    circulant_spectrum,
    count_components,
    generator_eigenvalues,
    markov_spectrum,
)
from spectral.kernels import KernelOperator, fna_kernel, heat_kernel, pairwise
from spectral.memory import DenseMemoryError

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()


def fna_on(points, *, alpha=1.2, scale=0.05):
    kern = functools.partial(fna_kernel, alpha=alpha, scale=scale, dim=1)
    return pairwise(points, kernel=kern, distance=CIRCLE.distance), kern


def reference_real(C):
    """Independent reference: general eigenvalues of A = D^-1 C, real parts, descending."""
    A = C / C.sum(axis=1, keepdims=True)
    return np.sort(np.linalg.eigvals(A).real)[::-1]


def symmetric_tol(C):
    """c n eps cond(V), c = 10 (measured errors are 10-100x below this)."""
    d = C.sum(axis=1)
    return 10 * C.shape[0] * EPS * np.sqrt(d.max() / d.min())


@pytest.fixture(scope="module")
def random_circle():
    x = CIRCLE.sample(300, rng=7)
    C, kern = fna_on(x)
    return x, C, kern


# ----------------------------------------------------------------------------- paths agree


def test_symmetric_paths_agree_with_numpy_eig(random_circle):
    x, C, kern = random_circle
    ref = reference_real(C)[:10]
    tol = symmetric_tol(C)  # 300 points: ~8e-12; measured <= 7e-15
    op = KernelOperator(x, kernel=kern, distance=CIRCLE.distance)
    results = {
        "dense": markov_spectrum(C, 10, method="dense"),
        "lanczos": markov_spectrum(C, 10, method="lanczos", rng=1),
        "matrix-free": markov_spectrum(C, 10, method="matrix-free", rng=2),
        "operator": markov_spectrum(op, 10, rng=3),
    }
    for name, spec in results.items():
        assert spec.symmetric, name
        assert spec.n_components == 1, name
        assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= tol, name
        assert spec.residual <= tol, name
    assert results["operator"].method == "matrix-free"
    # negative control: a kernel with alpha 1.25 instead of 1.2 is told apart by this tolerance
    C2, _ = fna_on(x, alpha=1.25)
    assert np.max(np.abs(reference_real(C2)[:10] - ref)) > 1e4 * tol


def test_eigenvalues_descending_and_vectors_deterministic(random_circle):
    _, C, _ = random_circle
    a = markov_spectrum(C, 6, method="lanczos", vectors=True, rng=1)
    b = markov_spectrum(C, 6, method="lanczos", vectors=True, rng=99)
    ev = to_numpy(a.eigenvalues)
    assert np.all(np.diff(ev) <= 0)
    V = to_numpy(a.conjugate_vectors)
    idx = np.argmax(np.abs(V), axis=0)
    assert np.all(V[idx, np.arange(6)] > 0)  # largest-|entry| positive
    # different ARPACK start vectors give the same signed vectors (eigenvalues are simple here):
    # eigenvector error ~ eps / gap; gap >= 1e-3 -> 1e-12 is ~10x the measured 2e-13
    gaps = -np.diff(ev)
    assert gaps.min() > 1e-3
    assert np.max(np.abs(V - to_numpy(b.conjugate_vectors))) <= 1e-10
    # negative control: without the sign convention a flipped vector differs by O(1)
    assert np.max(np.abs(V + to_numpy(b.conjugate_vectors))) > 0.1


def test_right_left_vectors_are_eigenvectors(random_circle):
    _, C, _ = random_circle
    spec = markov_spectrum(C, 8, vectors=True)
    A = C / C.sum(axis=1, keepdims=True)
    psi, phi, eta = to_numpy(spec.psi), to_numpy(spec.phi), to_numpy(spec.eigenvalues)
    scale = np.linalg.norm(psi, axis=0)
    assert np.max(np.linalg.norm(A @ psi - psi * eta, axis=0) / scale) <= symmetric_tol(C)
    lscale = np.linalg.norm(phi, axis=0)
    assert np.max(np.linalg.norm(phi.T @ A - eta[:, None] * phi.T, axis=1) / lscale) <= symmetric_tol(C)
    # bi-orthonormal (FNA eq. 35): <phi_i, psi_j> = delta_ij
    assert np.max(np.abs(phi.T @ psi - np.eye(8))) <= 100 * EPS * 300
    # negative control: psi are not orthonormal in the plain inner product (non-uniform degrees)
    assert np.max(np.abs(psi.T @ psi - np.eye(8))) > 1e-3


def test_float32_lanczos_storage_accuracy(random_circle):
    _, C, _ = random_circle
    spec = markov_spectrum(C, 10, method="lanczos", dtype="float32", rng=0)
    assert spec.storage_dtype == "float32"
    err = np.max(np.abs(to_numpy(spec.eigenvalues) - reference_real(C)[:10]))
    # float32 storage: eps32 = 1.2e-7 times a small factor (measured ~1e-7)
    assert err <= 50 * np.finfo(np.float32).eps
    assert err > 1e3 * EPS  # it really ran in float32


# ----------------------------------------------------------------------------- circulant


@pytest.mark.parametrize("alpha, n, scale", [(1.2, 512, 0.02), (2.0, 300, 0.1), (0.7, 257, 0.05)])
def test_circulant_matches_dense_eigvalsh(alpha, n, scale):
    grid = CIRCLE.grid(n)
    C, _ = fna_on(grid, alpha=alpha, scale=scale)
    spec = markov_spectrum(C, grid=True, vectors=True)
    assert spec.method == "circulant"
    d = C.sum(axis=1)
    S = C / np.sqrt(np.outer(d, d))
    ref = np.sort(np.linalg.eigvalsh(S))[::-1]  # independent: LAPACK on the full matrix
    # n eps bound for eigvalsh plus FFT round-off (log n eps); measured <= 3e-15
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= 10 * n * EPS
    # the Fourier eigenvectors are eigenvectors of A (checked here, independently of the residual field)
    A = C / d[:, None]
    psi, eta = to_numpy(spec.psi), to_numpy(spec.eigenvalues)
    assert np.max(np.linalg.norm(A @ psi - psi * eta, axis=0) / np.linalg.norm(psi, axis=0)) <= 10 * n * EPS
    assert spec.residual <= 10 * n * EPS
    # multiplicities: frequencies m and n - m share an eigenvalue (cosine and sine)
    freqs = to_numpy(spec.frequencies)
    assert freqs[0] == 0 and sorted(freqs[1:3]) == [1, 1]


def test_circulant_large_n_against_direct_cosine_sums():
    n = 10**6
    theta = 2 * np.pi * np.arange(n) / n
    dist = np.minimum(theta, 2 * np.pi - theta)
    row = (1.0 + dist / 1e-4) ** -2.2
    spec = circulant_spectrum(row, 9)
    eta = to_numpy(spec.eigenvalues)
    # independent reference: direct cosine sums for m = 1..4 (compensated by math.fsum)
    j = np.arange(n)
    ref = [1.0] + [
        v for m in range(1, 5) for v in [np.dot(row, np.cos(2 * np.pi * ((j * m) % n) / n)) / row.sum()] * 2
    ]
    # FFT round-off ~ eps log2(n) relative to sum(row); dot-product reference ~ sqrt(n) eps
    assert np.max(np.abs(eta - np.array(ref))) <= 1e3 * EPS
    assert spec.n_components == 1
    # negative control: the uniform-kernel value 1 for every mode is far from this
    assert np.max(np.abs(eta[1:] - 1.0)) > 1e-5


def test_circulant_refuses_non_circulant(random_circle):
    _, C, _ = random_circle
    with pytest.raises(ValueError, match="circulant"):
        markov_spectrum(C, grid=True)


def test_circulant_components_by_gcd():
    # first row supported on multiples of 3 in Z_12: 3 components, eigenvalue 1 three times
    row = np.zeros(12)
    row[[0, 3, 9]] = [2.0, 1.0, 1.0]
    with pytest.warns(DisconnectedGraphWarning, match="3 connected components"):
        spec = circulant_spectrum(row)
    assert spec.n_components == 3
    assert np.sum(np.abs(to_numpy(spec.eigenvalues) - 1.0) <= 10 * EPS) == 3
    with pytest.raises(DisconnectedGraphError):
        circulant_spectrum(row, strict=True)


def _full_order_reference(row, k):
    """Brute force: the whole spectrum listed as m = 0, (1 cos, 1 sin), ..., n/2, stable-sorted descending."""
    n = row.size
    half = np.fft.rfft(row).real / row.sum()  # the values themselves are tested against eigvalsh above
    m = [0] + [v for j in range(1, (n - 1) // 2 + 1) for v in (j, j)] + ([n // 2] if n % 2 == 0 else [])
    m = np.array(m)
    order = np.argsort(-half[m], kind="stable")[:k]
    return half[m][order], m[order]


@pytest.mark.parametrize("n", [2, 3, 8, 9, 64, 101])
def test_circulant_top_k_equals_stable_full_sort(rng, n):
    """argpartition on the half spectrum gives exactly the stable full sort, ties included."""
    rows = {
        "random": rng.uniform(0.0, 1.0, n),
        "all ones": np.ones(n),  # eta = 1, 0, 0, ...: every k cuts through a tie
        "integer": rng.integers(0, 3, n).astype(float),  # repeated values
    }
    cut_through_tie = False
    for name, r in rows.items():
        row = r + np.roll(r[::-1], 1)  # even: c_j = c_(n-j)
        if row.sum() == 0:
            continue
        full_vals, _ = _full_order_reference(row, None)
        for k in sorted({1, 2, n // 2, n // 2 + 1, n - 1, n} & set(range(1, n + 1))) + [None]:
            with warnings.catch_warnings():  # integer rows may be disconnected (c_1 = 0): not under test here
                warnings.simplefilter("ignore", DisconnectedGraphWarning)
                spec = circulant_spectrum(row, k)
            ref_vals, ref_m = _full_order_reference(row, k)
            # (a) exact: the same values, only their order is under test
            assert np.array_equal(to_numpy(spec.eigenvalues), ref_vals), (name, k)
            assert np.array_equal(to_numpy(spec.frequencies), ref_m), (name, k)
            if k is not None and k < n and full_vals[k - 1] == full_vals[k]:
                cut_through_tie = True
    assert cut_through_tie or n == 2  # the tie-breaking branch was exercised (n = 2: eta = 1, 0, no tie)
    # negative control: the reference tells orders apart (ties broken by descending m differ)
    if n >= 4:
        row = np.ones(n)
        _, ref_m = _full_order_reference(row, n)
        assert not np.array_equal(ref_m[1:], np.sort(ref_m[1:])[::-1])


@pytest.mark.parametrize("n", [10, 11])
def test_circulant_evenness_checked_at_every_position(n):
    row = np.ones(n)
    for j in range(1, n):
        if 2 * j == n:
            continue  # c_(n/2) is its own mirror
        bad = row.copy()
        bad[j] += 1e-3
        with pytest.raises(ValueError, match="even"):
            circulant_spectrum(bad)
    circulant_spectrum(row)  # negative control: the even row passes


@pytest.mark.parametrize(
    "row, match",
    [
        (np.array([[1.0, 0.5]]), "1-D"),
        (np.array([1.0, 0.5, 0.2]), "even"),
        (np.array([1.0, np.nan, 1.0]), "finite"),
        (np.array([1.0, -0.5, -0.5]), "nonnegative"),
        (np.zeros(4), "positive sum"),
    ],
)
def test_circulant_bad_input(row, match):
    with pytest.raises(ValueError, match=match):
        circulant_spectrum(row)


def test_circulant_bad_k():
    with pytest.raises(ValueError, match=r"k must be in \[1, n\]"):
        circulant_spectrum(np.array([1.0, 0.5, 0.5]), 4)


# ----------------------------------------------------------------------------- non-symmetric


@pytest.fixture(scope="module")
def dot_product_qk():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((200, 4))
    wq, wk = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    return np.exp((x @ wq) @ (x @ wk).T / 2.0)  # Q != K: not symmetric


def _key(w):
    return np.lexsort((-w.imag, -w.real, -np.abs(w)))


def test_nonsymmetric_paths_agree(dot_product_qk):
    C = dot_product_qk
    A = C / C.sum(axis=1, keepdims=True)
    ref = np.linalg.eigvals(A)
    ref = ref[_key(ref)][:6]
    assert np.abs(ref[5]) - np.abs(np.linalg.eigvals(A)[_key(np.linalg.eigvals(A))][6]) > 1e-6  # clean cut at k
    assert np.max(np.abs(ref.imag)) > 1e-3  # genuinely complex spectrum
    for method in ("dense", "lanczos", "matrix-free"):
        spec = markov_spectrum(C, 6, method=method, vectors=True, rng=0)
        assert not spec.symmetric
        ev = to_numpy(spec.eigenvalues)
        assert np.iscomplexobj(ev)
        # non-normal A: eig backward error n eps ||A|| times the eigenvalue condition numbers
        # (<= ~1e2 here); measured <= 1e-14
        assert np.max(np.abs(ev - ref)) <= 1e-11, method
        assert spec.residual <= 1e-12, method
    # negative control: symmetrising C (Q = K assumption) changes the spectrum by O(0.1)
    Cs = (C + C.T) / 2
    assert np.max(np.abs(reference_real(Cs)[:6] - ref.real)) > 1e-2


def test_nonsymmetric_dense_biorthonormal(dot_product_qk):
    C = dot_product_qk
    spec = markov_spectrum(C, vectors=True)
    psi, phi = to_numpy(spec.psi), to_numpy(spec.phi)
    G = phi.T @ psi
    # rows of V^-1: bi-orthonormal up to cond(V) n eps (cond(V) ~ 1e2 here; measured 2e-13)
    assert np.max(np.abs(G - np.eye(C.shape[0]))) <= 1e-10
    A = C / C.sum(axis=1, keepdims=True)
    eta = to_numpy(spec.eigenvalues)
    assert np.max(np.abs(phi.T @ A - eta[:, None] * phi.T)) <= 1e-10


def test_symmetric_request_refused_for_complex_spectrum(dot_product_qk):
    with pytest.raises(ValueError, match="symmetric=True.*imaginary"):
        markov_spectrum(dot_product_qk, 5, symmetric=True)


def test_symmetric_request_accepts_similar_to_symmetric(random_circle, rng):
    # C' = C diag(w) is not symmetric but rownorm(C') is similar to the symmetric
    # M_ij = C_ij sqrt(w_i w_j / (q_i q_j)), q = C w: real spectrum
    _, C, _ = random_circle
    w = rng.uniform(0.5, 2.0, C.shape[0])
    Cw = C * w[None, :]
    spec = markov_spectrum(Cw, 10, symmetric=True)
    ev = to_numpy(spec.eigenvalues)
    assert ev.dtype == np.float64
    q = C @ w
    M = C * np.sqrt(np.outer(w, w) / np.outer(q, q))
    ref = np.sort(np.linalg.eigvalsh(M))[::-1][:10]
    assert np.max(np.abs(ev - ref)) <= symmetric_tol(Cw) * 10  # non-symmetric eig, cond(V) ~ sqrt(w ratio)
    assert spec.max_imag <= 100 * EPS
    # without the request the general path returns complex eigenvalues (zero imaginary parts)
    assert np.iscomplexobj(to_numpy(markov_spectrum(Cw, 10).eigenvalues))


# ----------------------------------------------------------------------------- connectivity


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


# ----------------------------------------------------------------------------- memory guard


def test_memory_guard_dense_refuses_and_auto_falls_back(random_circle):
    _, C, _ = random_circle
    n = C.shape[0]
    with pytest.raises(DenseMemoryError, match="matrix-free"):
        markov_spectrum(C, 5, method="dense", max_memory=2 * n * n * 8)
    spec = markov_spectrum(C, 5, max_memory=2 * n * n * 8, rng=0)
    assert spec.method == "lanczos"
    spec = markov_spectrum(C, 5, max_memory=n * n * 4, rng=0)
    assert spec.method == "matrix-free"
    with pytest.raises(DenseMemoryError):
        markov_spectrum(C, max_memory=n * n * 4)  # all eigenvalues: dense only


def test_auto_picks_dense_small_and_lanczos_large(random_circle, monkeypatch):
    import spectral.eigen as eigen

    _, C, _ = random_circle
    assert markov_spectrum(C, 4).method == "dense"  # n = 300 <= DENSE_MAX_N
    monkeypatch.setattr(eigen, "DENSE_MAX_N", 100)  # the rule, not the (slow) size, is tested
    assert markov_spectrum(C, 4, rng=0).method == "lanczos"  # n > DENSE_MAX_N and k given
    assert markov_spectrum(C).method == "dense"  # all eigenvalues: dense at any n


# ----------------------------------------------------------------------------- generator


def test_generator_eigenvalues_and_fna7_positivity():
    # FNA-7: the geodesic power law is positive definite; the geodesic Gaussian (alpha = 2,
    # kappa = 2) on 400 circle points has negative eigenvalues (CLAIMS: min eig of C ~ -0.99;
    # of A = D^-1 C measured -4.7e-3, far beyond round-off ~1e-13)
    x = CIRCLE.sample(400, rng=5)
    C_pl, _ = fna_on(x, alpha=1.2, scale=2.0)
    C_g, _ = fna_on(x, alpha=2.0, scale=2.0)
    eta_pl = markov_spectrum(C_pl).eigenvalues
    eta_g = markov_spectrum(C_g).eigenvalues
    indep = np.linalg.eigvalsh(C_g / np.sqrt(np.outer(C_g.sum(1), C_g.sum(1))))
    assert indep.min() < -1e-3
    indep_pl = np.linalg.eigvalsh(C_pl / np.sqrt(np.outer(C_pl.sum(1), C_pl.sum(1))))
    assert indep_pl.min() > 1e3 * 400 * EPS  # strictly positive definite (Schoenberg), well above round-off
    g = generator_eigenvalues(eta_pl, 2.0**1.2)
    assert g.n_nonpositive == 0 and bool(np.all(g.valid))
    with pytest.raises(ValueError, match="non-positive"):
        generator_eigenvalues(eta_g, 2.0**2)
    gg = generator_eigenvalues(eta_g, 4.0, allow_nonpositive=True)
    # many eigenvalues are ~1e-17 (nearly rank-deficient kernel): their sign is round-off, so the
    # count lies between the clearly negative and the not clearly positive ones (+-1e-10)
    assert int(np.sum(indep < -1e-10)) <= gg.n_nonpositive <= int(np.sum(indep <= 1e-10))
    assert int(np.sum(indep < -1e-10)) > 0
    assert np.array_equal(np.isnan(gg.values), ~gg.valid)
    assert gg.min_eta == pytest.approx(indep.min(), abs=1e-12)


def test_generator_roundtrip(xp):
    lam = np.array([0.0, 0.5, 1.0, 7.0])
    t = 0.3
    g = generator_eigenvalues(xp.asarray(np.exp(-lam * t)), t)
    # -log(exp(-x)) = x up to 1 ulp of exp plus 1 ulp of log: 4 eps relative
    assert np.max(np.abs(to_numpy(g.values) - lam)) <= 4 * EPS * lam.max() / t * t + 4 * EPS


@pytest.mark.parametrize(
    "eta, t, match",
    [
        (np.array([0.5]), 0.0, "t must be"),
        (np.array([0.5]), np.inf, "t must be"),
        (np.array([0.5]), "1", "t must be"),
        (np.array([[0.5]]), 1.0, "1-D"),
        (np.array([0.5, np.nan]), 1.0, "finite"),
        (np.array([0.5 + 1j]), 1.0, "real"),
        (np.array([0.5, 0.0]), 1.0, "non-positive"),
    ],
)
def test_generator_bad_input(eta, t, match):
    with pytest.raises(ValueError, match=match):
        generator_eigenvalues(eta, t)


# ----------------------------------------------------------------------------- backends


def test_dense_path_backend_neutral(xp, random_circle):
    _, C, _ = random_circle
    ref = markov_spectrum(C, 8, method="dense", vectors=True)
    spec = markov_spectrum(xp.asarray(C), 8, method="dense", vectors=True)
    assert type(spec.eigenvalues) is type(xp.asarray(C))
    assert type(spec.psi) is type(xp.asarray(C))
    # (a) parity across backends: same LAPACK underneath for array_api_strict; 4 sqrt(eps) rtol
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - to_numpy(ref.eigenvalues))) <= 4 * np.sqrt(EPS)
    assert np.max(np.abs(to_numpy(spec.psi) - to_numpy(ref.psi))) <= 4 * np.sqrt(EPS)
    assert spec.residual <= symmetric_tol(C)


def test_circulant_backend_neutral(xp):
    C, _ = fna_on(CIRCLE.grid(128), scale=0.1)
    ref = circulant_spectrum(C[0], 10, vectors=True)
    spec = circulant_spectrum(xp.asarray(C[0]), 10, vectors=True)
    assert type(spec.eigenvalues) is type(xp.asarray(C[0]))
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - to_numpy(ref.eigenvalues))) <= 4 * np.sqrt(EPS)
    assert np.max(np.abs(to_numpy(spec.psi) - to_numpy(ref.psi))) <= 4 * np.sqrt(EPS)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "C, kwargs, match",
    [
        (np.ones((3, 4)), {}, "square"),
        (np.array([[1.0, np.nan], [1.0, 1.0]]), {}, "finite"),
        (np.array([[1.0, -1.0], [1.0, 1.0]]), {}, "nonnegative"),
        (np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]), {}, "row 1"),
        (np.ones((5, 5)), {"k": 4, "method": "lanczos"}, r"\[1, n-2\] = \[1, 3\]"),
        (np.ones((5, 5)), {"k": 0}, r"k must be in \[1, n\]"),
        (np.ones((5, 5)), {"k": 2.5}, "k must be an integer"),
        (np.ones((5, 5)), {"method": "arpack"}, "method must be one of"),
        (np.ones((5, 5)), {"method": "lanczos"}, "k must be given"),
        (np.ones((5, 5)), {"dtype": "float16"}, "dtype must be one of"),
        (np.ones((5, 5)), {"tol": -1.0}, "tol must be"),
        (np.ones((5, 5)), {"symmetric": "yes"}, "symmetric must be"),
    ],
)
def test_markov_spectrum_bad_input(C, kwargs, match):
    with pytest.raises(ValueError, match=match):
        markov_spectrum(C, **kwargs)


def test_operator_bad_method_and_k(random_circle):
    x, _, kern = random_circle
    op = KernelOperator(x, kernel=kern, distance=CIRCLE.distance)
    with pytest.raises(ValueError, match="'auto' or 'matrix-free'"):
        markov_spectrum(op, 3, method="dense")
    with pytest.raises(ValueError, match="k must be given"):
        markov_spectrum(op)
    with pytest.raises(ValueError, match=r"\[1, n-2\]"):
        markov_spectrum(op, 299)


@pytest.mark.slow
def test_auto_large_grid_float32_lanczos_against_circulant():
    # n = 10^4 (FLOAT32_FROM_N): auto picks Lanczos with float32 storage (DESIGN 3.1); the exact
    # spectrum of the equispaced grid is the FFT of the first row.  ~1 GiB, a minute here.
    n = 10_000
    C, _ = fna_on(CIRCLE.grid(n), scale=4 * np.pi / n)
    spec = markov_spectrum(C, 10, rng=0)
    assert spec.method == "lanczos" and spec.storage_dtype == "float32"
    exact = to_numpy(circulant_spectrum(C[0], 10).eigenvalues)
    # float32 storage: rounding of S (eps32 = 1.2e-7) perturbs eigenvalues by <= ||dS|| ~ eps32 * sqrt(n)
    # in the worst case; measured ~1e-7
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - exact)) <= 100 * np.finfo(np.float32).eps


@pytest.mark.parametrize("method", ["lanczos", "matrix-free"])
def test_iterative_paths_return_input_namespace(xp, random_circle, method):
    _, C, _ = random_circle
    ref = reference_real(C)[:5]
    spec = markov_spectrum(xp.asarray(C), 5, method=method, vectors=True, rng=0)
    assert type(spec.eigenvalues) is type(xp.asarray(C))
    assert type(spec.psi) is type(xp.asarray(C))
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= symmetric_tol(C)  # as the numpy paths
