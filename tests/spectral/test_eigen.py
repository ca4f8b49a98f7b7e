"""Tests for spectral.eigen (markov_spectrum): every path against numpy.linalg on A = D^-1 C,
the general (complex) path, the memory guard and method choice, backend neutrality, ARPACK
non-convergence, bad input, and the short repr of a Spectrum.

Tolerances (kind (a), exact algebra): a backward-stable eigensolver perturbs the
eigenvalues of a symmetric matrix of norm 1 by <= c n eps; for the non-symmetric
reference ``numpy.linalg.eigvals(A)`` the bound is multiplied by cond(V) =
sqrt(max D / min D) (A = D^-1/2 S D^1/2).  Measured errors are quoted next to each
bound.
"""

import re

import numpy as np
import pytest

from manifolds import Circle
from spectral import DenseMemoryError, KernelOperator, circulant_spectrum, markov_spectrum
from spectral.floor.backend import to_numpy
from spectral.block import DEFAULT_EIG_TOL as BLOCK_EIG_TOL
from spectral.block import DEFAULT_TOL as BLOCK_DEFAULT_TOL
from spectral.floor.memory import first_that_fits
from spectral.testing import assert_close
from spectral.floor.validation import ConvergenceError, InputError

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()



def reference_real(C):
    """Independent reference: general eigenvalues of A = D^-1 C, real parts, descending."""
    A = C / C.sum(axis=1, keepdims=True)
    return np.sort(np.linalg.eigvals(A).real)[::-1]


def symmetric_tol(C):
    """c n eps cond(V), c = 10 (measured errors are 10-100x below this)."""
    d = C.sum(axis=1)
    return 10 * C.shape[0] * EPS * np.sqrt(d.max() / d.min())


# ----------------------------------------------------------------------------- paths agree


def test_symmetric_paths_agree_with_numpy_eig(random_circle, fna_on):
    x, C, kern = random_circle
    ref = reference_real(C)[:10]
    tol = symmetric_tol(C)  # 300 points: ~8e-12; measured <= 7e-15
    op = KernelOperator(x, kernel=kern, distance=CIRCLE.distance)
    results = {
        "dense": markov_spectrum(C, 10, method="dense"),
        "lanczos": markov_spectrum(C, 10, method="lanczos", rng=1),
        "matrix-free": markov_spectrum(C, 10, method="matrix-free", rng=2),
        "matrix-free vectors": markov_spectrum(C, 10, method="matrix-free", vectors=True, rng=2),
        "operator": markov_spectrum(op, 10, rng=3),
    }
    d = C.sum(axis=1)
    # with vectors the block solver (matrix-free) stops at a residual of sqrt(eps64) on S = D^-1/2 C D^-1/2;
    # the residual of A = D^-1 C is at most sqrt(max D / min D) times that. Eigenvalues alone stop on the
    # bound on their errors (<= BLOCK_EIG_TOL; measured <= 1e-13 here), and still agree within the same tol
    # as the direct solvers
    block_tol = BLOCK_DEFAULT_TOL * np.sqrt(d.max() / d.min())
    for name, spec in results.items():
        assert spec.symmetric, name
        assert spec.n_components == 1, name
        assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= tol, name
        if spec.method != "matrix-free":
            assert spec.residual <= tol, name
        elif spec.right_vectors is not None:
            assert spec.residual <= block_tol, name
        else:
            bound = float(re.search(r"eigenvalue error bound ([0-9.e+-]+)\)", spec.solver).group(1))
            assert bound <= BLOCK_EIG_TOL and spec.residual > block_tol, name  # it stopped on the bound
    assert results["operator"].method == "matrix-free"
    assert "block Krylov-Schur" in results["operator"].solver
    # the kernel operator iterates on float32 tiles and refines on float64 ones
    assert "float32 +" in results["operator"].solver and results["operator"].storage_dtype == "float64"
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
    with pytest.raises(InputError, match="symmetric=True.*imaginary"):
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


