"""verify.sa_polytope (SA-4): V = I, Q^T K positive definite: rescaled tokens converge to the vertices of a polytope.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
an implementation that ignores Q^T K (its tokens go to the vertices of the wrong quadratic form) and the
uniform normaliser (no softmax: the tokens blow up).
"""

import numpy as np
import spectral
from verify import sa_polytope as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=10, dims=(2,), draws=2)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert all(2 <= k < p.n for k in q.limit_points.values())  # leaders: more than one, far fewer than n
    assert q.limits[2].shape[1] == 2 and q.starts[2].shape == (p.n, 2)


def _wrapped(monkeypatch, change, **settings):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **kw: real(X0, **change(dict(kw))))
    return measured(CHECK, **{**SMALL, **settings})


def test_ignoring_the_query_key_matrix_fails(monkeypatch):
    # with B = I in the dynamics the limits are B-vertices only by chance (measured: half of the random B)
    p, q = _wrapped(monkeypatch, lambda kw: {**kw, "query_key": None}, dims=(3,), draws=3)
    assert_fails(CHECK, q, p, "limit_gap")


def test_no_softmax_normaliser_fails(monkeypatch):
    p, q = _wrapped(monkeypatch, lambda kw: {**kw, "normalisation": "uniform"})
    assert_fails(CHECK, q, p, {"convergence", "limit_gap", "hull_growth"})  # the flow overflows: NaN never passes


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("convergence", (2, "spd", 1)): 1e-2}, "convergence"),
    ({("limit_gap", (2, "identity", 0)): 1e-3}, "limit_gap"),
    (lambda q: {"vertices": {**q.vertices, (2, "identity", 0): q.vertices[2, "identity", 0] - 1}},
     "limits_not_vertices"),
    ({("hull_growth", (2, "spd", 0)): 1e-4}, "hull_growth"),
], only=True)


def test_nan_never_passes_and_json_round_trip(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("limit_gap", (2, "spd", 0)), "limit_gap")
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.limit_gap) == set(q.limit_gap)
    np.testing.assert_array_equal(back.limits[2], q.limits[2])


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"dims": (9,)}, "dims"), ({"beta": 0.0}, "beta"), ({"t_max": 2.0}, "t_max")
])
