"""The toolkit's squared-distance routine and its row blocks (spectral.floor.distance, re-exported by manifolds)."""

import contextlib
import sys
import types
from fractions import Fraction

import numpy as np
import pytest

from spectral.floor.distance import BLOCK_ELEMENTS, pairwise_sq_distance, row_blocks
from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError


def _exact_sq_distances(x, y, sign=1.0):
    """Exact ``sum_k (x_ik - sign y_jk)^2`` of the float64 inputs in rational arithmetic, rounded once."""
    out = np.empty((x.shape[0], y.shape[0]))
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            out[i, j] = float(sum((Fraction(a) - Fraction(sign) * Fraction(b)) ** 2 for a, b in zip(x[i], y[j])))
    return out


def _nearly_coincident(rng, n=6, d=3, norm=1e3, spread=1e-9):
    base = rng.standard_normal(d)
    base *= norm / np.linalg.norm(base)
    return base + spread * rng.standard_normal((n, d))


def test_nearly_coincident_points_keep_full_relative_accuracy(rng):
    # points 1e-9 apart at norm 1e3: each coordinate difference is exact (Sterbenz), the squares and
    # the sum of d = 3 terms round 2d times, so the relative error is at most ~2d eps = 1.3e-15
    x = _nearly_coincident(rng)
    exact = _exact_sq_distances(x, x)
    d2 = pairwise_sq_distance(x)
    off = ~np.eye(x.shape[0], dtype=bool)
    assert np.all(exact[off] > 0)
    rel = np.abs(d2[off] - exact[off]) / exact[off]
    assert rel.max() <= 8 * np.finfo(float).eps, rel.max()
    assert np.all(np.diag(d2) == 0.0)


def test_gram_expansion_fails_where_the_routine_holds(rng):
    # the negative control: |x|^2 + |y|^2 - 2 x.y has absolute error ~ eps |x|^2 = 2e-10 >> d^2 ~ 1e-18
    x = _nearly_coincident(rng)
    exact = _exact_sq_distances(x, x)
    sq = np.sum(x * x, axis=1)
    gram = sq[:, None] + sq[None, :] - 2.0 * (x @ x.T)
    off = ~np.eye(x.shape[0], dtype=bool)
    assert np.max(np.abs(gram[off] - exact[off]) / exact[off]) > 1.0


def test_plus_sign_and_two_point_sets(rng):
    x = rng.standard_normal((5, 4))
    y = rng.standard_normal((7, 4))
    assert_close(pairwise_sq_distance(x, y), _exact_sq_distances(x, y))
    assert_close(pairwise_sq_distance(x, y, sign=-1.0), _exact_sq_distances(x, y, sign=-1.0))


def test_blocks_agree_with_one_block(rng):
    # more than BLOCK_ELEMENTS pairs: computed in row blocks, same values as the unblocked formula
    m = 600
    n = BLOCK_ELEMENTS // m + 50
    x = rng.standard_normal((n, 2))
    y = rng.standard_normal((m, 2))
    direct = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    assert_close(pairwise_sq_distance(x, y), direct, rtol=0, atol=0)


def test_backends(xp, rng):
    xh = _nearly_coincident(rng)
    d2 = pairwise_sq_distance(xp.asarray(xh))
    assert_close(d2, xp.asarray(pairwise_sq_distance(xh)))


def test_blocks_backends(xp, rng):
    # a last row block shorter than the others: array_api_strict refuses a slice that ends past the
    # axis, so the blocks must stop at n (the generic path, not NumPy's in-place one, on array_api_strict)
    m = 600
    n = BLOCK_ELEMENTS // m + 50
    x = rng.standard_normal((n, 2))
    y = rng.standard_normal((m, 2))
    assert_close(pairwise_sq_distance(xp.asarray(x), xp.asarray(y)), xp.asarray(pairwise_sq_distance(x, y)),
                 rtol=0, atol=0)


