"""manifolds.references.attention_flow: the SA references derived again, against closed forms and each other.

The equiangular reduction (GLPR Theorem 6.8) is derived with sympy from the particle equations; the
closed form at beta = 0, Wendel's probabilities, the two-cluster reduction and the hull helpers are
held to independent computations.
"""

import math

import numpy as np
import pytest
import sympy as sp

from manifolds.references.attention_flow import (equiangular_beta0, equiangular_flow, equiangular_rhs,
                                                 equiangular_tokens, gram_flow, gram_rhs, hull_distance, hull_vertices,
                                                 in_open_hemisphere, pair_inner_products, polytope_limit_set,
                                                 two_cluster_flow, two_cluster_merge_time, two_cluster_rhs,
                                                 uniform_sphere, velocity_loop, wendel_probability)
from spectral.floor.validation import InputError


@pytest.mark.parametrize("normalisation", ["softmax", "uniform"])
def test_equiangular_ode_derived_with_sympy(normalisation):
    """d<x_1, x_2>/dt from the particle equations with all G_kl = rho (k != l) equals the printed right-hand side."""
    n, beta, rho = sp.symbols("n beta rho", positive=True)
    a_self, a_other = sp.exp(beta), sp.exp(beta * rho)
    Z = a_self + (n - 1) * a_other if normalisation == "softmax" else n
    # sum_k a_1k (G_k2 - G_1k G_12): k = 1 gives 0, k = 2 gives a(1 - rho^2), the n - 2 others a(rho - rho^2)
    half = (a_self * (rho - 1 * rho) + a_other * (1 - rho * rho) + (n - 2) * a_other * (rho - rho * rho)) / Z
    derived = 2 * half  # the second sum is the same by symmetry
    printed = (2 * sp.exp(beta * rho) * (1 - rho) * (1 + (n - 1) * rho) / (sp.exp(beta) + (n - 1) * sp.exp(beta * rho))
               if normalisation == "softmax" else
               sp.Rational(2) / n * sp.exp(beta * rho) * (1 - rho) * (1 + (n - 1) * rho))
    assert sp.simplify(derived - printed) == 0
    # and the numerical right-hand side of the module agrees (its overflow-free rearrangement included)
    f = sp.lambdify((n, beta, rho), printed)
    for nn, b, r in ((3, 0.5, 0.2), (8, 4.0, -0.1), (32, 9.0, 0.97)):
        assert math.isclose(equiangular_rhs(r, beta=b, n=nn, normalisation=normalisation), f(nn, b, r),
                            rel_tol=1e-13)


def test_gram_closure_matches_the_particle_velocity():
    """gram_rhs(G) = V X^T + X V^T with V the velocity of the pairwise loop (symmetrised)."""
    X = uniform_sphere(np.random.default_rng(0), 6, 4)
    for norm in ("softmax", "uniform"):
        V = velocity_loop(X, beta=2.5, normalisation=norm)
        np.testing.assert_allclose(gram_rhs(X @ X.T, beta=2.5, normalisation=norm), V @ X.T + X @ V.T, rtol=0,
                                   atol=1e-13)


def test_closed_form_at_beta_0_and_the_ode_solver():
    t = np.linspace(0.0, 5.0, 11)
    for n, rho0 in ((3, 0.0), (8, -0.1), (32, 0.5)):
        closed = equiangular_beta0(t, n=n, rho0=rho0)
        assert closed[0] == pytest.approx(rho0, abs=1e-15)
        np.testing.assert_allclose(equiangular_flow(t, beta=0.0, n=n, rho0=rho0), closed, rtol=1e-11, atol=1e-13)
        # and it solves the ODE: central difference of the closed form
        h = 1e-5
        deriv = (equiangular_beta0(t[1:] + h, n=n, rho0=rho0) - equiangular_beta0(t[1:] - h, n=n, rho0=rho0)) / (2 * h)
        np.testing.assert_allclose(deriv, equiangular_rhs(closed[1:], beta=0.0, n=n), rtol=1e-7, atol=1e-12)


def test_equiangular_ode_is_the_gram_ode_on_equiangular_matrices():
    n, rho = 5, 0.3
    G = np.full((n, n), rho) + (1 - rho) * np.eye(n)
    for norm in ("softmax", "uniform"):
        dG = gram_rhs(G, beta=1.5, normalisation=norm)
        off = dG[~np.eye(n, dtype=bool)]
        np.testing.assert_allclose(off, equiangular_rhs(rho, beta=1.5, n=n, normalisation=norm), rtol=1e-14)
        np.testing.assert_allclose(np.diag(dG), 0.0, atol=1e-15)  # unit norms stay unit
    Gt = gram_flow(G, [0.0, 1.0], beta=1.5)
    assert Gt[1][0, 1] == pytest.approx(equiangular_flow([1.0], beta=1.5, n=n, rho0=rho)[0], rel=1e-10)


