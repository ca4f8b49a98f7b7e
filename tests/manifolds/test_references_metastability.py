"""manifolds.references.metastability: growth rates, the winner law and escape rates against independent computations."""

import math

import numpy as np
import pytest

from manifolds.references import metastability as ms
from spectral.floor.validation import InputError


@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("beta", [1.0, 5.0, 30.0])
def test_closed_form_matches_quadrature(d, beta):
    for k in (1, 2, 4, 7):
        for norm in ms.NORMALISATIONS:
            closed = ms.growth_rate(k, beta, normalisation=norm, d=d)
            assert closed == pytest.approx(ms.growth_rate_quadrature(k, beta, normalisation=norm, d=d), rel=1e-9)


def test_growth_rate_values_and_limits():
    assert ms.growth_rate(3, 5.0) == pytest.approx(9 * 10.331150169151138 / 5, rel=1e-12)  # I_3(5) (A&S tables)
    assert ms.growth_rate(1, 1e-6) == pytest.approx(0.5, rel=1e-6)  # k = 1: I_1(b) / b -> 1/2
    # (SA) is (USA) divided by I_0(beta): same argmax
    ks = np.arange(1, 12)
    for beta in (0.7, 4.0, 19.0):
        a, b = ms.growth_rate(ks, beta), ms.growth_rate(ks, beta, normalisation="softmax")
        assert np.argmax(a) == np.argmax(b)
        assert np.allclose(a / b, a[0] / b[0], rtol=1e-12)
    # k* ~ sqrt(2 beta) and the (SA) rate of k* tends to 2/e
    assert ms.dominant_mode(5.0) == 3 and ms.dominant_mode(7.0) == 4 and ms.dominant_mode(0.9) == 1
    assert abs(ms.dominant_mode(600.0) / math.sqrt(1200.0) - 1) < 0.05
    assert ms.growth_rate(ms.dominant_mode(600.0), 600.0, normalisation="softmax") == pytest.approx(2 / math.e, rel=0.01)


def test_mode_transitions_are_ties():
    for k in (1, 2, 5):
        b = ms.mode_transition(k)
        assert ms.growth_rate(k, b) == pytest.approx(ms.growth_rate(k + 1, b), rel=1e-10)
        assert ms.dominant_mode(b * 0.999) == k and ms.dominant_mode(b * 1.001) == k + 1
    assert ms.mode_transition(2) == pytest.approx(3.1654, abs=1e-4)


def test_the_fourier_identity_is_exact():
    """dc_k/dt of (USA) from the Bessel expansion equals the mean of i k e^(i k theta) theta' (any n)."""
    theta = np.random.default_rng(3).uniform(0, 2 * np.pi, 40)
    v = ms.angle_velocity(theta, 4.0)
    for k in (1, 3, 6):
        direct = np.mean(1j * k * np.exp(1j * k * theta) * v)
        assert abs(ms.fourier_velocity(theta, k, 4.0) - direct) < 1e-12 * max(1.0, abs(direct))


def test_angle_velocity_is_the_particle_system():
    """(SA) and (USA) on the circle: the tangential component of the softmax / uniform attention average."""
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 7)
    X = np.stack([np.cos(theta), np.sin(theta)], -1)
    for norm, beta in (("uniform", 2.0), ("softmax", 3.0)):
        W = np.exp(beta * X @ X.T)
        A = (W @ X) / (W.sum(1, keepdims=True) if norm == "softmax" else len(theta))
        tangent = np.stack([-np.sin(theta), np.cos(theta)], -1)
        assert np.allclose(ms.angle_velocity(theta, beta, normalisation=norm), np.sum(A * tangent, -1), atol=1e-13)


def test_winner_law_matches_monte_carlo():
    ks = np.arange(1, 10)
    for beta, scales in ((5.0, ms.amplitude_scale(ks, 1024)),
                         (8.0, ms.amplitude_scale(ks, 256, start="lattice", jitter=1e-3))):
        law = ms.winner_probabilities(beta, scales, level=0.3)
        assert law.sum() == pytest.approx(1.0, abs=1e-9)
        rng = np.random.default_rng(1)
        m = 100_000
        c = (rng.standard_normal((m, ks.size)) + 1j * rng.standard_normal((m, ks.size))) * scales / math.sqrt(2)
        t = (math.log(0.3) - np.log(np.abs(c))) / ms.growth_rate(ks, beta)
        mc = np.bincount(np.argmin(t, axis=1), minlength=ks.size) / m
        assert np.all(np.abs(mc - law) <= 5 * np.sqrt(law * (1 - law) / m) + 1e-4)


