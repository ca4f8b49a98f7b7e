"""The point-array check of every manifold (manifolds.points.as_points); the distances are tests/spectral/test_distance.py."""

import numpy as np
import pytest

from manifolds.points import as_points
from spectral.validation import InputError


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
