"""graphs.clusters against closed forms (block matrices): near-1 counts, eigengaps, iterated
attention, ablation, backends and bad input."""

import math

import numpy as np
import pytest

from graphs import (
    ablate_edges,
    ablate_nodes,
    ablation_curve,
    eigengap_ratios,
    estimated_clusters,
    iterate_attention,
    near_one_count,
)
from spectral.floor.validation import InputError
from spectral.testing import assert_close

RTOL = 4 * math.sqrt(np.finfo(float).eps)  # exact algebra


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
    assert_close(got, xp.asarray(ref), rtol=RTOL)


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


def test_result_reprs_are_short():
    A = _block_chain(3, 20, 1e-3)
    it = iterate_attention(A, np.random.default_rng(0).standard_normal((60, 4)), steps=50)
    curve = ablation_curve(A, np.linspace(0.0, 0.5, 3), repeats=2, rng=0)
    for obj, start in ((it, "IterationResult(steps=50, rate="), (curve, "AblationCurve(kind='edge', fractions=<float64 (3,)>")):
        assert len(repr(obj)) < 200 and repr(obj).startswith(start), repr(obj)