def test_lattice_amplitudes_match_their_definition():
    rng = np.random.default_rng(2)
    n, jitter = 64, 0.01
    theta = 2 * np.pi * np.arange(n) / n + jitter * rng.standard_normal((20000, n))
    c2 = np.abs(np.exp(1j * 3 * theta).mean(-1)) ** 2
    assert c2.mean() == pytest.approx(ms.amplitude_scale([3], n, start="lattice", jitter=jitter)[0] ** 2, rel=0.03)


@pytest.mark.parametrize("k", [2, 3, 4, 6])
@pytest.mark.parametrize("norm", ["softmax", "uniform"])
def test_escape_rates_match_the_jacobian(k, norm):
    for beta in (0.5, 4.0, 9.0):
        assert ms.cluster_escape_rate(k, beta, normalisation=norm) == pytest.approx(
            ms.cluster_escape_rate_quadrature(k, beta, normalisation=norm), rel=1e-6, abs=1e-14)


def test_escape_rates_closed_cases():
    # two clusters (SA): mu = 2 g'(pi) (-1) ... = 2 e^(-beta) / (e^beta + e^(-beta))
    for beta in (1.0, 3.0):
        assert ms.cluster_escape_rate(2, beta) == pytest.approx(2 * math.exp(-beta) / (2 * math.cosh(beta)), rel=1e-12)
    assert ms.cluster_escape_rates(5, 2.0)[0] == 0.0  # rotations
    # the exponent tends to 1 - cos(2 pi / k)
    for k in (3, 4):
        slope = math.log(ms.cluster_escape_rate(k, 200.0) / ms.cluster_escape_rate(k, 400.0)) / 200.0
        assert abs(slope - (1 - math.cos(2 * math.pi / k))) < 0.005


def test_merge_time_follows_the_escape_rate():
    k, beta, delta = 3, 4.0, 1e-8
    mu = ms.cluster_escape_rate(k, beta)
    theta = 2 * np.pi * np.arange(k) / k + delta * np.cos(2 * np.pi * np.arange(k) / k)
    t1 = ms.merge_time(theta, beta)
    t2 = ms.merge_time(2 * np.pi * np.arange(k) / k + 2 * delta * np.cos(2 * np.pi * np.arange(k) / k), beta)
    assert (t1 - t2) * mu == pytest.approx(math.log(2), rel=1e-4)  # halving delta adds log 2 / mu


def test_theorem_quantities():
    assert ms.cap_cosine(3, 0.0) == pytest.approx(-0.5)
    assert ms.cap_cosine(3, 1e-2) > -0.5
    assert ms.separation_margin(3, 12.0, 1e-2, 12) == pytest.approx(
        1 - ms.cap_cosine(3, 1e-2) - 0.08 - math.log(2 * 144 / 1e-2) / 12.0)
    assert ms.escape_time_bound(3, 12.0, 1e-2, 12) == pytest.approx(1e-2 / 12 * math.exp((1 - ms.cap_cosine(3, 1e-2)) * 12))
    best = ms.separation_margin_max(3, 12.0, 12)
    assert best >= max(ms.separation_margin(3, 12.0, e, 12) for e in np.geomspace(1e-10, 1 / 16, 300))


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="beta"):
        ms.growth_rate(1, 0.0)
    with pytest.raises(InputError, match="k must be integers"):
        ms.growth_rate(0, 1.0)
    with pytest.raises(InputError, match="normalisation"):
        ms.growth_rate(1, 1.0, normalisation="sinkhorn")
    with pytest.raises(InputError, match="scales"):
        ms.winner_probabilities(2.0, [0.1, -1.0])
    with pytest.raises(InputError, match="below n"):
        ms.amplitude_scale([8], 8, start="lattice", jitter=0.1)
