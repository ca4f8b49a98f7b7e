"""Densities: normalisation by quadrature, pdfs vs SciPy, exact CDFs and quantile grids,
samplers by KS at level 0.01 (with wrong-law negative controls), grad_log_pdf vs finite
differences, backend neutrality and bad input."""


import numpy as np
import pytest
from scipy import integrate, stats

from manifolds import (
    Circle,
    CosineDensity,
    Euclidean,
    GaussianMixture,
    Sphere,
    Uniform,
    VonMises,
    VonMisesFisher,
)
from manifolds.densities import CIRCLE_DENSITIES, circle_density
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError

EPS = np.finfo(np.float64).eps
LEVEL = 0.01  # significance level of every sampling test (SciPy's convention)


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def circle_pdf_at(density, theta):
    return density.pdf(Circle.embed(np.atleast_1d(np.asarray(theta, dtype=float))))


def zonal_points(mu, t):
    """Points with <x, mu> = t (one fixed orthogonal direction)."""
    mu = np.asarray(mu, dtype=float)
    e = np.zeros_like(mu)
    e[np.argmin(np.abs(mu))] = 1.0
    perp = unit(e - (e @ mu) * mu)
    t = np.atleast_1d(t)
    return t[:, None] * mu[None, :] + np.sqrt(1 - t * t)[:, None] * perp[None, :]


def fd_tangent_derivative(fun, x, v, h):
    """Central difference of fun along the geodesic (or line) through x with unit tangent v."""
    return (fun(np.cos(h) * x + np.sin(h) * v) - fun(np.cos(h) * x - np.sin(h) * v)) / (2 * h)


# ----------------------------------------------------------------- normalisation
class TestNormalisation:
    # quad to epsabs 1e-13: the integral of a normalised density is 1 to ~1e-12
    @pytest.mark.parametrize("density", [VonMises(0.3, 0.0), VonMises(1.0, 0.5), VonMises(-2.0, 3.0),
                                         VonMises(0.5, 50.0), CosineDensity(), CosineDensity(-0.9, 2.0),
                                         Uniform(Circle()), VonMisesFisher([0.6, 0.8], 4.0)],
                             ids=repr)
    def test_circle(self, density):
        total = integrate.quad(lambda t: circle_pdf_at(density, t)[0], 0, 2 * np.pi, epsabs=1e-13, limit=200)[0]
        assert total == pytest.approx(1.0, abs=1e-12)

    @pytest.mark.parametrize("kappa", [0.0, 1e-8, 0.5, 5.0, 50.0])
    def test_vmf_s2_surface_integral(self, kappa):
        vmf = VonMisesFisher(unit([1.0, -2.0, 0.5]), kappa)
        # spherical coordinates, area element sin(theta): Gauss-Legendre (80 nodes) in theta x trapezoid (160,
        # spectrally accurate for the periodic phi) in one vectorised call. Measured |total - 1| <= 1.5e-14 for
        # every kappa here, the same at 120 x 240 nodes (40 x 80 leaves 1.5e-10 at kappa = 50); adaptive dblquad
        # at 1e-10 agreed
        z, wz = np.polynomial.legendre.leggauss(80)
        theta, phi = np.pi * (z + 1) / 2, 2 * np.pi * np.arange(160) / 160
        t, p = np.meshgrid(theta, phi, indexing="ij")
        x = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
        weights = (np.pi / 2 * wz * np.sin(theta))[:, None] * np.full(160, 2 * np.pi / 160)
        total = float(np.sum(vmf.pdf(x).reshape(t.shape) * weights))
        assert total == pytest.approx(1.0, abs=1e-12)

    @pytest.mark.parametrize("D,kappa", [(4, 2.0), (6, 10.0), (4, 1e-7)])
    def test_vmf_high_dim_zonal(self, D, kappa):
        # int_{S^{D-1}} p = |S^{D-2}| int_{-1}^{1} p(t) (1 - t^2)^{(D-3)/2} dt for zonal p
        mu = unit(np.arange(1.0, D + 1))
        vmf = VonMisesFisher(mu, kappa)
        total = Sphere(D - 2).volume * integrate.quad(
            lambda t: vmf.pdf(zonal_points(mu, t))[0] * (1 - t * t) ** ((D - 3) / 2), -1, 1, epsabs=1e-13
        )[0]
        assert total == pytest.approx(1.0, abs=1e-11)

    @pytest.mark.parametrize("gm", [
        GaussianMixture.fna_three_modes(),
        GaussianMixture([[0.0, 1.0], [2.0, -1.0]], [[[1.0, 0.6], [0.6, 0.5]], [[0.3, -0.1], [-0.1, 0.2]]], [0.3, 0.7]),
    ], ids=["fna", "full"])
    def test_gaussian_mixture_r2(self, gm):
        # tensor Gauss-Legendre on [-12, 12]^2, 8 panels x 40 nodes per axis: node spacing <= 0.1
        # resolves the narrowest width (0.39); the box holds all but e^-(>100) of the mass
        nodes, wts = np.polynomial.legendre.leggauss(40)
        edges = np.linspace(-12, 12, 9)
        t = np.concatenate([0.5 * (b - a) * nodes + 0.5 * (a + b) for a, b in zip(edges[:-1], edges[1:])])
        w = np.concatenate([0.5 * (b - a) * wts for a, b in zip(edges[:-1], edges[1:])])
        X, Y = np.meshgrid(t, t, indexing="ij")
        total = np.sum(np.outer(w, w).ravel() * gm.pdf(np.stack([X.ravel(), Y.ravel()], axis=1)))
        assert total == pytest.approx(1.0, abs=1e-12)
        # negative control: an unnormalised variant (pdf doubled) is caught
        assert abs(2 * total - 1.0) > 0.5


