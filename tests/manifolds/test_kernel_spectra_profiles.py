"""manifolds.kernel_spectra for a profile given as a function: the FNA profiles reproduce the FNA spectra
exactly, and other profiles match closed forms and adaptive quadrature (independent references)."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from manifolds import kernel_spectra as ks
from spectral.floor.validation import InputError


@pytest.mark.parametrize("alpha, dim, distance", [(1.2, 1, "geodesic"), (0.7, 2, "chordal"), (2.0, 1, "geodesic")])
def test_the_fna_profile_as_a_function_is_the_fna_spectrum(alpha, dim, distance):
    k = np.arange(0, 12)
    phi = lambda z: ks.profile(z, alpha=alpha, dim=dim)  # noqa: E731
    assert np.array_equal(ks.circle_relaxation_of(phi, k, scale=0.05, distance=distance),
                          ks.circle_relaxation(k, alpha=alpha, scale=0.05, dim=dim, distance=distance))
    assert np.array_equal(ks.sphere_relaxation_of(phi, k, scale=0.05),
                          ks.sphere_relaxation(k, alpha=alpha, scale=0.05, dim=dim))


@pytest.mark.parametrize("scale", [0.01, 0.3])
def test_exponential_profile_on_the_circle_against_its_closed_form(scale):
    # 1 - eta_k = int_0^pi e^(-a y) (1 - cos k y) dy / int_0^pi e^(-a y) dy, a = 1/s, in closed form
    a, k = 1.0 / scale, np.arange(0, 30)
    z = (1.0 - math.exp(-a * math.pi)) / a
    cos = a * (1.0 - np.exp(-a * math.pi) * np.cos(k * math.pi)) / (a * a + k * k)
    exact = (z - cos) / z
    got = ks.circle_relaxation_of(lambda u: np.exp(-u), k, scale=scale)
    assert np.allclose(got, exact, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("l", [1, 3, 6])
def test_sphere_profile_against_adaptive_quadrature(l):
    s = 0.2
    phi = lambda u: 1.0 / (1.0 + u * u)  # noqa: E731 - a Cauchy-like profile, no closed form needed
    num = integrate.quad(lambda t: phi(t / s) * (1 - special.eval_legendre(l, math.cos(t))) * math.sin(t), 0, math.pi,
                         epsabs=0, epsrel=1e-13, limit=200)[0]
    den = integrate.quad(lambda t: phi(t / s) * math.sin(t), 0, math.pi, epsabs=0, epsrel=1e-13, limit=200)[0]
    got = ks.sphere_relaxation_of(lambda u: phi(np.asarray(u)), [l], scale=s)[0]
    assert got == pytest.approx(num / den, rel=1e-10)


def test_more_nodes_per_panel_change_a_smooth_profile_by_rounding_only():
    phi = lambda z: (1.0 + z) ** -2.2  # noqa: E731
    k = np.arange(1, 11)
    coarse = ks.circle_relaxation_of(phi, k, scale=0.01)
    fine = ks.circle_relaxation_of(phi, k, scale=0.01, nodes=48)
    assert np.max(np.abs(fine / coarse - 1)) < 1e-12
    jump = lambda z: np.where(z < 20, (1.0 + z) ** -2.2, 0.0)  # noqa: E731 - a jump between panel edges
    assert np.max(np.abs(ks.circle_relaxation_of(jump, k, scale=0.01, nodes=48)
                         / ks.circle_relaxation_of(jump, k, scale=0.01) - 1)) > 1e-6


def test_a_nan_profile_propagates_and_bad_profiles_are_refused():
    assert np.all(np.isnan(ks.circle_relaxation_of(lambda z: np.full(z.shape, np.nan), [1, 2], scale=0.1)))
    with pytest.raises(InputError, match="shape of its argument"):
        ks.circle_relaxation_of(lambda z: z[:-1], [1], scale=0.1)
    with pytest.raises(InputError, match="phi must be a function"):
        ks.sphere_relaxation_of(2.0, [1], scale=0.1)
    with pytest.raises(InputError, match="nodes"):
        ks.circle_relaxation_of(np.exp, [1], scale=0.1, nodes=1)
