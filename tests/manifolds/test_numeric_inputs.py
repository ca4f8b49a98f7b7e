"""Every numeric parameter of the manifolds (geometry, functions, spectra, kernel spectra) refuses a
bool with an InputError naming it, and every exported name is held to NaN and inf: refused naming the
input, or carried into the result (issue: no false PASS)."""


import numpy as np
import pytest

import manifolds as M
from manifolds import (
    Circle,
    Coordinate,
    Euclidean,
    FourierMode,
    GaussianBump,
    Polynomial,
    Sphere,
    SphericalHarmonic,
    circle_eigenvalues,
    spectral_fractional_symbol,
    sphere_eigen_degrees,
    sphere_eigenvalues,
    sphere_multiplicity,
    sphere_volume,
)
from manifolds import kernel_spectra as ks
from spectral.floor.validation import InputError

from ..conftest import bool_refusal_test, non_finite_refusal_test, non_finite_propagation_test

CASES = [
    (lambda v: Sphere(v), "dim"),
    (lambda v: Euclidean(v), "dim"),
    (lambda v: sphere_volume(v), "dim"),
    (lambda v: Circle().sample(v, rng=0), "n"),
    (lambda v: Circle().grid(v), "n"),
    (lambda v: Sphere(2).check_points(np.array([[0.0, 0.0, 1.0]]), atol=v), "atol"),
    (lambda v: Euclidean(2).check_points(np.zeros((1, 2)), atol=v), "atol"),
    (lambda v: Sphere(2).laplacian_eigenvalues(v), "count"),
    (lambda v: circle_eigenvalues(v), "count"),
    (lambda v: sphere_eigenvalues(2, v), "count"),
    (lambda v: sphere_eigen_degrees(v, 3), "dim"),
    (lambda v: sphere_multiplicity(2, v), "l"),
    (lambda v: spectral_fractional_symbol(np.array([1.0]), v), "alpha"),
    (lambda v: FourierMode(v), "k"),
    (lambda v: FourierMode(1, phase=v), "phase"),
    (lambda v: SphericalHarmonic(v, 0), "l"),
    (lambda v: SphericalHarmonic(2, v), "m"),
    (lambda v: Coordinate(v, Sphere(2)), "i"),
    (lambda v: GaussianBump([0.0, 0.0], v), "width"),
    (lambda v: Polynomial.quadratic(np.eye(2), c=v, manifold=Euclidean(2)), "c"),
    (lambda v: ks.profile(np.array([1.0]), alpha=v), "alpha"),
    (lambda v: ks.profile(np.array([1.0]), alpha=1.2, dim=v), "dim"),
    (lambda v: ks.fractional_constant(v, 1.2), "d"),
    (lambda v: ks.circle_relaxation([1], alpha=1.2, scale=v), "scale"),
    (lambda v: ks.circle_generator_eigenvalues([1], alpha=1.2, scale=0.1, time=v), "time"),
    (lambda v: ks.sphere_relaxation([1], alpha=1.2, scale=v), "scale"),
    (lambda v: ks.geodesic_multiplier([1], alpha=v), "alpha"),
]


test_bool_refused = bool_refusal_test(CASES)


def test_bool_coefficients_and_degrees_refused():
    with pytest.raises(InputError, match="finite real coefficients"):
        Polynomial({(1, 0): True}, manifold=Euclidean(2))
    with pytest.raises(InputError, match="k must hold integers"):
        ks.circle_relaxation(np.array([True]), alpha=1.2, scale=0.1)


# ------------------------------------------------------------------------------------- NaN and inf
# A non-finite number never passes: every numeric input of an exported name is refused with an
# InputError naming it, or (pointwise functions of points and grids) comes back as NaN or inf.

def _with(a, value, at=(1, 0)):
    out = np.array(a, dtype=float, copy=True)
    out[at] = value
    return out


TH = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
P1 = np.stack([np.cos(TH), np.sin(TH)], axis=1)
S2 = Sphere(2).grid(8)
E2 = np.random.default_rng(0).standard_normal((8, 2))
GRID = np.arange(16) * 2 * np.pi / 16
F_G, RHO_G = np.cos(GRID), 1 + 0.5 * np.cos(GRID)
NORTH = np.array([0.0, 0.0, 1.0])


def _symbol(k):
    return np.abs(k) ** 1.2