def test_auto_takes_the_first_path_that_fits(random_circle, monkeypatch):
    # markov_spectrum's auto is spectral.floor.memory.first_that_fits over its paths' estimates, in order of preference
    import spectral.eigen as eigen

    _, C, _ = random_circle
    n = C.shape[0]
    seen = []

    def spy(needs, limit):
        seen.append((dict(needs), limit))
        return first_that_fits(needs, limit)

    monkeypatch.setattr(eigen, "first_that_fits", spy)
    assert markov_spectrum(C, 5, max_memory=n * n * 8, rng=0).method == "lanczos"  # an estimate equal to the limit fits
    needs, limit = seen[-1]
    assert list(needs) == ["dense", "lanczos", "matrix-free"] and limit == n * n * 8
    assert needs == {"dense": 5 * n * n * 8, "lanczos": n * n * 8, "matrix-free": 0}
    markov_spectrum(C, 5, method="lanczos", max_memory=n * n * 8, rng=0)  # and the guard accepts what auto chose


def test_auto_refuses_the_last_path_with_its_message(random_circle):
    _, C, _ = random_circle
    n = C.shape[0]
    with pytest.raises(DenseMemoryError) as auto:
        markov_spectrum(C, max_memory=n * n * 4)
    with pytest.raises(DenseMemoryError) as dense:
        markov_spectrum(C, method="dense", max_memory=n * n * 4)
    assert str(auto.value) == str(dense.value)


def test_auto_picks_dense_small_and_lanczos_large(random_circle, monkeypatch):
    import spectral.eigen as eigen

    _, C, _ = random_circle
    assert markov_spectrum(C, 4).method == "dense"  # n = 300 <= DENSE_MAX_N
    monkeypatch.setattr(eigen, "DENSE_MAX_N", 100)  # the rule, not the (slow) size, is tested
    assert markov_spectrum(C, 4, rng=0).method == "lanczos"  # n > DENSE_MAX_N and k given
    assert markov_spectrum(C).method == "dense"  # all eigenvalues: dense at any n


# ----------------------------------------------------------------------------- backends


def test_dense_path_backend_neutral(xp, random_circle):
    _, C, _ = random_circle
    ref = markov_spectrum(C, 8, method="dense", vectors=True)
    spec = markov_spectrum(xp.asarray(C), 8, method="dense", vectors=True)
    # (a) parity across backends: same LAPACK underneath for array_api_strict; 4 sqrt(eps)
    assert_close(spec.eigenvalues, xp.asarray(to_numpy(ref.eigenvalues)), atol=4 * np.sqrt(EPS))
    assert_close(spec.psi, xp.asarray(to_numpy(ref.psi)), atol=4 * np.sqrt(EPS))
    assert spec.residual <= symmetric_tol(C)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "C, kwargs, match",
    [
        (np.ones((3, 4)), {}, "square"),
        (np.array([[1.0, np.nan], [1.0, 1.0]]), {}, "finite"),
        (np.array([[1.0, -1.0], [1.0, 1.0]]), {}, "nonnegative"),
        (np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]), {}, "row 1"),
        (np.ones((5, 5)), {"k": 4, "method": "lanczos"}, r"\[1, n-2\] = \[1, 3\]"),
        (np.ones((5, 5)), {"k": 0}, r"k must be an integer in \[1, 5\]"),
        (np.ones((5, 5)), {"k": 2.5}, "k must be an integer"),
        (np.ones((5, 5)), {"method": "arpack"}, "method must be one of"),
        (np.ones((5, 5)), {"method": "lanczos"}, "k must be given"),
        (np.ones((5, 5)), {"dtype": "float16"}, "dtype must be one of"),
        (np.ones((5, 5)), {"tol": -1.0}, "tol must be"),
        (np.ones((5, 5)), {"symmetric": "yes"}, "symmetric must be"),
        ([[1.0, 0.5], [0.5, 1.0]], {}, r"^C must be a 2-D score matrix .* got list: pass numpy.asarray"),  # not TypeError
        ("x", {}, r"^C must be a 2-D score matrix .* got str"),
    ],
)
def test_markov_spectrum_bad_input(C, kwargs, match):
    with pytest.raises(InputError, match=match):
        markov_spectrum(C, **kwargs)


