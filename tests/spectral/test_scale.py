"""Tests for spectral.scale: suggest_scale (flattest window of the kernel-sum log-log slope) and
max_slope_bandwidth (the steepest secant: Berry, Giannakis & Harlim's criterion, pydiffmap's 'bgh').

Oracles: on an equispaced circle grid with geodesic distances the kernel sum is a
theta function whose log-log slope is exactly 1/2 (up to exponentially small
Poisson-summation terms) in the linear regime; on random points the estimated
dimension approaches the true one from below as n grows (finite-n bias measured,
quoted at each tolerance).
"""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from manifolds import Circle, Sphere
from spectral.floor.backend import to_numpy
from spectral import knn_distances
from spectral.scale import max_slope_bandwidth, suggest_scale
from spectral.floor.validation import InputError


@pytest.fixture(scope="module")
def circle_points():
    return Circle().sample(600, rng=1)


@pytest.fixture(scope="module")
def circle_chordal(circle_points):
    """The chordal distances of the 600 circle points and their heat-kernel scale, computed once (0.35 s)."""
    x = circle_points
    D = cdist(x, x)
    return D, suggest_scale(D)


def test_recovers_dimension_one_on_circle(circle_points, circle_chordal):
    x = circle_points
    _, chordal = circle_chordal
    geodesic = suggest_scale(to_numpy(Circle().distance(x)))
    # measured 0.990 (chordal) and 0.994 (geodesic) at n = 600: tolerance 0.1 (finite-n bias ~0.01)
    assert abs(chordal.dimension - 1.0) <= 0.1
    assert abs(geodesic.dimension - 1.0) <= 0.1
    # negative control: the common max-slope recipe is off by 0.2 on the chordal circle
    assert abs(2 * chordal.slopes.max() - 1.0) > 0.15


def test_recovers_dimension_two_on_sphere_and_plane(rng):
    n = 600
    s2 = Sphere(2).sample(n, rng=2)
    plane = rng.standard_normal((n, 2))
    space = rng.standard_normal((n, 3))
    d_s2 = suggest_scale(cdist(s2, s2)).dimension
    d_plane = suggest_scale(cdist(plane, plane)).dimension
    d_space = suggest_scale(cdist(space, space)).dimension
    # measured: S^2 1.95, Gaussian R^2 1.83-1.84 over 3 seeds at n = 600 (density variation
    # shortens the linear regime; 1.87 at n = 1000): tolerances 0.1 and 0.25
    assert abs(d_s2 - 2.0) <= 0.1
    assert abs(d_plane - 2.0) <= 0.25
    # negative control: 3-D points are not mistaken for 2-D ones (measured 2.52-2.54, 3 seeds)
    assert d_space - 2.0 > 0.4


def test_grid_plateau_is_exactly_half():
    n = 600
    theta = 2 * np.pi * np.arange(n) / n
    d = np.abs(np.angle(np.exp(1j * (theta[:, None] - theta[None, :]))))
    res = suggest_scale(d)
    lo, hi = res.window
    inside = (res.scales >= lo) & (res.scales <= hi)
    # theta-function slope: corrections exp(-2 pi^2 eps / h^2) and erfc(pi / sqrt(2 eps)) are
    # < 1e-20 in the window found (eps / h^2 >= 2.4, eps < 1e-3), and np.gradient is exact on a
    # pure power law: 1e-6 leaves room for round-off only (measured 2e-15)
    assert np.max(np.abs(res.slopes[inside] - 0.5)) <= 1e-6
    h = 2 * np.pi / n
    assert h**2 < res.scale < 1.0  # many neighbours, still local
    # the sums are the kernel sums (direct evaluation at the chosen window's edges)
    k = int(np.argmax(inside))
    assert res.sums[k] == pytest.approx(np.exp(-(d**2) / (2 * res.scales[k])).sum(), rel=1e-12)


def test_gaussian_parametrisation_consistent(circle_chordal):
    D, heat = circle_chordal
    gauss = suggest_scale(D, kernel="gaussian")
    # same kernel family (s = sqrt(2 eps)): same dimension, slopes doubled in log s
    assert gauss.dimension == pytest.approx(heat.dimension, rel=1e-12)
    assert gauss.scale == pytest.approx(np.sqrt(2 * heat.scale), rel=1e-12)
    assert np.allclose(gauss.slopes, 2 * heat.slopes, rtol=1e-12, atol=0)
    assert gauss.kernel == "gaussian"


