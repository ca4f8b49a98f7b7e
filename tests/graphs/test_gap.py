"""graphs.gap and graphs.clusters against closed forms (circulant chains, block matrices)."""

import math

import numpy as np
import pytest

from graphs.clusters import (
    ablate_edges,
    ablate_nodes,
    ablation_curve,
    eigengap_ratios,
    estimated_clusters,
    iterate_attention,
    near_one_count,
)
from graphs.gap import is_reversible, spectral_gap, stationary_distribution
from spectral.backend import to_numpy
from spectral.validation import InputError

RTOL = 4 * math.sqrt(np.finfo(float).eps)  # exact algebra (DESIGN 3.5 a)


def _lazy_cycle(n, p):
    """Lazy random walk on the n-cycle: eigenvalues (1 - p) + p cos(2 pi k / n) exactly."""
    A = (1 - p) * np.eye(n)
    A[np.arange(n), (np.arange(n) + 1) % n] += p / 2
    A[np.arange(n), (np.arange(n) - 1) % n] += p / 2
    return A


def test_gap_of_lazy_cycle_closed_form():
    n, p = 10, 0.6
    res = spectral_gap(_lazy_cycle(n, p))
    eta = (1 - p) + p * np.cos(2 * np.pi * np.arange(n) / n)
    expected = 1 - np.sort(np.abs(eta))[-2]
    assert res.gap == pytest.approx(expected, rel=RTOL)
    assert res.relaxation_time == pytest.approx(1 / expected, rel=RTOL)
    assert res.reversible and res.n_components == 1
    np.testing.assert_allclose(to_numpy(res.stationary), np.full(n, 1 / n), rtol=RTOL)
    # LPW Thms 12.4/12.5 with pi_min = 1/n, epsilon = 1/4
    t = 1 / expected
    assert res.mixing_time_upper == pytest.approx(t * math.log(4 * n), rel=RTOL)
    assert res.mixing_time_lower == pytest.approx((t - 1) * math.log(2), rel=RTOL)


def test_complex_spectrum_uses_modulus():
    # directed 3-cycle with laziness: eigenvalues (1 - p) + p e^{2 pi i k / 3}
    p = 0.5
    A = (1 - p) * np.eye(3) + p * np.roll(np.eye(3), 1, axis=1)
    res = spectral_gap(A)
    eta2 = (1 - p) + p * np.exp(2j * np.pi / 3)
    assert res.gap == pytest.approx(1 - abs(eta2), rel=RTOL)
    assert abs(res.eta2.imag) > 0.1
    assert not res.reversible and math.isnan(res.mixing_time_upper)


def test_disconnected_and_periodic_have_zero_gap():
    blocks = np.kron(np.eye(2), np.full((2, 2), 0.5))
    res = spectral_gap(blocks)
    assert res.gap == 0.0 and res.n_components == 2 and res.relaxation_time == math.inf
    assert res.stationary is None
    flip = np.array([[0.0, 1.0], [1.0, 0.0]])  # periodic: eigenvalue -1
    assert spectral_gap(flip).gap == pytest.approx(0.0, abs=RTOL)


def test_symmetric_scores_are_reversible_dot_product_is_not(rng):
    x = rng.standard_normal((30, 4))
    c = np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / 4)
    A = c / c.sum(1, keepdims=True)
    pi = to_numpy(stationary_distribution(A))
    np.testing.assert_allclose(pi, c.sum(1) / c.sum(), rtol=1e-10)
    assert is_reversible(A)
    w = rng.standard_normal((4, 4))
    s = np.exp(x @ w @ x.T / 2)
    assert not is_reversible(s / s.sum(1, keepdims=True))


def test_gap_backend_parity(xp):
    A = _lazy_cycle(8, 0.5)
    assert spectral_gap(xp.asarray(A)).gap == pytest.approx(spectral_gap(A).gap, rel=RTOL)


