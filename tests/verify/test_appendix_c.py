"""verify.appendix_c (DRIFT-13): the corrected first-order coefficient passes, the printed 1/m0 fails.

Measured once at the defaults (deterministic quadrature) and at the corners of the allowed range; the
printed claim is asserted on the same quantities.
"""

import dataclasses
import math

import numpy as np
import pytest

from spectral.validation import InputError
from verify import appendix_c as check
from verify.core.result import CheckResult

CHECK = check.CHECK


@pytest.fixture(scope="module")
def default():
    p = CHECK.params()
    return p, CHECK.measure(p)


def test_corrected_coefficient(default):
    p, q = default
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    # closed form at c=2, d3=0.6, a=0.5: (2 + 2a - d3/c) / c = 1.35
    rec = res.record("coefficient_1d")
    assert rec.expected == pytest.approx(1.35, abs=1e-15)
    assert abs(rec.measured - 1.35) <= rec.tolerance


def test_printed_coefficient_fails_on_both_records(default):
    p, q = default
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    assert not res.passed
    for name in ("coefficient_1d", "coefficient_2d"):
        rec = res.record(name)
        assert rec.passed is False
        assert abs(rec.measured - rec.expected) > 100 * rec.tolerance  # off by O(1), not marginally
    assert res.record("coefficient_1d").expected == pytest.approx(res.measured["printed_1d"])
    assert "printed Proposition 1" in res.failures[0]


@pytest.mark.parametrize("c, d3, a, eps_max", [(0.5, 1.0, -2.0, 5e-3), (10.0, -1.0, -1.0, 1e-4),
                                               (2.0, 0.0, -1.0, 0.02), (1.0, -0.4, -0.3, 4e-3)])
def test_range_corners_pass_and_printed_fails(c, d3, a, eps_max):
    # corners where adaptive quadrature raised IntegrationWarning (filterwarnings=error) or Richardson
    # was short (the first is the worst corner, 9.4e-5 of 1e-4); the printed claim still fails there (at
    # a = -1 the 1-D Laplacian and density-drift terms cancel, 2 + 2a = 0: the 2-D coefficient decides)
    p = CHECK.params(c=c, d3=d3, a=a, eps_max=eps_max)
    q = CHECK.measure(p)
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    assert CHECK.assess(q, dataclasses.replace(p, claim="printed")).record("coefficient_2d").passed is False


def test_no_extrapolation_fails(default):
    """The raw difference quotient at the smallest eps (no Richardson table) is off by O(eps): it fails."""
    p, q = default
    raw = dataclasses.replace(q, coefficient_1d=q.difference_quotient_1d[-1],
                              coefficient_2d=q.difference_quotient_2d[-1])
    res = CHECK.assess(raw, p)
    assert res.record("coefficient_1d").passed is False and res.record("coefficient_2d").passed is False


@pytest.mark.parametrize("change, name", [({"coefficient_1d": 1.35 + 2e-4}, "coefficient_1d"),
                                          ({"coefficient_2d": math.nan}, "coefficient_2d"),
                                          ({"corrected_2d": 0.0}, "coefficient_2d")])
def test_each_assertion_fails_on_a_wrong_quantity(default, change, name):
    p, q = default
    res = CHECK.assess(dataclasses.replace(q, **change), p)
    assert not res.passed and res.record(name).passed is False


def test_json_round_trip_gives_typed_quantities(default):
    p, q = default
    back = CheckResult.from_json(CHECK.assess(q, p).to_json())
    assert type(back.quantities) is type(q) and back.quantities.coefficient_1d == q.coefficient_1d
    np.testing.assert_array_equal(back.quantities.difference_quotient_2d, q.difference_quotient_2d)


@pytest.mark.parametrize("kwargs, match", [({"eps_max": 1.0}, "eps_max"), ({"claim": "z"}, "claim"),
                                           ({"c": 0.5, "eps_max": 0.02}, "eps_max / c"),
                                           ({"c": -1.0}, "c must be"), ({"d3": 2.0}, "d3"),
                                           ({"a": float("nan")}, "a must be")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        CHECK.params(**kwargs)


def test_a_nan_quadrature_fails(inject_nan):
    # no reduction drops a NaN here: one NaN quadrature (the third eps, 1-D and 2-D) reaches each Richardson limit
    poisoned = [inject_nan(f"verify.appendix_c._ratio_{dim}", call=2) for dim in ("1d", "2d")]
    p = CHECK.params()
    res = CHECK.assess(CHECK.measure(p), p)
    assert poisoned == [[2], [2]]
    failed = [r.name for r in res.records if r.passed is False]
    assert failed == ["coefficient_1d", "coefficient_2d"] and all(math.isnan(res.measured[n]) for n in failed)
