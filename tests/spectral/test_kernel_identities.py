"""Structural identities of the score builders, to machine precision.

FNA-6 (Proposition 1), DRIFT-1 (dot-product softmax on the unit sphere is a
row-normalised Gaussian; the paper's printed factor is wrong), DRIFT-10 (multi-head
identity), NEURAL-3 (shared-weight neural scores are additive attention), FNA-7
(positivity of the geodesic power law, negative eigenvalues of the geodesic
Gaussian).  Each identity has a negative control that fails by a wide margin.

References are independent of the code under test: distances from
``scipy.spatial.distance.cdist``, row normalisation and products in plain NumPy,
eigenvalues from ``numpy.linalg.eigvalsh``.
"""

import functools
import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.stats import ortho_group

from spectral import ScoreMLP, dot_product_scores, fna_kernel, heat_kernel, neural_scores, paper_kappa

EPS = np.finfo(np.float64).eps


def rownorm(c):
    return c / c.sum(axis=1, keepdims=True)


def haar(d, rng):
    return ortho_group.rvs(d, random_state=rng) if d > 1 else np.array([[rng.choice([-1.0, 1.0])]])


def sphere_geodesic(a, b):
    """Geodesic distance between unit rows, 2 atan2(|a-b|, |a+b|) (stable at 0 and pi)."""
    return 2.0 * np.arctan2(cdist(a, b), cdist(a, -b))


# --------------------------------------------------------------------------- FNA-6


