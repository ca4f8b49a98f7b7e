"""Tests for spectral.bistochastic: the Sinkhorn scaling, symmetric ``P = D C D`` (Sinkformers) and alternating.

References are independent of the iterations under test: the defining equations
``d_i sum_j C_ij d_j = 1`` (and ``r_i sum_j C_ij c_j = 1 = c_j sum_i r_i C_ij``) solved by Newton's method
(scipy.optimize.root on the log scalings), the closed forms of a circulant kernel (constant ``d``) and of a
strongly peaked dot-product kernel (``P -> I``, ``log d_i -> -beta x_i^2 / 2``), the uniqueness of the doubly
stochastic scaling (the symmetric and the alternating iterations reach the same matrix; so does the
diagonally rescaled matrix), and the classic Sinkhorn-Knopp loop written out below (the iteration that
``spectral.sinkhorn`` and attention_flow's Sinkhorn attention ran before they became this module's
``method="alternating"``: same numbers, bit for bit).
"""

import math
import warnings

import numpy as np
import pytest
from scipy.optimize import root

from spectral import SinkhornResult, SinkhornScaling, sinkhorn, sinkhorn_normalize
from spectral.floor.backend import to_numpy
from spectral.bistochastic import SinkhornConvergenceWarning
from spectral.normalize import SinkhornConvergenceWarning as NormalizeWarning
from spectral.floor.validation import InputError

EPS = np.finfo(np.float64).eps


def gaussian_kernel(n, eps, seed=0):
    """Gaussian kernel exp(-|x - y|^2 / (2 eps)) on n random points of the unit circle (PSD)."""
    t = np.random.default_rng(seed).uniform(0, 2 * np.pi, n)
    x = np.stack([np.cos(t), np.sin(t)], axis=1)
    sq = np.maximum(2.0 - 2.0 * x @ x.T, 0.0)
    return np.exp(-sq / (2 * eps))


def newton_log_scaling(C):
    """Solve u_i + log sum_j C_ij e^(u_j) = 0 by Newton's method (hybr), from the definition."""
    logC = np.log(C)

    def residual(u):
        a = logC + u[None, :]
        top = a.max(axis=1)
        return u + top + np.log(np.exp(a - top[:, None]).sum(axis=1))

    def jacobian(u):  # I + (the row-normalised C diag(e^u))
        w = C * np.exp(u)[None, :]
        return np.eye(len(u)) + w / w.sum(axis=1, keepdims=True)

    sol = root(residual, -0.5 * np.log(C.sum(axis=1)), jac=jacobian, method="hybr", tol=1e-14)
    assert np.max(np.abs(residual(sol.x))) <= 1e-14
    return sol.x


def test_doubly_stochastic_symmetric_and_the_defining_equations(xp):
    C = gaussian_kernel(60, 0.05)
    res = sinkhorn_normalize(xp.asarray(C), tol=1e-13)
    P, d = to_numpy(res.matrix), to_numpy(res.scaling)
    assert res.converged and res.residual <= 1e-13
    assert np.max(np.abs(P - P.T)) <= 4 * EPS  # diag(d) C diag(d) is symmetric up to rounding
    assert np.max(np.abs(P - d[:, None] * C * d[None, :])) <= 8 * EPS * P.max()
    u = newton_log_scaling(C)
    assert np.max(np.abs(to_numpy(res.log_scaling) - u)) <= 1e-11  # residual 1e-13 amplified by 1/(1 - lambda_2)
    assert len(res.residuals) == res.iterations + 1 and res.residuals[-1] <= 1e-13


def test_two_by_two_closed_form():
    # d1 (a d1 + b d2) = 1 and d2 (b d1 + c d2) = 1; subtracting, a d1^2 = c d2^2: s = d2 / d1 = sqrt(a / c)
    # and d1^2 (a + b s) = 1
    a, b, c = 3.0, 1.0, 2.0
    s = math.sqrt(a / c)
    d1 = 1.0 / math.sqrt(a + b * s)
    res = sinkhorn_normalize(np.array([[a, b], [b, c]]), tol=1e-15)
    np.testing.assert_allclose(res.scaling, [d1, s * d1], rtol=4 * EPS)


