"""verify.sa_high_dimension (SA-7): uniform tokens in high dimension follow gamma_beta with error ~ d^(-1/2).

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
the other normaliser and a wrong beta (the error against gamma_beta no longer falls with d).
"""

import dataclasses

import numpy as np
import pytest

import spectral
from verify import sa_high_dimension as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, failed_records,
                            measured, measurement_fixture, refusals)

CHECK = check.CHECK
SMALL = dict(n=8, betas=(1.0,), dims=(64, 256, 1024), repeats=8, t_max=2.0, curve_betas=(0.0, 4.0), curve_t=4.0)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert -0.62 < res.measured["order_b1"] < -0.38
    assert res.measured["printed_failure_probability_bound"] > 1  # the printed probability bound is vacuous


@pytest.mark.parametrize("change", [
    lambda kw: {**kw, "normalisation": "uniform"},
    lambda kw: {**kw, "beta": 3.0 * kw["beta"]},  # a 10 % error hides under the d^(-1/2) noise at d <= 1024
])
def test_wrong_dynamics_fail(monkeypatch, change):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **kw: real(X0, **change(dict(kw))))
    p, q = measured(CHECK, **{**SMALL, "repeats": 3})  # a wrong curve gives order ~0 whatever the noise
    assert_fails(CHECK, q, p, "order_deviation")


def test_each_assertion_fails_on_a_wrong_quantity(small):
    p, q = small
    flat = {b: np.full_like(e, 0.05) * np.exp(0.01 * np.arange(e.size)).reshape(e.shape) for b, e in q.errors.items()}
    assert_fails(CHECK, q, p, "order_deviation", only=True, errors=flat)
    late = {b: np.concatenate([g[:20], np.minimum(g[20:], 0.5)]) for b, g in q.gamma.items()}
    shifted = {b: np.concatenate([g[:1], g[:-1]]) for b, g in q.simulated_min_inner.items()}
    assert "curve_crossing_gap" in failed_records(CHECK.assess(dataclasses.replace(q, gamma=late), p)) or \
        "curve_crossing_gap" in failed_records(CHECK.assess(dataclasses.replace(q, simulated_min_inner={
            b: np.concatenate([g[:1]] * 5 + [g[:-5]]) for b, g in shifted.items()}), p))


def test_nan_never_passes_and_json_round_trip(small):
    p, q = small
    bad = {b: np.where(np.arange(e.size).reshape(e.shape) == 0, np.nan, e) for b, e in q.errors.items()}
    assert_fails(CHECK, q, p, "order_deviation", errors=bad)
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.gamma) == {0.0, 4.0}
    np.testing.assert_array_equal(back.errors[1.0], q.errors[1.0])


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"dims": (64, 32, 128)}, "dims"), ({"dims": (32, 64)}, "dims"), ({"repeats": 1}, "repeats"),
])


def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, n=4, betas=(1.0,), dims=(32, 64, 128), repeats=2, t_max=1.0, curve_betas=(0.0, 2.0),
                    curve_t=2.0)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
