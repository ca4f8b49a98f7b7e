"""verify.appendix_c (DRIFT-13): the corrected first-order coefficient passes, the printed 1/m0 fails.

Measured once at the defaults (deterministic quadrature) and at the corners of the allowed range; the
printed claim is asserted on the same quantities.
"""

import dataclasses
import math

import pytest

from verify import appendix_c as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
default = measurement_fixture(CHECK)


def test_corrected_coefficient(default):
    p, q = default
    res = assert_passes(CHECK, q, p)
    # closed form at c=2, d3=0.6, a=0.5: (2 + 2a - d3/c) / c = 1.35
    rec = res.record("coefficient_1d")
    assert rec.expected == pytest.approx(1.35, abs=1e-15)
    assert abs(rec.measured - 1.35) <= rec.tolerance


def test_printed_coefficient_fails_on_both_records(default):
    p, q = default
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {"coefficient_1d", "coefficient_2d"})
    for name in ("coefficient_1d", "coefficient_2d"):
        rec = res.record(name)
        assert abs(rec.measured - rec.expected) > 100 * rec.tolerance  # off by O(1), not marginally
    assert res.record("coefficient_1d").expected == pytest.approx(res.measured["printed_1d"])
    assert "printed Proposition 1" in res.failures[0]


@pytest.mark.parametrize("c, d3, a, eps_max", [(0.5, 1.0, -2.0, 5e-3), (10.0, -1.0, -1.0, 1e-4),
                                               (2.0, 0.0, -1.0, 0.02), (1.0, -0.4, -0.3, 4e-3)])
def test_range_corners_pass_and_printed_fails(c, d3, a, eps_max):
    # corners where adaptive quadrature raised IntegrationWarning (filterwarnings=error) or Richardson
    # was short (the first is the worst corner, 9.4e-5 of 1e-4); the printed claim still fails there (at
    # a = -1 the 1-D Laplacian and density-drift terms cancel, 2 + 2a = 0: the 2-D coefficient decides)
    p, q = measured(CHECK, c=c, d3=d3, a=a, eps_max=eps_max)
    assert_passes(CHECK, q, p)
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "coefficient_2d")


def test_no_extrapolation_fails(default):
    """The raw difference quotient at the smallest eps (no Richardson table) is off by O(eps): it fails."""
    p, q = default
    assert_fails(CHECK, q, p, {"coefficient_1d", "coefficient_2d"}, coefficient_1d=q.difference_quotient_1d[-1],
                 coefficient_2d=q.difference_quotient_2d[-1])


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "default", [
    ({"coefficient_1d": 1.35 + 2e-4}, "coefficient_1d"),
    ({"coefficient_2d": math.nan}, "coefficient_2d"),
    ({"corrected_2d": 0.0}, "coefficient_2d"),
])


def test_json_round_trip_gives_typed_quantities(default):
    p, q = default
    assert_round_trip(CHECK, q, p)  # typed again: the coefficients, the difference quotients


test_bad_input = refusals(CHECK.params, [({"eps_max": 1.0}, "eps_max"), ({"claim": "z"}, "claim"),
                                         ({"c": 0.5, "eps_max": 0.02}, "eps_max / c"),
                                         ({"c": -1.0}, "c must be"), ({"d3": 2.0}, "d3"),
                                         ({"a": float("nan")}, "a must be")])


def test_a_nan_quadrature_fails(default, inject_nan):
    # no reduction drops a NaN here: one NaN quadrature (the third eps, 1-D and 2-D) reaches each Richardson limit
    p = default[0]
    poisoned = [inject_nan(f"verify.appendix_c._ratio_{dim}", call=2) for dim in ("1d", "2d")]
    q = CHECK.measure(p)
    assert poisoned == [[2], [2]]
    failed = {"coefficient_1d", "coefficient_2d"}
    res = assert_fails(CHECK, q, p, failed, only=True)
    assert all(math.isnan(res.measured[n]) for n in failed)
