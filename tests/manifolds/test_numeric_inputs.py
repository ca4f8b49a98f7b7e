"""Every numeric parameter of the manifolds (geometry, functions, spectra, kernel spectra) refuses a
bool with an InputError naming it."""

import numpy as np
import pytest

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
from spectral.validation import InputError

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


@pytest.mark.parametrize("call, name", CASES, ids=[f"{i}-{name}" for i, (_, name) in enumerate(CASES)])
@pytest.mark.parametrize("value", [True, False])
def test_bool_refused(call, name, value):
    with pytest.raises(InputError, match=rf"^{name} must be"):
        call(value)


def test_bool_coefficients_and_degrees_refused():
    with pytest.raises(InputError, match="finite real coefficients"):
        Polynomial({(1, 0): True}, manifold=Euclidean(2))
    with pytest.raises(InputError, match="k must hold integers"):
        ks.circle_relaxation(np.array([True]), alpha=1.2, scale=0.1)