def test_bad_input():
    with pytest.raises(InputError, match="same number of columns"):
        pairwise_sq_distance(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(InputError, match="sign must be"):
        pairwise_sq_distance(np.zeros((3, 2)), sign=2.0)


def test_numpy_fast_path_equals_generic_sums_bitwise(rng):
    # the NumPy path (contiguous coordinates, in place) does the same operations as the generic one
    array_api_strict = pytest.importorskip("array_api_strict")
    x = rng.standard_normal((300, 5))
    y = rng.standard_normal((200, 5))
    for sign in (1.0, -1.0):
        fast = pairwise_sq_distance(x, y, sign=sign)
        generic = to_numpy(pairwise_sq_distance(array_api_strict.asarray(x), array_api_strict.asarray(y), sign=sign))
        assert np.array_equal(fast, generic)
    assert pairwise_sq_distance(np.zeros((3, 0)), np.zeros((2, 0))).shape == (3, 2)


def test_sq_distance_memory_estimate_bounds_the_traced_peak(xp, estimate_and_peak):
    rng = np.random.default_rng(3)
    x, y = (xp.asarray(rng.standard_normal((k, 4))) for k in (1200, 900))
    needed, peak = estimate_and_peak(lambda: pairwise_sq_distance(x, y, max_bytes=2**40))
    assert 1200 * 900 * 8 <= peak <= needed, (peak, needed)


def test_sq_distance_refused_before_allocating(refused_peak, monkeypatch):
    import spectral.floor.memory

    x = np.zeros((200_000, 3))  # a 320 GB result
    assert refused_peak(lambda: pairwise_sq_distance(x), r"squared distances of shape \(200000, 200000\) needs an "
                                                          r"estimated 298 GiB.*pairwise_sq_distance\(x\[i:j\], y\)") < 1 << 20
    assert refused_peak(lambda: pairwise_sq_distance(x[:100], max_bytes=80_000), r"over the limit max_bytes") < 1 << 20
    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 16 << 20)
    assert refused_peak(lambda: pairwise_sq_distance(x[:2000]), r"over the memory available now: 16 MiB") < 1 << 20
    assert pairwise_sq_distance(x[:100], max_bytes=2**30).shape == (100, 100)  # explicit limits are honoured


def test_old_names_still_import_from_manifolds():
    import manifolds
    import manifolds.points

    assert manifolds.pairwise_sq_distance is pairwise_sq_distance
    assert manifolds.points.pairwise_sq_distance is pairwise_sq_distance
    assert manifolds.points.row_blocks is row_blocks and manifolds.points.BLOCK_ELEMENTS == BLOCK_ELEMENTS


class _FakeCupyArray:
    """Just enough of a CuPy array for row_blocks: shape, dtype, device, slicing."""

    device = "cuda:0"

    def __init__(self, a):
        self.a = np.asarray(a)

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    device = property(lambda self: contextlib.nullcontext())  # cupy.cuda.Device is a context manager

    def __getitem__(self, key):
        return _FakeCupyArray(self.a[key])

    def __setitem__(self, key, value):
        self.a[key] = value.a


def test_row_blocks_allocates_as_cupy_allows(monkeypatch, rng):
    # cupy.empty(shape, dtype=...) has no device keyword (a TypeError on a CUDA device): the result of the
    # blocks is allocated without it, under the array's device context
    def empty(shape, dtype=None, **kwargs):
        if kwargs:
            raise TypeError(f"empty() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        return _FakeCupyArray(np.empty(shape, dtype=dtype))

    fake = types.ModuleType("cupy")
    fake.ndarray, fake.empty = _FakeCupyArray, empty
    monkeypatch.setitem(sys.modules, "cupy", fake)
    x, y = rng.standard_normal((300, 3)), rng.standard_normal((2000, 3))  # 2000 columns: blocks of 262 rows
    out = row_blocks(_FakeCupyArray(x), _FakeCupyArray(y),
                     lambda xb, yb: _FakeCupyArray(pairwise_sq_distance(xb.a, yb.a)))
    assert isinstance(out, _FakeCupyArray)
    assert np.array_equal(out.a, pairwise_sq_distance(x, y))


def test_row_blocks_keeps_the_namespace(xp, rng):
    x, y = rng.standard_normal((300, 3)), rng.standard_normal((2000, 3))
    out = row_blocks(xp.asarray(x), xp.asarray(y), lambda xb, yb: pairwise_sq_distance(xb, yb))
    assert_close(out, xp.asarray(pairwise_sq_distance(x, y)), rtol=0, atol=0)
