"""Exact ground truth on manifolds: points, distances, densities, test functions, spectra.

The bottom layer of attention-limits: nothing here is a discrete
approximation of an attention operator; every quantity is a closed form, an
exact series, or quadrature-free algebra, tested against independent references.
"""

from .base import Manifold
from .circle import Circle
from .densities import CosineDensity, Density, GaussianMixture, Uniform, VonMises, VonMisesFisher
from .euclidean import Euclidean
from .functions import Coordinate, FourierMode, GaussianBump, ManifoldFunction, Polynomial, SphericalHarmonic
from .operators import drift_diffusion, fourier_multiplier, theorem2_operator
from .spectra import (
    circle_eigenvalues,
    spectral_fractional_symbol,
    sphere_eigen_degrees,
    sphere_eigenvalues,
    sphere_multiplicity,
)
from .sphere import Sphere, sphere_volume

__all__ = [
    "Circle",
    "Coordinate",
    "CosineDensity",
    "Density",
    "Euclidean",
    "FourierMode",
    "GaussianBump",
    "GaussianMixture",
    "Manifold",
    "ManifoldFunction",
    "Polynomial",
    "Sphere",
    "SphericalHarmonic",
    "Uniform",
    "VonMises",
    "VonMisesFisher",
    "circle_eigenvalues",
    "drift_diffusion",
    "fourier_multiplier",
    "spectral_fractional_symbol",
    "sphere_eigen_degrees",
    "sphere_eigenvalues",
    "sphere_multiplicity",
    "sphere_volume",
    "theorem2_operator",
]
