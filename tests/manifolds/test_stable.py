"""manifolds.stable: symmetric alpha-stable ground truth against independent references.

References: scipy.stats.levy_stable (its own numerical integration), the closed-form Cauchy and
Gaussian cases, the two halves of the density routine against each other where both are valid,
and the exact Fourier coefficients of the periodised density.
"""

import math

import numpy as np
import pytest

from manifolds import stable
from spectral.floor.validation import InputError


@pytest.mark.parametrize("alpha", [0.7, 1.2, 1.8])
def test_stable_pdf_matches_scipy(alpha):
    from scipy import stats

    z = np.array([0.0, 0.7, 3.0, 12.0, 29.0])
    # scipy's levy_stable pdf is itself a numerical integral, good to ~1e-9 relative here
    np.testing.assert_allclose(stable.stable_pdf(z, alpha), stats.levy_stable.pdf(z, alpha, 0.0), rtol=1e-8)


@pytest.mark.parametrize("alpha", [0.7, 1.2, 1.8])
def test_quadrature_and_tail_series_agree_where_both_hold(alpha):
    zz = np.array([25.0, 40.0])
    np.testing.assert_allclose(stable.pdf_quadrature(zz, alpha), stable.pdf_series(zz, alpha), rtol=1e-9)


def test_closed_forms():
    z = np.array([0.0, 0.5, 3.0, 50.0])
    # Cauchy (alpha = 1): 1 / (pi (1 + z^2)), through both the quadrature and the series branch
    np.testing.assert_allclose(stable.stable_pdf(z, 1.0), 1 / (math.pi * (1 + z * z)), rtol=1e-12)
    # Gaussian N(0, 2): exp(-z^2/4) / sqrt(4 pi), also via the quadrature
    np.testing.assert_allclose(stable.pdf_quadrature(z[:3], 2.0), np.exp(-z[:3] ** 2 / 4) / math.sqrt(4 * math.pi),
                               rtol=1e-12, atol=1e-16)
    assert stable.density_tail_constant(1.0) == pytest.approx(1 / math.pi, rel=1e-15)
    assert stable.ccdf_tail_constant(1.0) == pytest.approx(2 / math.pi, rel=1e-15)
    assert stable.series_terms(1.3, 1)[0][0] == pytest.approx(stable.density_tail_constant(1.3), rel=1e-14)


def test_alpha_above_two_inverse_transform_changes_sign():
    # FNA-5: the inverse FT of exp(-|u|^3) is not a positive kernel
    assert float(np.min(stable.pdf_quadrature(np.linspace(0, 12, 241), 3.0))) < -1e-3


def test_periodised_pdf_fourier_coefficients():
    # Fourier coefficients of the periodised density are exp(-(s k)^alpha) exactly
    n, s = 2**14, 0.02
    y = 2 * np.pi * np.arange(n) / n
    y = np.where(y > np.pi, y - 2 * np.pi, y)
    p = stable.periodised_stable_pdf(y, 1.5, s)
    for k in (1, 3, 10):
        eta = np.sum(p * np.cos(k * y)) / np.sum(p)
        assert abs(eta / np.exp(-((s * k) ** 1.5)) - 1) < 1e-12


def test_cms_sample_characteristic_function_and_seed():
    n = 200_000
    x = stable.cms_sample(1.2, n, scale=0.5, rng=1)
    u = np.array([0.3, 1.0, 3.0])
    ecf = np.array([np.mean(np.cos(t * x)) for t in u])
    # Var cos(uX) <= 1/2: 5 sd = 5 sqrt(1/(2n)) = 7.9e-3
    assert np.max(np.abs(ecf - stable.char_fn(u, 1.2, 0.5))) < 5 * math.sqrt(0.5 / n)
    np.testing.assert_array_equal(x, stable.cms_sample(1.2, n, scale=0.5, rng=np.random.default_rng(1)))
    g = stable.cms_sample(2.0, n, rng=2)
    assert abs(np.var(g) / 2 - 1) < 6 * math.sqrt(2 / n)  # N(0, 2): relative sd sqrt(2/n)


def test_gauss_legendre_panels_exact_for_polynomials():
    x, w = stable.gauss_legendre_panels(np.array([0.0, 1.0, 3.0]), order=4)
    assert float(w @ x**7) == pytest.approx(3.0**8 / 8, rel=1e-14)


@pytest.mark.parametrize("call, match", [
    (lambda: stable.cms_sample(2.5, 10), "alpha"),
    (lambda: stable.cms_sample(1.2, 10, scale=0.0), "scale"),
    (lambda: stable.stable_pdf(1.0, 0.0), "alpha"),
    (lambda: stable.periodised_stable_pdf(0.0, 1.5, 0.5), "scale"),
    (lambda: stable.periodised_stable_pdf(4.0, 1.5, 0.05), "y must"),
    (lambda: stable.gauss_legendre_panels([1.0, 0.0]), "edges"),
    (lambda: stable.cms_sample(1.2, 10, rng=-1), "rng"),
])
def test_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call()
