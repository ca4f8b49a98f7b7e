"""Tests for spectral.circulant: the FFT spectrum of a circulant Markov matrix against dense
``eigvalsh`` and direct cosine sums, its ordering, components by gcd, backends and bad input.

Tolerances (kind (a), exact algebra): ``eigvalsh`` is accurate to ``c n eps``; the FFT to
``eps log2(n)`` relative to the row sum. Measured errors are quoted next to each bound.
"""

import warnings

import numpy as np
import pytest

from manifolds import Circle
from spectral import (
    DisconnectedGraphError,
    DisconnectedGraphWarning,
    circulant_spectrum,
    markov_spectrum,
)
from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()



@pytest.mark.parametrize("alpha, n, scale", [(1.2, 512, 0.02), (2.0, 300, 0.1), (0.7, 257, 0.05)])
def test_circulant_matches_dense_eigvalsh(alpha, n, scale, fna_on):
    grid = CIRCLE.grid(n)
    C, _ = fna_on(grid, alpha=alpha, scale=scale)
    spec = markov_spectrum(C, grid=True, vectors=True)
    assert spec.method == "circulant"
    d = C.sum(axis=1)
    S = C / np.sqrt(np.outer(d, d))
    ref = np.sort(np.linalg.eigvalsh(S))[::-1]  # independent: LAPACK on the full matrix
    # n eps bound for eigvalsh plus FFT round-off (log n eps); measured <= 3e-15
    assert np.max(np.abs(to_numpy(spec.eigenvalues) - ref)) <= 10 * n * EPS
    # the Fourier eigenvectors are eigenvectors of A (checked here, independently of the residual field)
    A = C / d[:, None]
    psi, eta = to_numpy(spec.psi), to_numpy(spec.eigenvalues)
    assert np.max(np.linalg.norm(A @ psi - psi * eta, axis=0) / np.linalg.norm(psi, axis=0)) <= 10 * n * EPS
    assert spec.residual <= 10 * n * EPS
    # multiplicities: frequencies m and n - m share an eigenvalue (cosine and sine)
    freqs = to_numpy(spec.frequencies)
    assert freqs[0] == 0 and sorted(freqs[1:3]) == [1, 1]


def test_circulant_large_n_against_direct_cosine_sums():
    n = 10**6
    theta = 2 * np.pi * np.arange(n) / n
    dist = np.minimum(theta, 2 * np.pi - theta)
    row = (1.0 + dist / 1e-4) ** -2.2
    spec = circulant_spectrum(row, 9)
    eta = to_numpy(spec.eigenvalues)
    # independent reference: direct cosine sums for m = 1..4 (compensated by math.fsum)
    j = np.arange(n)
    ref = [1.0] + [
        v for m in range(1, 5) for v in [np.dot(row, np.cos(2 * np.pi * ((j * m) % n) / n)) / row.sum()] * 2
    ]
    # FFT round-off ~ eps log2(n) relative to sum(row); dot-product reference ~ sqrt(n) eps
    assert np.max(np.abs(eta - np.array(ref))) <= 1e3 * EPS
    assert spec.n_components == 1
    # negative control: the uniform-kernel value 1 for every mode is far from this
    assert np.max(np.abs(eta[1:] - 1.0)) > 1e-5


def test_circulant_refuses_non_circulant(random_circle):
    _, C, _ = random_circle
    with pytest.raises(InputError, match="circulant"):
        markov_spectrum(C, grid=True)


def test_circulant_components_by_gcd():
    # first row supported on multiples of 3 in Z_12: 3 components, eigenvalue 1 three times
    row = np.zeros(12)
    row[[0, 3, 9]] = [2.0, 1.0, 1.0]
    with pytest.warns(DisconnectedGraphWarning, match="3 connected components"):
        spec = circulant_spectrum(row)
    assert spec.n_components == 3
    assert np.sum(np.abs(to_numpy(spec.eigenvalues) - 1.0) <= 10 * EPS) == 3
    with pytest.raises(DisconnectedGraphError):
        circulant_spectrum(row, strict=True)