# ------------------------------------------------------------ pdf vs references
class TestPdfReferences:
    def test_von_mises_vs_scipy(self, rng):
        theta = rng.uniform(0, 2 * np.pi, 50)
        for mu, kappa in [(0.0, 0.0), (1.0, 2.0), (-2.0, 30.0), (3.0, 700.0)]:
            ref = stats.vonmises.pdf(theta, kappa, loc=mu)
            # independent implementation; relative rounding of exp/log of O(kappa) terms
            # atol 1e-300 admits the subnormal tail at kappa = 700
            np.testing.assert_allclose(circle_pdf_at(VonMises(mu, kappa), theta), ref, rtol=1e-12 * max(1, kappa),
                                       atol=1e-300)

    @pytest.mark.parametrize("D", [2, 3, 5])
    def test_vmf_vs_scipy(self, rng, D):
        mu = unit(rng.standard_normal(D))
        x = Sphere(D - 1).sample(40, rng=rng)
        for kappa in [0.3, 4.0, 80.0]:
            ref = stats.vonmises_fisher(mu, kappa).logpdf(x)
            np.testing.assert_allclose(VonMisesFisher(mu, kappa).log_pdf(x), ref, rtol=1e-12, atol=1e-12 * kappa)

    def test_vmf_s2_closed_form(self, rng):
        mu = unit([0.0, 0.0, 1.0])
        x = Sphere(2).sample(30, rng=rng)
        for kappa in [1e-3, 1.0, 20.0]:
            ref = kappa / (4 * np.pi * np.sinh(kappa)) * np.exp(kappa * x[:, 2])
            np.testing.assert_allclose(VonMisesFisher(mu, kappa).pdf(x), ref, rtol=1e-12)

    def test_vmf_circle_equals_von_mises(self, rng):
        x = Circle().sample(20, rng=rng)
        np.testing.assert_allclose(VonMisesFisher([np.cos(1.3), np.sin(1.3)], 2.5).pdf(x), VonMises(1.3, 2.5).pdf(x),
                                   rtol=1e-13)

    def test_gaussian_mixture_vs_scipy(self, rng):
        covs = np.array([[[1.0, 0.3, 0.0], [0.3, 0.5, 0.1], [0.0, 0.1, 2.0]], np.diag([0.2, 0.3, 0.4])])
        means = rng.standard_normal((2, 3))
        gm = GaussianMixture(means, covs, [0.25, 0.75])
        x = rng.standard_normal((40, 3)) * 2
        ref = 0.25 * stats.multivariate_normal(means[0], covs[0]).pdf(x) + 0.75 * stats.multivariate_normal(
            means[1], covs[1]).pdf(x)
        np.testing.assert_allclose(gm.pdf(x), ref, rtol=1e-12)
        # the diagonal and scalar covariance forms mean the same matrices
        np.testing.assert_allclose(GaussianMixture(means, [[0.2, 0.3, 0.4]] * 2).covariances[1], covs[1])
        np.testing.assert_allclose(GaussianMixture(means, [0.5, 2.0]).covariances[1], 2.0 * np.eye(3))

    def test_fna_three_modes(self):
        gm = GaussianMixture.fna_three_modes()
        np.testing.assert_allclose(gm.means, [[3.0, 0.0], [-3.0, 0.0], [0.0, np.sqrt(3.0)]])
        np.testing.assert_allclose(gm.covariances, np.broadcast_to(np.eye(2) / 4, (3, 2, 2)))
        np.testing.assert_allclose(gm.weights, [1 / 3] * 3)

    def test_uniform(self):
        x = Sphere(3).sample(5, rng=0)
        np.testing.assert_allclose(Uniform(Sphere(3)).pdf(x), 1 / (2 * np.pi**2), rtol=4 * EPS)
        np.testing.assert_array_equal(Uniform(Sphere(3)).grad_log_pdf(x), 0.0)


