"""graphs.gap against closed forms (circulant chains), reversibility, backends, bad input, repr."""

import math

import numpy as np
import pytest

from graphs import is_reversible, spectral_gap, stationary_distribution
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError

RTOL = 4 * math.sqrt(np.finfo(float).eps)  # exact algebra


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


def test_repr_is_short():
    text = repr(spectral_gap(_lazy_cycle(200, 0.5)))
    assert len(text) < 200, text
    assert text.startswith("SpectralGap(gap=") and "n_components=1" in text