def _full_order_reference(row, k):
    """Brute force: the whole spectrum listed as m = 0, (1 cos, 1 sin), ..., n/2, stable-sorted descending."""
    n = row.size
    half = np.fft.rfft(row).real / row.sum()  # the values themselves are tested against eigvalsh above
    m = [0] + [v for j in range(1, (n - 1) // 2 + 1) for v in (j, j)] + ([n // 2] if n % 2 == 0 else [])
    m = np.array(m)
    order = np.argsort(-half[m], kind="stable")[:k]
    return half[m][order], m[order]


@pytest.mark.parametrize("n", [2, 3, 8, 9, 64, 101])
def test_circulant_top_k_equals_stable_full_sort(rng, n):
    """argpartition on the half spectrum gives exactly the stable full sort, ties included."""
    rows = {
        "random": rng.uniform(0.0, 1.0, n),
        "all ones": np.ones(n),  # eta = 1, 0, 0, ...: every k cuts through a tie
        "integer": rng.integers(0, 3, n).astype(float),  # repeated values
    }
    cut_through_tie = False
    for name, r in rows.items():
        row = r + np.roll(r[::-1], 1)  # even: c_j = c_(n-j)
        if row.sum() == 0:
            continue
        full_vals, _ = _full_order_reference(row, None)
        for k in sorted({1, 2, n // 2, n // 2 + 1, n - 1, n} & set(range(1, n + 1))) + [None]:
            with warnings.catch_warnings():  # integer rows may be disconnected (c_1 = 0): not under test here
                warnings.simplefilter("ignore", DisconnectedGraphWarning)
                spec = circulant_spectrum(row, k)
            ref_vals, ref_m = _full_order_reference(row, k)
            # (a) exact: the same values, only their order is under test
            assert np.array_equal(to_numpy(spec.eigenvalues), ref_vals), (name, k)
            assert np.array_equal(to_numpy(spec.frequencies), ref_m), (name, k)
            if k is not None and k < n and full_vals[k - 1] == full_vals[k]:
                cut_through_tie = True
    assert cut_through_tie or n == 2  # the tie-breaking branch was exercised (n = 2: eta = 1, 0, no tie)
    # negative control: the reference tells orders apart (ties broken by descending m differ)
    if n >= 4:
        row = np.ones(n)
        _, ref_m = _full_order_reference(row, n)
        assert not np.array_equal(ref_m[1:], np.sort(ref_m[1:])[::-1])


@pytest.mark.parametrize("n", [10, 11])
def test_circulant_evenness_checked_at_every_position(n):
    row = np.ones(n)
    for j in range(1, n):
        if 2 * j == n:
            continue  # c_(n/2) is its own mirror
        bad = row.copy()
        bad[j] += 1e-3
        with pytest.raises(InputError, match="even"):
            circulant_spectrum(bad)
    circulant_spectrum(row)  # negative control: the even row passes


@pytest.mark.parametrize(
    "row, match",
    [
        (np.array([[1.0, 0.5]]), "1-D"),
        (np.array([1.0, 0.5, 0.2]), "even"),
        (np.array([1.0, np.nan, 1.0]), "finite"),
        (np.array([1.0, -0.5, -0.5]), "nonnegative"),
        (np.zeros(4), "positive sum"),
    ],
)
def test_circulant_bad_input(row, match):
    with pytest.raises(InputError, match=match):
        circulant_spectrum(row)


def test_circulant_bad_k():
    with pytest.raises(InputError, match=r"k must be an integer in \[1, 3\]"):
        circulant_spectrum(np.array([1.0, 0.5, 0.5]), 4)


def test_circulant_backend_neutral(xp, fna_on):
    C, _ = fna_on(CIRCLE.grid(128), scale=0.1)
    ref = circulant_spectrum(C[0], 10, vectors=True)
    spec = circulant_spectrum(xp.asarray(C[0]), 10, vectors=True)
    # (a) parity across backends: 4 sqrt(eps) relative (the default), absolute for psi entries near 0
    assert_close(spec.eigenvalues, xp.asarray(to_numpy(ref.eigenvalues)), atol=4 * np.sqrt(EPS))
    assert_close(spec.psi, xp.asarray(to_numpy(ref.psi)), atol=4 * np.sqrt(EPS))