# --------------------------------------------------------- CDF and quantile grid
class TestCdfAndQuantiles:
    @pytest.mark.parametrize("mu,kappa", [(0.0, 0.5), (1.0, 4.0), (-2.5, 30.0)])
    def test_von_mises_cdf_vs_scipy(self, mu, kappa):
        # scipy.stats.vonmises.cdf (independent series; kappa <= 50 where it does not switch to
        # a normal approximation); differences compared modulo 1 (scipy's cdf is centred on mu)
        theta = np.linspace(0, 2 * np.pi, 101)
        ref = stats.vonmises.cdf(theta, kappa, loc=mu) - stats.vonmises.cdf(0.0, kappa, loc=mu)
        diff = np.mod(VonMises(mu, kappa).cdf(theta) - ref + 0.5, 1.0) - 0.5
        assert np.max(np.abs(diff)) <= 1e-12

    @pytest.mark.parametrize("mu,kappa", [(-2.5, 60.0), (2.0, 2000.0)])
    def test_von_mises_cdf_vs_mpmath(self, mu, kappa):
        import mpmath as mp

        mp.mp.dps = 30
        norm = 2 * mp.pi * mp.besseli(0, kappa)
        mode = float(np.mod(mu, 2 * np.pi))
        vm = VonMises(mu, kappa)
        for t in [0.3, mode - 0.05, mode - 0.01, mode, mode + 0.02, 5.5]:
            pts = [0, mode, t] if t > mode else [0, t]
            ref = mp.quad(lambda s: mp.exp(kappa * mp.cos(s - mu)) / norm, pts)
            # 30-digit quadrature; the series is summed in float64 (measured error <= 1.4e-15)
            assert float(vm.cdf(t)) == pytest.approx(float(ref), abs=1e-14)

    @pytest.mark.parametrize("density", [VonMises(1.0, 4.0), CosineDensity(0.5), CosineDensity(-0.8, 1.0)], ids=repr)
    def test_cdf_vs_quadrature(self, density):
        for t in [0.3, 2.0, 4.5, 2 * np.pi]:
            ref = integrate.quad(lambda s: circle_pdf_at(density, s)[0], 0, t, epsabs=1e-14)[0]
            assert density.cdf(t) == pytest.approx(ref, abs=1e-13)
        assert density.cdf(7.0) == pytest.approx(1.0 + density.cdf(7.0 - 2 * np.pi), abs=1e-14)

    @pytest.mark.parametrize("density", [VonMises(1.0, 4.0), VonMises(0.0, 300.0), VonMises(2.0, 1e4), CosineDensity(0.5),
                                         CosineDensity(-0.99, 2.0), Uniform(Circle())], ids=repr)
    def test_quantile_grid(self, density):
        n = 2000
        x = density.quantile_grid(n)
        assert x.shape == (n, 2)
        Circle().check_points(x, atol=4 * EPS)
        theta = to_numpy(Circle.angles(x))
        assert np.all(np.diff(theta) > 0)
        u = (np.arange(n) + 0.5) / n
        # Newton converged to ~ulps in theta; the residual in F is ~ p_max * (ulp of 2 pi) plus the
        # rounding of cos/sin when re-reading the angle from the points (measured <= 8.8e-15, kappa 1e4)
        assert np.max(np.abs(density.cdf(theta) - u)) <= 1e-13
        if isinstance(density, VonMises) and density.kappa <= 50:  # independent CDF (scipy, series regime)
            ref = np.mod(stats.vonmises.cdf(theta, density.kappa, loc=density.mu)
                         - stats.vonmises.cdf(0.0, density.kappa, loc=density.mu), 1.0)
            np.testing.assert_allclose(ref, u, rtol=0, atol=1e-10)

    @pytest.mark.parametrize("density", [CosineDensity(0.5), VonMises(0.0, 1.0), VonMises(0.3, 4.0),
                                         VonMises(2.0, 300.0)], ids=repr)
    def test_quantile_angles_against_root_finding(self, density):
        # the slow exact inversion: Brent's method on F(theta) - u, one root at a time, to 4e-16
        from scipy.optimize import brentq

        n = 257
        u = (np.arange(n) + 0.5) / n
        ref = np.array([brentq(lambda t, v=v: float(density.cdf(t)) - v, 0.0, 2 * np.pi, xtol=4e-16, rtol=4 * EPS)
                        for v in u])
        theta = density.quantile_angles(n)
        assert theta.shape == (n,) and theta.dtype == np.float64
        # both are exact to rounding in F: a root is determined to (rounding of F) / p(theta), so the
        # angles are compared weighted by p; measured p |theta - ref| <= 3.0e-15 (kappa 300), 1.1e-15
        # otherwise, i.e. <= 14 eps in F (angles: <= 6e-13 at kappa 4, where p is 4e-4 at the tail)
        assert np.max(np.abs(theta - ref) * density.angle_pdf(theta)) <= 32 * EPS
        assert np.max(np.abs(density.cdf(theta) - u)) <= 32 * EPS
        np.testing.assert_array_equal(density.quantile_grid(n), np.stack([np.cos(theta), np.sin(theta)], axis=1))
        # negative control: the quantiles of another law are far away
        other = CosineDensity(0.4) if isinstance(density, VonMises) else VonMises(0.0, 1.0)
        assert np.max(np.abs(other.quantile_angles(n) - ref)) > 1e-2

    @pytest.mark.parametrize("density", [CosineDensity(0.5, 1.0), VonMises(0.3, 4.0), Uniform(Circle())], ids=repr)
    def test_angle_pdf(self, density):
        theta = np.linspace(-1.0, 8.0, 41)
        np.testing.assert_allclose(density.angle_pdf(theta), circle_pdf_at(density, theta), rtol=1e-14, atol=0)
        with pytest.raises(InputError, match="finite angles"):
            density.angle_pdf([0.0, np.nan])

    def test_circle_density_names(self):
        assert CIRCLE_DENSITIES == ("cosine", "vonmises")
        cos, vm = (circle_density(name) for name in CIRCLE_DENSITIES)
        assert isinstance(cos, CosineDensity) and (cos.amplitude, cos.mu) == (0.5, 0.0)
        assert isinstance(vm, VonMises) and (vm.mu, vm.kappa) == (0.0, 1.0)
        with pytest.raises(InputError, match="name must be one of 'cosine', 'vonmises'"):
            circle_density("gauss")

    def test_equispaced_grid_is_not_a_quantile_grid(self):
        # negative control: the same residual test rejects the uniform grid for a non-uniform law
        n = 5000
        theta = 2 * np.pi * (np.arange(n) + 0.5) / n
        assert np.max(np.abs(CosineDensity(0.5).cdf(theta) - (np.arange(n) + 0.5) / n)) > 0.05

    def test_only_on_circle(self):
        with pytest.raises(InputError, match="only for densities on the circle"):
            Uniform(Sphere(2)).quantile_grid(10)
        with pytest.raises(InputError, match="only for densities on the circle"):
            Uniform(Sphere(2)).cdf(1.0)
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            VonMises().quantile_grid(0)


