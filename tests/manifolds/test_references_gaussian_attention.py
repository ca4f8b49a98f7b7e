"""manifolds.references.gaussian_attention: the Gaussian solution's algebra against independent computations.

The tilted-Gaussian velocity against Gauss-Hermite quadrature of its definition; Sinkhorn's coupling against
the precision identity and against the authors' closed form; the ODE solver against the closed forms; sympy
for the one-dimensional moment equations.
"""

import numpy as np
import pytest

from manifolds.references.gaussian_attention import (GaussianAttention, affine_velocity, blowup_time,
                                                     gaussian_velocity_quadrature, isotropic_value_covariance,
                                                     moment_flow, moment_rhs, printed_sinkhorn_rhs, projected_limit,
                                                     scalar_flow, sinkhorn_cross_covariance)
from spectral.floor.validation import InputError

RNG = np.random.default_rng(21)
Q, K, V = RNG.standard_normal((2, 2)) * 0.7, RNG.standard_normal((2, 2)) * 0.7, RNG.standard_normal((2, 2))
M = RNG.standard_normal((2, 2))
COV = M @ M.T / 2 + 0.3 * np.eye(2)
MEAN = RNG.standard_normal(2)


@pytest.mark.parametrize("spec", [
    GaussianAttention(2, beta=0.8, query_key=Q.T @ K, value=V),
    GaussianAttention(2, beta=0.8, kernel="l2", query=Q, key=K, value=V),
    GaussianAttention(2, beta=0.5, query=Q[:, None, :], key=K[:, None, :], value=np.stack([V, V.T])),
    GaussianAttention(2, beta=0.4, kernel="l2", query=Q[:, None, :], key=K[:, None, :], value=np.stack([V, V.T])),
], ids=["softmax", "l2", "two heads", "two heads l2"])
def test_affine_velocity_is_the_quadrature_of_its_definition(spec):
    points = RNG.standard_normal((5, 2)) * 1.5
    Mv, c = affine_velocity(spec, MEAN, COV)
    ref = gaussian_velocity_quadrature(spec, MEAN, COV, points, order=60)
    np.testing.assert_allclose(points @ Mv.T + c, ref, rtol=0, atol=1e-12)  # 60^2 nodes: exact to rounding here


def test_sinkhorn_coupling_has_the_marginals_and_the_interaction():
    for k in range(5):
        r = np.random.default_rng(k)
        d = 2 + k % 3
        S = (lambda A: A @ A.T / d + 0.2 * np.eye(d))(r.standard_normal((d, d)))
        B = r.standard_normal((d, d))
        C = sinkhorn_cross_covariance(S, B)
        P = np.linalg.inv(np.block([[S, C], [C.T, S]]))
        assert np.min(np.linalg.eigvalsh(np.block([[S, C], [C.T, S]]))) > 0  # a Gaussian pair with marginals N(., S)
        np.testing.assert_allclose(P[:d, d:], -B, rtol=0, atol=1e-10 * np.max(np.abs(B)))  # density ~ e^(x^T B y)


def test_sinkhorn_right_hand_side_matches_the_authors_closed_form():
    spec = GaussianAttention(2, normalisation="sinkhorn", query=Q, key=K, value=V)
    ours = moment_rhs(spec, MEAN, COV)[1]
    np.testing.assert_allclose(ours, printed_sinkhorn_rhs(COV, Q, K, V), rtol=0, atol=1e-12)


def test_sinkhorn_velocity_is_the_conditional_mean_of_the_coupling():
    spec = GaussianAttention(2, normalisation="sinkhorn", query_key=Q.T @ K, value=V)
    Mv, c = affine_velocity(spec, MEAN, COV)
    C = sinkhorn_cross_covariance(COV, Q.T @ K)
    x = RNG.standard_normal(2)
    np.testing.assert_allclose(Mv @ x + c, V @ (MEAN + C.T @ np.linalg.solve(COV, x - MEAN)), rtol=0, atol=1e-13)
    assert np.allclose(moment_rhs(spec, MEAN, COV)[0], V @ MEAN)


def test_one_dimensional_moment_equations_with_sympy():
    """The tilt completes the square: N(y; a, s) e^(beta b x y) is N(y; a + beta s b x, s) times a factor free of y."""
    sp = pytest.importorskip("sympy")
    a, b, beta, x, y = sp.symbols("a b beta x y", real=True)
    s = sp.Symbol("s", positive=True)
    tilted = -(y - a) ** 2 / (2 * s) + beta * b * x * y
    shifted = -(y - (a + beta * s * b * x)) ** 2 / (2 * s)
    assert sp.diff(sp.expand(tilted - shifted), y) == 0  # so the velocity is V (a + beta s b x): affine in x
    # the moment ODE of d = 1: m' = v (1 + beta s b) m, s' = 2 v beta b s^2
    spec = GaussianAttention(1, beta=0.7, query_key=[[0.3]], value=[[1.4]])
    dm, dS = moment_rhs(spec, [0.5], [[1.2]])
    assert np.isclose(dm[0], 1.4 * (0.5 + 0.7 * 1.2 * 0.3 * 0.5)) and np.isclose(dS[0, 0], 2 * 1.4 * 0.7 * 0.3 * 1.2**2)


def test_ode_solver_against_the_closed_forms_and_the_blowup():
    B = np.array([[1.0, 0.3], [0.1, 0.5]])
    spec = GaussianAttention(2, query_key=B)
    T = blowup_time(COV, B)
    fl = moment_flow(spec, MEAN, COV, [0.0, 0.5 * T, 0.9 * T, 1.5 * T])
    ref = isotropic_value_covariance(COV, B, [0.0, 0.5 * T, 0.9 * T])
    np.testing.assert_allclose(fl.covs[:3], ref, rtol=1e-8)
    assert np.all(np.isnan(fl.covs[3])) and abs(fl.blowup_time - T) < 1e-6 * T
    means, covs = scalar_flow(MEAN, COV, [0.0, 0.3], b=0.6, lam=0.8)
    fl = moment_flow(GaussianAttention(2, query_key=0.6 * np.eye(2), value=0.8 * np.eye(2)), MEAN, COV, [0.0, 0.3])
    np.testing.assert_allclose(fl.means, means, rtol=1e-9)
    np.testing.assert_allclose(fl.covs, covs, rtol=1e-9)
    q = np.array([[0.6, -0.8]])
    far = isotropic_value_covariance(COV, -q.T @ q, [1e9])[0]
    np.testing.assert_allclose(far, projected_limit(COV, q), atol=1e-8)  # Sigma(t) -> the Woodbury limit
    assert blowup_time(COV, -q.T @ q) is None


def test_bad_specs_are_refused():
    with pytest.raises(InputError, match="normalisation"):
        GaussianAttention(2, normalisation="uniform")
    with pytest.raises(InputError, match="l2"):
        GaussianAttention(2, kernel="l2", query_key=np.eye(2))
    with pytest.raises(InputError, match="query"):
        GaussianAttention(2, query=np.eye(2))
    with pytest.raises(InputError, match="value"):
        GaussianAttention(2, value=np.eye(3))
    with pytest.raises(InputError, match="softmax"):
        gaussian_velocity_quadrature(GaussianAttention(2, normalisation="sinkhorn"), MEAN, COV, [[0.0, 0.0]])
