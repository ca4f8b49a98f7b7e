"""verify.ms_growth (MS-1): growth rates of the uniform state, the particles' lattice rates, the mean-field order.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
a beta 1 % off and the other normaliser (the lattice rates), and a rate that ignores beta.
"""

import numpy as np
import pytest

import spectral
from verify import ms_growth as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(betas=(2.0, 5.0), lattice_n=32, sizes=(32, 64, 128))
TINY = dict(betas=(5.0,), lattice_n=32, sizes=(16, 32, 64), repeats=8)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert q.dominant == {2.0: 2, 5.0: 3}
    assert abs(q.lattice_rate[5.0, "uniform", 3] - 18.596070304472047) < 1e-5  # 9 I_3(5) / 5
    assert q.deviation[-1] < q.deviation[0]


def _wrapped(monkeypatch, change, record, **kw):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **a: real(X0, **change(dict(a))))
    p, q = measured(CHECK, **{**TINY, **kw})
    return assert_fails(CHECK, q, p, record)


def test_a_beta_one_percent_off_fails(monkeypatch):
    _wrapped(monkeypatch, lambda a: {**a, "beta": 1.01 * a["beta"]}, "lattice_rate_relative_error")


def test_the_other_normaliser_fails(monkeypatch):
    swap = {"softmax": "uniform", "uniform": "softmax"}
    _wrapped(monkeypatch, lambda a: {**a, "normalisation": swap[a["normalisation"]]},
             {"lattice_rate_relative_error", "mean_field_order"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("quadrature_gap", (5.0, "uniform", 3)): 1e-6}, "quadrature_relative_gap"),
    ({("lattice_rate", (5.0, "softmax", 3)): 0.69}, "lattice_rate_relative_error"),
    (lambda q: {"deviation": np.full(q.deviation.shape, 0.1)}, "mean_field_order"),
    (lambda q: {"deviation": q.deviation * (q.sizes / q.sizes[0]) ** -0.5}, "mean_field_order"),
], only=True)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("lattice_rate", (2.0, "uniform", 1)), "lattice_rate_relative_error")


def test_json_round_trip_and_full_tier(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.lattice_rate) == set(q.lattice_rate)
    full = CHECK.params(full=True)
    assert full.sizes[-1] == 4096 and full.repeats == 256


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"betas": (5.0, 2.0)}, "betas"), ({"sizes": (64, 32, 128)}, "sizes"),
    ({"lattice_n": 16, "betas": (20.0,)}, "lattice_n"),
    ({"repeats": 1}, "repeats"),
])


@pytest.mark.slow  # array_api_strict costs ~20 us per operation
def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p, q = measured(CHECK, **TINY)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used
    assert_same_records(CHECK.assess(q, p), got)