class TestProposition1:
    """FNA-6: (W_Q, W_K) in O(d) and (I, W_Q^T W_K) give the same scores, attention and outputs."""

    @pytest.mark.parametrize("d", [2, 8, 64])
    def test_fna_dp_and_outputs(self, d):
        rng = np.random.default_rng(6 + d)
        n = 256
        x = rng.standard_normal((n, d))
        v = rng.standard_normal((n, 5))
        wq, wk = haar(d, rng), haar(d, rng)
        wt = wq.T @ wk  # W~_K; W~_Q = I
        # |W_Q x_i - W_K x_j| vs |x_i - W~_K x_j|
        dist_paper = cdist(x @ wq.T, x @ wk.T)
        dist_tilde = cdist(x, x @ wt.T)
        # distances ~ sqrt(2d); rounding ~ eps sqrt(d) per coordinate sum
        assert np.max(np.abs(dist_paper - dist_tilde)) <= 64 * EPS * math.sqrt(2 * d) * math.sqrt(d)
        for alpha in (1.2, 2.0):
            kappa = math.sqrt(d)  # a non-flat kernel (the paper's text kappa makes rows ~uniform, FNA-16)
            c1 = fna_kernel(dist_paper, alpha=alpha, scale=kappa, dim=d)
            c2 = fna_kernel(dist_tilde, alpha=alpha, scale=kappa, dim=d)
            a1, a2 = rownorm(c1), rownorm(c2)
            # claim tolerance 1e-12 (ledger FNA-6); measured <= 1e-14
            assert np.max(np.abs(c1 - c2)) <= 1e-12
            assert np.max(np.abs(a1 - a2)) <= 1e-12
            assert np.max(np.abs(a1 @ v - a2 @ v)) <= 1e-12
        # dot product: q.k = x_i^T W_Q^T W_K x_j
        s1 = dot_product_scores(x, w_q=wq, w_k=wk)
        s2 = dot_product_scores(x, w_q=np.eye(d), w_k=wt)
        assert np.max(np.abs(rownorm(s1) - rownorm(s2))) <= 1e-12
        assert np.max(np.abs(rownorm(s1) @ v - rownorm(s2) @ v)) <= 1e-12
        # W_Q = W_K gives W~ = I: plain self-attention on x
        s3 = dot_product_scores(x, w_q=wq, w_k=wq)
        assert np.max(np.abs(rownorm(s3) - rownorm(dot_product_scores(x)))) <= 1e-12
        # negative control: dropping the W~_K rotation changes the attention
        a_plain = rownorm(fna_kernel(cdist(x, x), alpha=1.2, scale=math.sqrt(d), dim=d))
        a_true = rownorm(fna_kernel(dist_paper, alpha=1.2, scale=math.sqrt(d), dim=d))
        assert np.max(np.abs(a_plain - a_true)) > 1e3 * 1e-12

    def test_dp_needs_no_orthogonality_but_fna_does(self):
        rng = np.random.default_rng(61)
        d, n = 8, 256
        x = rng.standard_normal((n, d))
        wq, wk = rng.standard_normal((d, d)), rng.standard_normal((d, d))
        wt = wq.T @ wk
        s1 = rownorm(dot_product_scores(x, w_q=wq, w_k=wk))
        s2 = rownorm(dot_product_scores(x, w_q=np.eye(d), w_k=wt))
        assert np.max(np.abs(s1 - s2)) <= 1e-12
        # negative control: the FNA distance identity fails without orthogonality
        diff = np.abs(cdist(x @ wq.T, x @ wk.T) - cdist(x, x @ wt.T))
        assert np.max(diff) > 1.0

    @pytest.mark.parametrize("d", [3, 8, 64])
    def test_sphere_variant(self, d):
        # A.1: geodesic distance between W_Q x_i and W_K x_j on S^{d-1}, unchanged under (I, W_Q^T W_K)
        rng = np.random.default_rng(160 + d)
        n = 256
        x = rng.standard_normal((n, d))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        wq, wk = haar(d, rng), haar(d, rng)
        wt = wq.T @ wk
        g1 = sphere_geodesic(x @ wq.T, x @ wk.T)
        g2 = sphere_geodesic(x, x @ wt.T)
        for alpha in (1.2, 2.0):
            kappa = paper_kappa(d - 1, alpha, variant="sphere")
            c1 = fna_kernel(g1, alpha=alpha, scale=kappa, dim=d - 1)
            c2 = fna_kernel(g2, alpha=alpha, scale=kappa, dim=d - 1)
            assert np.max(np.abs(c1 - c2)) <= 1e-12
            assert np.max(np.abs(rownorm(c1) - rownorm(c2))) <= 1e-12
        # W_Q = W_K: W~ = I, and the diagonal geodesic is exactly 0 in the stable formula
        g3 = sphere_geodesic(x @ wq.T, x @ wq.T)
        assert np.max(np.abs(np.diag(g3))) <= 4 * EPS
        # negative control: the Euclidean-space identity does not carry over to a non-orthogonal W_K
        wbad = rng.standard_normal((d, d))
        y = x @ wbad.T
        y /= np.linalg.norm(y, axis=1, keepdims=True)
        assert np.max(np.abs(sphere_geodesic(x, y) - g2)) > 0.1

    def test_head_slices_row_orthonormal_not_isometries(self):
        # A.3: a head slice of an orthogonal 64 x 64 matrix (H = 8, d_H = 8)
        rng = np.random.default_rng(63)
        d, heads = 64, 8
        dh = d // heads
        w = haar(d, rng)
        x = rng.standard_normal((200, d))
        diff = x[:100] - x[100:]
        full = np.linalg.norm(diff @ w.T, axis=1) / np.linalg.norm(diff, axis=1)
        # negative control: the full matrix is an isometry (ratio 1 to rounding)
        assert np.max(np.abs(full - 1)) <= 64 * EPS
        for h in range(heads):
            wh = w[h * dh : (h + 1) * dh]
            np.testing.assert_allclose(wh @ wh.T, np.eye(dh), rtol=0, atol=64 * EPS)
            ratio = np.linalg.norm(diff @ wh.T, axis=1) / np.linalg.norm(diff, axis=1)
            # ||W_h (x - y)|| <= ||x - y||, and far from equality: E ratio^2 = d_H / d = 1/8
            assert np.all(ratio <= 1 + 64 * EPS)
            assert np.max(ratio) < 0.8
            assert np.mean(ratio**2) == pytest.approx(dh / d, rel=0.3)


# --------------------------------------------------------------------------- DRIFT-1


def unit_rows(rng, n, d):
    z = rng.standard_normal((n, d))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