# -------------------------------------------------------------------- sampling
def vm_cdf0(theta, mu, kappa):
    return np.mod(stats.vonmises.cdf(theta, kappa, loc=mu) - stats.vonmises.cdf(0.0, kappa, loc=mu), 1.0)


def cosine_cdf_quad(a, mu):
    # int_0^t (1 + a cos(s - mu)) / (2 pi) ds by 16-node Gauss-Legendre on [0, t] for every t at once: exact to
    # rounding for this degree-1 trigonometric polynomial on t <= 2 pi (measured within 6e-16 of adaptive quad)
    x, g = np.polynomial.legendre.leggauss(16)

    def cdf(ts):
        ts = np.asarray(ts, dtype=float)[..., None]
        s = ts * (x + 1) / 2
        return ts[..., 0] / 2 * (((1 + a * np.cos(s - mu)) / (2 * np.pi)) @ g)
    return cdf


def vmf_s2_w_cdf(kappa):
    # w = <x, mu> has density kappa e^{kappa w} / (2 sinh kappa) on [-1, 1] (closed form)
    return lambda w: np.expm1(kappa * (w + 1)) / np.expm1(2 * kappa)


class TestSampling:
    def test_von_mises(self):
        theta = to_numpy(Circle.angles(VonMises(1.0, 2.0).sample(4000, rng=21)))
        assert stats.kstest(theta, lambda t: vm_cdf0(t, 1.0, 2.0)).pvalue > LEVEL  # measured p = 0.68
        # wrong law (kappa 2.4) is rejected by the same test: measured p = 5e-13
        assert stats.kstest(theta, lambda t: vm_cdf0(t, 1.0, 2.4)).pvalue < LEVEL

    def test_cosine(self):
        theta = to_numpy(Circle.angles(CosineDensity(0.5, 0.7).sample(8000, rng=22)))
        assert stats.kstest(theta, cosine_cdf_quad(0.5, 0.7)).pvalue > LEVEL  # measured p = 0.28
        assert stats.kstest(theta, cosine_cdf_quad(0.3, 0.7)).pvalue < LEVEL  # wrong amplitude: measured p = 6e-20

    def test_vmf_s2(self):
        mu = unit([1.0, 1.0, 0.0])
        x = VonMisesFisher(mu, 3.0).sample(4000, rng=23)
        w = x @ mu
        assert stats.kstest(w, vmf_s2_w_cdf(3.0)).pvalue > LEVEL  # measured p = 0.21
        assert stats.kstest(w, vmf_s2_w_cdf(3.4)).pvalue < LEVEL  # wrong kappa: measured p = 2e-8
        # the direction orthogonal to mu is uniform: angle in the plane spanned by e1 and mu x e1
        e1 = unit(np.array([1.0, -1.0, 0.0]))
        e2 = np.cross(mu, e1)
        ang = np.mod(np.arctan2(x @ e2, x @ e1), 2 * np.pi)
        assert stats.kstest(ang, stats.uniform(0, 2 * np.pi).cdf).pvalue > LEVEL  # measured p = 0.28

    def test_vmf_s3(self):
        mu = unit([1.0, 2.0, -1.0, 0.5])
        kappa = 2.0

        def w_cdf_for(k):
            # P(w <= c) = int_{-1}^c e^{k t} sqrt(1 - t^2) dt / norm; with t = cos(th) the integrand
            # e^{k cos th} sin^2 th is entire, so 48 Gauss-Legendre nodes on [arccos c, pi] are exact to
            # rounding (measured within 3e-12 of adaptive quad at every sample, p-values equal to 10 digits)
            x, g = np.polynomial.legendre.leggauss(48)

            def upper(a):  # int_a^pi e^{k cos th} sin^2 th d th for an array of lower limits a
                a = np.asarray(a, dtype=float)[..., None]
                th = a + (np.pi - a) * (x + 1) / 2
                return (np.pi - a[..., 0]) / 2 * ((np.exp(k * np.cos(th)) * np.sin(th) ** 2) @ g)

            norm = upper(0.0)
            return lambda ws: upper(np.arccos(np.clip(ws, -1.0, 1.0))) / norm

        w = VonMisesFisher(mu, kappa).sample(3000, rng=24) @ mu
        assert stats.kstest(w, w_cdf_for(kappa)).pvalue > LEVEL  # measured p = 0.40
        assert stats.kstest(w, w_cdf_for(2.5)).pvalue < LEVEL  # wrong kappa: measured p = 7e-14

    def test_gaussian_mixture(self):
        gm = GaussianMixture([[0.0, 1.0], [2.0, -1.0]], [[[1.0, 0.6], [0.6, 0.5]], [[0.3, 0.0], [0.0, 0.2]]], [0.3, 0.7])
        x = gm.sample(4000, rng=25)

        def projected_cdf(weights, u):
            # u.x for component k is N(u.m_k, u^T S_k u): exact marginal of the mixture
            return lambda t: sum(w * stats.norm.cdf(t, gm.means[k] @ u, np.sqrt(u @ gm.covariances[k] @ u))
                                 for k, w in enumerate(weights))

        directions = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), unit([1.0, 1.0])]
        pvals = [stats.kstest(x @ u, projected_cdf([0.3, 0.7], u)).pvalue for u in directions]
        assert min(pvals) > LEVEL  # measured p = 0.86, 0.53, 0.88
        # wrong weights rejected: measured p = 8e-23
        assert stats.kstest(x[:, 0], projected_cdf([0.4, 0.6], directions[0])).pvalue < LEVEL

    def test_manifold_sample_routes_density(self):
        d = VonMises(0.5, 1.0)
        np.testing.assert_array_equal(Circle().sample(10, density=d, rng=4), d.sample(10, rng=4))
        u = Uniform(Sphere(2))
        np.testing.assert_array_equal(u.sample(10, rng=4), Sphere(2).sample(10, rng=4))

    def test_vmf_kappa_zero_is_uniform(self):
        x = VonMisesFisher(unit([1, 2, 3]), 0.0).sample(3000, rng=27)
        assert stats.kstest(x[:, 2], stats.uniform(-1, 2).cdf).pvalue > LEVEL  # Archimedes; measured p = 0.31


