"""Tests of spectral.kernels against closed forms, dense references and bad input.

References are computed independently of the code under test: scalar ``math``
formulas, ``scipy.spatial.distance.cdist`` and explicit NumPy loops.  Exact-algebra
tolerances are ``4 sqrt(eps)`` relative (DESIGN.md 3.5a) unless stated.
"""

import functools
import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from spectral.backend import to_numpy
from spectral.kernels import (
    ACTIVATIONS,
    KernelOperator,
    ResidualMLP,
    ScoreMLP,
    dot_product_scores,
    fna_kernel,
    fna_profile,
    fna_time,
    heat_kernel,
    heat_time,
    matched_half_width_kappa,
    metric_kernel,
    neural_scores,
    pairwise,
    paper_kappa,
)
from spectral.memory import DenseMemoryError

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra, DESIGN.md 3.5 (a): ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal


def assert_close(actual, desired, *, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(to_numpy(actual), desired, rtol=rtol, atol=atol)


def euclid(xa, xb):
    """Euclidean distance block in the namespace of the inputs (test-local, array-API clean)."""
    from spectral.backend import array_namespace

    xp = array_namespace(xa, xb)
    diff = xp.reshape(xa, (xa.shape[0], 1, -1)) - xp.reshape(xb, (1, xb.shape[0], -1))
    return xp.sqrt(xp.sum(diff * diff, axis=2))


def circle_geodesic(a, b):
    """Wrapped angle difference |a_i - b_j| on S^1 for angle arrays (numpy reference)."""
    d = np.abs(a[:, None] - b[None, :]) % (2 * np.pi)
    return np.minimum(d, 2 * np.pi - d)


# --------------------------------------------------------------------------- FNA profile


class TestFnaProfile:
    @pytest.mark.parametrize("alpha,dim", [(0.5, 1), (1.2, 1), (1.2, 2), (1.9, 3)])
    def test_power_law_closed_form(self, alpha, dim):
        z = np.linspace(0.0, 50.0, 41)
        ref = np.array([math.pow(1.0 + t, -(dim + alpha)) for t in z])
        # exp(beta log1p z) vs pow: a few ulp times beta log(1+z) <= ~20
        assert_close(fna_profile(z, alpha=alpha, dim=dim), ref, rtol=64 * EPS64)

    @pytest.mark.parametrize("alpha", [2.0, 2.5, 3.0, 6.0])
    def test_local_closed_form(self, alpha):
        z = np.linspace(0.0, 4.0, 33)
        p = alpha / (alpha - 1.0)
        ref = np.array([math.exp(-math.pow(t, p)) for t in z])
        assert_close(fna_profile(z, alpha=alpha, dim=1), ref, rtol=16 * EPS64, atol=0)

    def test_alpha_two_is_gaussian_and_dim_free(self):
        z = np.linspace(0, 3, 13)
        ref = np.exp(-z * z)
        for dim in (1, 2, 7):
            assert_close(fna_profile(z, alpha=2.0, dim=dim), ref, rtol=4 * EPS64)
        # negative control: just below 2 the power law is something else
        assert np.max(np.abs(fna_profile(z, alpha=1.999, dim=1) - ref)) > 0.1

    def test_underflow_flushed_to_zero(self):
        # exp(-27^2) = exp(-729) ~ 2.5e-317 is subnormal in float64
        z = np.array([0.0, 26.0, 27.0, 27.3, 40.0])
        raw = np.exp(-z * z)
        assert 0 < raw[2] < TINY  # negative control: the naive value is subnormal
        out = fna_profile(z, alpha=2.0, dim=1)
        assert np.all((out == 0) | (out >= TINY))
        assert out[2] == 0 and out[3] == 0 and out[4] == 0
        assert out[1] == raw[1] > TINY  # normal values are kept
        # power law far out: (1 + 1e200)^-3 underflows to 0, not to a subnormal
        pl = fna_profile(np.array([1e100, 1e110]), alpha=1.5, dim=1.5)
        assert np.all((pl == 0) | (pl >= TINY))

    def test_float32_kept(self):
        z = np.linspace(0, 12, 25, dtype=np.float32)
        out = fna_profile(z, alpha=2.0, dim=1)
        assert out.dtype == np.float32
        tiny32 = np.finfo(np.float32).smallest_normal
        assert np.all((out == 0) | (out >= tiny32))
        assert_close(out, np.exp(-z.astype(float) ** 2), rtol=4 * math.sqrt(np.finfo(np.float32).eps), atol=tiny32)

    def test_does_not_modify_input(self):
        z = np.linspace(0, 2, 5)
        z0 = z.copy()
        fna_profile(z, alpha=1.2, dim=1)
        fna_profile(z, alpha=2.0, dim=1)
        np.testing.assert_array_equal(z, z0)

    def test_integer_input_promoted(self):
        out = fna_profile(np.array([0, 1, 3]), alpha=1.0, dim=1)
        assert out.dtype == np.float64
        assert_close(out, [1.0, 0.25, 1 / 16])


class TestFnaKernel:
    def test_scale_and_time(self, rng):
        d = rng.random((6, 9)) * 3
        for alpha, scale in [(1.2, 0.3), (2.0, 0.7)]:
            ref = np.vectorize(lambda t: (1 + t / scale) ** -(1 + alpha) if alpha < 2 else math.exp(-((t / scale) ** 2)))(d)
            assert_close(fna_kernel(d, alpha=alpha, scale=scale, dim=1), ref, rtol=64 * EPS64)
            assert fna_time(scale, alpha) == scale**alpha
        assert np.all(fna_kernel(d, alpha=1.2, scale=0.3, dim=1) <= 1.0)

    def test_geodesic_sphere_variant(self, rng):
        # A.1: same profile of geodesic distances arccos(q.k) on S^2
        x = rng.standard_normal((20, 3))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        theta = np.arccos(np.clip(x @ x.T, -1, 1))
        kappa = paper_kappa(2, 1.2, variant="sphere")
        ref = (1 + theta / kappa) ** -(2 + 1.2)
        assert_close(fna_kernel(theta, alpha=1.2, scale=kappa, dim=2), ref, rtol=64 * EPS64)

    @pytest.mark.parametrize(
        "kwargs,match",
        [
            (dict(alpha=0.0, scale=1.0, dim=1), "alpha must be a finite real number > 0"),
            (dict(alpha=-1.0, scale=1.0, dim=1), "alpha"),
            (dict(alpha=float("nan"), scale=1.0, dim=1), "alpha"),
            (dict(alpha=1.0, scale=0.0, dim=1), "scale must be a finite real number > 0"),
            (dict(alpha=1.0, scale=-2.0, dim=1), "scale"),
            (dict(alpha=1.0, scale=float("inf"), dim=1), "scale"),
            (dict(alpha=1.0, scale=1.0, dim=0.5), "dim must be a finite real number >= 1"),
            (dict(alpha="1", scale=1.0, dim=1), "alpha"),
        ],
    )
    def test_bad_parameters(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            fna_kernel(np.ones((2, 2)), **kwargs)

    @pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
    def test_non_finite_distances(self, bad):
        d = np.ones((3, 3))
        d[1, 2] = bad
        with pytest.raises(ValueError, match="dist must contain only finite values"):
            fna_kernel(d, alpha=1.0, scale=1.0, dim=1)
        with pytest.raises(ValueError, match="dist must contain only finite values"):
            heat_kernel(d, eps=1.0)

    def test_negative_distances(self):
        d = np.ones((3, 3))
        d[0, 1] = -1e-3
        with pytest.raises(ValueError, match="dist must be >= 0"):
            fna_kernel(d, alpha=1.0, scale=1.0, dim=1)
        with pytest.raises(ValueError, match="z must be >= 0"):
            fna_profile(d, alpha=1.0, dim=1)
        with pytest.raises(ValueError, match="dist must be >= 0"):
            heat_kernel(d, eps=1.0)

    def test_complex_refused(self):
        with pytest.raises(ValueError, match="dist must be a real array"):
            fna_kernel(np.ones((2, 2), dtype=complex), alpha=1.0, scale=1.0, dim=1)


class TestKappa:
    def test_paper_conventions(self):
        for d in (1, 2, 8, 64):
            assert paper_kappa(d, 1.2) == pytest.approx(math.sqrt(d) / (2 ** (1 / d) - 1), rel=1e-15)
            assert paper_kappa(d, 2.0) == pytest.approx(math.sqrt(d), rel=1e-15)
            assert paper_kappa(d, 1.2, variant="sphere") == pytest.approx(math.pi / (math.pi ** (1 / d) - 1), rel=1e-15)
            assert paper_kappa(d, 2.0, variant="sphere") == 1.0

    def test_fna16_identity(self):
        # FNA-16: Phi_alpha(sqrt(d)/kappa) = 2^(-(d+alpha)/d) (text), Phi(pi/kappa) = pi^(-1-alpha/d) (sphere)
        for d in (2, 8, 16, 64):
            for alpha in (0.5, 1.2, 1.8):
                k = paper_kappa(d, alpha)
                val = float(fna_kernel(np.array([[math.sqrt(d)]]), alpha=alpha, scale=k, dim=d)[0, 0])
                assert val == pytest.approx(2 ** (-(d + alpha) / d), rel=64 * EPS64)
                ks = paper_kappa(d, alpha, variant="sphere")
                vs = float(fna_kernel(np.array([[math.pi]]), alpha=alpha, scale=ks, dim=d)[0, 0])
                assert vs == pytest.approx(math.pi ** (-1 - alpha / d), rel=64 * EPS64)

    def test_matched_half_width(self):
        # both kernels equal 1/2 at the same distance r
        for d, alpha, kappa1 in [(1, 1.2, 0.3), (8, 0.7, 5.0), (64, 1.5, 200.0)]:
            k2 = matched_half_width_kappa(kappa1, d, alpha)
            r = kappa1 * (2 ** (1 / (d + alpha)) - 1)
            assert float(fna_kernel(np.array([[r]]), alpha=alpha, scale=kappa1, dim=d)[0, 0]) == pytest.approx(0.5, rel=1e-13)
            assert float(fna_kernel(np.array([[r]]), alpha=2.0, scale=k2, dim=d)[0, 0]) == pytest.approx(0.5, rel=1e-13)
            # negative control: equal kappa does not match the half width
            assert abs(float(fna_kernel(np.array([[r]]), alpha=2.0, scale=kappa1, dim=d)[0, 0]) - 0.5) > 0.1
        assert matched_half_width_kappa(0.4, 3, 2.0) == pytest.approx(0.4, rel=1e-15)
        # local profile alpha = 3: exp(-z^1.5) = 1/2
        k2 = matched_half_width_kappa(1.0, 3, 3.0)
        r = math.log(2) ** (2 / 3)
        assert math.exp(-((r / k2) ** 2)) == pytest.approx(0.5, rel=1e-13)

    def test_bad(self):
        with pytest.raises(ValueError, match="variant must be one of \\('text', 'sphere'\\)"):
            paper_kappa(4, 1.2, variant="torus")
        with pytest.raises(ValueError, match="d must be"):
            paper_kappa(0, 1.2)
        with pytest.raises(ValueError, match="alpha must be"):
            paper_kappa(4, 0.0)
        with pytest.raises(ValueError, match="kappa1 must be"):
            matched_half_width_kappa(-1.0, 4, 1.2)
        with pytest.raises(ValueError, match="alpha1 must be"):
            matched_half_width_kappa(1.0, 4, -1.2)


# --------------------------------------------------------------------------- heat kernel


class TestHeat:
    def test_closed_form(self, rng):
        d = rng.random((5, 7)) * 2
        for eps in (0.01, 0.5, 3.0):
            ref = np.vectorize(lambda t: math.exp(-t * t / (2 * eps)))(d)
            # exp(-w) has relative error ~ |w| eps from rounding w (w up to 200 here)
            rtol = 4 * EPS64 * (1 + np.max(d) ** 2 / (2 * eps))
            assert_close(heat_kernel(d, eps=eps), ref, rtol=rtol, atol=TINY)
            assert heat_time(eps) == eps / 2
        # negative control: the paper's printed exp(-d^2/eps) differs
        assert np.max(np.abs(heat_kernel(d, eps=0.5) - np.exp(-d**2 / 0.5))) > 0.05

    def test_underflow(self):
        out = heat_kernel(np.array([[0.0, 37.0, 38.5]]), eps=0.5)  # exp(-37^2) subnormal, exp(-1482) 0
        assert out[0, 0] == 1.0 and out[0, 1] == 0.0 and out[0, 2] == 0.0

    @pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), None])
    def test_bad_eps(self, eps):
        with pytest.raises(ValueError, match="eps must be a finite real number > 0"):
            heat_kernel(np.ones((2, 2)), eps=eps)
        with pytest.raises(ValueError, match="eps must be"):
            heat_time(eps)


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
        with pytest.raises(ValueError, match="temperature must be a finite real number > 0"):
            dot_product_scores(x, temperature=0.0)
        with pytest.raises(ValueError, match="w_q must have shape \\(d_out, 3\\)"):
            dot_product_scores(x, w_q=np.eye(4))
        with pytest.raises(ValueError, match="same dimension"):
            dot_product_scores(x, w_q=np.eye(3), w_k=np.ones((2, 3)))
        bad = x.copy()
        bad[0, 0] = np.nan
        with pytest.raises(ValueError, match="x must contain only finite values"):
            dot_product_scores(bad)
        with pytest.raises(ValueError, match="y must contain only finite values"):
            dot_product_scores(x, y=bad)
        with pytest.raises(ValueError, match="x must be a 2-d array"):
            dot_product_scores(x[0])
        with pytest.raises(ValueError, match="scores q.k / temperature must be finite"):
            dot_product_scores(1e200 * x, temperature=1e-300)


