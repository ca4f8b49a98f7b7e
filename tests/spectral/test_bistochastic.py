"""Tests for spectral.bistochastic: the symmetric Sinkhorn scaling ``P = D C D`` (Sinkformers).

References are independent of the damped iteration under test: the defining equations
``d_i sum_j C_ij d_j = 1`` solved by Newton's method (scipy.optimize.root on the log scaling), the
closed forms of a circulant kernel (constant ``d``) and of a strongly peaked dot-product kernel
(``P -> I``, ``log d_i -> -beta x_i^2 / 2``), and the uniqueness of the doubly stochastic scaling
(the alternating ``spectral.sinkhorn`` reaches the same matrix).
"""

import math

import numpy as np
import pytest
from scipy.optimize import root

from spectral import SinkhornScaling, sinkhorn, sinkhorn_normalize
from spectral.backend import to_numpy
from spectral.normalize import SinkhornConvergenceWarning
from spectral.validation import InputError

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