def test_operator_bad_method_and_k(random_circle):
    x, _, kern = random_circle
    op = KernelOperator(x, kernel=kern, distance=CIRCLE.distance)
    with pytest.raises(InputError, match="'auto' or 'matrix-free'"):
        markov_spectrum(op, 3, method="dense")
    with pytest.raises(InputError, match="k must be given"):
        markov_spectrum(op)
    with pytest.raises(InputError, match=r"\[1, n-2\]"):
        markov_spectrum(op, 299)


@pytest.mark.slow
def test_auto_large_grid_float32_lanczos_against_circulant(fna_on):
    # n = 10^4 (FLOAT32_FROM_N): auto picks Lanczos with float32 storage; the exact
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
    assert type(spec.psi) is type(xp.asarray(C))
    assert_close(spec.eigenvalues, xp.asarray(ref), rtol=0, atol=symmetric_tol(C))  # as the numpy paths


# ----------------------------------------------------------------------------- errors and display


def options_named(message):
    """The ``name=`` options a message tells the user to set."""
    import re

    return set(re.findall(r"\b([a-z_]+) ?=", message))


def test_memory_refusal_names_options_that_exist(random_circle):
    import inspect

    _, C, _ = random_circle
    n = C.shape[0]
    with pytest.raises(DenseMemoryError) as info:
        markov_spectrum(C, 5, method="dense", max_memory=n * n * 8)
    msg = str(info.value)
    assert "dense dense" not in msg and msg.startswith("dense eigensolver workspace of shape (300, 300) x 5")
    named = options_named(msg)
    assert {"method", "max_memory"} <= named
    assert named <= set(inspect.signature(markov_spectrum).parameters)
    with pytest.raises(DenseMemoryError) as info:
        markov_spectrum(C, 5, method="lanczos", max_memory=100)
    assert options_named(str(info.value)) <= set(inspect.signature(markov_spectrum).parameters)


def test_arpack_non_convergence_is_a_convergence_error(random_circle, monkeypatch):
    from scipy.sparse.linalg import ArpackNoConvergence

    from spectral.floor import backend
    def stalls(*args, **kwargs):
        raise ArpackNoConvergence("ARPACK error -1: No convergence", np.ones(1), np.ones((300, 1)))

    monkeypatch.setattr(backend, "eigsh", stalls)
    _, C, _ = random_circle
    with pytest.raises(ConvergenceError, match=r"did not converge to the 5 leading eigenpairs.*try method='dense'"):
        markov_spectrum(C, 5, method="lanczos", rng=0)


def test_block_non_convergence_is_a_convergence_error(random_circle, monkeypatch):
    import inspect

    import spectral.eigen as eigen

    x, C, kern = random_circle
    monkeypatch.setattr(eigen, "BLOCK_MAX_PRODUCTS", 2)  # 15 are needed here
    op = KernelOperator(x, kernel=kern, distance=CIRCLE.distance)
    for target in (C, op):
        with pytest.raises(ConvergenceError, match=r"did not converge to the 5 leading eigenpairs in 2 block "
                                                   r"products.*try a larger tol or a smaller k") as info:
            markov_spectrum(target, 5, method="matrix-free", rng=0)
        named = set(re.findall(r"\b(tol|k)\b", str(info.value)))
        assert named and named <= set(inspect.signature(markov_spectrum).parameters)


def test_spectrum_repr_is_short(random_circle):
    _, C, _ = random_circle
    spec = markov_spectrum(C, vectors=True)  # 300 eigenpairs: the dataclass repr printed ~ 1 MB
    text = repr(spec)
    assert len(text) < 300, text
    assert text.startswith("Spectrum(n=300, k=300, method='dense', solver='numpy.linalg.eigh', residual=")
    assert "eigenvalues=[1, " in text and ", ...]" in text and "vectors=<float64 (300, 300)>" in text


# ----------------------------------------------------------------------------- stored sparse scores


