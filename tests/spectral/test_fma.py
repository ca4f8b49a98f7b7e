"""Tests of spectral.fma (FMA paper eqs. 3-6) against definition-based references and dense softmax.

References are independent of the code under test: the sets are built query by query from the
definitions (``manifolds.references.fma``: boolean windows and Python sets), eq. (4) / eq. (6) is summed
query by query over those sets, and dense softmax attention is written out here. Exact-algebra
tolerances: ``1e-12`` absolute on O(1) outputs (sums of <= a few hundred terms of size <= 10).
"""

import math

import numpy as np
import pytest

from spectral import (FMAGroups, fma_attention, fma_attention_2d, fma_depth, fma_groups, fma_groups_2d, fma_levels,
                      fma_levels_2d, fma_matrix, fma_matrix_2d)
from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError
from manifolds.references.fma import eq4_reference, hierarchy_1d, hierarchy_2d, python_sets_1d

ATOL = 1e-12


def _dense(q, k, v, causal=False):
    s = q @ k.T / math.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) @ v


def _random_weights(rng, r, depth, p, dim=1):
    shape = lambda g: (p, g) if dim == 1 else (p, g, g)  # noqa: E731
    pik = [rng.standard_normal(shape(r * 2 ** (lev - 1))) for lev in range(1, depth)]
    piv = [rng.standard_normal(shape(r * 2 ** (lev - 1))) for lev in range(1, depth)]
    return pik, piv


# ----------------------------------------------------------------------------------- structure


class TestStructure:
    @pytest.mark.parametrize("n,r,depth", [(1024, 16, 6), (1024, 32, 5), (1024, 64, 4), (100, 5, 5), (16, 16, 0),
                                           (17, 16, 1), (33, 16, 2), (1, 1, 0)])
    def test_depth(self, n, r, depth):
        assert fma_depth(n, r=r) == depth == math.ceil(math.log2(n / r))

    @pytest.mark.parametrize("n,r", [(64, 4), (96, 4), (100, 5), (40, 8), (16, 8), (24, 8), (7, 3), (9, 1)])
    def test_levels_equal_python_sets(self, n, r):
        levels = fma_levels(n, r=r)
        assert levels.dtype == np.int8 and levels.shape == (n, n)
        for i in range(n):
            sets = python_sets_1d(n, r, i)
            assert [set(np.flatnonzero(levels[i] == lev).tolist()) for lev in range(len(sets))] == sets
            assert set(range(n)) == set().union(*sets)  # cover

    @pytest.mark.parametrize("n,r", [(64, 4), (100, 5), (333, 7), (1024, 64)])
    def test_groups_equal_definition(self, n, r):
        h = hierarchy_1d(n, r)
        g = fma_groups(n, r=r)
        assert g.depth == h.depth and g.group_size == tuple(r * 2**lev for lev in range(h.depth - 1))
        for lev in range(1, h.depth):
            got = [sorted(int(x) for x in row if x >= 0) for row in g.groups[lev - 1]]
            assert got == h.groups[lev - 1]
        assert np.array_equal(g.near, np.count_nonzero(h.level == 0, axis=1))

    def test_groups_causal_keep_only_earlier_groups(self):
        n, r = 100, 5
        h = hierarchy_1d(n, r)
        g = fma_groups(n, r=r, causal=True)
        for lev in range(1, h.depth):
            members = h.group_members[lev - 1]
            for i in range(n):
                want = [m for m in h.groups[lev - 1][i] if members[m][-1] < i]
                assert sorted(int(x) for x in g.groups[lev - 1][i] if x >= 0) == want
        assert np.array_equal(g.near, [np.count_nonzero(np.flatnonzero(h.level[i] == 0) <= i) for i in range(n)])

    @pytest.mark.parametrize("w,r", [(14, 4), (13, 3), (16, 2), (24, 8)])
    def test_levels_2d_equal_definition(self, w, r):
        h = hierarchy_2d(w, r)
        assert np.array_equal(fma_levels_2d(w, r=r), h.level)
        g = fma_groups_2d(w, r=r)
        for lev in range(1, h.depth):
            assert [sorted(int(x) for x in row if x >= 0) for row in g.groups[lev - 1]] == h.groups[lev - 1]

    def test_counts_and_repr(self):
        g = fma_groups(1024, r=64)
        assert isinstance(g, FMAGroups)
        assert int(g.sources().max()) == 199 <= 3 * 64 + 3 * (g.depth - 1)
        assert g.stored_scores(4) == int((g.near + 4 * g.group_counts().sum(axis=1)).sum())
        pooled = g.stored_scores(4, downsample_queries=True)
        assert pooled == int(g.near.sum()) + 4 * sum(int((b >= 0).sum()) for b in g.block_groups)
        assert pooled <= 3 * 64 * 1024 + 6 * 4 * 1024 / 64
        assert "n=1024" in repr(g) and "L=4" in repr(g)
        assert "width=14" in repr(fma_groups_2d(14, r=4))


