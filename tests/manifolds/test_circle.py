"""Circle(): grid order, angle maps, geodesic distance, spectrum, sampling, bad input."""

import math

import numpy as np
import pytest
from scipy import stats

from manifolds import Circle, Sphere, VonMises, circle_eigenvalues
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError
from spectral.floor.memory import DenseMemoryError
from spectral.testing import assert_close

EPS = np.finfo(np.float64).eps


def wrapped_difference(a, b):
    """Independent reference: |a - b| wrapped to [0, pi]."""
    d = np.mod(np.abs(a[:, None] - b[None, :]), 2 * np.pi)
    return np.minimum(d, 2 * np.pi - d)


class TestGridAndAngles:
    def test_grid_is_equispaced_from_angle_zero(self):
        n = 12
        x = Circle().grid(n)
        assert x.shape == (n, 2)
        np.testing.assert_array_equal(x[0], [1.0, 0.0])
        theta = to_numpy(Circle.angles(x))
        # exact algebra: atan2 of rounded cos/sin recovers 2 pi j/n to a few ulps of 2 pi
        np.testing.assert_allclose(theta, 2 * np.pi * np.arange(n) / n, rtol=0, atol=4 * EPS * 2 * np.pi)

    def test_angles_embed_roundtrip_and_range(self, rng):
        theta = rng.uniform(0, 2 * np.pi, 1000)
        back = to_numpy(Circle.angles(Circle.embed(theta)))
        assert np.all((back >= 0) & (back < 2 * np.pi))
        # a few ulps of 2 pi (rounding in cos/sin and atan2), wrapped at 0 = 2 pi
        err = np.abs(np.mod(back - theta + np.pi, 2 * np.pi) - np.pi)
        assert err.max() <= 4 * EPS * 2 * np.pi
        # a tiny negative angle must wrap into [0, 2 pi), not to 2 pi itself
        tiny = to_numpy(Circle.angles(np.array([[1.0, -1e-20]])))
        assert 0 <= tiny[0] < 2 * np.pi

    def test_backend_neutral(self, xp):
        theta = np.linspace(0.1, 6.0, 9)
        pts = Circle.embed(xp.asarray(theta))
        assert type(pts) is type(xp.asarray(theta))
        ref = Circle.embed(theta)
        # exact algebra across backends: rtol 4 sqrt(eps)
        np.testing.assert_allclose(to_numpy(pts), ref, rtol=4 * np.sqrt(EPS), atol=4 * EPS)
        np.testing.assert_allclose(to_numpy(Circle.angles(pts)), Circle.angles(ref), rtol=4 * np.sqrt(EPS))
        d = Circle().distance(pts)
        np.testing.assert_allclose(to_numpy(d), Circle().distance(ref), rtol=4 * np.sqrt(EPS), atol=4 * EPS)
        c = Circle().chordal_distance(pts, pts[:3, ...])
        np.testing.assert_allclose(to_numpy(c), Circle().chordal_distance(ref, ref[:3]), rtol=4 * np.sqrt(EPS))


