"""verify.sa_hemisphere (SA-2): cone collapse at the linearised rate, r(t) monotone, Wendel's probability.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
the other normaliser and a wrong beta (the rate is 1 for SA, e^beta for USA), and repelling tokens.
"""

import numpy as np
import pytest

import spectral
from verify import sa_hemisphere as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            failed_records, measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=6, dims=(2,), uniform_n=4, betas=(0.0, 1.0), draws=3, t_max=30.0, mc_draws=100)
TINY = dict(n=5, dims=(3,), uniform_n=3, betas=(1.0,), draws=2, t_max=20.0, mc_draws=20)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    for key, rate in q.rate.items():
        assert np.all(np.abs(rate / q.rate_linear[key] - 1.0) < 1e-5)
    assert q.mc_count[8, 8] == p.mc_draws and q.mc_count[8, 12] == p.mc_draws  # d >= n: always in a hemisphere


def _wrapped(monkeypatch, change, record):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **kw: real(X0, **change(X0, dict(kw))))
    p, q = measured(CHECK, **TINY)
    return failed_records(assert_fails(CHECK, q, p, record))


def test_the_other_normaliser_fails_on_the_rate(monkeypatch):
    swap = {"softmax": "uniform", "uniform": "softmax"}
    failed = _wrapped(monkeypatch, lambda X0, kw: {**kw, "normalisation": swap[kw.get("normalisation", "softmax")]},
                      "rate_relative_error")
    assert "r_decrease" not in failed


def test_a_wrong_beta_fails_on_the_usa_rate(monkeypatch):
    failed = _wrapped(monkeypatch, lambda X0, kw: {**kw, "beta": 1.2 * kw["beta"]}, "rate_relative_error")
    assert failed == {"rate_relative_error"}


def test_repelling_tokens_leave_the_hemisphere(monkeypatch):
    _wrapped(monkeypatch, lambda X0, kw: {**kw, "value": -np.eye(X0.shape[-1])},
             {"r_decrease", "largest_first_run_diameter"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("r_decrease", ("hemisphere", 2, 1.0, "softmax")): 1e-4}, "r_decrease"),
    (lambda q: {"diameter": {**q.diameter, ("uniform", 4, 0.0, "uniform"): np.array([0, 0, 1.0])}},
     "largest_first_run_diameter"),
    (lambda q: {"rate": {**q.rate, ("hemisphere", 2, 1.0, "uniform"): np.array([1.0, 1.0, 1.0])}},
     "rate_relative_error"),
    ({"uniform_in_hemisphere": np.array([True, False, True])}, "uniform_starts_outside_hemisphere"),
    ({"norm_error": 1e-9}, "norm_error"),
    ({("mc_count", (8, 8)): 99}, "hemisphere_misses_when_d_ge_n"),
    ({("mc_count", (8, 4)): 80}, "wendel_z_score"),
], only=True)


def test_the_lemma_bound_fails_on_a_slow_rate(small):
    p, q = small
    slow = {k: (v * 1e-3 if k[3] == "softmax" else v) for k, v in q.rate.items()}
    assert_fails(CHECK, q, p, "rate_over_lemma_bound", rate=slow)


def test_nan_never_passes(small):
    p, q = small
    assert q.rate["uniform", 4, 1.0, "softmax"].shape == (3,)
    assert_nan_fails(CHECK, q, p, ("rate", ("uniform", 4, 1.0, "softmax")), "rate_relative_error")


def test_json_round_trip(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.rate) == set(q.rate) and set(back.mc_count) == set(q.mc_count)
    assert back.uniform_in_hemisphere.dtype == bool or set(np.unique(back.uniform_in_hemisphere)) <= {0, 1}


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"dims": (1,)}, "dims"), ({"mc_draws": 5}, "mc_draws"), ({"betas": (-1.0,)}, "betas"),
])


@pytest.mark.slow  # array_api_strict costs ~20 us per operation: several seconds for these runs
def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, n=4, dims=(2,), uniform_n=3, betas=(1.0,), draws=2, t_max=20.0, mc_draws=20)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)


@pytest.mark.parametrize("field", [("mc_count", (6, 2)), ("wendel", (6, 2))])
def test_a_nan_hemisphere_count_or_probability_fails(small, field):
    # a running max(worst_z, nan) kept the finite worst: the Wendel z-score passed with a NaN draw count
    p, q = small
    assert_nan_fails(CHECK, q, p, field, "wendel_z_score")
