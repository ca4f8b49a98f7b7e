"""verify.sa_polytope (SA-4): V = I, Q^T K positive definite: rescaled tokens converge to the vertices of a polytope.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
an implementation that ignores Q^T K (its tokens go to the vertices of the wrong quadratic form) and the
uniform normaliser (no softmax: the tokens blow up).
"""

import dataclasses

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import sa_polytope as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = dict(n=10, dims=(2,), draws=2)


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def _failed(res):
    return {r.name for r in res.records if r.passed is False}


def test_small_settings_pass(small):
    p, q = small
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    assert all(2 <= k < p.n for k in q.limit_points.values())  # leaders: more than one, far fewer than n
    assert q.limits[2].shape[1] == 2 and q.starts[2].shape == (p.n, 2)


def _wrapped(monkeypatch, change, **settings):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **kw: real(X0, **change(dict(kw))))
    p = CHECK.params(**{**SMALL, **settings})
    return _failed(CHECK.assess(CHECK.measure(p), p))


def test_ignoring_the_query_key_matrix_fails(monkeypatch):
    # with B = I in the dynamics the limits are B-vertices only by chance (measured: half of the random B)
    assert "limit_gap" in _wrapped(monkeypatch, lambda kw: {**kw, "query_key": None}, dims=(3,), draws=3)


def test_no_softmax_normaliser_fails(monkeypatch):
    failed = _wrapped(monkeypatch, lambda kw: {**kw, "normalisation": "uniform"})
    assert {"convergence", "limit_gap", "hull_growth"} <= failed  # the flow overflows: NaN never passes


@pytest.mark.parametrize("alter, name", [
    (lambda q: dataclasses.replace(q, convergence={**q.convergence, (2, "spd", 1): 1e-2}), "convergence"),
    (lambda q: dataclasses.replace(q, limit_gap={**q.limit_gap, (2, "identity", 0): 1e-3}), "limit_gap"),
    (lambda q: dataclasses.replace(q, vertices={**q.vertices, (2, "identity", 0): q.vertices[2, "identity", 0] - 1}),
     "limits_not_vertices"),
    (lambda q: dataclasses.replace(q, hull_growth={**q.hull_growth, (2, "spd", 0): 1e-4}), "hull_growth"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, alter, name):
    p, q = small
    assert _failed(CHECK.assess(alter(q), p)) == {name}


def test_nan_never_passes_and_json_round_trip(small):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, limit_gap={**q.limit_gap, (2, "spd", 0): float("nan")}), p)
    assert res.record("limit_gap").passed is False
    back = CheckResult.from_json(CHECK.assess(q, p).to_json()).quantities
    assert type(back) is type(q) and set(back.limit_gap) == set(q.limit_gap)
    np.testing.assert_array_equal(back.limits[2], q.limits[2])


@pytest.mark.parametrize("kwargs, name", [({"dims": (9,)}, "dims"), ({"beta": 0.0}, "beta"), ({"t_max": 2.0}, "t_max")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)