class TestDistance:
    def test_known_values(self):
        c = Circle()
        x = c.embed(np.array([0.0, np.pi / 2, np.pi, 3 * np.pi / 2]))
        d = c.distance(x)
        # exact geometry: quarter circle pi/2, antipodes pi, to a few ulps
        np.testing.assert_allclose(d[0], [0, np.pi / 2, np.pi, np.pi / 2], rtol=0, atol=4 * EPS)
        np.testing.assert_allclose(d[1], [np.pi / 2, 0, np.pi / 2, np.pi], rtol=0, atol=4 * EPS)

    def test_matches_wrapped_angle_difference(self, rng):
        a, b = rng.uniform(0, 2 * np.pi, 50), rng.uniform(0, 2 * np.pi, 40)
        d = Circle().distance(Circle.embed(a), Circle.embed(b))
        assert d.shape == (50, 40)
        # rounding of cos/sin (|err| <= eps per coordinate) moves angles by a few ulps of pi
        np.testing.assert_allclose(d, wrapped_difference(a, b), rtol=0, atol=8 * EPS * np.pi)

    @pytest.mark.parametrize("delta", [1e-9, 1e-11, 1e-13])
    def test_tiny_angles_accurate_where_arccos_fails(self, delta):
        a = np.array([1.0, 2.5, 4.0])
        b = a + delta
        ref = b - a  # exact (Sterbenz) angle between the two represented angles
        x, y = Circle.embed(a), Circle.embed(b)
        d = np.diag(Circle().distance(x, y))
        # absolute error of a few eps: rounding of the coordinates themselves (<= eps/2 each)
        assert np.max(np.abs(d - ref)) <= 4 * EPS
        # negative control: arccos of the dot product is off by ~delta (it returns ~0 or ~1e-8)
        naive = np.arccos(np.clip(np.sum(x * y, axis=1), -1, 1))
        assert np.max(np.abs(naive - ref)) > 100 * 4 * EPS

    def test_metric_axioms(self, rng):
        x = Circle.embed(rng.uniform(0, 2 * np.pi, 30))
        d = Circle().distance(x)
        np.testing.assert_array_equal(d, d.T)  # the formula is symmetric in exact arithmetic and in IEEE
        np.testing.assert_array_equal(np.diag(d), 0.0)
        assert d.min() >= 0 and d.max() <= np.pi
        off = d[~np.eye(30, dtype=bool)]
        assert off.min() > 0
        # triangle inequality over all triples, slack of a few ulps of pi for rounding
        viol = d[:, None, :] - d[:, :, None] - d[None, :, :].transpose(0, 2, 1)
        assert viol.max() <= 8 * EPS * np.pi

    def test_chordal_distance(self, rng):
        x = Circle.embed(rng.uniform(0, 2 * np.pi, 20))
        c, d = Circle().chordal_distance(x), Circle().distance(x)
        # identity |x - y| = 2 sin(theta/2); relative rounding a few eps
        np.testing.assert_allclose(c, 2 * np.sin(d / 2), rtol=1e-14, atol=4 * EPS)

    def test_sphere1_agrees_with_circle(self, rng):
        c, s = Circle(), Sphere(1)
        assert c == s and hash(c) == hash(s)
        assert (c.dim, c.ambient_dim, c.volume) == (s.dim, s.ambient_dim, s.volume) == (1, 2, 2 * math.pi)
        np.testing.assert_array_equal(c.grid(17), s.grid(17))
        np.testing.assert_array_equal(c.laplacian_eigenvalues(9), s.laplacian_eigenvalues(9))
        np.testing.assert_array_equal(c.sample(50, rng=3), s.sample(50, rng=3))
        x = c.sample(40, rng=rng)
        # two stable formulas (cross/dot vs 2 atan2(|x-y|, |x+y|)): agree to a few ulps of pi
        np.testing.assert_allclose(c.distance(x), s.distance(x), rtol=0, atol=8 * EPS * np.pi)


class TestSpectrum:
    def test_eigenvalues_and_multiplicity(self):
        lam = Circle().laplacian_eigenvalues(41)
        assert np.all(np.diff(lam) >= 0)
        # independent count: #{k in Z : k^2 = lambda} (Fourier modes e^{ikt})
        for value in np.unique(lam[:-1]):  # the last value may be cut by count
            mult = sum(1 for k in range(-30, 31) if k * k == value)
            assert np.sum(lam == value) == mult
            assert mult == (1 if value == 0 else 2)
        np.testing.assert_array_equal(lam, circle_eigenvalues(41))

    def test_eigenvalues_match_discrete_laplacian(self):
        # independent numerics: the periodic second-difference matrix has eigenvalues
        # (4/h^2) sin^2(k h / 2) = k^2 (1 - k^2 h^2 / 12 + ...)
        n = 200
        h = 2 * np.pi / n
        lap = (2 * np.eye(n) - np.roll(np.eye(n), 1, axis=1) - np.roll(np.eye(n), -1, axis=1)) / h**2
        num = np.linalg.eigvalsh(lap)[:21]
        lam = Circle().laplacian_eigenvalues(21)
        # relative error bound k^2 h^2 / 12 (k <= 10) plus eigensolver rounding
        np.testing.assert_allclose(num, lam, rtol=10**2 * h**2 / 12, atol=1e-9)