# --------------------------------------------------------------------------- metric kernel


class TestMetric:
    def test_residual_mlp_formula(self, rng):
        g = ResidualMLP(3, 5, rng=1)
        x = rng.standard_normal((4, 3))
        ref = np.array([xi + g.w2 @ np.tanh(g.w1 @ xi + g.b1) for xi in x])
        assert_close(g(x), ref, rtol=64 * EPS64)
        # same seed, same weights; another seed, other weights
        np.testing.assert_array_equal(ResidualMLP(3, 5, rng=1).w1, g.w1)
        assert not np.array_equal(ResidualMLP(3, 5, rng=2).w1, g.w1)

    def test_metric_kernel_reference(self, rng):
        g = ResidualMLP(2, 8, rng=rng, activation="relu")
        x = rng.standard_normal((6, 2))
        y = rng.standard_normal((4, 2))
        gx = np.array([xi + g.w2 @ np.maximum(g.w1 @ xi + g.b1, 0) for xi in x])
        gy = np.array([yi + g.w2 @ np.maximum(g.w1 @ yi + g.b1, 0) for yi in y])
        ref = np.exp(-cdist(gx, gy, "sqeuclidean") / (2 * 0.3))
        # Gram expansion: absolute error ~ eps |g|^2 / (2 eps_kernel) in the exponent
        assert_close(metric_kernel(x, g, eps=0.3, y=y), ref, rtol=RTOL, atol=1e-13)
        cxx = metric_kernel(x, g, eps=0.3)
        assert_close(np.diag(cxx), np.ones(6), rtol=1e-13)

    def test_linear_feature_map_is_l2_attention(self, rng):
        # g(x) = P x reduces to L2 self-attention (Kim et al.): exp(-|P(x-y)|^2 / (2 eps))
        p = rng.standard_normal((3, 3))
        x = rng.standard_normal((5, 3))
        ref = np.exp(-cdist(x @ p.T, x @ p.T, "sqeuclidean") / 2.0)
        assert_close(metric_kernel(x, lambda z: z @ p.T, eps=1.0), ref, rtol=RTOL, atol=1e-13)

    def test_lipschitz_bound(self):
        g = ResidualMLP(4, 16, rng=3, gain=0.1)
        assert 0 < g.residual_lipschitz_bound() < 1
        assert ResidualMLP(4, 16, rng=3, activation="exp").residual_lipschitz_bound() == math.inf

    def test_bad(self, rng):
        with pytest.raises(ValueError, match="activation must be one of"):
            ResidualMLP(2, 3, activation="sigmoid")
        with pytest.raises(ValueError, match="width must be"):
            ResidualMLP(2, 0)
        g = ResidualMLP(2, 3, rng=0)
        with pytest.raises(ValueError, match="x must have shape \\(n, 2\\)"):
            g(np.ones((3, 4)))
        with pytest.raises(ValueError, match="eps must be"):
            metric_kernel(np.ones((3, 2)), g, eps=-1)
        with pytest.raises(ValueError, match="feature_map must be callable"):
            metric_kernel(np.ones((3, 2)), None, eps=1)


