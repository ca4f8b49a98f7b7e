"""The point-array check of every manifold (manifolds.points.as_points); the distances are tests/spectral/test_distance.py."""

import numpy as np
import pytest

from manifolds import Circle, Sphere
from manifolds.densities import GaussianMixture, VonMises
from manifolds.points import as_points
from spectral.floor.validation import InputError


def test_lists_and_integers_become_float64():
    xp, x = as_points([[1, 0], [0, 1]], 2)
    assert xp is np and x.dtype == np.float64 and x.shape == (2, 2)
    xp, x = as_points(np.array([[1, 2, 3]], dtype=np.int32), 3)
    assert x.dtype == np.float64


def test_floating_dtype_kept(xp):
    x = xp.asarray(np.zeros((4, 3)), dtype=xp.float32)
    _, out = as_points(x, 3)
    assert out.dtype == xp.float32


def test_bad_input():
    with pytest.raises(InputError, match=r"x must be an array of shape \(n, 2\)"):
        as_points(np.zeros((3, 3)), 2)
    with pytest.raises(InputError, match="real array"):
        as_points(np.zeros((3, 2), dtype=complex), 2)


def test_a_boolean_array_is_refused():
    with pytest.raises(InputError, match=r"^x must be a real array .* got dtype bool"):  # True is not 1.0
        as_points(np.eye(2, dtype=bool), 2)


@pytest.mark.parametrize("make", [
    lambda n: Circle().grid(n),
    lambda n: Sphere(2).grid(n),
    lambda n: Sphere(2).sample(n, rng=0),
    lambda n: VonMises(0.0, 1.0).sample(n, rng=0),
    lambda n: VonMises(0.0, 1.0).quantile_grid(n),
    lambda n: GaussianMixture([[0.0, 1.0]], [[0.5, 0.5]]).sample_with_labels(n)[0],
], ids=["circle-grid", "sphere-grid", "sphere-sample", "density-sample", "quantile-grid", "mixture-labels"])
def test_point_makers_refuse_what_would_not_fit_before_allocating(make, refused_peak):
    """Circle().grid(10**12) was NumPy's MemoryError (7 TiB) past the memory guards: now the estimate, before."""
    peak = refused_peak(lambda: make(10**12), r"\(n = 1000000000000 points, ~\d+ bytes each\) needs an estimated .* "
                                              r"lower n \(at most \d+ fits now\)")
    assert peak < 1 << 20
    assert make(3).shape[0] == 3  # small requests are made as before
