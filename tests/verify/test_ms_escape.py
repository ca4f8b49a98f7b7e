"""verify.ms_escape (MS-4): escape rates and merge times of equally spaced clusters, the theorem's bound, near-uniform data.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
a beta 1 % off and the other normaliser.
"""

import math

import numpy as np
import pytest

import spectral
from verify import ms_escape as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(ks=(3,), betas=(2.0, 3.0), cap_betas=(10.0,), cap_m=2)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert abs(q.limit_exponent[3] - 1.5) < 0.01
    assert np.max(q.plateau_exponent) < math.pi ** 2 + 0.8


def _wrapped(monkeypatch, change, record):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **a: real(X0, **change(dict(a))))
    p, q = measured(CHECK, **SMALL)
    return assert_fails(CHECK, q, p, record)


def test_a_beta_one_percent_off_fails(monkeypatch):
    _wrapped(monkeypatch, lambda a: {**a, "beta": 1.01 * a["beta"]},
             {"escape_rate_relative_error", "merge_time_relative_error"})


@pytest.mark.slow  # the other normaliser is stiff on these time spans: its runs stop at the step limit (10 s)
def test_the_other_normaliser_fails(monkeypatch):
    swap = {"softmax": "uniform", "uniform": "softmax"}
    _wrapped(monkeypatch, lambda a: {**a, "normalisation": swap[a["normalisation"]]},
             {"escape_rate_relative_error", "merge_time_relative_error"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("escape_rate", (3, 2.0, "softmax")): 0.3}, "escape_rate_relative_error"),
    ({("jacobian_rate", (3, 3.0, "uniform")): 0.7}, "rate_closed_form_vs_jacobian"),
    (lambda q: {"merge_time": {**q.merge_time, (3, 3.0, "softmax"): 1.02 * q.merge_time[3, 3.0, "softmax"]}},
     {"merge_time_relative_error", "exponent_gap"}),
    ({("limit_exponent", 3): 1.4}, "exponent_limit_gap"),
    ({("cap_exit", 10.0): 10.0}, "cap_exit_over_bound"),
    ({("cap_gamma", 10.0): -0.1}, {"cap_hypothesis_holds", "cap_exit_over_bound"}),
    (lambda q: {"plateau_exponent": q.plateau_exponent * 1.2}, "plateau_exponent_sup"),
    (lambda q: {"plateau_rate": q.plateau_rate * 0.5}, "plateau_rate_floor"),
    (lambda q: {"plateau_gamma": q.plateau_gamma + 0.05}, "near_uniform_gamma_max"),
], only=True)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("merge_time", (3, 2.0, "uniform")), "merge_time_relative_error")


def test_a_fixed_number_of_clusters_satisfies_the_hypothesis():
    """gamma > 0 is reachable: three caps at beta = 20 are separated; k*(20) = 6 caps are not."""
    from manifolds.references.metastability import dominant_mode, separation_margin_max

    assert separation_margin_max(3, 20.0, 16) > 0.2
    assert separation_margin_max(dominant_mode(20.0), 20.0, 16) < 0.0


def test_json_round_trip_and_full_tier(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.merge_time) == set(q.merge_time)
    assert CHECK.params(full=True).ks == (2, 3, 4, 5, 6)


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"betas": (3.0, 2.0)}, "betas"), ({"cap_betas": (30.0,)}, "cap_betas"), ({"ks": (4, 3)}, "ks"),
])


@pytest.mark.slow  # array_api_strict costs ~20 us per operation
def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, ks=(3,), betas=(2.0, 2.5), cap_betas=(10.0,), cap_m=1)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
