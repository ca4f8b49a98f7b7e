"""manifolds.heat_spectra: the Bessel-ratio eigenvalues of continuum heat attention against quadrature."""

import numpy as np
import pytest
from scipy.integrate import quad

from manifolds import heat_kernel_eigenvalue
from spectral.floor.validation import InputError


def _quadrature_ratio(eps, weight, harmonic):
    """``int e^((t-1)/eps) Y(t) w(t) dt / int e^((t-1)/eps) w(t) dt`` over ``t = x.y`` in [-1, 1]."""
    kernel = lambda t: np.exp((t - 1) / eps)  # noqa: E731  (|x - y|^2 = 2 - 2 t on the unit sphere)
    num = quad(lambda t: kernel(t) * harmonic(t) * weight(t), -1, 1, epsabs=0, epsrel=1e-13, limit=200)[0]
    den = quad(lambda t: kernel(t) * weight(t), -1, 1, epsabs=0, epsrel=1e-13, limit=200)[0]
    return num / den


@pytest.mark.parametrize("eps", [0.05, 0.01])
def test_against_quadrature_on_s1_s2_s3(eps):
    # independent oracle: the zonal integral of the kernel against the degree-2 harmonic, with the
    # measure of t = x.y on S^d: (1 - t^2)^((d - 2)/2) dt; harmonics cos(2 theta) = T_2(t) (S^1),
    # P_2(t) (S^2), U_2(t) / U_2(1) (S^3, Gegenbauer C_2^1). Measured relative differences <= 1.2e-15
    # (quad asked for 1e-13).
    s1 = quad(lambda th: np.exp((np.cos(th) - 1) / eps) * np.cos(2 * th), -np.pi, np.pi, epsabs=0, epsrel=1e-13)[0]
    s1 /= quad(lambda th: np.exp((np.cos(th) - 1) / eps), -np.pi, np.pi, epsabs=0, epsrel=1e-13)[0]
    assert heat_kernel_eigenvalue(1, 2, eps) == pytest.approx(s1, rel=1e-11)
    s2 = _quadrature_ratio(eps, lambda t: 1.0, lambda t: 0.5 * (3 * t * t - 1))
    assert heat_kernel_eigenvalue(2, 2, eps) == pytest.approx(s2, rel=1e-11)
    s3 = _quadrature_ratio(eps, lambda t: np.sqrt(1 - t * t), lambda t: (4 * t * t - 1) / 3)
    assert heat_kernel_eigenvalue(3, 2, eps) == pytest.approx(s3, rel=1e-11)
    # negative control: the S^2 eigenvalue is not the S^1 one (O(eps): 0.045 at eps = 0.05, 0.0098 at 0.01)
    assert abs(heat_kernel_eigenvalue(2, 2, eps) - s1) > 1e-3


@pytest.mark.parametrize("dim, degree", [(1, 3), (2, 2), (4, 1)])
def test_small_eps_limit_is_half_the_laplacian(dim, degree):
    # (eta - 1) / eps = -l (l + d - 1) / 2 + O(eps): the bias halves with eps (DRIFT Theorem 1)
    limit = -degree * (degree + dim - 1) / 2
    bias = [abs((heat_kernel_eigenvalue(dim, degree, e) - 1) / e - limit) for e in (1e-3, 5e-4)]
    assert bias[1] < 1e-2 * abs(limit)
    assert bias[0] / bias[1] == pytest.approx(2.0, rel=1e-2)


def test_constants_are_fixed():
    for dim in (1, 2, 5):
        assert heat_kernel_eigenvalue(dim, 0, 0.3) == 1.0


@pytest.mark.parametrize("kwargs, match", [({"dim": 0}, "dim"), ({"degree": -1}, "degree"), ({"eps": 0.0}, "eps"),
                                           ({"eps": float("nan")}, "eps")])
def test_bad_input(kwargs, match):
    args = {"dim": 1, "degree": 2, "eps": 0.1} | kwargs
    with pytest.raises(InputError, match=match):
        heat_kernel_eigenvalue(**args)
