"""verify.core.reduce: NaN-keeping max/min and counts of bad entries (a NaN never vanishes in a reduction)."""

import math

import numpy as np
import pytest

from verify.core.reduce import count_bad, least, share, worst

NAN = float("nan")


@pytest.mark.parametrize("values", [(0.0, NAN), (NAN, 0.0), (1.0, NAN, 2.0), (np.float64(1.0), np.float64(NAN)),
                                    (math.inf, NAN), (-math.inf, NAN), (3, NAN)])
def test_a_nan_anywhere_is_kept(values):
    assert math.isnan(worst(*values)) and math.isnan(least(*values))
    assert math.isnan(worst(values)) and math.isnan(least(iter(values)))  # one iterable, like max()


def test_python_max_and_min_drop_a_nan_that_comes_second():
    # the bug the helpers exist for (documented, so a change of Python's behaviour would show here)
    assert max(0.0, NAN) == 0.0 and min(math.inf, NAN) == math.inf


@pytest.mark.parametrize("values", [(0.0, 1e-300, 2.5), (3, 1, 2), (np.float64(0.5), 0.25), (-math.inf, 1.0),
                                    (1.0, math.inf), (2, 2.0), (True, 0)])
def test_without_a_nan_they_are_max_and_min_exactly(values):
    for got, want in ((worst(*values), max(*values)), (least(*values), min(*values)),
                      (worst(list(values)), max(values)), (least(list(values)), min(values))):
        assert got == want and type(got) is type(want)


def test_generator_default_and_empty():
    assert worst((abs(x - 1) for x in (0.5, 3.0)), default=0.0) == 2.0
    assert worst([], default=0.0) == 0.0 and least((), default=math.inf) == math.inf
    with pytest.raises(ValueError, match="default"):
        worst([])


def test_arrays_must_be_reduced_first():
    with pytest.raises(TypeError, match="np.max"):
        worst(np.ones(3), 1.0)
    assert worst(np.float64(2.0), np.asarray(3.0)) == 3.0  # 0-d arrays are scalars


def test_complex_nan_is_kept():
    assert math.isnan(worst(complex(0.0, NAN), complex(1.0, 0.0)))


@pytest.mark.parametrize("values, ok, want", [
    ([0.1, NAN, 3.0], lambda v: v <= 1.0, 2),    # the NaN fails the condition and is counted once
    ([0.1, NAN, 3.0], lambda v: ~(v > 1.0), 2),  # the NaN meets this condition and is counted all the same
    ([0.1, math.inf, -math.inf], lambda v: v < 10.0, 2),
    ([0.1, 0.2], lambda v: v <= 1.0, 0),
    ([[1.0, NAN], [2.0, 3.0]], lambda v: v > 0, 1),
])
def test_count_bad_counts_non_finite_entries(values, ok, want):
    v = np.asarray(values)
    assert count_bad(v, ok(v)) == want


def test_the_plain_count_misses_a_nan():
    err = np.array([0.1, NAN, 3.0])
    assert int(np.sum(err > 1.0)) == 1 and count_bad(err, err <= 1.0) == 2


def test_count_bad_integers_and_namespaces():
    assert count_bad(np.array([1, 2, 3]), np.array([True, False, True])) == 1
    assert count_bad(np.array([1.0, NAN]), True) == 1  # a scalar condition broadcasts
    xps = pytest.importorskip("array_api_strict")
    a = xps.asarray([1.0, NAN, 5.0])
    assert count_bad(a, a < 2.0) == 2


def test_share_is_the_mean_or_nan():
    a, b = np.array([2.0, 3.0, 0.5, 4.0]), np.array([1.0, 1.0, 1.0, 1.0])
    assert share(a > b, a, b) == float(np.mean(a > b)) == 0.75
    c = a.copy()
    c[2] = NAN
    assert math.isnan(share(c > b, c, b))  # not 0.75 (NaN > 1 is false)
    c[2] = math.inf
    assert share(c > b, c, b) == 1.0  # an infinity compares as a value
    e = np.array([0.0, 3.0, NAN])
    assert math.isnan(share(e == 0, e))
    assert share(np.array([True, False]), np.array([1, 2])) == 0.5  # integer values are finite
