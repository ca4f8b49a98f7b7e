"""Euclidean(dim): distances, the refusals (no grid, no spectrum, no uniform law), bad input."""

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from manifolds import Euclidean, GaussianMixture, VonMises
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError
from spectral.floor.memory import DenseMemoryError
from spectral.testing import assert_close

EPS = np.finfo(np.float64).eps


def test_distance_matches_cdist(rng):
    x, y = rng.standard_normal((30, 3)), rng.standard_normal((20, 3))
    d = Euclidean(3).distance(x, y)
    # independent implementation (scipy cdist); relative rounding of a 3-term sum
    np.testing.assert_allclose(d, cdist(x, y), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(np.diag(Euclidean(3).distance(x)), 0.0)


def test_distance_nearby_points_accurate():
    # points 1e-9 apart at distance 1e3 from the origin: coordinate differences keep full
    # relative accuracy, the expanded |x|^2 + |y|^2 - 2 x.y form does not
    x = np.array([[1000.0, 0.0]])
    y = x + np.array([[1e-9, 0.0]])
    ref = y[0, 0] - x[0, 0]  # exact difference of the represented numbers
    assert Euclidean(2).distance(x, y)[0, 0] == pytest.approx(ref, rel=4 * EPS)
    expanded = np.sqrt(max(np.sum(x * x) + np.sum(y * y) - 2 * np.sum(x * y), 0.0))
    assert abs(expanded - ref) > 1e-3 * ref  # negative control: the naive form is far off


def test_backend_neutral(xp, rng):
    x = rng.standard_normal((10, 2))
    d = Euclidean(2).distance(xp.asarray(x))
    assert type(d) is type(xp.asarray(x))
    np.testing.assert_allclose(to_numpy(d), Euclidean(2).distance(x), rtol=4 * np.sqrt(EPS))


def test_properties_and_refusals():
    e = Euclidean(2)
    assert (e.dim, e.ambient_dim, e.volume) == (2, 2, math.inf)
    assert e != Euclidean(3) and e == Euclidean(2)
    with pytest.raises(InputError, match="use sample"):
        e.grid(10)
    with pytest.raises(InputError, match="continuous spectrum"):
        e.laplacian_eigenvalues(5)
    with pytest.raises(InputError, match="density is required"):
        e.sample(5, rng=0)
    with pytest.raises(InputError, match="density must be defined on Euclidean"):
        e.sample(5, density=VonMises(), rng=0)
    x = e.sample(7, density=GaussianMixture.fna_three_modes(), rng=0)
    assert x.shape == (7, 2)
    np.testing.assert_array_equal(e.project_tangent(x, 2 * x), 2 * x)


def test_bad_input():
    with pytest.raises(InputError, match=r"dim must be an integer in \[1, inf\)"):
        Euclidean(0)
    with pytest.raises(InputError, match="finite"):
        Euclidean(2).check_points(np.array([[np.inf, 0.0]]))
    with pytest.raises(InputError, match=r"shape \(n, 2\)"):
        Euclidean(2).distance(np.ones((3, 1)))
    with pytest.raises(InputError, match=r"n must be an integer in \[1, inf\)"):
        Euclidean(2).grid(0)


# --------------------------------------------------------------------------- memory guard


def test_memory_estimate_bounds_the_traced_peak(xp, rng, estimate_and_peak):
    x, y = xp.asarray(rng.standard_normal((600, 5))), xp.asarray(rng.standard_normal((700, 5)))
    needed, peak = estimate_and_peak(lambda: Euclidean(5).distance(x, y, max_bytes=2**40))
    assert 600 * 700 * 8 <= peak <= needed, (peak, needed)
    if xp is np:  # the root is taken in place: one (n, m) array and a block
        assert peak < 600 * 700 * 8 + (5 << 20)


def test_in_place_root_is_bitwise_the_out_of_place_root(rng):
    from manifolds import pairwise_sq_distance

    x, y = rng.standard_normal((40, 3)), rng.standard_normal((30, 3))
    assert np.array_equal(Euclidean(3).distance(x, y), np.sqrt(pairwise_sq_distance(x, y)))


def test_memory_guard_tiny_limit(xp, rng):
    x = rng.standard_normal((30, 2))
    with pytest.raises(DenseMemoryError, match=r"distances on Euclidean\(2\) of shape \(30, 30\) needs an estimated "
                       r".* limit max_bytes = 0.977 KiB; compute it in row blocks, Euclidean\(2\)\.distance\(x\[i:j\], y\)"):
        Euclidean(2).distance(xp.asarray(x), max_bytes=1000)
    assert_close(Euclidean(2).distance(xp.asarray(x), max_bytes=2**30), xp.asarray(Euclidean(2).distance(x)), rtol=0.0)


def test_memory_guard_huge_request_refused_before_allocating(rng, monkeypatch, refused_peak):
    import spectral.floor.memory

    x = rng.standard_normal((200_000, 3))  # distances of 320 GB
    peak = refused_peak(lambda: Euclidean(3).distance(x), r"shape \(200000, 200000\) needs an estimated 29\d GiB")
    assert peak < 1 << 20
    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 16 << 20)
    assert refused_peak(lambda: Euclidean(3).distance(x[:2000]), r"over the memory available now: 16 MiB") < 1 << 20