@pytest.fixture(scope="module")
def sparse_scores():
    """Heat kernel within a cutoff on 400 random S^2 points (connected; ~70 neighbours per point)."""
    from spectral import heat_kernel_sparse

    x = np.random.default_rng(5).standard_normal((400, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return heat_kernel_sparse(x, eps=0.02, cutoff=6.0)


def test_stored_sparse_scores_use_arpack_and_agree(sparse_scores, random_circle):
    sc = sparse_scores
    C = sc.matrix.toarray()
    ref = reference_real(C)[:10]
    tol = symmetric_tol(C)  # 2.0e-12 here; measured 4.4e-15
    spec = markov_spectrum(sc, 10, vectors=True, rng=1)
    assert spec.method == "matrix-free" and "ARPACK" in spec.solver and spec.n_components == 1
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= tol
    assert spec.residual <= tol
    # the same vectors (up to sign) as the block solver on the stored dense copy: both carry the sign
    # convention, and a vector with residual r is off by <= r / gap (Davis-Kahan); the block solver
    # stops at r ~ 1.5e-8, the gaps here are >= 2.7e-3 (bound 5.9e-6; measured 2.6e-9)
    block = markov_spectrum(C, 10, method="matrix-free", vectors=True, rng=2)
    assert "block Krylov-Schur" in block.solver
    spaced = -np.diff(reference_real(C)[:11])
    gap = np.minimum(np.r_[np.inf, spaced[:-1]], spaced)
    simple = np.flatnonzero(gap > 1e-3)
    assert simple.size >= 3
    Va, Vb = to_numpy(spec.conjugate_vectors)[:, simple], to_numpy(block.conjugate_vectors)[:, simple]
    bound = 2 * (block.residual + spec.residual) / gap[simple].min()
    assert np.max(np.abs(Va - Vb)) <= bound
    assert np.max(np.abs(Va + Vb)) > 0.1  # negative control: a flipped sign is O(1) away
    # psi are right eigenvectors of A = D^-1 C
    A = C / C.sum(axis=1, keepdims=True)
    psi, eta = to_numpy(spec.psi), to_numpy(spec.eigenvalues)
    assert np.max(np.linalg.norm(A @ psi - psi * eta, axis=0) / np.linalg.norm(psi, axis=0)) <= tol
    # seeded: the same rng gives the same eigenvalues bit for bit
    again = markov_spectrum(sc, 10, rng=1)
    assert np.array_equal(to_numpy(again.eigenvalues), to_numpy(spec.eigenvalues))
    # kernels that recompute their tiles stay on the block solver
    x, _, kern = random_circle
    op = markov_spectrum(KernelOperator(x, kernel=kern, distance=CIRCLE.distance), 4, rng=0)
    assert "block Krylov-Schur" in op.solver
    # negative control: a heat kernel at eps = 0.025 instead of 0.02 differs far beyond tol
    from spectral import heat_kernel_sparse

    x2 = np.random.default_rng(5).standard_normal((400, 3))
    x2 /= np.linalg.norm(x2, axis=1, keepdims=True)
    other = markov_spectrum(heat_kernel_sparse(x2, eps=0.025, cutoff=6.0), 10, rng=1)
    assert np.max(np.abs(to_numpy(other.eigenvalues) - ref)) > 1e6 * tol


def test_stored_sparse_scores_float32_and_components(sparse_scores):
    import scipy.sparse as sp

    from spectral import DisconnectedGraphWarning, SparseScores

    sc = sparse_scores
    ref = reference_real(sc.matrix.toarray())[:6]
    spec = markov_spectrum(sc, 6, dtype="float32", rng=0)
    assert spec.storage_dtype == "float32"
    # float32 storage: eigenvalues to ~ n eps32 = 4.8e-5 (measured 7.1e-7)
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= 10 * 400 * np.finfo(np.float32).eps
    # two copies side by side: components counted exactly from the stored entries (no matvec search)
    two = SparseScores(sp.block_diag([sc.matrix, sc.matrix], format="csr"), symmetric=True)
    with pytest.warns(DisconnectedGraphWarning, match=r"has 2 connected components"):
        spec = markov_spectrum(two, 4, rng=0)
    assert spec.n_components == 2


def test_stored_sparse_non_convergence_is_a_convergence_error(sparse_scores, monkeypatch):
    import scipy.sparse.linalg as sla
    from scipy.sparse.linalg import ArpackNoConvergence

    def stalls(*args, **kwargs):
        raise ArpackNoConvergence("ARPACK error -1: No convergence", np.ones(1), np.ones((400, 1)))

    monkeypatch.setattr(sla, "eigsh", stalls)
    with pytest.raises(ConvergenceError, match=r"eigsh on the stored sparse scores.*did not converge.*try"):
        markov_spectrum(sparse_scores, 5, rng=0)


# ----------------------------------------------------------------------------- scipy.sparse input


@pytest.mark.parametrize("fmt", ["csr_array", "csc_array", "coo_array", "lil_array", "csr_matrix", "coo_matrix"])
def test_scipy_sparse_input_is_the_stored_sparse_path(sparse_scores, fmt):
    """A scipy.sparse C is wrapped as SparseScores: the same ARPACK path, the same eigenvalues bit for bit."""
    import scipy.sparse as sp

    M = getattr(sp, fmt)(sparse_scores.matrix)
    spec = markov_spectrum(M, 6, rng=1)
    same = markov_spectrum(sparse_scores, 6, rng=1)
    assert spec.method == "matrix-free" and "ARPACK on the stored sparse scores" in spec.solver and spec.symmetric
    assert np.array_equal(to_numpy(spec.eigenvalues), to_numpy(same.eigenvalues))
    C = sparse_scores.matrix.toarray()
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - reference_real(C)[:6])) <= symmetric_tol(C)
    lanczos = markov_spectrum(M, 6, method="lanczos", rng=1)  # Lanczos on the stored matrix: the same path
    assert np.array_equal(to_numpy(lanczos.eigenvalues), to_numpy(same.eigenvalues))


