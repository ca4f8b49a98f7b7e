"""Tests of spectral.dot_product against explicit softmax loops, overflow safety, backends, bad input.
"""

import math

import numpy as np
import pytest

from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError

from spectral import dot_product_scores

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra: ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal



def _same_backend(xp, out, ref, rtol=RTOL, atol=0.0):
    """``out`` is in the input's namespace and equals the NumPy result ``ref``."""
    assert_close(out, xp.asarray(to_numpy(ref)), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- dot product


class TestDotProduct:
    def test_softmax_reference(self, rng):
        x = rng.standard_normal((7, 4))
        y = rng.standard_normal((9, 4))
        wq = rng.standard_normal((3, 4))
        wk = rng.standard_normal((3, 4))
        c = dot_product_scores(x, y=y, w_q=wq, w_k=wk)
        # reference: explicit loops, softmax with temperature sqrt(3)
        ref = np.empty((7, 9))
        for i in range(7):
            s = [float(np.dot(wq @ x[i], wk @ y[j])) / math.sqrt(3) for j in range(9)]
            e = [math.exp(v - max(s)) for v in s]
            ref[i] = np.array(e)
        assert_close(c, ref, rtol=64 * EPS64)
        assert np.all(np.max(c, axis=1) == 1.0)
        a = c / c.sum(axis=1, keepdims=True)
        assert_close(a, ref / ref.sum(axis=1, keepdims=True), rtol=64 * EPS64)

    def test_default_temperature_and_no_overflow(self, rng):
        x = 100 * rng.standard_normal((5, 16))  # q.k/4 up to ~1e5: exp would overflow without the shift
        c = dot_product_scores(x)
        assert np.all(np.isfinite(c)) and np.all(np.max(c, axis=1) == 1.0)
        c2 = dot_product_scores(x, temperature=4.0)  # sqrt(16)
        np.testing.assert_array_equal(c, c2)

    def test_bad(self, rng):
        x = rng.standard_normal((4, 3))
        with pytest.raises(InputError, match=r"temperature must be in \(0.0, inf\)"):
            dot_product_scores(x, temperature=0.0)
        with pytest.raises(InputError, match="w_q must have shape \\(d_out, 3\\)"):
            dot_product_scores(x, w_q=np.eye(4))
        with pytest.raises(InputError, match="same dimension"):
            dot_product_scores(x, w_q=np.eye(3), w_k=np.ones((2, 3)))
        bad = x.copy()
        bad[0, 0] = np.nan
        with pytest.raises(InputError, match="x must contain only finite values"):
            dot_product_scores(bad)
        with pytest.raises(InputError, match="y must contain only finite values"):
            dot_product_scores(x, y=bad)
        with pytest.raises(InputError, match="x must be a 2-d array"):
            dot_product_scores(x[0])
        with pytest.raises(InputError, match="scores q.k / temperature must be finite"):
            dot_product_scores(1e200 * x, temperature=1e-300)



def test_backends(xp, rng):
    x = rng.standard_normal((6, 3))
    w = rng.standard_normal((2, 3))
    xx, wx = xp.asarray(x), xp.asarray(w)
    _same_backend(xp, dot_product_scores(xx, w_q=wx, w_k=wx, temperature=0.9),
                  dot_product_scores(x, w_q=w, w_k=w, temperature=0.9))


# --------------------------------------------------------------------------- memory guard


def test_memory_estimate_bounds_the_traced_peak(xp, rng, estimate_and_peak):
    x, y, w = (xp.asarray(a) for a in (rng.standard_normal((600, 4)), rng.standard_normal((700, 4)),
                                        rng.standard_normal((3, 4))))
    # temperature 0.02: most scores underflow, so the flush path runs too
    needed, peak = estimate_and_peak(lambda: dot_product_scores(x, y=y, w_q=w, w_k=w, temperature=0.02,
                                                                              max_bytes=2**40))
    assert 600 * 700 * 8 <= peak <= needed, (peak, needed)
    if xp is np:  # in place: the scores and one boolean mask, not a second (n, m) array
        assert peak < 600 * 700 * 10


def test_in_place_path_is_bitwise_the_out_of_place_formula(rng):
    x, y = rng.standard_normal((50, 6)), rng.standard_normal((70, 6))
    s = (x @ y.T) / 0.05
    s = s - np.max(s, axis=1, keepdims=True)
    ref = np.exp(s)
    ref[ref < TINY] = 0.0
    assert np.array_equal(dot_product_scores(x, y=y, temperature=0.05), ref)


def test_memory_guard_tiny_limit(xp, rng):
    from spectral.floor.memory import DenseMemoryError

    x = rng.standard_normal((40, 3))
    with pytest.raises(DenseMemoryError, match=r"dot-product scores of shape \(40, 40\) needs an estimated .* "
                       r"limit max_bytes = 0.977 KiB; .*dot_product_scores\(x\[i:j\], y=x"):
        dot_product_scores(xp.asarray(x), max_bytes=1000)
    _same_backend(xp, dot_product_scores(xp.asarray(x), max_bytes=2**30), dot_product_scores(x), rtol=0.0)


def test_memory_guard_low_available_memory_refuses_before_allocating(rng, monkeypatch):
    import tracemalloc

    import spectral.floor.memory
    from spectral.floor.memory import DenseMemoryError

    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 64 << 20)
    x = rng.standard_normal((10_000, 8))  # scores of 800 MB
    tracemalloc.start()
    try:
        with pytest.raises(DenseMemoryError, match=r"shape \(10000, 10000\) needs an estimated 860 MiB, over the "
                           r"memory available now: 64 MiB"):
            dot_product_scores(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # the input check's mask at most