class TestDrift1:
    @pytest.mark.parametrize("d", [3, 64])
    def test_softmax_is_row_normalised_gaussian(self, d):
        rng = np.random.default_rng(100 + d)
        n = 512
        q = unit_rows(rng, n, d) * rng.uniform(0.5, 2.0, (n, 1))  # queries of any norm
        k = unit_rows(rng, n, d)  # keys of equal (unit) norm
        for tau in (0.1, 1.0, math.sqrt(d)):
            lhs = rownorm(dot_product_scores(q, y=k, temperature=tau))
            rhs = rownorm(heat_kernel(cdist(q, k), eps=tau))
            # claim tolerance 1e-13 absolute (ledger DRIFT-1); relative: exponents up to
            # w = (max |q| + 1)^2 / (2 tau) <= 45 carry rounding ~ w eps
            w = (2.0 + 1.0) ** 2 / (2 * tau)
            assert np.max(np.abs(lhs - rhs)) <= 1e-13
            assert np.max(np.abs(lhs - rhs) / lhs) <= 8 * EPS * (1 + w)
            # negative control 1: the paper's printed factor, -x.y = -2 + |x-y|^2, i.e. exp(-|x-y|^2/tau)
            printed = rownorm(np.exp(-cdist(q, k, "sqeuclidean") / tau))
            assert np.max(np.abs(lhs - printed) / lhs) > 1e-2
        # negative control 2: keys of unequal norm break the identity
        k_bad = k * rng.uniform(0.5, 1.5, (n, 1))
        lhs = rownorm(dot_product_scores(q, y=k_bad, temperature=1.0))
        rhs = rownorm(heat_kernel(cdist(q, k_bad), eps=1.0))
        assert np.max(np.abs(lhs - rhs) / lhs) > 1e-2

    def test_ellipsoid(self):
        # x^T Q^T Q x = 1: softmax(x^T Q^T Q y / tau) = N_R exp(-|Q(x-y)|^2 / (2 tau))
        rng = np.random.default_rng(1001)
        d, n = 5, 300
        qm = rng.standard_normal((d, d))
        z = rng.standard_normal((n, d))
        x = z / np.linalg.norm(z @ qm.T, axis=1, keepdims=True)
        for tau in (0.2, 1.0):
            lhs = rownorm(dot_product_scores(x, w_q=qm, w_k=qm, temperature=tau))
            rhs = rownorm(heat_kernel(cdist(x @ qm.T, x @ qm.T), eps=tau))
            assert np.max(np.abs(lhs - rhs)) <= 1e-13
            printed = rownorm(np.exp(-cdist(x @ qm.T, x @ qm.T, "sqeuclidean") / tau))
            assert np.max(np.abs(lhs - printed)) > 1e-3


# --------------------------------------------------------------------------- DRIFT-10


class TestDrift10:
    def test_multi_head_identity(self):
        # [H_1 V_1, ..., H_k V_k] [W_1, ..., W_k]^T = sum_i S_i H W~_i, W~_i = V_i W_i^T, H_i = S_i H
        rng = np.random.default_rng(10)
        n_tok, d, heads, d_v, d_out = 64, 12, 4, 3, 7
        h_old = rng.standard_normal((n_tok, d))
        s = [
            rownorm(dot_product_scores(h_old, w_q=rng.standard_normal((d_v, d)), w_k=rng.standard_normal((d_v, d))))
            for _ in range(heads)
        ]
        v = [rng.standard_normal((d, d_v)) for _ in range(heads)]
        w = [rng.standard_normal((d_out, d_v)) for _ in range(heads)]
        lhs = np.concatenate([s[i] @ h_old @ v[i] for i in range(heads)], axis=1) @ np.concatenate(w, axis=1).T
        rhs = sum(s[i] @ h_old @ (v[i] @ w[i].T) for i in range(heads))
        scale = np.max(np.abs(lhs))
        # claim tolerance 1e-13 relative to the output scale (ledger DRIFT-10); reassociation error ~ d eps
        assert np.max(np.abs(lhs - rhs)) <= 1e-13 * scale
        # negative control: pairing V_i with the wrong head's W
        wrong = sum(s[i] @ h_old @ (v[i] @ w[(i + 1) % heads].T) for i in range(heads))
        assert np.max(np.abs(lhs - wrong)) > 0.1 * scale


# --------------------------------------------------------------------------- NEURAL-3


ACT = {
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
    "gelu": lambda z: 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3))),
}


