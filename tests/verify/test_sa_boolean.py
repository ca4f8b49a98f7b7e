"""verify.sa_boolean (SA-5): in d = 1 the attention matrix tends to a Boolean matrix led by the extreme tokens.

Measured once at small settings; the assertions are held to altered quantities, to the theorem's
hypothesis broken (V < 0: every token goes to 0 and P stays spread) and to tokens held on the sphere
(S^0 = {-1, +1}: P is a fixed non-Boolean matrix).
"""

import numpy as np
import spectral
from verify import sa_boolean as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=8, draws=6)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert set(q.rank.tolist()) <= {1, 2} and q.boolean_distance[0] > 0.5  # spread out at t = 0


def test_negative_value_is_not_boolean():
    p, q = measured(CHECK, **SMALL, value=-1.0)
    assert_fails(CHECK, q, p, {"boolean_distance", "log_log_rate"})


def test_tokens_on_the_sphere_fail(monkeypatch):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow",
                        lambda X0, **kw: real(np.sign(X0), **{**kw, "geometry": "sphere"}))
    p, q = measured(CHECK, **SMALL)
    assert_fails(CHECK, q, p, "boolean_distance")


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    (lambda q: {"boolean_distance": np.concatenate([q.boolean_distance[:-1], [1e-3]])}, "boolean_distance"),
    ({"rank": np.array([2, 3, 1, 2, 2, 2])}, "max_rank"),
    ({"distinct_rows": np.array([2, 3, 1, 2, 2, 2])}, "max_distinct_rows"),
    ({"order_changes": 1}, "order_changes"),
])


def test_a_slow_approach_is_not_doubly_exponential(small):
    p, q = small
    k0 = int(0.75 * (q.times.size - 1))
    slow = q.boolean_distance.copy()
    slow[k0:] = 1e-3 * np.exp(-(q.times[k0:] - q.times[k0]))  # only exponential
    assert_fails(CHECK, q, p, "log_log_rate", boolean_distance=slow)


def test_nan_never_passes_and_json_round_trip(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, "boolean_distance", "boolean_distance")
    back = assert_round_trip(CHECK, q, p).quantities
    np.testing.assert_array_equal(back.tokens_first, q.tokens_first)


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"n": 1}, "n"), ({"t_max": 0.5}, "t_max"), ({"value": 9.0}, "value")
])
