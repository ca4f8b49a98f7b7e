"""verify.ms_phase (MS-2, MS-3): the first mode to grow and the clusters formed from near-uniform tokens.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
a beta that is ignored and a beta doubled (another k*).
"""

import numpy as np
import pytest

import spectral
from verify import ms_phase as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(betas=(2.0, 5.0), n=64, draws=6)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert q.dominant == {2.0: 2, 5.0: 3}
    for b, law in q.model.items():
        assert abs(law.sum() - 1.0) < 1e-8


def _wrapped(monkeypatch, change, record):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **a: real(X0, **change(dict(a))))
    p, q = measured(CHECK, **SMALL)
    return assert_fails(CHECK, q, p, record)


def test_an_ignored_beta_fails(monkeypatch):
    _wrapped(monkeypatch, lambda a: {**a, "beta": 0.5}, {"dominant_mode_frequency_b5", "fig4_three_clusters_share",
                                                      "excluded_winner_share"})


def test_a_doubled_beta_fails(monkeypatch):
    # beta 10 where 5 is claimed: k* = 4 grows instead of 3
    _wrapped(monkeypatch, lambda a: {**a, "beta": 2.0 * a["beta"]},
             {"dominant_mode_frequency_b5", "fig4_three_clusters_share"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("winners", 5.0): np.array([3, 3, 3, 9, 3, 3])}, "excluded_winner_share"),
    ({("winners", 2.0): np.array([3, 3, 3, 3, 3, 3])}, "dominant_mode_frequency_b2"),
    ({("winners", 5.0): np.zeros(6, dtype=int)}, {"excluded_winner_share", "dominant_mode_frequency_b5"}),
    (lambda q: {"counts": {2.0: np.full(6, 1), 5.0: np.full(6, 2)}}, {"cluster_count_share",
                                                                       "fig4_three_clusters_share"}),
    ({("counts", 5.0): np.array([3, 2, 4, 4, 3, 2])}, "fig4_three_clusters_share"),
])


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("model", 5.0), {"excluded_winner_share", "dominant_mode_frequency_b5"})


def test_json_round_trip_and_full_tier(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.winners) == {2.0, 5.0}
    full = CHECK.params(full=True)
    assert (full.n, full.draws, full.iid_n) == (256, 48, 1024) and len(full.betas) == 16


def test_the_iid_setting_is_reported_beside(monkeypatch):
    p, q = measured(CHECK, betas=(2.0,), n=32, draws=2, iid_n=32, iid_draws=2)
    res = CHECK.assess(q, p)
    assert q.iid_counts[2.0].shape == (2,)
    assert "iid_k_star_share_b2" in {r.name for r in res.records}


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"betas": (5.0, 2.0)}, "betas"),
    ({"n": 16, "betas": (5.0,)}, "n = 16"),
    ({"start": "iid", "n": 256}, "level"),  # the noise n^(-1/2) is not small against the level: outside the theory
    ({"jitter": 0.3}, "level"),
])


@pytest.mark.slow  # array_api_strict costs ~20 us per operation
def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, betas=(2.0,), n=32, draws=2)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
