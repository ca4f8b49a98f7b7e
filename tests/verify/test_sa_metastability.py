"""verify.sa_metastability (SA-3): two-cluster merges on the reference's time, plateaus growing with beta.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
the other normaliser (whose plateaus shrink with beta), a beta 5 % off, and a beta that is ignored.
"""

import numpy as np
import pytest

import spectral
from verify import sa_metastability as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=4, betas=(2.0, 4.0), phase_n=8, phase_betas=(1.0, 16.0), draws=4, phase_t=32.0)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    usa = [q.merge_time[b, "uniform"] for b in p.betas]
    assert usa[0] > usa[1]  # (USA): the plateau shrinks with beta in time (rho0 = 0)


def _wrapped(monkeypatch, change, record, **kw):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **a: real(X0, **change(dict(a))))
    p, q = measured(CHECK, **{**SMALL, **kw})
    assert_fails(CHECK, q, p, record)


def test_the_other_normaliser_fails(monkeypatch):
    swap = {"softmax": "uniform", "uniform": "softmax"}
    _wrapped(monkeypatch, lambda a: {**a, "normalisation": swap[a.get("normalisation", "softmax")]},
             {"rho_trajectory_error", "total_merge_time_relative_error", "sa_plateau_grows_with_beta"},
             betas=(2.0, 4.0), phase_betas=(1.0, 2.0), draws=2)


def test_a_beta_five_percent_off_fails(monkeypatch):
    _wrapped(monkeypatch, lambda a: {**a, "beta": 1.05 * a["beta"]}, "rho_trajectory_error", betas=(2.0, 4.0),
             phase_betas=(1.0, 2.0), draws=2)


def test_an_ignored_beta_has_no_plateaus(monkeypatch):
    _wrapped(monkeypatch, lambda a: {**a, "beta": 1.0},
             {"sa_plateau_grows_with_beta", "phase_count_increases_with_beta", "phase_mean_count_at_largest_beta"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("rho_trajectory_error", (4.0, "softmax")): 1e-5}, "rho_trajectory_error"),
    (lambda q: {"merge_time": {**q.merge_time, (2.0, "uniform"): 2.0 * q.merge_time[2.0, "uniform"]}},
     "total_merge_time_relative_error"),
    ({("phase_counts", 16.0): np.ones(4, dtype=int)}, "phase_count_increases_with_beta"),
    (lambda q: {"phase_counts": {**q.phase_counts, 1.0: np.array([1, 2, 1, 1])}},
     "phase_multi_cluster_draws_at_smallest_beta"),
    ({("phase_cluster_radius", 16.0): 0.2}, "phase_cluster_radius"),
])


def test_growth_assertions_fail_on_wrong_times(small):
    p, q = small
    flat = {**q.merge_time, (4.0, "softmax"): q.merge_time[2.0, "softmax"] * 0.9}
    assert_fails(CHECK, q, p, {"sa_plateau_grows_with_beta", "growth_rate_error"}, merge_time=flat)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("rho_trajectory_error", (2.0, "softmax")), "rho_trajectory_error")


def test_json_round_trip_and_full_tier(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.phase_counts) == {1.0, 16.0} and set(back.merge_time) == set(q.merge_time)
    full = CHECK.params(full=True)
    assert (full.phase_n, full.phase_d, full.draws) == (32, 2, 2048)


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"betas": (4.0, 2.0)}, "betas"), ({"phase_betas": (2.0, 1.0)}, "phase_betas"), ({"cap": 0.0}, "cap"),
    ({"rho0": 0.95}, "rho0"),
])


@pytest.mark.slow  # array_api_strict costs ~20 us per operation: several seconds for these runs
def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, n=4, betas=(2.0, 3.0), phase_n=6, phase_betas=(1.0, 9.0), draws=2, phase_t=32.0)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