def test_backend_neutral(xp, circle_points):
    x = circle_points[:300]
    D = cdist(x, x)
    ref = suggest_scale(D)
    got = suggest_scale(xp.asarray(D))
    # (a) parity: same sums up to summation order, 4 sqrt(eps)
    assert np.max(np.abs(got.sums / ref.sums - 1)) <= 4 * np.sqrt(np.finfo(float).eps)
    assert got.scale == pytest.approx(ref.scale, rel=1e-12)


def test_user_scales(circle_points):
    x = circle_points[:300]
    D = cdist(x, x)
    scales = np.logspace(-4, 0, 33)
    res = suggest_scale(D, scales=scales)
    assert np.array_equal(res.scales, scales)
    assert abs(res.dimension - 1.0) <= 0.1


@pytest.mark.parametrize(
    "dist, kwargs, match",
    [
        (np.ones(4), {}, "2-D"),
        (np.array([[0.0, np.nan], [1.0, 0.0]]), {}, "finite"),
        (np.array([[0.0, -1.0], [1.0, 0.0]]), {}, "dist must be >= 0"),
        (np.zeros((3, 3)), {}, "positive distance"),
        (np.array([[0, 1j], [1j, 0]]), {}, "real array"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"kernel": "laplace"}, "kernel must be one of"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"scales": np.array([1.0, 0.5, 2.0])}, "increasing"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"scales": np.array([1.0, 2.0])}, "at least 3"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"per_decade": 1}, "per_decade"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"window_decades": 0}, "window_decades"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"scales": np.array([1.0, 1.1, 1.2])}, "no window"),
    ],
)
def test_bad_input(dist, kwargs, match):
    with pytest.raises(InputError, match=match):
        suggest_scale(dist, **kwargs)


def test_repr_is_short():
    t = 2 * np.pi * np.arange(300) / 300
    d = np.abs(np.angle(np.exp(1j * (t[:, None] - t[None, :]))))
    text = repr(suggest_scale(d))
    assert len(text) < 200 and text.startswith("ScaleSuggestion(scale=") and "kernel='heat'" in text, text


# ----------------------------------------------------------------------------- max_slope_bandwidth


def circle_grid(n):
    theta = 2 * np.pi * np.arange(n) / n
    geodesic = np.abs(np.angle(np.exp(1j * (theta[:, None] - theta[None, :]))))
    return np.column_stack([np.cos(theta), np.sin(theta)]), geodesic


def test_max_slope_circle_grid_is_exactly_one():
    x, geodesic = circle_grid(200)
    # all pairs, geodesic: the theta-function plateau is 1/2 up to exp(-2 pi^2 eps / h^2) and the sum
    # saturates at eps ~ pi^2 without overshooting, so the steepest secant is 1/2: measured 1 + 6e-15
    res = max_slope_bandwidth(geodesic)
    assert abs(res.dimension - 1.0) <= 1e-10
    assert res.method == "max-slope" and res.slopes.shape == (res.scales.size - 1,)
    assert res.window[0] < res.scale < res.window[1] and res.scale == pytest.approx(np.sqrt(np.prod(res.window)))
    # kNN chordal distances (10 neighbours): chords of arcs <= 10 h differ from arcs by (10 h)^2 / 24:
    # measured 1 + 2.9e-4 at n = 200
    d, _ = knn_distances(x, k=10)
    assert abs(max_slope_bandwidth(d).dimension - 1.0) <= 1e-3
    # negative control (documented): all chordal pairs see the global curvature, steepest slope 0.607
    assert max_slope_bandwidth(cdist(x, x)).dimension > 1.15