class TestNeural3:
    @pytest.mark.parametrize("activation", sorted(ACT))
    @pytest.mark.parametrize("dim,hidden", [(2, 8), (16, 64)])
    def test_shared_weights_are_additive_attention(self, activation, dim, hidden):
        rng = np.random.default_rng(3 + dim + hidden)
        n, m = 40, 30
        q = rng.standard_normal((n, dim))
        k = rng.standard_normal((m, dim))
        mlp = ScoreMLP(dim, dim, hidden, rng=rng, activation=activation)
        concat = neural_scores(q, k, mlp, form="concat")
        factored = neural_scores(q, k, mlp, form="factored")
        # Bahdanau additive attention w_a . sigma(W_1 q + W_2 k + b) + b_a, W_1, W_2 = column blocks of W_h
        w1, w2 = mlp.W_h[:, :dim], mlp.W_h[:, dim:]
        pre = (q @ w1.T)[:, None, :] + (k @ w2.T + mlp.b_h)[None, :, :]
        additive = ACT[activation](pre) @ mlp.w_a + mlp.b_a
        # claim tolerance 1e-12 (ledger NEURAL-3); sums of `hidden` O(1) terms
        assert np.max(np.abs(concat - additive)) <= 1e-12
        assert np.max(np.abs(factored - additive)) <= 1e-12
        # b_a cancels in the softmax
        sm = rownorm(np.exp(concat - concat.max(axis=1, keepdims=True)))
        sm0 = rownorm(np.exp((concat - mlp.b_a) - (concat - mlp.b_a).max(axis=1, keepdims=True)))
        assert np.max(np.abs(sm - sm0)) <= 1e-14
        # negative control: swapping the query and key blocks is a different score function
        swapped = ACT[activation]((q @ w2.T)[:, None, :] + (k @ w1.T + mlp.b_h)[None, :, :]) @ mlp.w_a + mlp.b_a
        assert np.max(np.abs(swapped - additive)) > 1e-3


# --------------------------------------------------------------------------- FNA-7


class TestFna7:
    """Geodesic power law is positive definite on S^1; the geodesic Gaussian is not."""

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def points():
        rng = np.random.default_rng(7)
        n = 400
        t = rng.uniform(0.0, 2.0 * np.pi, n)
        gap = np.abs(t[:, None] - t[None, :]) % (2 * np.pi)
        theta = np.minimum(gap, 2 * np.pi - gap)
        chord = cdist(np.c_[np.cos(t), np.sin(t)], np.c_[np.cos(t), np.sin(t)])
        return theta, chord

    @staticmethod
    def noise(ev):
        # backward error of eigvalsh: ~ n eps ||C||_2 (1.3e-11 at n = 400, ||C|| ~ 145);
        # C symmetric, so ||C||_2 = max |eigenvalue|
        return ev.size * EPS * np.max(np.abs(ev))

    @pytest.mark.parametrize("kappa", [0.5, 1.0, 2.0])
    def test_power_law_positive(self, kappa):
        theta, _ = self.points()
        c = fna_kernel(theta, alpha=1.2, scale=kappa, dim=1)
        ev = np.linalg.eigvalsh(c)
        # measured min eigenvalue 8.6e-6 / 4.3e-6 / 2.1e-6, >= 1e5 x the rounding level
        assert ev[0] > 1e3 * self.noise(ev)
        dinv = 1.0 / np.sqrt(c.sum(axis=1))
        s = dinv[:, None] * c * dinv[None, :]
        ev_s = np.linalg.eigvalsh(s)
        assert ev_s[0] > 0 and ev_s[-1] == pytest.approx(1.0, abs=1e-12)

    @pytest.mark.parametrize("kappa,expected", [(1.0, -4.0e-4), (2.0, -0.99)])
    def test_geodesic_gaussian_has_negative_eigenvalues(self, kappa, expected):
        theta, chord = self.points()
        g = fna_kernel(theta, alpha=2.0, scale=kappa, dim=1)  # exp(-(theta/kappa)^2)
        ev = np.linalg.eigvalsh(g)
        # measured -4.08e-4 (kappa 1), -1.013 (kappa 2); ledger FNA-7 quotes -4.0e-4 / -0.99
        assert ev[0] < -1e3 * self.noise(ev)
        assert ev[0] == pytest.approx(expected, rel=0.1)
        # control: the chordal (Euclidean) Gaussian on the same points is PD up to rounding
        e = fna_kernel(chord, alpha=2.0, scale=kappa, dim=1)
        ev_e = np.linalg.eigvalsh(e)
        assert ev_e[0] > -self.noise(ev_e)