#: (exported name, call taking the value, the parameter the InputError names)
REFUSED = [
    ("Circle", lambda v: Circle().check_points(_with(P1, v)), "x"),
    ("Sphere", lambda v: Sphere(2).check_points(_with(S2, v)), "x"),
    ("Euclidean", lambda v: Euclidean(2).check_points(_with(E2, v)), "x"),
    ("CosineDensity", lambda v: M.CosineDensity(v), "amplitude"),
    ("CosineDensity", lambda v: M.CosineDensity(0.5, v), "mu"),
    ("CosineDensity", lambda v: M.CosineDensity().angle_pdf(_with(TH, v, 1)), "theta"),
    ("CosineDensity", lambda v: M.CosineDensity().cdf(_with(TH, v, 1)), "theta"),
    ("VonMises", lambda v: M.VonMises(0.0, v), "kappa"),
    ("VonMises", lambda v: M.VonMises(v, 1.0), "mu"),
    ("VonMises", lambda v: M.VonMises().angle_pdf(_with(TH, v, 1)), "theta"),
    ("VonMisesFisher", lambda v: M.VonMisesFisher(_with(NORTH, v, 0)), "mu"),
    ("VonMisesFisher", lambda v: M.VonMisesFisher(NORTH, v), "kappa"),
    ("GaussianMixture", lambda v: M.GaussianMixture(_with(np.zeros((2, 2)), v, (0, 0)), 1.0), "means"),
    ("GaussianMixture", lambda v: M.GaussianMixture(np.zeros((2, 2)), v), "covariances"),
    ("GaussianMixture", lambda v: M.GaussianMixture(np.zeros((2, 2)), 1.0, weights=_with(np.ones(2), v, 0)),
     "weights"),
    ("Uniform", lambda v: M.Uniform(Circle()).angle_pdf(_with(TH, v, 1)), "theta"),
    ("GaussianBump", lambda v: GaussianBump(_with(np.zeros(2), v, 0), 1.0), "center"),
    ("GaussianBump", lambda v: GaussianBump([0.0, 0.0], v), "width"),
    ("FourierMode", lambda v: FourierMode(1, phase=v), "phase"),
    ("Polynomial", lambda v: Polynomial({(1, 0): v}, manifold=Euclidean(2)), "terms"),
    ("attention_increment", lambda v: M.attention_increment(F_G, RHO_G, _symbol, at=_with(TH, v, 1)), "at"),
    ("attention_increment", lambda v: M.attention_increment(F_G, RHO_G, lambda k: _with(_symbol(k), v, 1)),
     "symbol"),
    ("fourier_multiplier", lambda v: M.fourier_multiplier(F_G, _symbol, at=_with(TH, v, 1)), "at"),
    ("fourier_multiplier", lambda v: M.fourier_multiplier(F_G, lambda k: _with(_symbol(k), v, 1)), "symbol"),
    ("theorem2_operator", lambda v: M.theorem2_operator(F_G, RHO_G, lambda k: _with(_symbol(k), v, 1)), "symbol"),
    ("drift_collocation_matrix", lambda v: M.drift_collocation_matrix(16, v, 2.0), "amplitude"),
    ("drift_collocation_matrix", lambda v: M.drift_collocation_matrix(16, 0.5, v), "drift"),
    ("drift_diffusion", lambda v: M.drift_diffusion(FourierMode(1), M.VonMises(), P1, a=v), "a"),
    ("drift_pde_initial", lambda v: M.drift_pde_initial(TH, "step", modes=v), "modes"),
    ("drift_pde_solution", lambda v: M.drift_pde_solution(TH, v, m=32), "t"),
    ("drift_pde_solution", lambda v: M.drift_pde_solution(TH, 0.1, amplitude=v, m=32), "amplitude"),
    ("drift_pde_solution", lambda v: M.drift_pde_solution(TH, 0.1, drift=v, m=32), "drift"),
    ("generator_bias_constants", lambda v: M.generator_bias_constants(v), "alpha"),
    ("heat_kernel_eigenvalue", lambda v: M.heat_kernel_eigenvalue(2, 1, v), "eps"),
    ("pairwise_sq_distance", lambda v: M.pairwise_sq_distance(E2, sign=v), "sign"),
    ("spectral_fractional_symbol", lambda v: spectral_fractional_symbol(np.array([0.0, 1.0]), v), "alpha"),
    ("sphere_volume", lambda v: sphere_volume(v), "dim"),
    ("sphere_eigen_degrees", lambda v: sphere_eigen_degrees(2, v), "count"),
    ("sphere_eigenvalues", lambda v: sphere_eigenvalues(2, v), "count"),
    ("circle_eigenvalues", lambda v: circle_eigenvalues(v), "count"),
    ("sphere_multiplicity", lambda v: sphere_multiplicity(2, v), "l"),
    ("SphericalHarmonic", lambda v: SphericalHarmonic(2, v), "m"),
    ("Coordinate", lambda v: Coordinate(v, Sphere(2)), "i"),
]

