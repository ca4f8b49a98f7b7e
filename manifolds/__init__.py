"""Exact ground truth on manifolds: points, distances, densities, test functions, spectra, reference operators.

The bottom layer of attention-limits (only the floor of ``spectral`` lies below it: the array backend,
the input validators, the memory guard and the squared-distance routine :mod:`spectral.floor.distance`;
``tests/test_layers.py`` holds it to that): nothing here is a discrete approximation of an attention operator. Every
quantity is a closed form, an exact series, quadrature, or a spectrally exact solver, tested against
an independent computation. The checks compare attention with these references:

* manifolds and points: :class:`Circle`, :class:`Sphere`, :class:`Euclidean`, and
  :func:`pairwise_sq_distance`, the toolkit's one squared-distance routine (accurate for nearby
  points; defined on the floor of ``spectral``, which shares it);
* densities and test functions with exact gradients and Laplacians (:class:`VonMises`,
  :func:`circle_density`, :class:`FourierMode`, ...);
* Laplace-Beltrami spectra (:func:`sphere_eigenvalues`, ...);
* reference operators: the drift-diffusion limit :func:`drift_diffusion` (DRIFT Theorem 2), the
  Fourier multipliers of the FNA limit (:func:`fourier_multiplier`, :func:`theorem2_operator`,
  :func:`attention_increment`) and the bias constants of the FNA generator
  (:func:`generator_bias_constants`);
* the drift-diffusion PDE of DRIFT Theorem 3 on S^1 (:func:`drift_pde_solution`,
  :func:`drift_collocation_matrix`) and the finite-eps spectrum of continuum heat-kernel attention on
  S^d (:func:`heat_kernel_eigenvalue`, DRIFT Theorem 1).

The continuum spectra of FNA kernels and the stable laws are the submodules
:mod:`manifolds.kernel_spectra` and :mod:`manifolds.stable` (``from manifolds import stable``), whose
``__all__`` are their API. The public API is what is exported here (``manifolds.__all__``) and those two
namespaces, listed in ``docs/api.md``; the other modules' ``__all__`` name what they export here.
"""

from spectral.floor.distance import pairwise_sq_distance

from . import kernel_spectra, stable  # noqa: F401  (public namespaces, _SUBMODULES)
from .base import Manifold
from .circle import Circle
from .densities import (
    CIRCLE_DENSITIES,
    CosineDensity,
    Density,
    GaussianMixture,
    Uniform,
    VonMises,
    VonMisesFisher,
    circle_density,
)
from .drift_pde import DRIFT_PDE_INITIALS, drift_collocation_matrix, drift_pde_initial, drift_pde_solution
from .euclidean import Euclidean
from .fractional import generator_bias_constants
from .functions import Coordinate, FourierMode, GaussianBump, ManifoldFunction, Polynomial, SphericalHarmonic
from .heat_spectra import heat_kernel_eigenvalue
from .operators import attention_increment, drift_diffusion, fourier_multiplier, theorem2_operator
from .spectra import (
    circle_eigenvalues,
    spectral_fractional_symbol,
    sphere_eigen_degrees,
    sphere_eigenvalues,
    sphere_multiplicity,
)
from .sphere import Sphere, sphere_volume

__all__ = [
    "CIRCLE_DENSITIES",
    "Circle",
    "Coordinate",
    "CosineDensity",
    "DRIFT_PDE_INITIALS",
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
    "attention_increment",
    "circle_density",
    "circle_eigenvalues",
    "drift_collocation_matrix",
    "drift_diffusion",
    "drift_pde_initial",
    "drift_pde_solution",
    "fourier_multiplier",
    "generator_bias_constants",
    "heat_kernel_eigenvalue",
    "pairwise_sq_distance",
    "spectral_fractional_symbol",
    "sphere_eigen_degrees",
    "sphere_eigenvalues",
    "sphere_multiplicity",
    "sphere_volume",
    "theorem2_operator",
]

#: Submodules that are public namespaces (their ``__all__`` is their API).
_SUBMODULES = ("kernel_spectra", "stable")


def __dir__():
    return [*__all__, *_SUBMODULES]