# --------------------------------------------------------------------------- neural scores


class TestNeural:
    @pytest.mark.parametrize("activation", ACTIVATIONS)
    def test_concat_loop_reference(self, rng, activation):
        mlp = ScoreMLP(3, 2, 6, rng=rng, activation=activation)
        q = rng.standard_normal((5, 3))
        k = rng.standard_normal((4, 2))
        f = {
            "tanh": np.tanh,
            "relu": lambda z: np.maximum(z, 0),
            "gelu": lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3))),
            "identity": lambda z: z,
            "square": lambda z: z**2,
            "exp": np.exp,
        }[activation]
        ref = np.array([[mlp.w_a @ f(mlp.W_h @ np.concatenate([qi, kj]) + mlp.b_h) + mlp.b_a for kj in k] for qi in q])
        for form in ("factored", "concat"):
            assert_close(neural_scores(q, k, mlp, form=form), ref, rtol=RTOL, atol=64 * EPS64 * np.abs(ref).max())

    def test_gelu_close_to_erf_gelu(self):
        # the tanh approximation is within 1e-3 of the exact erf GELU (Hendrycks & Gimpel)
        from scipy.special import erf

        from spectral.kernels import _activation

        z = np.linspace(-6, 6, 1001)
        exact = 0.5 * z * (1 + erf(z / math.sqrt(2)))
        assert np.max(np.abs(_activation("gelu")(np, z) - exact)) < 1e-3

    def test_blocks_cover_all_rows(self, rng, monkeypatch):
        import spectral.kernels as K

        mlp = ScoreMLP(2, 2, 4, rng=0)
        q = rng.standard_normal((11, 2))
        k = rng.standard_normal((7, 2))
        full = neural_scores(q, k, mlp)
        monkeypatch.setattr(K, "_DEFAULT_BLOCK_BYTES", 3 * 2 * 7 * 4 * 8)  # 3 rows per block
        assert_close(neural_scores(q, k, mlp), full, rtol=0, atol=0)

    def test_concat_memory_guard(self, rng):
        mlp = ScoreMLP(2, 2, 4, rng=0)
        q = rng.standard_normal((10, 2))
        with pytest.raises(DenseMemoryError, match="concatenated"):
            neural_scores(q, q, mlp, form="concat", max_bytes=1000)

    def test_bad(self, rng):
        mlp = ScoreMLP(2, 3, 4, rng=0)
        q = rng.standard_normal((4, 2))
        k = rng.standard_normal((4, 3))
        with pytest.raises(ValueError, match="form must be one of \\('factored', 'concat'\\)"):
            neural_scores(q, k, mlp, form="tensor")
        with pytest.raises(ValueError, match="q must have shape \\(n, 2\\)"):
            neural_scores(k, k, mlp)
        with pytest.raises(ValueError, match="k must have shape \\(m, 3\\)"):
            neural_scores(q, q, mlp)
        with pytest.raises(ValueError, match="mlp must be a ScoreMLP"):
            neural_scores(q, k, object())
        with pytest.raises(ValueError, match="activation must be one of"):
            ScoreMLP(2, 2, 2, activation="softplus")
        with pytest.raises(ValueError, match="hidden must be"):
            ScoreMLP(2, 2, 0)