def test_scipy_sparse_all_eigenvalues_densify_after_the_guard(sparse_scores):
    M = sparse_scores.matrix
    C = M.toarray()
    for kwargs in ({}, {"method": "dense"}):
        spec = markov_spectrum(M, **kwargs)
        assert spec.method == "dense" and to_numpy(spec.eigenvalues).shape == (400,)
        assert np.array_equal(to_numpy(spec.eigenvalues), to_numpy(markov_spectrum(C).eigenvalues))
    with pytest.raises(DenseMemoryError, match="dense copy of the sparse scores"):
        markov_spectrum(M, method="dense", max_memory=1e5)


def test_scipy_sparse_non_symmetric_takes_the_general_path():
    import scipy.sparse as sp

    C = sp.random_array((60, 60), density=0.2, random_state=3, format="csr") + sp.eye_array(60)
    spec = markov_spectrum(C, 4, rng=0)
    assert not spec.symmetric and spec.method == "matrix-free"
    A = C.toarray() / C.toarray().sum(axis=1, keepdims=True)
    ref = np.linalg.eigvals(A)
    ref = ref[np.lexsort((-ref.imag, -ref.real, -np.abs(ref)))][:4]
    # general ARPACK against numpy eigvals of the non-symmetric A: measured 3e-15; 1e-10 allows cond(V)
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= 1e-10
    with pytest.raises(InputError, match="symmetric=True needs a symmetric sparse C"):
        markov_spectrum(C, 4, symmetric=True)
    with pytest.raises(InputError, match="square"):
        markov_spectrum(sp.csr_array(np.ones((2, 3))), 1)


def test_count_components_of_a_scipy_sparse_matrix():
    import scipy.sparse as sp

    from spectral import count_components

    blocks = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    for fmt in ("csr_array", "coo_matrix", "lil_array"):
        assert count_components(getattr(sp, fmt)(blocks)) == count_components(blocks) == 2
    chain = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]])  # one closed class {2}
    assert count_components(sp.csr_array(chain)) == count_components(chain) == 1
    assert count_components(sp.csr_array(chain), symmetric=True) == count_components(chain, symmetric=True)
