"""Tests of spectral.fna against closed forms (``math``), the FNA-16 identity and bad input.

Exact-algebra tolerances are ``4 sqrt(eps)`` relative unless stated.
"""

import math

import numpy as np
import pytest

from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError

from spectral import fna_kernel, fna_profile, fna_time, heat_kernel, matched_half_width_kappa, paper_kappa

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra: ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal



def _same_backend(xp, out, ref, rtol=RTOL, atol=0.0):
    """``out`` is in the input's namespace and equals the NumPy result ``ref``."""
    assert_close(out, xp.asarray(to_numpy(ref)), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- FNA profile


class TestFnaProfile:
    @pytest.mark.parametrize("alpha,dim", [(0.5, 1), (1.2, 1), (1.2, 2), (1.9, 3)])
    def test_power_law_closed_form(self, alpha, dim):
        z = np.linspace(0.0, 50.0, 41)
        ref = np.array([math.pow(1.0 + t, -(dim + alpha)) for t in z])
        # exp(beta log1p z) vs pow: a few ulp times beta log(1+z) <= ~20
        assert_close(fna_profile(z, alpha=alpha, dim=dim), ref, rtol=64 * EPS64)

    @pytest.mark.parametrize("alpha", [2.0, 2.5, 3.0, 6.0])
    def test_local_closed_form(self, alpha):
        z = np.linspace(0.0, 4.0, 33)
        p = alpha / (alpha - 1.0)
        ref = np.array([math.exp(-math.pow(t, p)) for t in z])
        assert_close(fna_profile(z, alpha=alpha, dim=1), ref, rtol=16 * EPS64, atol=0)

    def test_alpha_two_is_gaussian_and_dim_free(self):
        z = np.linspace(0, 3, 13)
        ref = np.exp(-z * z)
        for dim in (1, 2, 7):
            assert_close(fna_profile(z, alpha=2.0, dim=dim), ref, rtol=4 * EPS64)
        # negative control: just below 2 the power law is something else
        assert np.max(np.abs(fna_profile(z, alpha=1.999, dim=1) - ref)) > 0.1

    def test_underflow_flushed_to_zero(self):
        # exp(-27^2) = exp(-729) ~ 2.5e-317 is subnormal in float64
        z = np.array([0.0, 26.0, 27.0, 27.3, 40.0])
        raw = np.exp(-z * z)
        assert 0 < raw[2] < TINY  # negative control: the naive value is subnormal
        out = fna_profile(z, alpha=2.0, dim=1)
        assert np.all((out == 0) | (out >= TINY))
        assert out[2] == 0 and out[3] == 0 and out[4] == 0
        assert out[1] == raw[1] > TINY  # normal values are kept
        # power law far out: (1 + 1e200)^-3 underflows to 0, not to a subnormal
        pl = fna_profile(np.array([1e100, 1e110]), alpha=1.5, dim=1.5)
        assert np.all((pl == 0) | (pl >= TINY))

    def test_float32_kept(self):
        z = np.linspace(0, 12, 25, dtype=np.float32)
        out = fna_profile(z, alpha=2.0, dim=1)
        assert out.dtype == np.float32
        tiny32 = np.finfo(np.float32).smallest_normal
        assert np.all((out == 0) | (out >= tiny32))
        assert_close(out, np.exp(-z.astype(float) ** 2).astype(np.float32), atol=tiny32)  # default rtol 4 sqrt(eps32)

    def test_does_not_modify_input(self):
        z = np.linspace(0, 2, 5)
        z0 = z.copy()
        fna_profile(z, alpha=1.2, dim=1)
        fna_profile(z, alpha=2.0, dim=1)
        np.testing.assert_array_equal(z, z0)

    def test_integer_input_promoted(self):
        out = fna_profile(np.array([0, 1, 3]), alpha=1.0, dim=1)
        assert out.dtype == np.float64
        assert_close(out, np.array([1.0, 0.25, 1 / 16]))


class TestFnaKernel:
    def test_scale_and_time(self, rng):
        d = rng.random((6, 9)) * 3
        for alpha, scale in [(1.2, 0.3), (2.0, 0.7)]:
            ref = np.vectorize(lambda t: (1 + t / scale) ** -(1 + alpha) if alpha < 2 else math.exp(-((t / scale) ** 2)))(d)
            assert_close(fna_kernel(d, alpha=alpha, scale=scale, dim=1), ref, rtol=64 * EPS64)
            assert fna_time(scale, alpha) == scale**alpha
        assert np.all(fna_kernel(d, alpha=1.2, scale=0.3, dim=1) <= 1.0)

    def test_geodesic_sphere_variant(self, rng):
        # A.1: same profile of geodesic distances arccos(q.k) on S^2
        x = rng.standard_normal((20, 3))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        theta = np.arccos(np.clip(x @ x.T, -1, 1))
        kappa = paper_kappa(2, 1.2, variant="sphere")
        ref = (1 + theta / kappa) ** -(2 + 1.2)
        assert_close(fna_kernel(theta, alpha=1.2, scale=kappa, dim=2), ref, rtol=64 * EPS64)

    @pytest.mark.parametrize(
        "kwargs,match",
        [
            (dict(alpha=0.0, scale=1.0, dim=1), r"alpha must be in \(0.0, inf\)"),
            (dict(alpha=-1.0, scale=1.0, dim=1), "alpha"),
            (dict(alpha=float("nan"), scale=1.0, dim=1), "alpha"),
            (dict(alpha=1.0, scale=0.0, dim=1), r"scale must be in \(0.0, inf\)"),
            (dict(alpha=1.0, scale=-2.0, dim=1), "scale"),
            (dict(alpha=1.0, scale=float("inf"), dim=1), "scale"),
            (dict(alpha=1.0, scale=1.0, dim=0.5), r"dim must be in \[1.0, inf\)"),
            (dict(alpha="1", scale=1.0, dim=1), "alpha"),
        ],
    )
    def test_bad_parameters(self, kwargs, match):
        with pytest.raises(InputError, match=match):
            fna_kernel(np.ones((2, 2)), **kwargs)

    @pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
    def test_non_finite_distances(self, bad):
        d = np.ones((3, 3))
        d[1, 2] = bad
        with pytest.raises(InputError, match="dist must contain only finite values"):
            fna_kernel(d, alpha=1.0, scale=1.0, dim=1)
        with pytest.raises(InputError, match="dist must contain only finite values"):
            heat_kernel(d, eps=1.0)

    def test_negative_distances(self):
        d = np.ones((3, 3))
        d[0, 1] = -1e-3
        with pytest.raises(InputError, match="dist must be >= 0"):
            fna_kernel(d, alpha=1.0, scale=1.0, dim=1)
        with pytest.raises(InputError, match="z must be >= 0"):
            fna_profile(d, alpha=1.0, dim=1)
        with pytest.raises(InputError, match="dist must be >= 0"):
            heat_kernel(d, eps=1.0)

    def test_complex_refused(self):
        with pytest.raises(InputError, match="dist must be a real array"):
            fna_kernel(np.ones((2, 2), dtype=complex), alpha=1.0, scale=1.0, dim=1)


class TestKappa:
    def test_paper_conventions(self):
        for d in (1, 2, 8, 64):
            assert paper_kappa(d, 1.2) == pytest.approx(math.sqrt(d) / (2 ** (1 / d) - 1), rel=1e-15)
            assert paper_kappa(d, 2.0) == pytest.approx(math.sqrt(d), rel=1e-15)
            assert paper_kappa(d, 1.2, variant="sphere") == pytest.approx(math.pi / (math.pi ** (1 / d) - 1), rel=1e-15)
            assert paper_kappa(d, 2.0, variant="sphere") == 1.0

    def test_fna16_identity(self):
        # FNA-16: Phi_alpha(sqrt(d)/kappa) = 2^(-(d+alpha)/d) (text), Phi(pi/kappa) = pi^(-1-alpha/d) (sphere)
        for d in (2, 8, 16, 64):
            for alpha in (0.5, 1.2, 1.8):
                k = paper_kappa(d, alpha)
                val = float(fna_kernel(np.array([[math.sqrt(d)]]), alpha=alpha, scale=k, dim=d)[0, 0])
                assert val == pytest.approx(2 ** (-(d + alpha) / d), rel=64 * EPS64)
                ks = paper_kappa(d, alpha, variant="sphere")
                vs = float(fna_kernel(np.array([[math.pi]]), alpha=alpha, scale=ks, dim=d)[0, 0])
                assert vs == pytest.approx(math.pi ** (-1 - alpha / d), rel=64 * EPS64)

    def test_matched_half_width(self):
        # both kernels equal 1/2 at the same distance r
        for d, alpha, kappa1 in [(1, 1.2, 0.3), (8, 0.7, 5.0), (64, 1.5, 200.0)]:
            k2 = matched_half_width_kappa(kappa1, d, alpha)
            r = kappa1 * (2 ** (1 / (d + alpha)) - 1)
            assert float(fna_kernel(np.array([[r]]), alpha=alpha, scale=kappa1, dim=d)[0, 0]) == pytest.approx(0.5, rel=1e-13)
            assert float(fna_kernel(np.array([[r]]), alpha=2.0, scale=k2, dim=d)[0, 0]) == pytest.approx(0.5, rel=1e-13)
            # negative control: equal kappa does not match the half width
            assert abs(float(fna_kernel(np.array([[r]]), alpha=2.0, scale=kappa1, dim=d)[0, 0]) - 0.5) > 0.1
        assert matched_half_width_kappa(0.4, 3, 2.0) == pytest.approx(0.4, rel=1e-15)
        # local profile alpha = 3: exp(-z^1.5) = 1/2
        k2 = matched_half_width_kappa(1.0, 3, 3.0)
        r = math.log(2) ** (2 / 3)
        assert math.exp(-((r / k2) ** 2)) == pytest.approx(0.5, rel=1e-13)

    def test_bad(self):
        with pytest.raises(InputError, match="variant must be one of 'text', 'sphere'"):
            paper_kappa(4, 1.2, variant="torus")
        with pytest.raises(InputError, match="d must be"):
            paper_kappa(0, 1.2)
        with pytest.raises(InputError, match="alpha must be"):
            paper_kappa(4, 0.0)
        with pytest.raises(InputError, match="kappa1 must be"):
            matched_half_width_kappa(-1.0, 4, 1.2)
        with pytest.raises(InputError, match="alpha1 must be"):
            matched_half_width_kappa(1.0, 4, -1.2)



def test_backends(xp, rng):
    d = rng.random((6, 5)) * 3
    d[0, 0] = 0.0
    d[1, 1] = 30.0  # underflow path (exp(-900) = 0)
    dx = xp.asarray(d)
    for alpha in (0.8, 1.2, 2.0, 3.0):
        _same_backend(xp, fna_kernel(dx, alpha=alpha, scale=0.7, dim=2), fna_kernel(d, alpha=alpha, scale=0.7, dim=2))
        _same_backend(xp, fna_profile(dx, alpha=alpha, dim=1), fna_profile(d, alpha=alpha, dim=1))
    with pytest.raises(InputError, match="dist must be >= 0"):
        fna_kernel(-dx, alpha=1.0, scale=1.0, dim=1)