# --------------------------------------------------------------------------- matrix-free


class TestKernelOperator:
    def _op(self, rng, n=37, m=None, block_rows=5):
        x = rng.standard_normal((n, 2))
        y = None if m is None else rng.standard_normal((m, 2))
        kern = functools.partial(fna_kernel, alpha=1.2, scale=0.5, dim=2)
        op = KernelOperator(x, kernel=kern, distance=euclid, y=y, block_rows=block_rows)
        dense = fna_kernel(cdist(x, x if y is None else y), alpha=1.2, scale=0.5, dim=2)
        return op, dense

    @pytest.mark.parametrize("m", [None, 23])
    def test_matvec_equals_dense(self, rng, m):
        op, dense = self._op(rng, m=m)
        assert op.shape == dense.shape and op.dtype == np.float64
        assert op.symmetric is (m is None)
        v = rng.standard_normal(dense.shape[1])
        vv = rng.standard_normal((dense.shape[1], 3))
        u = rng.standard_normal(dense.shape[0])
        scale = np.abs(dense).sum(axis=1).max()
        atol = 16 * EPS64 * scale * 4  # summation of <= n terms of size <= |v|max ~ 4
        assert_close(op.matvec(v), dense @ v, atol=atol)
        assert_close(op @ vv, dense @ vv, atol=atol)
        assert_close(op.rmatvec(u), dense.T @ u, atol=atol)
        assert_close(op.row_sums(), dense.sum(axis=1), atol=atol)
        assert_close(op.to_dense(), dense, rtol=64 * EPS64, atol=0)
        # negative control: a different kernel gives a different product
        other = fna_kernel(cdist(op.x, op.y), alpha=1.3, scale=0.5, dim=2)
        assert np.max(np.abs(to_numpy(op.matvec(v)) - other @ v)) > 1e3 * atol

    def test_block_size_from_budget(self, rng):
        x = rng.standard_normal((1000, 2))
        op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=1.0), distance=euclid)
        # numpy: four (b, m) float64 temporaries within the 4 MiB host budget
        assert op.block_rows == (4 << 20) // (4 * 1000 * 8) == 131
        x = rng.standard_normal((10**6, 1))
        op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=1.0), distance=euclid)
        assert op.block_rows == 1  # never less than one row
        x = rng.standard_normal((10, 1))
        assert KernelOperator(x, kernel=op.kernel, distance=euclid).block_rows == 10  # at most n

    def test_linear_operator_and_float32(self, rng):
        from scipy.sparse.linalg import eigsh

        op, dense = self._op(rng, n=60, block_rows=7)
        lo = op.aslinearoperator()
        vals = eigsh(lo, k=3, which="LA", return_eigenvectors=False, v0=np.ones(60))
        ref = np.linalg.eigvalsh(dense)[-3:]
        assert_close(np.sort(vals), ref, rtol=1e-10)  # ARPACK default tol ~ machine eps
        op32 = KernelOperator(op.x, kernel=op.kernel, distance=euclid, dtype=np.float32)
        assert op32.dtype == np.float32 and op32.matvec(np.ones(60, dtype=np.float32)).dtype == np.float32

    def test_memory_guard_up_front(self):
        # 10^6 x 10^6 would need 7450 GiB: refused from the shape, before any block is computed
        calls = []

        def dist(a, b):
            calls.append(1)
            return euclid(a, b)

        x = np.zeros((10**6, 1))
        op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=1.0), distance=dist)
        with pytest.raises(DenseMemoryError, match="matrix-free"):
            op.to_dense()
        with pytest.raises(DenseMemoryError, match="GiB"):
            pairwise(x, kernel=op.kernel, distance=dist)
        assert calls == []

    def test_pairwise(self, rng):
        x = rng.standard_normal((8, 3))
        kern = functools.partial(heat_kernel, eps=0.7)
        assert_close(pairwise(x, kernel=kern, distance=euclid), np.exp(-cdist(x, x, "sqeuclidean") / 1.4),
                     rtol=RTOL, atol=1e-15)
        with pytest.raises(DenseMemoryError):
            pairwise(x, kernel=kern, distance=euclid, max_bytes=100)

    def test_bad(self, rng):
        x = rng.standard_normal((5, 2))
        kern = functools.partial(heat_kernel, eps=1.0)
        with pytest.raises(ValueError, match="kernel must be callable"):
            KernelOperator(x, kernel=None, distance=euclid)
        with pytest.raises(ValueError, match="distance must be callable"):
            KernelOperator(x, kernel=kern, distance=3)
        with pytest.raises(ValueError, match="block_rows must be"):
            KernelOperator(x, kernel=kern, distance=euclid, block_rows=0)
        bad = x.copy()
        bad[2, 1] = np.inf
        with pytest.raises(ValueError, match="x must contain only finite values"):
            KernelOperator(bad, kernel=kern, distance=euclid)
        op = KernelOperator(x, kernel=kern, distance=euclid)
        with pytest.raises(ValueError, match="v must have shape \\(5,\\) or \\(5, k\\)"):
            op.matvec(np.ones(4))
        with pytest.raises(ValueError, match="v must contain only finite values"):
            op.matvec(np.full(5, np.nan))
        wrong = KernelOperator(x, kernel=lambda d: d[:, :2], distance=euclid)
        with pytest.raises(ValueError, match="must return a \\(5, 5\\) block"):
            wrong.matvec(np.ones(5))