#: (exported name, call taking the value): pointwise in points, angles or grid values, the NaN or inf comes back
PROPAGATED = [
    ("Circle", lambda v: Circle().distance(_with(P1, v))),  # an infinite coordinate has no angle (was finite)
    ("Circle", lambda v: Circle().angles(_with(P1, v))),
    ("Circle", lambda v: Circle().chordal_distance(_with(P1, v))),
    ("Circle", lambda v: Circle.angle_distance(_with(TH, v, 1), TH)),
    ("Circle", lambda v: Circle.embed(_with(TH, v, 1))),
    ("Sphere", lambda v: Sphere(2).distance(_with(S2, v))),
    ("Sphere", lambda v: Sphere(2).project_tangent(S2, _with(S2, v))),
    ("Euclidean", lambda v: Euclidean(2).distance(_with(E2, v))),
    ("CosineDensity", lambda v: M.CosineDensity().pdf(_with(P1, v))),
    ("CosineDensity", lambda v: M.CosineDensity().grad_log_pdf(_with(P1, v))),
    ("VonMises", lambda v: M.VonMises().log_pdf(_with(P1, v))),
    ("VonMisesFisher", lambda v: M.VonMisesFisher(NORTH).pdf(_with(S2, v))),
    ("GaussianMixture", lambda v: M.GaussianMixture(np.zeros((2, 2)), 1.0).pdf(_with(E2, v))),
    ("GaussianMixture", lambda v: M.GaussianMixture(np.zeros((2, 2)), 1.0).grad_log_pdf(_with(E2, v))),
    ("Uniform", lambda v: M.Uniform(Sphere(2)).pdf(_with(S2, v))),  # a constant pdf (was 1 / volume at NaN)
    ("Uniform", lambda v: M.Uniform(Circle()).grad_log_pdf(_with(P1, v))),
    ("FourierMode", lambda v: FourierMode(1)(_with(P1, v))),  # (was finite for inf: atan2(inf, y))
    ("FourierMode", lambda v: FourierMode(2).laplacian(_with(P1, v))),
    ("SphericalHarmonic", lambda v: SphericalHarmonic(2, 1)(_with(S2, v))),
    ("Coordinate", lambda v: Coordinate(0, Sphere(2)).gradient(_with(S2, v))),
    ("GaussianBump", lambda v: GaussianBump([0.0, 0.0], 1.0)(_with(E2, v))),  # (was exp(-inf) = 0 for inf)
    ("Polynomial", lambda v: Polynomial({(1, 0): 1.0}, manifold=Euclidean(2))(_with(E2, v))),
    ("attention_increment", lambda v: M.attention_increment(_with(F_G, v, 1), RHO_G, _symbol)),
    ("fourier_multiplier", lambda v: M.fourier_multiplier(_with(F_G, v, 1), _symbol)),
    ("theorem2_operator", lambda v: M.theorem2_operator(_with(F_G, v, 1), RHO_G, _symbol)),
    ("drift_diffusion", lambda v: M.drift_diffusion(FourierMode(1), M.VonMises(), _with(P1, v))),
    ("drift_pde_initial", lambda v: M.drift_pde_initial(_with(TH, v, 1))),
    ("drift_pde_initial", lambda v: M.drift_pde_initial(_with(TH, v, 1), "step")),  # (was 0: outside the step)
    ("drift_pde_solution", lambda v: M.drift_pde_solution(_with(TH, v, 1), 0.1, m=32)),
    ("pairwise_sq_distance", lambda v: M.pairwise_sq_distance(_with(E2, v))),
    ("spectral_fractional_symbol", lambda v: spectral_fractional_symbol(_with(np.array([0.0, 1.0, 4.0]), v, 1), 1.2)),
]

#: exported names without a numeric input of their own: base classes, constants, a density by name
WITHOUT_NUMERIC_INPUT = {"Density", "Manifold", "ManifoldFunction", "CIRCLE_DENSITIES", "DRIFT_PDE_INITIALS",
                         "circle_density"}


test_non_finite_input_refused = non_finite_refusal_test(REFUSED, says_why=r"finite|NaN|got (nan|inf)|must be")


test_non_finite_input_propagated = non_finite_propagation_test(PROPAGATED, numpy_warns=True)


def test_every_exported_name_is_held_to_nan_and_inf():
    held = {fn for fn, *_ in REFUSED} | {fn for fn, _ in PROPAGATED}
    assert held <= set(M.__all__), sorted(held - set(M.__all__))
    missing = set(M.__all__) - held - WITHOUT_NUMERIC_INPUT
    assert not missing, sorted(missing)
