"""Exact Laplace-Beltrami spectra: values, multiplicities (checked by an independent rank count)."""

import itertools
from math import comb

import numpy as np
import pytest

from manifolds import (
    Sphere,
    circle_eigenvalues,
    spectral_fractional_symbol,
    sphere_eigen_degrees,
    sphere_eigenvalues,
    sphere_multiplicity,
)
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError


def harmonic_dimension(D, l):
    """Independent count: nullity of the Laplacian from degree-l to degree-(l-2) polynomials in D variables."""
    src = [e for e in itertools.product(range(l + 1), repeat=D) if sum(e) == l]
    if l < 2:
        return len(src)
    dst = {e: i for i, e in enumerate(e for e in itertools.product(range(l - 1), repeat=D) if sum(e) == l - 2)}
    mat = np.zeros((len(dst), len(src)))
    for j, e in enumerate(src):
        for i in range(D):
            if e[i] >= 2:
                t = list(e)
                t[i] -= 2
                mat[dst[tuple(t)], j] += e[i] * (e[i] - 1)
    return len(src) - np.linalg.matrix_rank(mat)


@pytest.mark.parametrize("dim", [1, 2, 3, 4])
def test_multiplicity_is_dimension_of_harmonics(dim):
    for l in range(7):
        assert sphere_multiplicity(dim, l) == harmonic_dimension(dim + 1, l)


def test_known_multiplicities():
    assert [sphere_multiplicity(1, k) for k in range(5)] == [1, 2, 2, 2, 2]
    assert all(sphere_multiplicity(2, l) == 2 * l + 1 for l in range(20))


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_eigenvalues_sorted_with_multiplicity(dim):
    count = 60
    lam = sphere_eigenvalues(dim, count)
    deg = sphere_eigen_degrees(dim, count)
    assert lam.shape == deg.shape == (count,)
    assert np.all(np.diff(lam) >= 0)
    np.testing.assert_array_equal(lam, deg * (deg + dim - 1))
    for l in range(deg.max()):  # complete degrees only (the last may be cut by count)
        assert np.sum(deg == l) == sphere_multiplicity(dim, l)
    np.testing.assert_array_equal(Sphere(dim).laplacian_eigenvalues(count), lam)


def test_s2_eigenvalues_from_independent_list():
    ref = sorted(l * (l + 1) for l in range(12) for _ in range(2 * l + 1))[:100]
    np.testing.assert_array_equal(sphere_eigenvalues(2, 100), ref)
    ref1 = sorted([0] + [k * k for k in range(1, 40) for _ in range(2)])[:50]
    np.testing.assert_array_equal(circle_eigenvalues(50), ref1)


def test_weyl_count_s2():
    # independent: the number of eigenvalues <= L(L+1) is (L+1)^2 = dim of polys of degree <= L on S^2
    L = 9
    lam = sphere_eigenvalues(2, 200)
    assert np.sum(lam <= L * (L + 1)) == sum(comb(l + 2, 2) - (comb(l, 2) if l >= 2 else 0) for l in range(L + 1))


def test_fractional_symbol(xp):
    lam = np.array([0.0, 1.0, 4.0, 9.0, 12.0])
    out = spectral_fractional_symbol(xp.asarray(lam), 1.2)
    assert type(out) is type(xp.asarray(lam))
    # exact algebra: lambda^(alpha/2), rtol 4 sqrt(eps)
    np.testing.assert_allclose(to_numpy(out), lam**0.6, rtol=4 * np.sqrt(np.finfo(float).eps))
    np.testing.assert_allclose(spectral_fractional_symbol(lam, 2.0), lam)


def test_bad_input():
    with pytest.raises(InputError, match=r"count must be an integer in \[1, inf\)"):
        sphere_eigenvalues(2, 0)
    with pytest.raises(InputError, match=r"dim must be an integer in \[1, inf\)"):
        sphere_multiplicity(0, 1)
    with pytest.raises(InputError, match=r"l must be an integer in \[0, inf\)"):
        sphere_multiplicity(2, -1)
    with pytest.raises(InputError, match=r"alpha must be in \(0.0, 2.0\]"):
        spectral_fractional_symbol(np.ones(3), 2.5)
    with pytest.raises(InputError, match="eigenvalues must be >= 0"):
        spectral_fractional_symbol(np.array([-1.0]), 1.0)