# --------------------------------------------------------------------------- backend neutrality


class TestBackendNeutrality:
    """Every builder gives the same numbers on numpy and array_api_strict, in the input's namespace."""

    def _check(self, xp, out, ref, rtol=RTOL, atol=0.0):
        assert type(out) is type(xp.asarray([1.0]))  # result stays in the input's namespace
        assert_close(out, to_numpy(ref), rtol=rtol, atol=atol)

    def test_fna_and_heat(self, xp, rng):
        d = rng.random((6, 5)) * 3
        d[0, 0] = 0.0
        d[1, 1] = 30.0  # underflow path (exp(-900) = 0)
        dx = xp.asarray(d)
        for alpha in (0.8, 1.2, 2.0, 3.0):
            self._check(xp, fna_kernel(dx, alpha=alpha, scale=0.7, dim=2), fna_kernel(d, alpha=alpha, scale=0.7, dim=2))
            self._check(xp, fna_profile(dx, alpha=alpha, dim=1), fna_profile(d, alpha=alpha, dim=1))
        self._check(xp, heat_kernel(dx, eps=0.3), heat_kernel(d, eps=0.3))
        with pytest.raises(ValueError, match="dist must be >= 0"):
            fna_kernel(-dx, alpha=1.0, scale=1.0, dim=1)

    def test_dot_metric_neural(self, xp, rng):
        x = rng.standard_normal((6, 3))
        w = rng.standard_normal((2, 3))
        xx, wx = xp.asarray(x), xp.asarray(w)
        self._check(xp, dot_product_scores(xx, w_q=wx, w_k=wx, temperature=0.9),
                    dot_product_scores(x, w_q=w, w_k=w, temperature=0.9))
        g = ResidualMLP(3, 4, rng=5, activation="gelu")
        self._check(xp, g(xx), g(x))
        self._check(xp, metric_kernel(xx, g, eps=0.4), metric_kernel(x, g, eps=0.4), atol=1e-14)
        mlp = ScoreMLP(3, 3, 5, rng=2, activation="relu")
        for form in ("factored", "concat"):
            self._check(xp, neural_scores(xx, xx, mlp, form=form), neural_scores(x, x, mlp), atol=1e-14)

    def test_operator(self, xp, rng):
        x = rng.standard_normal((13, 2))
        kern = functools.partial(fna_kernel, alpha=1.5, scale=0.4, dim=2)
        op_np = KernelOperator(x, kernel=kern, distance=euclid, block_rows=4)
        op_xp = KernelOperator(xp.asarray(x), kernel=kern, distance=euclid, block_rows=4)
        v = rng.standard_normal((13, 2))
        self._check(xp, op_xp.matvec(xp.asarray(v)), op_np.matvec(v), atol=1e-14)
        self._check(xp, op_xp.rmatvec(xp.asarray(v)), op_np.rmatvec(v), atol=1e-14)
        self._check(xp, op_xp.row_sums(), op_np.row_sums(), atol=1e-14)
        self._check(xp, op_xp.to_dense(), op_np.to_dense())
        self._check(xp, pairwise(xp.asarray(x), kernel=kern, distance=euclid), op_np.to_dense())


