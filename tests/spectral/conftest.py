"""Fixtures shared by the spectral tests."""

import functools

import pytest

from manifolds import Circle
from spectral import fna_kernel, pairwise


@pytest.fixture(scope="session")
def random_circle():
    """300 random points on S^1, their FNA scores (alpha = 1.2, scale = 0.05) and the kernel."""
    circle = Circle()
    x = circle.sample(300, rng=7)
    kern = functools.partial(fna_kernel, alpha=1.2, scale=0.05, dim=1)
    return x, pairwise(x, kernel=kern, distance=circle.distance), kern


@pytest.fixture(scope="session")
def fna_on():
    """``fna_on(points, alpha=1.2, scale=0.05) -> (C, kernel)``: dense FNA scores on S^1 (geodesic)."""
    circle = Circle()

    def build(points, *, alpha=1.2, scale=0.05):
        kern = functools.partial(fna_kernel, alpha=alpha, scale=scale, dim=1)
        return pairwise(points, kernel=kern, distance=circle.distance), kern

    return build