def test_circulant_kernel_needs_no_update():
    theta = 2 * np.pi * np.arange(64) / 64
    x = np.stack([np.cos(theta), np.sin(theta)], axis=1)
    C = np.exp(-np.maximum(2 - 2 * x @ x.T, 0) / 0.1)
    res = sinkhorn_normalize(C, tol=1e-13)
    assert res.iterations == 0  # the start (C 1)^(-1/2) is exact: equal row sums
    np.testing.assert_allclose(res.scaling, 1 / math.sqrt(C.sum(axis=1)[0]), rtol=64 * EPS)


def test_same_matrix_as_the_alternating_iteration():
    C = gaussian_kernel(40, 0.2, seed=3)
    ours = sinkhorn_normalize(C, tol=1e-13).matrix
    theirs = sinkhorn(C, tol=1e-13, max_iter=20000, check_every=1).matrix
    assert np.max(np.abs(ours - theirs)) <= 1e-11  # the doubly stochastic scaling is unique


def test_log_domain_matches_and_survives_overflowing_scores():
    C = gaussian_kernel(50, 0.05, seed=1)
    a, b = sinkhorn_normalize(C, tol=1e-13), sinkhorn_normalize(np.log(C), log_domain=True, tol=1e-13)
    assert np.max(np.abs(a.matrix - b.matrix)) <= 1e-12
    assert np.max(np.abs(a.log_scaling - b.log_scaling)) <= 1e-11
    # dot-product scores beta x_i x_j with beta = 1e4: exp overflows; the scaling tends to exp(-beta x^2 / 2)
    # and P to the identity (the rearrangement inequality: the identity is the optimal self-transport)
    x = np.linspace(0.0, 1.0, 6)[:, None]
    beta = 1e4
    res = sinkhorn_normalize(beta * (x @ x.T), log_domain=True)
    assert res.converged
    np.testing.assert_allclose(res.matrix, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(res.log_scaling, -beta * x[:, 0] ** 2 / 2, atol=1e-9)
    # a kernel whose start underflows where P is not small is finished in the log domain
    res = sinkhorn_normalize(np.exp(700.0 * (x @ x.T)), tol=1e-12)
    assert res.converged and np.all(np.diag(res.matrix) > 0.99)


@pytest.mark.parametrize("eps", [0.3, 0.03, 0.003])
def test_linear_rate_at_most_one_half_whatever_the_width(eps):
    """(I - P)/2 governs the error: for a PSD Gaussian kernel each update contracts by <= 1/2."""
    C = gaussian_kernel(200, eps, seed=2)
    res = sinkhorn_normalize(C, tol=1e-12)
    lam = np.linalg.eigvalsh(res.matrix)
    bound = (1 - lam[0]) / 2
    r = np.asarray(res.residuals)
    ratios = r[1:] / r[:-1]
    assert bound <= 0.5 + 1e-12
    assert np.max(ratios[5:]) <= bound * 1.02  # the tail ratio approaches the bound from below (measured <= 0.495)
    assert res.iterations <= 45  # log2(r0 / 1e-12) with r0 <= 0.3 is 38
    # the alternating iteration's rate is lambda_2^2: it needs far more sweeps once the kernel narrows
    if eps <= 0.03:
        with pytest.warns(SinkhornConvergenceWarning):
            sinkhorn(C, tol=1e-12, max_iter=10 * res.iterations, check_every=1)


def test_nonconvergence_is_reported():
    C = gaussian_kernel(30, 0.05)
    with pytest.warns(SinkhornConvergenceWarning, match="max_iter=1"):
        res = sinkhorn_normalize(C, max_iter=1, tol=1e-14)
    assert not res.converged and res.iterations == 1 and len(res.residuals) == 2


def test_float32():
    C = gaussian_kernel(40, 0.1).astype(np.float32)
    res = sinkhorn_normalize(C, tol=1e-5)
    assert res.matrix.dtype == np.float32 and res.converged and res.residual <= 1e-5


def test_the_result_keeps_its_first_constructor():
    """SinkhornScaling(matrix=, scaling=, log_scaling=, residual=, ...) as the symmetric result was first built."""
    P = np.full((2, 2), 0.5)
    res = SinkhornScaling(matrix=P, scaling=np.ones(2), log_scaling=np.zeros(2), iterations=0, converged=True,
                          residual=0.25, residuals=(0.0,))
    assert res.residual == 0.25 and res.row_scaling is res.col_scaling and res.method == "symmetric"
    assert np.array_equal(res.scaling, np.ones(2)) and np.array_equal(res.log_col_scaling, np.zeros(2))
    assert SinkhornScaling(P, np.ones(2), np.ones(2), np.zeros(2), np.zeros(2), 3, True, (0.1,)).residual == 0.0


def test_repr_is_short():
    text = repr(sinkhorn_normalize(gaussian_kernel(30, 0.1)))
    assert isinstance(sinkhorn_normalize(np.eye(2)), SinkhornScaling)
    assert len(text) < 150 and text.startswith("SinkhornScaling(matrix=<float64 (30, 30)>, iterations="), text


def _bad(C, i, j, value):
    out = np.array(C, copy=True)
    out[i, j] = out[j, i] = value
    return out


C0 = gaussian_kernel(5, 0.5)


@pytest.mark.parametrize("C, kwargs, match", [
    (_bad(C0, 0, 1, np.nan), {}, "finite"),
    (_bad(C0, 0, 1, np.inf), {}, "finite"),
    (_bad(C0, 0, 1, -0.1), {}, "nonnegative"),
    (_bad(C0, 2, 2, 0.0), {}, r"positive diagonal.*C\[2, 2\]"),
    (np.zeros((3, 3)), {}, "positive diagonal"),
    (C0 + np.triu(np.full((5, 5), 1e-3), 1), {}, "symmetric"),
    (np.ones((3, 4)), {}, "square"),
    (np.ones(3), {}, "2-D"),
    (_bad(np.log(C0), 0, 1, np.nan), {"log_domain": True}, "NaN"),
    (_bad(np.log(C0), 0, 1, np.inf), {"log_domain": True}, r"\+inf"),
    (_bad(np.log(C0), 1, 1, -np.inf), {"log_domain": True}, "finite diagonal"),
    (np.where(np.arange(25).reshape(5, 5) == 1, -np.inf, np.log(C0)), {"log_domain": True}, "mirrored"),
    (np.log(C0) + np.triu(np.full((5, 5), 1e-3), 1), {"log_domain": True}, "symmetric"),
    (C0, {"tol": 0.0}, "tol"),
    (C0, {"tol": 1.0}, "tol"),
    (C0, {"max_iter": 0}, "max_iter"),
    (C0, {"max_iter": True}, "max_iter"),
])
def test_bad_input_names_the_parameter(C, kwargs, match):
    with pytest.raises(InputError, match=match):
        sinkhorn_normalize(C, **kwargs)


def test_computes_in_the_namespace_of_its_input(strict_xp):
    C = gaussian_kernel(20, 0.1)
    res = sinkhorn_normalize(strict_xp.asarray(C))
    assert type(res.matrix) is type(strict_xp.asarray(C))
    np.testing.assert_allclose(to_numpy(res.matrix), sinkhorn_normalize(C).matrix, rtol=0, atol=1e-15)
    res = sinkhorn_normalize(strict_xp.asarray(np.log(C)), log_domain=True)
    np.testing.assert_allclose(to_numpy(res.matrix), sinkhorn_normalize(C).matrix, rtol=0, atol=1e-12)


# -- the alternating method (any square matrix, batched, warm-started) -----------------------------------
def classic_loop(C, c, tol, max_iter, check_every):
    """The Sinkhorn-Knopp loop as spectral.sinkhorn (2-D) and attention_flow (batched, warm c) wrote it."""
    def mv(K, v):
        return K @ v if K.ndim == 2 else (K @ v[..., None])[..., 0]

    def vm(v, K):
        return v @ K if K.ndim == 2 else (v[..., None, :] @ K)[..., 0, :]

    it, residual = 0, math.inf
    while it < max_iter:
        r = 1.0 / mv(C, c)
        c = 1.0 / vm(r, C)
        it += 1
        if it % check_every == 0 or it == max_iter:
            residual = float(np.max(np.abs(r * mv(C, c) - 1.0)))
            if residual <= tol:
                break
    return r[..., :, None] * C * c[..., None, :], r, c, it, residual


def newton_two_scalings(C):
    """Solve log r_i + log sum_j C_ij c_j = 0, log c_j + log sum_i r_i C_ij = 0 (with log c_0 = 0) by Newton."""
    n = len(C)
    logC = np.log(C)

    def lse(a, axis):
        top = a.max(axis=axis, keepdims=True)
        return np.squeeze(top, axis) + np.log(np.exp(a - top).sum(axis=axis))

    def residual(z):
        a, b = z[:n], np.concatenate([[0.0], z[n:]])
        return np.concatenate([a + lse(logC + b[None, :], 1), (b + lse(logC + a[:, None], 0))[1:]])

    sol = root(residual, np.zeros(2 * n - 1), method="hybr", tol=1e-14)
    assert np.max(np.abs(residual(sol.x))) <= 1e-13
    a, b = sol.x[:n], np.concatenate([[0.0], sol.x[n:]])
    return np.exp(a)[:, None] * C * np.exp(b)[None, :]


def scores(n, m=None, seed=0, scale=1.0):
    """Non-symmetric dot-product scores scale <Q x_i, K x_j> of Gaussian tokens, shape (m, n, n) or (n, n)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m or 1, n, 2))
    Q, K = np.array([[0.8, -0.3], [0.4, 0.6]]), np.array([[0.5, 0.7], [-0.6, 0.4]])
    S = scale * (x @ Q.T) @ np.swapaxes(x @ K.T, -1, -2)
    return S if m else S[0]


@pytest.mark.parametrize("check_every, max_iter", [(1, 1000), (10, 10000), (5, 10000), (3, 7)])
def test_alternating_is_the_classic_loop_bit_for_bit(check_every, max_iter):
    E = np.exp(scores(40, seed=1))
    ref, r, c, it, residual = classic_loop(E, np.ones(40), 1e-12, max_iter, check_every)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SinkhornConvergenceWarning)
        res = sinkhorn_normalize(E, method="alternating", tol=1e-12, max_iter=max_iter, check_every=check_every)
        old = sinkhorn(E, tol=1e-12, max_iter=max_iter, check_every=check_every)
    assert res.iterations == it == old.iterations and res.residuals[-1] == residual
    assert np.array_equal(res.matrix, ref) and np.array_equal(old.matrix, ref)
    assert np.array_equal(res.row_scaling, r) and np.array_equal(res.col_scaling, c)
    assert len(res.residuals) == it // check_every + (it % check_every != 0)


def test_batched_warm_started_alternating_is_attention_flows_loop_bit_for_bit():
    """attention_flow's former Sinkhorn: a batch of e^(scores - row max), warm c, the residual every 5 sweeps."""
    S = scores(30, m=4, seed=2)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    warm = np.exp(np.random.default_rng(3).uniform(-0.5, 0.0, (4, 30)))
    ref, r, c, it, residual = classic_loop(E, warm, 1e-11, 10_000, 5)
    res = sinkhorn_normalize(E, method="alternating", tol=1e-11, max_iter=10_000, check_every=5, start=warm,
                             check_input=False)
    assert res.iterations == it and res.residuals[-1] == residual and np.array_equal(res.matrix, ref)
    assert np.array_equal(res.col_scaling, c)


def test_alternating_solves_the_defining_equations_and_matches_each_matrix_of_a_batch():
    S = scores(25, m=3, seed=4)
    res = sinkhorn_normalize(np.exp(S), method="alternating", tol=1e-13)
    assert res.converged and res.matrix.shape == (3, 25, 25) and res.residual <= 1e-13
    for k in range(3):
        # the residual 1e-13 on the row sums, amplified by the conditioning of the scaling (measured <= 2e-15 here)
        np.testing.assert_allclose(res.matrix[k], newton_two_scalings(np.exp(S[k])), rtol=0, atol=1e-12)
        one = sinkhorn_normalize(np.exp(S[k]), method="alternating", tol=1e-13).matrix
        np.testing.assert_allclose(res.matrix[k], one, rtol=0, atol=1e-13)
    P = res.matrix
    np.testing.assert_allclose(res.row_scaling[..., :, None] * np.exp(S) * res.col_scaling[..., None, :], P,
                               rtol=1e-14, atol=0)
    with pytest.raises(AttributeError, match="row_scaling and col_scaling"):
        res.scaling  # noqa: B018 - two vectors, not one


def test_symmetric_and_alternating_reach_the_same_matrix():
    C = gaussian_kernel(40, 0.2, seed=3)
    sym = sinkhorn_normalize(C, tol=1e-13)
    alt = sinkhorn_normalize(C, method="alternating", tol=1e-13, max_iter=20000)
    assert sym.method == "symmetric" and alt.method == "alternating"
    assert np.max(np.abs(sym.matrix - alt.matrix)) <= 1e-11  # the doubly stochastic scaling is unique
    assert SinkhornResult is SinkhornScaling and NormalizeWarning is SinkhornConvergenceWarning


def test_warm_start_from_the_solution_needs_one_check():
    E = np.exp(scores(30, m=2, seed=5))
    cold = sinkhorn_normalize(E, method="alternating", tol=1e-12)
    warm = sinkhorn_normalize(E, method="alternating", tol=1e-12, start=cold.col_scaling)
    assert warm.iterations == 1 < cold.iterations
    np.testing.assert_allclose(warm.matrix, cold.matrix, rtol=0, atol=1e-12)
    again = sinkhorn_normalize(E, method="alternating", tol=1e-12, start=cold)  # a result gives its log scaling
    assert again.iterations == 1
    C = gaussian_kernel(40, 0.05)
    sym = sinkhorn_normalize(C, tol=1e-13)
    for start in (sym, sym.scaling):
        res = sinkhorn_normalize(C, tol=1e-13, start=start)
        assert res.iterations == 0 and np.max(np.abs(res.matrix - sym.matrix)) <= 1e-13


def test_alternating_in_the_log_domain_and_with_large_scalings():
    """P is invariant under diagonal rescaling C -> diag(e^u) C diag(e^w): scalings beyond e^30 are folded into K."""
    E = np.exp(scores(20, seed=6))
    ref = sinkhorn_normalize(E, method="alternating", tol=1e-13).matrix
    rng = np.random.default_rng(7)
    u, w = rng.uniform(-150, 150, 20), rng.uniform(-150, 150, 20)
    big = np.exp(u)[:, None] * E * np.exp(w)[None, :]  # entries from 1e-130 to 1e130
    res = sinkhorn_normalize(big, method="alternating", tol=1e-13)
    assert res.converged
    np.testing.assert_allclose(res.matrix, ref, rtol=0, atol=1e-12)
    # the scalings carry the rescaling: log r + u equals the plain log r up to the free constant (r s, c / s)
    plain = sinkhorn_normalize(E, method="alternating", tol=1e-13).log_row_scaling
    shift = res.log_row_scaling + u - plain
    assert np.max(np.abs(shift - shift[0])) <= 1e-9
    # the scores themselves, shifted by 1e3 per row and column: exp overflows, the log domain does not
    L = np.log(E) + 1e3 * rng.uniform(-1, 1, (20, 1)) + 1e3 * rng.uniform(-1, 1, (1, 20))
    res = sinkhorn_normalize(L, method="alternating", log_domain=True, tol=1e-13)
    assert res.converged and np.all(np.isfinite(res.log_row_scaling))
    np.testing.assert_allclose(res.matrix, ref, rtol=0, atol=1e-12)


def test_alternating_falls_back_to_the_log_domain_where_a_scaling_overflows():
    """A column of subnormal entries (e^score shifted by its row maxima, not validated): 1 / (r^T K) overflows in the
    first sweep; the iteration goes back to its last check and finishes in the log domain, with no warning."""
    L = np.array([[0.0, -739.0, -5.0], [-2.0, -737.0, 0.0], [-1.0, -738.0, -3.0]])
    E = np.exp(L)  # column 1 holds subnormal numbers (about 1e-320): stored exactly as exp(log(E))
    assert np.all((E[:, 1] > 0) & (E[:, 1] < np.finfo(float).smallest_normal))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # neither a NumPy overflow warning nor a convergence warning
        res = sinkhorn_normalize(E, method="alternating", tol=1e-12, check_input=False)
    assert res.converged and np.all(np.isfinite(res.matrix))
    log = sinkhorn_normalize(np.log(E), method="alternating", log_domain=True, tol=1e-12)
    np.testing.assert_allclose(res.matrix, log.matrix, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.matrix.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.matrix.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    with pytest.raises(InputError, match="column 1"):  # validated, the same matrix is refused: its column is subnormal
        sinkhorn_normalize(E, method="alternating")


def test_alternating_history_and_nonconvergence():
    C = gaussian_kernel(200, 0.003, seed=2)  # narrow: lambda_2(P)^2 per sweep is slow
    with pytest.warns(SinkhornConvergenceWarning, match="max_iter=50 sweeps"):
        res = sinkhorn_normalize(C, method="alternating", max_iter=50, check_every=10, tol=1e-12)
    assert not res.converged and res.iterations == 50 and len(res.residuals) == 5
    assert res.residuals[-1] < res.residuals[0]


def test_alternating_computes_in_the_namespace_of_its_input(strict_xp):
    E = np.exp(scores(12, m=2, seed=8))
    res = sinkhorn_normalize(strict_xp.asarray(E), method="alternating", tol=1e-13, start=np.ones((2, 12)))
    assert type(res.matrix) is type(strict_xp.asarray(E))
    np.testing.assert_allclose(to_numpy(res.matrix), sinkhorn_normalize(E, method="alternating", tol=1e-13).matrix,
                               rtol=0, atol=1e-14)
    res = sinkhorn_normalize(strict_xp.asarray(np.log(E)), method="alternating", log_domain=True, tol=1e-13)
    np.testing.assert_allclose(to_numpy(res.matrix), sinkhorn_normalize(E, method="alternating", tol=1e-13).matrix,
                               rtol=0, atol=1e-12)


E0 = np.exp(scores(4, m=2, seed=9))


@pytest.mark.parametrize("C, kwargs, match", [
    (C0, {"method": "knopp"}, "method"),
    (C0, {"check_every": 2}, "check_every"),
    (np.stack([C0, C0]), {}, "method='alternating' for a batch"),
    (E0, {"method": "alternating", "check_every": 0}, "check_every"),
    (E0, {"method": "alternating", "start": np.ones(4)}, r"start must have shape \(2, 4\)"),
    (E0, {"method": "alternating", "start": -np.ones((2, 4))}, "start must be positive"),
    (E0, {"method": "alternating", "start": np.full((2, 4), np.nan)}, "start"),
    (E0 * np.array([1.0, 1.0, 0.0, 1.0]), {"method": "alternating"}, r"column 2 of matrix \(0,\)"),
    (np.where(np.arange(4) == 3, -np.inf, np.log(E0)), {"method": "alternating", "log_domain": True}, "column 3"),
    (np.log(E0) * np.nan, {"method": "alternating", "log_domain": True}, "NaN"),
    (np.ones((2, 3, 4)), {"method": "alternating"}, "square"),
    (-E0, {"method": "alternating"}, "nonnegative"),
    (np.array([[1.0, 0.0], [1.0, 0.0]]), {"method": "alternating"}, "column 1"),
    (C0, {"log_domain": "yes"}, "log_domain"),
])
def test_bad_input_of_either_method_names_the_parameter(C, kwargs, match):
    with pytest.raises(InputError, match=match):
        sinkhorn_normalize(C, **kwargs)
