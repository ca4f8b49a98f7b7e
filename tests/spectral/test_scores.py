"""Tests of spectral.scores: the one-pass tiled scan, checked row sums, the row-stochastic check."""

import math

import numpy as np
import pytest

from spectral.scores import (
    TILE_HOST,
    check_row_stochastic,
    check_scores,
    checked_row_sums,
    row_stochastic_tolerance,
    scan_scores,
    symmetry_defect,
    symmetry_tolerance,
)
from spectral.testing import assert_close
from spectral.floor.validation import InputError


@pytest.mark.parametrize("n", [1, 127, 128, 129, 300])  # around the host tile side (128)
def test_tiled_symmetry_scan_equals_direct_formula(xp, rng, n):
    """The one-pass tiled scan gives exactly max|C - C^T| / max|C|, min(C) and max(C)."""
    assert TILE_HOST == 128  # the sizes above straddle it
    X = rng.uniform(0.0, 1.0, size=(n, n))
    C = X + X.T
    C[n - 1, 0] += 1e-3  # asymmetry only in the last (partial) tile row, first tile column
    ref = np.max(np.abs(C - C.T)) / np.max(np.abs(C))  # direct n x n formula
    _, stats = scan_scores(xp.asarray(C), symmetry=True)
    # (a) exact: the same entrywise differences and a max, no rounding in between
    assert stats.defect == ref
    assert float(stats.cmin) == C.min() and float(stats.cmax) == C.max()
    assert symmetry_defect(xp.asarray(C)) == ref
    if n > 1:
        assert ref > 0  # negative control: the planted asymmetry is seen
    S = X + X.T
    assert scan_scores(xp.asarray(S), symmetry=True)[1].defect == 0.0


def test_row_stochastic_check_tolerance_from_dtype(xp):
    A = np.array([[0.5, 0.5], [0.25, 0.75]])
    assert check_row_stochastic(xp.asarray(A)) is not None
    tol = row_stochastic_tolerance(np.float64)
    assert tol == 4 * math.sqrt(np.finfo(np.float64).eps)
    # just inside and just outside the tolerance (negative control)
    check_row_stochastic(xp.asarray(A * (1 + 0.5 * tol)))
    with pytest.raises(InputError, match="row-stochastic"):
        check_row_stochastic(xp.asarray(A * (1 + 2 * tol)))
    # float32: 4 sqrt(eps32) = 1.4e-3 accepts float32 round-off of a normalised row
    assert row_stochastic_tolerance(np.float32) == pytest.approx(4 * math.sqrt(np.finfo(np.float32).eps))
    check_row_stochastic(xp.asarray((A * (1 + 1e-4)).astype(np.float32)))


@pytest.mark.parametrize(
    "A, match",
    [
        (np.ones((2, 3)) / 3, "square"),
        (np.array([[0.5, 0.5], [np.nan, 1.0]]), "finite"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), "nonnegative"),
        (np.array([[1, 0], [0, 1]]), "floating"),
        (np.array([[0.5, 0.4], [0.5, 0.5]]), "row-stochastic"),
    ],
)
def test_row_stochastic_bad(A, match):
    with pytest.raises(InputError, match=match):
        check_row_stochastic(A, name="A")


def test_checked_row_sums_names_the_row(xp):
    C = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 1.0]])
    with pytest.raises(InputError, match="first at row 1"):
        checked_row_sums(xp.asarray(C))
    with pytest.raises(InputError, match="first at column 1"):
        checked_row_sums(xp.asarray(C[:2].T @ np.diag([1.0, 0.0])), axis=0, what="column")
    assert_close(checked_row_sums(xp.asarray(C[[0, 2]])), xp.asarray(np.array([3.0, 4.0])))


def test_check_scores_and_tolerance():
    assert check_scores(np.ones((2, 3))) is np
    assert symmetry_tolerance(np.float32) == pytest.approx(4 * math.sqrt(np.finfo(np.float32).eps))
    with pytest.raises(InputError, match="square"):
        check_scores(np.ones((2, 3)), square=True)