@pytest.mark.parametrize(
    "A, kwargs, match",
    [
        (np.array([[0.5, 0.6], [0.5, 0.5]]), {}, "row-stochastic"),
        (np.array([[1.5, -0.5], [0.5, 0.5]]), {}, "nonnegative"),
        (np.array([[np.nan, 1.0], [0.5, 0.5]]), {}, "finite"),
        (np.eye(2), {"epsilon": 0.5}, "epsilon"),
        (np.eye(1), {}, "2 x 2"),
    ],
)
def test_gap_bad_input(A, kwargs, match):
    with pytest.raises(InputError, match=match):
        spectral_gap(A, **kwargs)


# ------------------------------------------------------------------------------- clusters


def _block_chain(k, m, leak):
    """k blocks of m states, uniform inside, total leakage ``leak`` spread over other blocks."""
    n = k * m
    same = np.kron(np.eye(k), np.ones((m, m)))
    A = same * (1 - leak) / m + (1 - same) * leak / (n - m)
    return A


def test_near_one_count_and_eigengap_on_blocks():
    A = _block_chain(3, 5, 1e-5)
    eta = np.linalg.eigvals(A)
    assert near_one_count(eta, delta=1e-3) == 3
    ratios = eigengap_ratios(eta, k_max=6)
    # closed form: slow rates leak * n / (n - m), fast rate 1; ratio (1) / (leak * 15/10)
    assert ratios[1] == pytest.approx(1 / (1e-5 * 15 / 10), rel=1e-6)
    assert estimated_clusters(eta, k_max=6) == 3


def test_iterate_attention_rate_is_eta2(rng):
    x = rng.standard_normal((40, 2))
    c = np.exp(-((x[:, None] - x[None]) ** 2).sum(-1))
    A = c / c.sum(1, keepdims=True)
    res = iterate_attention(A, rng.standard_normal((40, 3)), steps=60)
    assert res.residuals[-1] < res.residuals[0]
    # the residual decays like |eta_2|^L: fitted rate within 1 % (ledger DRIFT-9 b)
    assert res.rate == pytest.approx(res.eta2_modulus, rel=0.01)


def test_ablation_keeps_rows_stochastic_and_degrades_gap(rng):
    x = rng.standard_normal((40, 3))
    c = np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / 8)
    A = c / c.sum(1, keepdims=True)
    B = ablate_edges(A, fraction=0.5, rng=1)
    np.testing.assert_allclose(B.sum(1), 1.0, rtol=RTOL)
    off = ~np.eye(40, dtype=bool)
    assert np.mean(B[off] == 0) == pytest.approx(0.5, abs=1e-3)
    S, kept = ablate_nodes(A, fraction=0.25, rng=2)
    assert S.shape == (30, 30) and kept.size == 30
    np.testing.assert_allclose(S.sum(1), 1.0, rtol=RTOL)
    curve = ablation_curve(A, [0.0, 0.9], repeats=3, rng=3)
    assert curve.gap_sd[0] <= RTOL  # nothing removed: the same matrix (renormalised) every time
    assert curve.hops_mean[1] != curve.hops_mean[0]


def test_ablation_backend_parity(xp, rng):
    A = _block_chain(2, 4, 0.1)
    ref = ablate_edges(A, fraction=0.3, rng=5)
    got = ablate_edges(xp.asarray(A), fraction=0.3, rng=5)
    np.testing.assert_allclose(to_numpy(got), ref, rtol=RTOL)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda A: ablate_edges(A, fraction=1.0), "fraction"),
        (lambda A: ablate_nodes(A, fraction=0.9), "remain"),
        (lambda A: ablation_curve(A, [0.1], kind="row"), "kind"),
        (lambda A: near_one_count(np.linalg.eigvals(A), delta=0.0), "delta"),
        (lambda A: eigengap_ratios(np.linalg.eigvals(A), k_max=8), "k_max"),
        (lambda A: iterate_attention(A, np.ones((3, 1)), steps=2), "H"),
    ],
)
def test_clusters_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call(_block_chain(2, 4, 0.1))