@pytest.mark.parametrize("n, rho", [(2, -1.0 + 1e-9), (3, -0.5), (5, 0.0), (8, 0.7)])
def test_equiangular_tokens(n, rho):
    X = equiangular_tokens(n, rho, seed=1)
    assert X.shape == (n, n + 1)
    np.testing.assert_allclose(X @ X.T, np.full((n, n), rho) + (1 - rho) * np.eye(n), atol=2e-15)
    with pytest.raises(InputError, match="rho"):
        equiangular_tokens(n, -1.0 / (n - 1) - 1e-3)


def test_two_cluster_reduction():
    # one token per cluster is the equiangular reduction with n = 2
    for r in (-0.5, 0.0, 0.9):
        for b in (0.0, 3.0):
            assert math.isclose(two_cluster_rhs(r, beta=b, k=1, m=1), equiangular_rhs(r, beta=b, n=2), rel_tol=1e-13)
            assert math.isclose(two_cluster_rhs(r, beta=b, k=1, m=1, normalisation="uniform"),
                                equiangular_rhs(r, beta=b, n=2, normalisation="uniform"), rel_tol=1e-13)
    T = two_cluster_merge_time(0.0, 0.99, beta=4.0, k=3, m=5)
    assert two_cluster_flow([0.0, T], rho0=0.0, beta=4.0, k=3, m=5)[1] == pytest.approx(0.99, abs=1e-9)
    # (SA) plateaus grow like e^(beta (1 - rho0)), (USA) ones shrink for rho0 >= 0
    sa = [two_cluster_merge_time(0.0, 0.999, beta=b, k=2, m=2) for b in (6.0, 8.0, 10.0)]
    usa = [two_cluster_merge_time(0.0, 0.999, beta=b, k=2, m=2, normalisation="uniform") for b in (6.0, 8.0, 10.0)]
    assert sa[0] < sa[1] < sa[2] and usa[0] > usa[1] > usa[2]
    assert 0.8 < math.log(sa[2] / sa[1]) / 2.0 < 1.0  # -> 1 - rho0 = 1 from below (the 1/beta prefactor)


def test_wendel_and_the_hemisphere_test():
    assert wendel_probability(5, 5) == 1.0 and wendel_probability(3, 2) == 0.75
    assert wendel_probability(8, 4) == 0.5  # (1 + 7 + 21 + 35) / 128
    assert in_open_hemisphere(np.array([[1.0, 0.0], [0.6, 0.8], [0.6, -0.8]]))[0]
    inside, dist = in_open_hemisphere(np.array([[1.0, 0.0], [-0.5, 0.8], [-0.5, -0.8]]))
    assert not inside and dist < 1e-9  # the origin is in their hull (Gordan)
    X = uniform_sphere(np.random.default_rng(2), (2000, 6), 2)
    frac = np.mean([in_open_hemisphere(x)[0] for x in X])
    assert abs(frac - wendel_probability(6, 2)) < 5 * math.sqrt(0.1875 * 0.8125 / 2000)


def test_hull_helpers():
    square = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])
    assert hull_vertices(square).tolist() == [0, 1, 2, 3]
    assert hull_vertices(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])).tolist() == [0, 2]  # a segment in R^2
    assert hull_vertices(np.ones((3, 3))).tolist() == [0]
    assert hull_distance(square, [0.5, 0.2]) < 1e-9
    assert hull_distance(square, [2.0, 0.5]) == pytest.approx(1.0, abs=1e-6)
    ref = polytope_limit_set(square[:4])
    assert ref["gap"](square[3]) == pytest.approx(0.0, abs=1e-15) and ref["gap"](square[4]) > 0.4


def test_pair_inner_products_and_inputs():
    X = equiangular_tokens(4, 0.25)
    np.testing.assert_allclose(pair_inner_products(X), 0.25, atol=1e-15)
    assert pair_inner_products(np.stack([X, X])).shape == (2, 6)
    with pytest.raises(InputError, match="normalisation"):
        velocity_loop(X, beta=1.0, normalisation="l2")
    with pytest.raises(InputError, match="times"):
        equiangular_flow([1.0, 0.5], beta=1.0, n=3)
    with pytest.raises(InputError, match="X"):
        velocity_loop(np.ones(3), beta=1.0)