# ----------------------------------------------------------------------------------- attention


class TestAttention1D:
    @pytest.mark.parametrize("n,r,p", [(64, 4, 1), (100, 5, 2), (96, 4, 4), (24, 8, 1)])
    @pytest.mark.parametrize("normalisation", ["per-level", "joint"])
    @pytest.mark.parametrize("causal", [False, True])
    def test_equals_eq4_with_random_weights(self, n, r, p, normalisation, causal):
        rng = np.random.default_rng(n + r + p)
        h = hierarchy_1d(n, r)
        q, k, v = rng.standard_normal((3, n, 8))
        pik, piv = _random_weights(rng, r, h.depth, p)
        weights = list(zip(pik, piv))
        ref = eq4_reference(q, k, v, h, normalisation=normalisation, causal=causal, pik=pik, piv=piv)
        out = fma_attention(q, k, v, r=r, p=p, normalisation=normalisation, causal=causal, weights=weights)
        np.testing.assert_allclose(out, ref, rtol=0, atol=ATOL)
        a = fma_matrix(q, k, r=r, p=p, normalisation=normalisation, causal=causal, weights=weights)
        np.testing.assert_allclose(a @ v, ref, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("normalisation", ["per-level", "joint"])
    @pytest.mark.parametrize("causal", [False, True])
    @pytest.mark.parametrize("downsample", [False, True])
    def test_default_weights_equal_group_means(self, normalisation, causal, downsample):
        rng = np.random.default_rng(5)
        n, r = 100, 5
        h = hierarchy_1d(n, r)
        q, k, v = rng.standard_normal((3, n, 6))
        ref = eq4_reference(q, k, v, h, normalisation=normalisation, causal=causal, downsample_queries=downsample)
        out = fma_attention(q, k, v, r=r, normalisation=normalisation, causal=causal, downsample_queries=downsample)
        np.testing.assert_allclose(out, ref, rtol=0, atol=ATOL)

    def test_default_rank_p_is_subblock_means(self):
        rng = np.random.default_rng(6)
        n, r, p = 64, 4, 2
        q, k, v = rng.standard_normal((3, n, 6))
        sizes = [r * 2 ** (lev - 1) for lev in range(1, fma_depth(n, r=r))]
        means = [np.kron(np.eye(p), np.full((1, g // p), p / g)) for g in sizes]
        explicit = fma_attention(q, k, v, r=r, p=p, normalisation="per-level", weights=list(zip(means, means)))
        np.testing.assert_allclose(fma_attention(q, k, v, r=r, p=p), explicit, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("normalisation", ["per-level", "joint"])
    def test_n_at_most_2r_is_full_attention(self, normalisation):
        rng = np.random.default_rng(7)
        for n in (8, 12, 16):
            q, k, v = rng.standard_normal((3, n, 4))
            np.testing.assert_allclose(fma_attention(q, k, v, r=8, normalisation=normalisation), _dense(q, k, v),
                                       rtol=0, atol=ATOL)

    @pytest.mark.parametrize("causal", [False, True])
    def test_joint_exact_on_group_constant_keys_per_level_not(self, causal):
        rng = np.random.default_rng(8)
        n, r = 64, 4  # L = 4, largest group r 2^(L-2) = 16
        q, v = rng.standard_normal((2, n, 6))
        k = rng.standard_normal((n // 16, 6))[np.arange(n) // 16]
        ref = _dense(q, k, v, causal)
        np.testing.assert_allclose(fma_attention(q, k, v, r=r, normalisation="joint", causal=causal), ref,
                                   rtol=0, atol=ATOL)
        assert np.max(np.abs(fma_attention(q, k, v, r=r, causal=causal) - ref)) > 0.1

    def test_row_sums(self):
        rng = np.random.default_rng(9)
        n, r = 256, 8
        q, k = rng.standard_normal((2, n, 8))
        ones = np.ones((n, 1))
        depth = fma_depth(n, r=r)
        np.testing.assert_allclose(fma_attention(q, k, ones, r=r)[:, 0], depth, rtol=0, atol=ATOL)
        np.testing.assert_allclose(fma_matrix(q, k, r=r, normalisation="joint").sum(axis=1), 1.0, rtol=0, atol=ATOL)
        causal = fma_attention(q, k, ones, r=r, causal=True)[:, 0]
        g = fma_groups(n, r=r, causal=True)
        np.testing.assert_allclose(causal, 1 + (g.group_counts() > 0).sum(axis=1), rtol=0, atol=ATOL)

    def test_causal_ignores_the_future_exactly(self):
        rng = np.random.default_rng(10)
        n, r, cut = 100, 5, 41
        q, k, v = rng.standard_normal((3, n, 4))
        q2, k2, v2 = (x.copy() for x in (q, k, v))
        for x in (q2, k2, v2):
            x[cut + 1:] = rng.standard_normal((n - cut - 1, 4))
        for norm in ("per-level", "joint"):
            a = fma_attention(q, k, v, r=r, p=2, normalisation=norm, causal=True)
            b = fma_attention(q2, k2, v2, r=r, p=2, normalisation=norm, causal=True)
            assert np.array_equal(a[:cut + 1], b[:cut + 1])

    def test_float32_keeps_dtype(self):
        rng = np.random.default_rng(11)
        q, k, v = rng.standard_normal((3, 64, 8)).astype(np.float32)
        out = fma_attention(q, k, v, r=4, normalisation="joint")
        assert out.dtype == np.float32
        ref = fma_attention(*(x.astype(np.float64) for x in (q, k, v)), r=4, normalisation="joint")
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


_CHUNK_SIZES = [(100, 5, 1), (37, 3, 1), (96, 4, 2), (90, 7, 3)]
_CHUNK_MODES = [("per-level", False, False), ("joint", True, False), ("joint", False, True), ("per-level", True, True)]
#: every size x chunk x mode; the default tier runs 16 of the 48, in which every pair of a size, a chunk length and
#: a mode occurs (chunk index (size + mode) mod 3); the other 32 run in the slow tier
_CHUNK_CASES = [pytest.param(*size, per_chunk, *mode, marks=() if c == (a + b) % 3 else pytest.mark.slow)
                for a, size in enumerate(_CHUNK_SIZES) for c, per_chunk in enumerate((1, 2, 4))
                for b, mode in enumerate(_CHUNK_MODES)]


class TestChunks:
    """:func:`fma_attention` works through chunks of ``r 2^a`` queries; with chunks of ``r``, ``2r`` and ``4r``
    every level's blocks either tile a chunk or hold it whole, and the output still equals eq. (4)."""

    @pytest.mark.parametrize("n,r,p,per_chunk,normalisation,causal,downsample", _CHUNK_CASES)
    def test_small_chunks_equal_eq4(self, monkeypatch, n, r, p, per_chunk, normalisation, causal, downsample):
        import spectral.fma as mod

        monkeypatch.setattr(mod, "_CHUNK_SCORES", per_chunk * 3 * r * r)
        assert mod._chunk_length(n, r) == min(per_chunk * r, r << max(0, math.ceil(math.log2(n / r))))
        rng = np.random.default_rng(n + p)
        h = hierarchy_1d(n, r)
        q, k, v = rng.standard_normal((3, n, 5))
        pik, piv = _random_weights(rng, r, h.depth, p)
        kw = dict(r=r, p=p, normalisation=normalisation, causal=causal)
        if not downsample:
            ref = eq4_reference(q, k, v, h, normalisation=normalisation, causal=causal, pik=pik, piv=piv)
            out = fma_attention(q, k, v, **kw, weights=list(zip(pik, piv)))
            np.testing.assert_allclose(out, ref, rtol=0, atol=ATOL)
        if p == 1:
            ref = eq4_reference(q, k, v, h, normalisation=normalisation, causal=causal, downsample_queries=downsample)
            out = fma_attention(q, k, v, **kw, downsample_queries=downsample)
            np.testing.assert_allclose(out, ref, rtol=0, atol=ATOL)
        else:  # default rank-p means: the matrix form (whole-array code) times v
            a = fma_matrix(q, k, **kw, downsample_queries=downsample)
            np.testing.assert_allclose(fma_attention(q, k, v, **kw, downsample_queries=downsample), a @ v,
                                       rtol=0, atol=ATOL)

    def test_workspace_does_not_grow_with_n(self):
        # extra memory = the output + a chunk's workspace + O(n p d / r) summaries: measured (tracemalloc) 5.3-6.8
        # MiB over the output for n = 2^12 .. 2^14 at r = 16, 5.8-8.6 MiB at r = 64, n = 2^14 .. 2^16, d = 64. The
        # whole-array code held 3 r scores per query several times over (103 MiB at n = 2^14, r = 64, d = 64).
        import tracemalloc

        rng = np.random.default_rng(16)
        extra = {}
        for n in (2**12, 2**14):
            q, k, v = rng.standard_normal((3, n, 4))
            tracemalloc.start()
            try:
                out = fma_attention(q, k, v, r=16, normalisation="joint")
                extra[n] = tracemalloc.get_traced_memory()[1] - out.nbytes
            finally:
                tracemalloc.stop()
        assert extra[2**14] < 8 * 2**20 and extra[2**14] - extra[2**12] < 2**20, extra


class TestAttention2D:
    #: every size with both normalisations; the default tier runs each size once and each normalisation (the
    #: deepest hierarchy, w = 16 with r = 2, jointly normalised), the other three in the slow tier
    @pytest.mark.parametrize("w,r,p,normalisation", [
        (14, 4, 1, "per-level"), (13, 3, 3, "joint"), (16, 2, 2, "joint"),
        pytest.param(14, 4, 1, "joint", marks=pytest.mark.slow), pytest.param(13, 3, 3, "per-level", marks=pytest.mark.slow),
        pytest.param(16, 2, 2, "per-level", marks=pytest.mark.slow)])
    def test_equals_eq6_with_random_weights(self, w, r, p, normalisation):
        rng = np.random.default_rng(w * r + p)
        h = hierarchy_2d(w, r)
        q, k, v = rng.standard_normal((3, w * w, 6))
        pik, piv = _random_weights(rng, r, h.depth, p, dim=2)
        weights = list(zip(pik, piv))
        flat = lambda ws: [x.reshape(p, -1) for x in ws]  # noqa: E731
        ref = eq4_reference(q, k, v, h, normalisation=normalisation, pik=flat(pik), piv=flat(piv))
        out = fma_attention_2d(q, k, v, r=r, p=p, normalisation=normalisation, weights=weights)
        np.testing.assert_allclose(out, ref, rtol=0, atol=ATOL)
        a = fma_matrix_2d(q, k, r=r, p=p, normalisation=normalisation, weights=weights)
        np.testing.assert_allclose(a @ v, ref, rtol=0, atol=ATOL)

    @pytest.mark.parametrize("downsample", [False, True])
    def test_default_weights_and_pooled_queries(self, downsample):
        rng = np.random.default_rng(12)
        w, r = 14, 4
        h = hierarchy_2d(w, r)
        q, k, v = rng.standard_normal((3, w * w, 6))
        for norm in ("per-level", "joint"):
            ref = eq4_reference(q, k, v, h, normalisation=norm, downsample_queries=downsample)
            out = fma_attention_2d(q, k, v, r=r, normalisation=norm, downsample_queries=downsample)
            np.testing.assert_allclose(out, ref, rtol=0, atol=ATOL)

    def test_joint_rows_sum_to_one(self):
        rng = np.random.default_rng(13)
        q, k = rng.standard_normal((2, 24 * 24, 8))
        np.testing.assert_allclose(fma_matrix_2d(q, k, r=4, normalisation="joint").sum(axis=1), 1.0, atol=ATOL)


# ------------------------------------------------------------------------------- array API


@pytest.mark.parametrize("causal,downsample,norm,p", [(False, False, "per-level", 1), (True, False, "joint", 2),
                                                      (False, True, "joint", 1), (True, True, "per-level", 2)])
def test_array_api_backends_1d(xp, causal, downsample, norm, p):
    rng = np.random.default_rng(14)
    q, k, v = rng.standard_normal((3, 100, 6))
    ref = fma_attention(q, k, v, r=5, p=p, normalisation=norm, causal=causal, downsample_queries=downsample)
    out = fma_attention(xp.asarray(q), xp.asarray(k), xp.asarray(v), r=5, p=p, normalisation=norm, causal=causal,
                        downsample_queries=downsample)
    assert_close(out, xp.asarray(ref), rtol=0, atol=ATOL)
    a = fma_matrix(xp.asarray(q), xp.asarray(k), r=5, p=p, normalisation=norm, causal=causal,
                   downsample_queries=downsample)
    assert_close(a, xp.asarray(fma_matrix(q, k, r=5, p=p, normalisation=norm, causal=causal,
                                          downsample_queries=downsample)), rtol=0, atol=ATOL)


def test_array_api_backends_2d_and_weights(xp):
    rng = np.random.default_rng(15)
    q, k, v = rng.standard_normal((3, 13 * 13, 6))
    pik, piv = _random_weights(rng, 3, fma_depth(13, r=3), 2, dim=2)
    weights = list(zip(pik, piv))
    ref = fma_attention_2d(q, k, v, r=3, p=2, weights=weights)
    out = fma_attention_2d(xp.asarray(q), xp.asarray(k), xp.asarray(v), r=3, p=2,
                           weights=[(xp.asarray(a), xp.asarray(b)) for a, b in weights])
    assert_close(out, xp.asarray(ref), rtol=0, atol=ATOL)
    a = fma_matrix_2d(xp.asarray(q), xp.asarray(k), r=3, normalisation="joint")
    assert_close(a, xp.asarray(fma_matrix_2d(q, k, r=3, normalisation="joint")), rtol=0, atol=ATOL)
    assert np.allclose(to_numpy(a).sum(axis=1), 1.0)


# ------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("kwargs,match", [
    (dict(r=0), "r"), (dict(r=65), r"r must be an integer in \[1, n\]"), (dict(r=4.0), "r"), (dict(r=True), "r"),
    (dict(r=4, p=0), "p"), (dict(r=4, p=5), "p"), (dict(r=4, normalisation="global"), "normalisation"),
    (dict(r=4, causal=1), "causal"), (dict(r=4, downsample_queries="yes"), "downsample_queries"),
    (dict(r=4, weights=[(np.ones((1, 4)), np.ones((1, 4)))]), "weights"),
    (dict(r=4, weights=[(np.ones((1, 4)), np.ones((1, 4)))] * 2 + [(np.ones((1, 16)), np.ones((1, 4)))]), "weights"),
    (dict(r=4, weights=[(np.full((1, 4 * 2**i), np.nan), np.ones((1, 4 * 2**i))) for i in range(3)]), "weights"),
])
def test_bad_options(kwargs, match):
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 64, 4))
    with pytest.raises(InputError, match=match):
        fma_attention(q, k, v, **kwargs)


@pytest.mark.parametrize("which,bad,match", [
    ("q", np.full((64, 4), np.nan), "q must be finite"), ("k", np.full((64, 4), np.inf), "k must be finite"),
    ("v", np.full((64, 2), np.nan), "v must be finite"), ("k", np.ones((63, 4)), "k must have the shape of q"),
    ("v", np.ones((60, 2)), "v must have n = 64 rows"), ("q", np.ones(64), "q must be a 2-D array"),
    ("q", np.ones((64, 4), dtype=int), "q must have a real floating dtype"),
    ("k", np.ones((64, 4), dtype=np.float32), "k must have the dtype of q"),
])
def test_bad_arrays(which, bad, match):
    rng = np.random.default_rng(0)
    arrays = dict(zip("qkv", rng.standard_normal((3, 64, 4))))
    arrays["v"] = arrays["v"][:, :2]
    arrays[which] = bad
    with pytest.raises(InputError, match=match):
        fma_attention(arrays["q"], arrays["k"], arrays["v"], r=4)


def test_bad_structure_input():
    with pytest.raises(InputError, match="r must be an integer in"):
        fma_levels(10, r=11)
    with pytest.raises(InputError, match="n must be an integer"):
        fma_groups(0, r=1)
    with pytest.raises(InputError, match="width"):
        fma_levels_2d(0, r=1)
    with pytest.raises(InputError, match="r must be an integer"):
        fma_groups_2d(8, r=9)
    with pytest.raises(InputError, match="causal"):
        fma_groups(8, r=2, causal="no")
    q = np.ones((50, 2))
    with pytest.raises(InputError, match="W\\^2 rows"):
        fma_attention_2d(q, q, q, r=2)
    with pytest.raises(InputError, match="r must be an integer in \\[1, width\\]"):
        fma_matrix_2d(np.ones((49, 2)), np.ones((49, 2)), r=8)


@pytest.mark.parametrize("dim", [1, 2])
def test_dense_matrix_memory_estimate_bounds_the_traced_peak(estimate_and_peak, dim):
    rng = np.random.default_rng(5)
    n, r = (1024, 16) if dim == 1 else (32 * 32, 4)
    q, k = rng.standard_normal((n, 8)), rng.standard_normal((n, 8))
    build = fma_matrix if dim == 1 else fma_matrix_2d
    needed, peak = estimate_and_peak(lambda: build(q, k, r=r))
    assert 8 * n * n <= peak <= needed, (peak, needed)


def test_dense_matrix_refused_before_allocating(refused_peak):
    x = np.zeros((100_000, 4))  # the matrix alone would be 80 GB
    assert refused_peak(lambda: fma_matrix(x, x, r=16), r"fma_matrix's dense attention matrix .* shape \(100000, "
                                                         r"100000\) needs an estimated 671 GiB.*fma_attention\(q, k, "
                                                         r"v\)") < 1 << 20
    assert refused_peak(lambda: fma_matrix_2d(x[:90_000], x[:90_000], r=4), r"fma_attention_2d\(q, k, v\)") < 1 << 20