def test_max_slope_random_circle_and_sphere():
    # random points: the kNN sums approach d from below as k grows (finite k truncates the Gaussian);
    # measured S^1, n = 1000, k = 100: 0.967-0.976 over 5 seeds; S^2 all pairs, n = 600: 1.959-1.970 over
    # 5 seeds (kNN k = 300 at n = 2000: 1.93-1.94). Tolerance 0.1: the finite-n, finite-k bias
    d, _ = knn_distances(Circle().sample(1000, rng=1), k=100)
    assert abs(max_slope_bandwidth(d).dimension - 1.0) <= 0.1
    s2 = Sphere(2).sample(600, rng=2)
    d_s2 = max_slope_bandwidth(cdist(s2, s2)).dimension
    assert abs(d_s2 - 2.0) <= 0.1


def test_max_slope_plane_patch_line_and_cube():
    # lattices: a 40 x 40 patch of the plane, 1600 points on a segment, a 12^3 cube; kNN k = 100.
    # The patch's boundary lowers the slope by O(1 / L): measured 1.961 (L = 40; 1.948 at L = 30, 1.969 at
    # L = 50); segment 0.9995; cube 2.80 (a 12^3 lattice is mostly boundary)
    L = 40
    plane = np.stack(np.meshgrid(np.arange(L), np.arange(L)), -1).reshape(-1, 2) / L
    d_plane = max_slope_bandwidth(knn_distances(plane, k=100)[0]).dimension
    assert abs(d_plane - 2.0) <= 0.06
    line = np.column_stack([np.arange(1600) / 1600, np.zeros(1600)])
    assert abs(max_slope_bandwidth(knn_distances(line, k=100)[0]).dimension - 1.0) <= 0.06
    # negative control: a 3-D set is not mistaken for a 2-D one
    cube = np.stack(np.meshgrid(*[np.arange(12)] * 3), -1).reshape(-1, 3) / 12
    assert max_slope_bandwidth(knn_distances(cube, k=100)[0]).dimension > 2.5


def test_max_slope_sums_and_secants_are_the_definition():
    x, geodesic = circle_grid(60)
    d, _ = knn_distances(x, k=8)
    scales = np.logspace(-4, 0, 17)
    res = max_slope_bandwidth(d, scales=scales)
    T = np.array([np.exp(-(d**2) / (2 * e)).sum() for e in scales])  # direct evaluation
    assert np.max(np.abs(res.sums / T - 1.0)) <= 1e-12
    secants = np.diff(np.log(T)) / np.diff(np.log(scales))
    assert np.max(np.abs(res.slopes - secants)) <= 1e-10
    i = int(np.argmax(secants))
    assert res.window == (scales[i], scales[i + 1]) and res.dimension == pytest.approx(2 * secants[i], rel=1e-12)
    # kNN distances without a zero (keys other than the queries) do not underflow at tiny eps
    far = knn_distances(x[:5] + 10.0, k=3, y=x)[0]
    assert np.all(np.isfinite(max_slope_bandwidth(far, scales=np.logspace(-8, 4, 13)).slopes))


def test_max_slope_gaussian_parametrisation_and_backends(xp):
    x, _ = circle_grid(120)
    d, _ = knn_distances(x, k=20)
    heat = max_slope_bandwidth(d)
    gauss = max_slope_bandwidth(d, kernel="gaussian")
    assert gauss.dimension == pytest.approx(heat.dimension, rel=1e-12)
    assert gauss.scale == pytest.approx(np.sqrt(2 * heat.scale), rel=1e-12)
    assert np.allclose(gauss.slopes, 2 * heat.slopes, rtol=1e-12, atol=0)
    got = max_slope_bandwidth(xp.asarray(d))
    # (a) parity: sums on another namespace, 4 sqrt(eps)
    assert np.max(np.abs(got.sums / heat.sums - 1)) <= 4 * np.sqrt(np.finfo(float).eps)
    assert got.scale == heat.scale


@pytest.mark.parametrize(
    "dist, kwargs, match",
    [
        (np.ones(4), {}, "2-D"),
        (np.array([[0.0, np.inf], [1.0, 0.0]]), {}, "finite"),
        (np.zeros((3, 3)), {}, "positive distance"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"kernel": "laplace"}, "kernel must be one of"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"scales": np.array([1.0, 2.0])}, "at least 3"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), {"per_decade": 1}, "per_decade"),
    ],
)
def test_max_slope_bad_input(dist, kwargs, match):
    with pytest.raises(InputError, match=match):
        max_slope_bandwidth(dist, **kwargs)
