"""Sphere(dim): volume, Fibonacci grid, geodesic distance, uniform sampling, bad input."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from manifolds import Sphere, SphericalHarmonic, VonMisesFisher, sphere_volume
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError
from spectral.floor.memory import DenseMemoryError
from spectral.testing import assert_close

EPS = np.finfo(np.float64).eps


def random_unit(rng, n, D):
    z = rng.standard_normal((n, D))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


class TestVolume:
    @pytest.mark.parametrize("dim", range(1, 11))
    def test_volume_recursion_and_closed_forms(self, dim):
        # independent reference: |S^d| = 2 pi / (d - 1) |S^(d-2)|, |S^0| = 2, |S^1| = 2 pi
        vols = {0: 2.0, 1: 2 * math.pi}
        for d in range(2, dim + 1):
            vols[d] = 2 * math.pi / (d - 1) * vols[d - 2]
        # rounding of pi^h / Gamma(h) vs the recursion: a few ulps per step
        assert Sphere(dim).volume == pytest.approx(vols[dim], rel=20 * EPS)
        assert sphere_volume(dim) == Sphere(dim).volume

    def test_known_volumes(self):
        assert Sphere(1).volume == 2 * math.pi
        assert Sphere(2).volume == 4 * math.pi
        assert Sphere(3).volume == pytest.approx(2 * math.pi**2, rel=4 * EPS)


class TestFibonacciGrid:
    def test_points_on_sphere_equal_area_bands(self):
        n = 1000
        x = Sphere(2).grid(n)
        assert x.shape == (n, 3)
        Sphere(2).check_points(x, atol=4 * EPS)  # unit norm to rounding
        # Archimedes: z uniform on [-1, 1] <=> equal-area bands; the lattice's z are the
        # midpoints 1 - (2j+1)/n exactly, so the empirical z-CDF is within 1/(2n) of (1+t)/2
        z = np.sort(x[:, 2])
        np.testing.assert_allclose(z, -1 + (2 * np.arange(n) + 1) / n, rtol=0, atol=4 * EPS)

    @pytest.mark.parametrize("n", [250, 1000, 3000])
    def test_separation(self, n):
        d = Sphere(2).distance(Sphere(2).grid(n))
        np.fill_diagonal(d, np.inf)
        # the Fibonacci lattice's nearest-neighbour distance is ~3.09/sqrt(n) (measured 3.092-3.096
        # for n = 250..4000); a uniform random sample has minimum separation ~ n^-1 instead
        assert d.min() * math.sqrt(n) >= 3.0

    def test_quadrature_of_harmonics(self, rng):
        # the lattice averages spherical harmonics (l = 1..4) to nearly 0: measured max |mean|
        # 6.9e-5 at n = 1000 (bound 2e-4 = 3x margin); negative control: random points give ~0.03
        n = 1000
        harmonics = [SphericalHarmonic(l, m) for l in range(1, 5) for m in range(-l, l + 1)]
        grid_err = max(abs(Y(Sphere(2).grid(n)).mean()) for Y in harmonics)
        rand_err = max(abs(Y(random_unit(rng, n, 3)).mean()) for Y in harmonics)
        assert grid_err <= 2e-4
        assert rand_err > 2e-4

    def test_no_grid_in_high_dimension(self):
        with pytest.raises(InputError, match="use sample"):
            Sphere(3).grid(10)
        np.testing.assert_allclose(np.linalg.norm(Sphere(1).grid(7), axis=1), 1.0, atol=4 * EPS)


class TestDistance:
    @pytest.mark.parametrize("dim", [2, 3, 5])
    def test_known_values(self, dim):
        e = np.eye(dim + 1)
        x = np.stack([e[0], e[1], -e[0]])
        d = Sphere(dim).distance(x)
        # exact geometry to a few ulps: orthogonal pi/2, antipodal pi, self 0
        np.testing.assert_allclose(d[0], [0, np.pi / 2, np.pi], rtol=0, atol=4 * EPS)

    @pytest.mark.parametrize("delta", [1e-9, 1e-12])
    def test_tiny_angles(self, rng, delta):
        # rotate by delta inside a random plane: x = cos(d) u + sin(d) v
        u = random_unit(rng, 5, 3)
        w = rng.standard_normal((5, 3))
        v = w - np.sum(w * u, axis=1, keepdims=True) * u
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        y = np.cos(delta) * u + np.sin(delta) * v
        d = np.diag(Sphere(2).distance(u, y))
        # the coordinates of y are rounded by ~eps, so the represented angle is delta +- a few eps
        assert np.max(np.abs(d - delta)) <= 8 * EPS
        naive = np.arccos(np.clip(np.sum(u * y, axis=1), -1, 1))
        assert np.max(np.abs(naive - delta)) > 100 * 8 * EPS  # negative control: arccos fails here

    def test_matches_cross_product_formula(self, rng):
        x, y = random_unit(rng, 40, 3), random_unit(rng, 30, 3)
        ref = np.arctan2(np.linalg.norm(np.cross(x[:, None, :], y[None, :, :]), axis=2), x @ y.T)
        # independent stable formula atan2(|x ^ y|, x.y); both accurate to a few ulps of pi
        np.testing.assert_allclose(Sphere(2).distance(x, y), ref, rtol=0, atol=8 * EPS * np.pi)

    def test_row_blocks_agree(self, rng):
        # 300 x 2000 pairs is split into blocks of 262 rows (BLOCK_ELEMENTS = 2^19): same values
        x, y = random_unit(rng, 300, 3), random_unit(rng, 2000, 3)
        ref = np.arctan2(np.linalg.norm(np.cross(x[:, None, :], y[None, :, :]), axis=2), x @ y.T)
        np.testing.assert_allclose(Sphere(2).distance(x, y), ref, rtol=0, atol=8 * EPS * np.pi)

    @pytest.mark.parametrize("dim", [2, 3])
    def test_metric_axioms(self, rng, dim):
        x = random_unit(rng, 25, dim + 1)
        d = Sphere(dim).distance(x)
        np.testing.assert_array_equal(np.diag(d), 0.0)
        np.testing.assert_allclose(d, d.T, rtol=0, atol=4 * EPS * np.pi)  # |x-y| vs |y-x| rounding
        assert d.min() >= 0 and d.max() <= np.pi
        viol = d[:, None, :] - d[:, :, None] - d[None, :, :].transpose(0, 2, 1)
        assert viol.max() <= 16 * EPS * np.pi  # triangle inequality up to rounding

    def test_moderate_angles_match_arccos(self, rng):
        x, y = random_unit(rng, 200, 4), random_unit(rng, 200, 4)
        dots = np.sum(x * y, axis=1)
        keep = np.abs(dots) < 0.9  # away from 0 and pi arccos is accurate to ~eps/sin(theta)
        d = np.diag(Sphere(3).distance(x, y))[keep]
        np.testing.assert_allclose(d, np.arccos(dots[keep]), rtol=0, atol=1e-14)

    def test_chordal(self, rng):
        x = random_unit(rng, 20, 3)
        np.testing.assert_allclose(
            Sphere(2).chordal_distance(x), np.linalg.norm(x[:, None] - x[None], axis=2), rtol=1e-14, atol=4 * EPS
        )

    def test_backend_neutral(self, xp, rng):
        x = random_unit(rng, 12, 3)
        xa = xp.asarray(x)
        d = Sphere(2).distance(xa, xa[:5, ...])
        assert type(d) is type(xa)
        # exact algebra across backends: rtol 4 sqrt(eps)
        np.testing.assert_allclose(to_numpy(d), Sphere(2).distance(x, x[:5]), rtol=4 * np.sqrt(EPS), atol=4 * EPS)
        np.testing.assert_allclose(to_numpy(Sphere(2).chordal_distance(xa)), Sphere(2).chordal_distance(x), rtol=4 * np.sqrt(EPS))
        v = rng.standard_normal((12, 3))
        t = to_numpy(Sphere(2).project_tangent(xa, xp.asarray(v)))
        np.testing.assert_allclose(np.sum(t * x, axis=1), 0.0, atol=10 * EPS * np.abs(v).max())
        np.testing.assert_allclose(t, Sphere(2).project_tangent(x, v), rtol=4 * np.sqrt(EPS), atol=4 * EPS)


class TestUniformSampling:
    def test_s2_archimedes(self):
        x = Sphere(2).sample(4000, rng=5)
        np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, atol=4 * EPS)
        # z ~ U[-1, 1] (Archimedes), longitude ~ U[0, 2 pi); KS at level 0.01 (measured p 0.77, 0.21)
        assert stats.kstest(x[:, 2], stats.uniform(-1, 2).cdf).pvalue > 0.01
        assert stats.kstest(np.mod(np.arctan2(x[:, 1], x[:, 0]), 2 * np.pi), stats.uniform(0, 2 * np.pi).cdf).pvalue > 0.01

    def test_s2_wrong_law_fails(self):
        # negative control: a vMF sample (kappa 0.3 about e_z) fails the z test (measured p 1e-20)
        x = Sphere(2).sample(4000, density=VonMisesFisher([0, 0, 1.0], 0.3), rng=5)
        assert stats.kstest(x[:, 2], stats.uniform(-1, 2).cdf).pvalue < 0.01

    def test_s3_marginal(self):
        # on S^3 a coordinate t has density proportional to sqrt(1 - t^2): CDF by quadrature
        norm = integrate.quad(lambda t: math.sqrt(1 - t * t), -1, 1)[0]

        def cdf(ts):
            return np.array([integrate.quad(lambda t: math.sqrt(1 - t * t), -1, s)[0] / norm for s in ts])

        x = Sphere(3).sample(2000, rng=9)
        assert stats.kstest(x[:, 0], cdf).pvalue > 0.01  # measured p = 0.30
        # negative control: S^2's uniform z marginal is rejected
        assert stats.kstest(x[:, 0], stats.uniform(-1, 2).cdf).pvalue < 0.01  # measured p = 8e-5


class TestBadInput:
    @pytest.mark.parametrize("dim", [0, -1, 1.5, "2"])
    def test_bad_dim(self, dim):
        with pytest.raises(InputError, match=r"dim must be an integer in \[1, inf\)"):
            Sphere(dim)

    def test_off_sphere(self, rng):
        x = random_unit(rng, 5, 4)
        Sphere(3).check_points(x)
        with pytest.raises(InputError, match="atol = 1e-10"):
            Sphere(3).check_points(x * 1.001)
        with pytest.raises(InputError, match="atol = 0.01"):
            Sphere(3).check_points(x * 1.1, atol=0.01)
        with pytest.raises(InputError, match=r"shape \(n, 4\)"):
            Sphere(3).check_points(x[:, :3])

    def test_bad_n(self):
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            Sphere(2).grid(0)
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            Sphere(2).sample(-1)

    def test_density_on_other_manifold(self):
        with pytest.raises(InputError, match="density must be defined on Sphere"):
            Sphere(2).sample(3, density=VonMisesFisher([1.0, 0, 0, 0], 1.0))


# --------------------------------------------------------------------------- memory guard


@pytest.mark.parametrize("method", ["distance", "chordal_distance"])
def test_memory_estimate_bounds_the_traced_peak(xp, rng, method, estimate_and_peak):
    x, y = xp.asarray(random_unit(rng, 600, 3)), xp.asarray(random_unit(rng, 700, 3))
    f = getattr(Sphere(2), method)
    needed, peak = estimate_and_peak(lambda: f(x, y, max_bytes=2**40))
    assert 600 * 700 * 8 <= peak <= needed, (peak, needed)


def test_chordal_in_place_is_bitwise_the_out_of_place_root(rng):
    from manifolds import pairwise_sq_distance

    x = random_unit(rng, 40, 3)
    assert np.array_equal(Sphere(2).chordal_distance(x), np.sqrt(pairwise_sq_distance(x)))


@pytest.mark.parametrize("method", ["distance", "chordal_distance"])
def test_memory_guard_tiny_limit(xp, rng, method):
    x = random_unit(rng, 30, 4)
    f = getattr(Sphere(3), method)
    with pytest.raises(DenseMemoryError, match=r"distances on Sphere\(3\) of shape \(30, 20\) needs an estimated "
                       r".* limit max_bytes = 0.977 KiB; compute it in row blocks, Sphere\(3\)\.distance\(x\[i:j\], y\)"
                       r".*KernelOperator\(x, kernel=\.\.\., distance=Sphere\(3\)\.distance\)"):
        f(xp.asarray(x), xp.asarray(x[:20]), max_bytes=1000)
    assert_close(f(xp.asarray(x), max_bytes=2**30), xp.asarray(to_numpy(f(x))), rtol=0.0)


def test_memory_guard_huge_request_refused_before_allocating(rng, monkeypatch, refused_peak):
    import spectral.floor.memory

    x = random_unit(rng, 200_000, 4)  # 6.4 MB of points; their distance matrix would be 320 GB
    peak = refused_peak(lambda: Sphere(3).distance(x), r"shape \(200000, 200000\) needs an estimated 298 GiB")
    assert peak < 1 << 20
    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 16 << 20)
    peak = refused_peak(lambda: Sphere(3).chordal_distance(x[:2000]), r"over the memory available now: 16 MiB")
    assert peak < 1 << 20