def test_operator_spectrum_matches_dense(rng):
    # KernelOperator as the matrix-free input of markov_spectrum: same top eigenvalues as the stored matrix
    from manifolds import Circle
    from spectral.eigen import markov_spectrum

    t = rng.uniform(0, 2 * np.pi, 300)
    x = np.c_[np.cos(t), np.sin(t)]
    op = KernelOperator(x, kernel=functools.partial(fna_kernel, alpha=1.2, scale=0.05, dim=1),
                        distance=Circle().distance)
    free = markov_spectrum(op, 10, method="matrix-free")
    dense = markov_spectrum(op.to_dense(), 10, method="dense")
    assert free.method == "matrix-free" and free.n_components == 1
    # ARPACK at tol=0 (machine precision); measured difference 2.4e-15
    np.testing.assert_allclose(free.eigenvalues, dense.eigenvalues, rtol=0, atol=1e3 * EPS64)
    # negative control: another alpha moves the spectrum far beyond the tolerance
    other = markov_spectrum(fna_kernel(to_numpy(Circle().distance(x)), alpha=1.4, scale=0.05, dim=1), 10)
    assert np.max(np.abs(other.eigenvalues - dense.eigenvalues)) > 1e6 * EPS64


class TestSparseHeat:
    def test_matches_truncated_dense(self, rng):
        from spectral.kernels import SparseScores, heat_kernel_sparse

        x = rng.standard_normal((300, 2))
        x[7] = x[3]  # a duplicate point: zero distance off the diagonal must be kept
        eps, cut = 0.05, 3.0
        sc = heat_kernel_sparse(x, eps=eps, cutoff=cut)
        assert isinstance(sc, SparseScores) and sc.symmetric and sc.shape == (300, 300)
        d = cdist(x, x)
        ref = np.where(d <= cut * math.sqrt(eps), np.exp(-d**2 / (2 * eps)), 0.0)
        dense = sc.to_dense()
        assert dense[7, 3] == 1.0 and np.all(np.diag(dense) == 1.0)
        # entrywise: exp of rounded d^2 (cKDTree vs cdist distances differ by a few ulp)
        assert_close(dense, ref, rtol=1e-12, atol=0)
        assert sc.nnz == np.count_nonzero(ref)
        v = rng.standard_normal(300)
        assert_close(sc @ v, ref @ v, atol=1e-12)
        assert_close(sc.rmatvec(v), ref.T @ v, atol=1e-12)
        assert_close(sc.row_sums(), ref.sum(axis=1), rtol=1e-12)
        # dropped entries are below exp(-cut^2/2); negative control: the untruncated kernel differs there
        full = np.exp(-d**2 / (2 * eps))
        assert np.max(full - ref) <= math.exp(-cut**2 / 2)
        assert np.max(full - ref) > 0.1 * math.exp(-cut**2 / 2)

    def test_cross_and_spectrum(self, rng):
        from spectral.eigen import markov_spectrum
        from spectral.kernels import heat_kernel_sparse

        x = rng.standard_normal((200, 2))
        y = rng.standard_normal((50, 2))
        sc = heat_kernel_sparse(x, eps=0.1, y=y)
        assert not sc.symmetric and sc.shape == (200, 50)
        d = cdist(x, y)
        assert_close(sc.to_dense(), np.where(d <= 6 * math.sqrt(0.1), np.exp(-d**2 / 0.2), 0.0), rtol=1e-12)
        sym = heat_kernel_sparse(x, eps=0.5, cutoff=3.0)  # connected (an isolated point warns)
        free = markov_spectrum(sym, 5, method="matrix-free")
        dense = markov_spectrum(sym.to_dense(), 5, method="dense")
        np.testing.assert_allclose(free.eigenvalues, dense.eigenvalues, rtol=0, atol=1e3 * EPS64)

    def test_bad(self, rng):
        from spectral.kernels import SparseScores, heat_kernel_sparse

        x = rng.standard_normal((10, 2))
        with pytest.raises(ValueError, match="eps must be a finite real number > 0"):
            heat_kernel_sparse(x, eps=0.0)
        with pytest.raises(ValueError, match="cutoff must be a finite real number > 0"):
            heat_kernel_sparse(x, eps=1.0, cutoff=-1)
        bad = x.copy()
        bad[0, 0] = np.nan
        with pytest.raises(ValueError, match="x must contain only finite values"):
            heat_kernel_sparse(bad, eps=1.0)
        with pytest.raises(ValueError, match="y must have shape \\(m, 2\\)"):
            heat_kernel_sparse(x, eps=1.0, y=np.ones((3, 3)))
        with pytest.raises(ValueError, match="matrix must be a 2-d scipy.sparse array"):
            SparseScores(np.eye(3), symmetric=True)
        import scipy.sparse as sp

        with pytest.raises(ValueError, match="finite and >= 0"):
            SparseScores(sp.csr_array(-np.eye(3)), symmetric=True)
        with pytest.raises(DenseMemoryError):
            heat_kernel_sparse(x, eps=1.0).to_dense(max_bytes=10)