# ------------------------------------------------------------- grad log pdf
H = 1e-5  # central-difference step: truncation ~ h^2 |f'''| / 6 ~ 1e-10 * scale, rounding ~ eps |f| / h ~ 1e-11


def grad_log_error(density, x, rng):
    """Max |central difference - <grad log p, v>| over random unit tangents v."""
    g = density.grad_log_pdf(x)
    man = density.manifold
    w = rng.standard_normal(x.shape)
    v = man.project_tangent(x, w)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    if isinstance(man, Euclidean):
        fd = (density.log_pdf(x + H * v) - density.log_pdf(x - H * v)) / (2 * H)
    else:
        # tangency: <g, x> = 0 to rounding
        np.testing.assert_allclose(np.sum(g * x, axis=1), 0.0, atol=10 * EPS * (1 + np.abs(g).max()))
        fd = fd_tangent_derivative(density.log_pdf, x, v, H)
    return np.max(np.abs(fd - np.sum(g * v, axis=1)))


class TestGradLogPdf:
    @pytest.mark.parametrize("density", [VonMises(1.0, 3.0), CosineDensity(0.5, 0.4), CosineDensity(-0.9),
                                         VonMisesFisher(unit([1.0, 2.0, 2.0]), 5.0),
                                         VonMisesFisher(unit([1.0, 0.0, 2.0, 2.0, 1.0]), 2.0),
                                         Uniform(Sphere(2)), GaussianMixture.fna_three_modes(),
                                         GaussianMixture([[0.0, 1.0], [2.0, -1.0]], [[[1.0, 0.6], [0.6, 0.5]], [[0.3, 0.0], [0.0, 0.2]]],
                                                         [0.3, 0.7])],
                             ids=repr)
    def test_matches_finite_differences(self, density, rng):
        man = density.manifold
        if isinstance(man, Euclidean):
            x = density.sample(50, rng=rng)
        else:
            x = man.sample(50, rng=rng)
        err = grad_log_error(density, x, rng)
        # bound: h^2/6 |(log p)'''| + eps |log p| / h; measured max 4.9e-10 (cosine a = -0.9, whose
        # log-derivatives are largest near its minimum), others 4e-11..1.3e-10: 10x margin
        assert err <= 5e-9

    def test_wrong_gradient_detected(self, rng):
        # negative control: the gradient of a different law fails the same comparison
        x = Circle().sample(50, rng=rng)
        v = Circle().project_tangent(x, rng.standard_normal(x.shape))
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        fd = fd_tangent_derivative(VonMises(1.0, 3.0).log_pdf, x, v, H)
        wrong = np.sum(VonMises(1.0, 3.3).grad_log_pdf(x) * v, axis=1)
        assert np.max(np.abs(fd - wrong)) > 1e6 * 5e-9  # measured 0.30