class TestSampling:
    def test_uniform_sample_passes_ks(self):
        theta = to_numpy(Circle.angles(Circle().sample(3000, rng=11)))
        p = stats.kstest(theta, stats.uniform(0, 2 * np.pi).cdf).pvalue
        assert p > 0.01  # level 0.01, fixed seed (measured p = 0.19)

    def test_wrong_law_fails_ks(self):
        # negative control: a von Mises sample (kappa 0.5) is rejected by the same test (measured p = 2e-20)
        theta = to_numpy(Circle.angles(Circle().sample(3000, density=VonMises(0.0, 0.5), rng=11)))
        assert stats.kstest(theta, stats.uniform(0, 2 * np.pi).cdf).pvalue < 0.01

    def test_seed_reproducible(self):
        np.testing.assert_array_equal(Circle().sample(5, rng=7), Circle().sample(5, rng=np.random.default_rng(7)))


class TestBadInput:
    @pytest.mark.parametrize("n", [0, -3, 2.5, True])
    def test_bad_n(self, n):
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            Circle().grid(n)
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            Circle().sample(n, rng=0)

    def test_bad_count(self):
        with pytest.raises(InputError, match=r"count must be an integer in \[1, inf\)"):
            Circle().laplacian_eigenvalues(0)

    def test_points_off_circle(self):
        x = Circle().grid(8)
        Circle().check_points(x * (1 + 1e-12))  # within the default atol 1e-10
        with pytest.raises(InputError, match="atol = 1e-10"):
            Circle().check_points(x * (1 + 1e-9))
        with pytest.raises(InputError, match="finite"):
            Circle().check_points(np.array([[np.nan, 1.0]]))
        with pytest.raises(InputError, match=r"shape \(n, 2\)"):
            Circle().check_points(np.ones((3, 3)))
        with pytest.raises(InputError, match="atol"):
            Circle().check_points(x, atol=-1.0)

    def test_bad_shapes(self):
        with pytest.raises(InputError, match=r"shape \(n, 2\)"):
            Circle().distance(np.ones((3, 3)))
        with pytest.raises(InputError, match=r"y must be an array of shape \(n, 2\)"):
            Circle().distance(np.ones((3, 2)), np.ones(2))
        with pytest.raises(InputError, match="theta must be a 1-D"):
            Circle.embed(np.ones((2, 2)))

    def test_bad_rng(self):
        with pytest.raises(InputError, match="rng must be"):
            Circle().sample(3, rng="seed")


# --------------------------------------------------------------------------- memory guard


def test_memory_estimate_bounds_the_traced_peak(xp, rng, estimate_and_peak):
    x, y = (xp.asarray(Circle.embed(rng.uniform(0, 2 * math.pi, k))) for k in (600, 700))
    needed, peak = estimate_and_peak(lambda: Circle().distance(x, y, max_bytes=2**40))
    assert 600 * 700 * 8 <= peak <= needed, (peak, needed)


def test_memory_guard_tiny_limit(xp, rng):
    x = Circle.embed(rng.uniform(0, 2 * math.pi, 30))
    with pytest.raises(DenseMemoryError, match=r"geodesic distances on Circle\(\) of shape \(30, 30\) needs an estimated "
                       r".* limit max_bytes = 0.977 KiB; compute it in row blocks, Circle\(\)\.distance\(x\[i:j\], y\)"):
        Circle().distance(xp.asarray(x), max_bytes=1000)
    assert_close(Circle().distance(xp.asarray(x), max_bytes=2**30), xp.asarray(to_numpy(Circle().distance(x))), rtol=0.0)


def test_memory_guard_huge_request_refused_before_allocating(rng, monkeypatch, refused_peak):
    import spectral.floor.memory

    x = Circle.embed(rng.uniform(0, 2 * math.pi, 200_000))  # distances of 320 GB
    assert refused_peak(lambda: Circle().distance(x), r"shape \(200000, 200000\) needs an estimated 298 GiB") < 1 << 20
    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 16 << 20)
    assert refused_peak(lambda: Circle().distance(x[:2000]), r"over the memory available now: 16 MiB") < 1 << 20