# ------------------------------------------------------------------ backends
@pytest.mark.parametrize("density", [VonMises(1.0, 3.0), CosineDensity(0.5, 0.4), Uniform(Circle()),
                                     VonMisesFisher(unit([1.0, 2.0, 2.0]), 5.0), Uniform(Sphere(2)),
                                     GaussianMixture.fna_three_modes()], ids=repr)
def test_backend_neutral(density, xp):
    man = density.manifold
    x = density.sample(20, rng=3) if isinstance(man, Euclidean) else man.sample(20, rng=3)
    xa = xp.asarray(x)
    for name in ("pdf", "log_pdf", "grad_log_pdf"):
        out = getattr(density, name)(xa)
        assert type(out) is type(xa)
        # exact algebra across backends: rtol 4 sqrt(eps), atol for entries that vanish
        np.testing.assert_allclose(to_numpy(out), getattr(density, name)(x), rtol=4 * np.sqrt(EPS), atol=1e-14)


# ------------------------------------------------------------------ bad input
class TestBadInput:
    def test_kappa(self):
        with pytest.raises(InputError, match=r"kappa must be in \[0.0, inf\)"):
            VonMises(0.0, -1.0)
        with pytest.raises(InputError, match="kappa"):
            VonMisesFisher([0, 0, 1.0], -0.1)
        with pytest.raises(InputError, match="kappa must be a finite real"):
            VonMises(0.0, float("nan"))

    def test_amplitude(self):
        for a in (1.0, -1.0, 1.5):
            with pytest.raises(InputError, match=r"amplitude must be in \(-1.0, 1.0\)"):
                CosineDensity(a)

    def test_mu(self):
        with pytest.raises(InputError, match=r"mu must be a unit vector"):
            VonMisesFisher([1.0, 1.0, 0.0], 1.0)
        with pytest.raises(InputError, match="mu must be a finite 1-D unit vector of length >= 2"):
            VonMisesFisher([1.0], 1.0)

    def test_covariances(self):
        with pytest.raises(InputError, match="positive definite"):
            GaussianMixture([[0.0, 0.0]], [[[1.0, 2.0], [2.0, 1.0]]])
        with pytest.raises(InputError, match="positive definite"):
            GaussianMixture([[0.0, 0.0]], 0.0)
        with pytest.raises(InputError, match="symmetric"):
            GaussianMixture([[0.0, 0.0]], [[[1.0, 0.1], [0.0, 1.0]]])
        with pytest.raises(InputError, match=r"covariances must be a scalar or have shape"):
            GaussianMixture([[0.0, 0.0]], np.ones((2, 2, 2)))

    def test_weights(self):
        with pytest.raises(InputError, match=r"weights must sum to 1 \(within 1e-12\)"):
            GaussianMixture([[0.0], [1.0]], 1.0, [0.5, 0.49])
        with pytest.raises(InputError, match="weights must be >= 0"):
            GaussianMixture([[0.0], [1.0]], 1.0, [1.5, -0.5])
        with pytest.raises(InputError, match=r"weights must be a finite array of shape \(2,\)"):
            GaussianMixture([[0.0], [1.0]], 1.0, [1.0])
        GaussianMixture([[0.0], [1.0]], 1.0, [1.0, 0.0])  # a zero weight is allowed

    def test_n_and_manifold(self):
        with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
            VonMises().sample(0)
        with pytest.raises(InputError, match="manifold must have finite volume"):
            Uniform(Euclidean(2))
        with pytest.raises(InputError, match=r"x must be an array of shape \(n, 3\)"):
            VonMisesFisher([0, 0, 1.0]).pdf(np.ones((4, 2)))


def test_mixture_sample_with_labels_matches_sample():
    from manifolds import GaussianMixture

    mix = GaussianMixture.fna_three_modes()
    x, labels = mix.sample_with_labels(500, rng=3)
    np.testing.assert_array_equal(x, mix.sample(500, rng=3))  # same draws, same order
    assert labels.shape == (500,) and set(np.unique(labels)) <= {0, 1, 2}
    # every point is closest to its own component's mean (means 3.46 apart, sd 0.5: all but ~1e-4)
    nearest = np.argmin(((x[:, None, :] - mix.means[None]) ** 2).sum(-1), axis=1)
    assert np.mean(nearest == labels) > 0.99
    with pytest.raises(InputError, match="n"):
        mix.sample_with_labels(0)
