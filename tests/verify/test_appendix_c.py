"""verify.appendix_c (DRIFT-13): the corrected first-order coefficient passes, the printed 1/m0 fails."""

import pytest

from spectral.validation import InputError
from verify import appendix_c as check


def test_corrected_coefficient(default_result):
    res = default_result("appendix_c")
    assert res.passed, res.failures
    # closed form at c=2, d3=0.6, a=0.5: (2 + 2a - d3/c) / c = 1.35
    rec = res.record("coefficient_1d")
    assert rec.expected == pytest.approx(1.35, abs=1e-15)
    assert abs(rec.measured - 1.35) <= rec.tolerance


def test_printed_coefficient_fails_on_both_records():
    res = check.run(claim="printed")
    assert not res.passed
    for name in ("coefficient_1d", "coefficient_2d"):
        rec = res.record(name)
        assert rec.passed is False
        assert abs(rec.measured - rec.expected) > 100 * rec.tolerance  # off by O(1), not marginally
    assert res.record("coefficient_1d").expected == pytest.approx(res.measured["printed_1d"])
    assert "printed Proposition 1" in res.failures[0]


@pytest.mark.parametrize("c, d3, a", [(1.0, -0.4, -0.3), (3.0, 0.0, 0.0)])
def test_other_parameters_pass(c, d3, a):
    res = check.run(c=c, d3=d3, a=a)
    assert res.passed, res.failures


@pytest.mark.parametrize("c, d3, a, eps_max", [(0.5, 1.0, -2.0, 5e-3), (10.0, -1.0, -1.0, 1e-4),
                                               (2.0, 0.0, -1.0, 0.02)])
def test_range_corners_pass_and_printed_fails(c, d3, a, eps_max):
    # corners where adaptive quadrature raised IntegrationWarning (filterwarnings=error) or
    # Richardson was short; the printed claim still fails there
    res = check.run(c=c, d3=d3, a=a, eps_max=eps_max)
    assert res.passed, res.failures
    assert not check.run(claim="printed", c=c, d3=d3, a=2.0, eps_max=eps_max).passed


@pytest.mark.parametrize("kwargs, match", [({"eps_max": 1.0}, "eps_max"), ({"claim": "z"}, "claim"),
                                           ({"c": 0.5, "eps_max": 0.02}, "eps_max / c"),
                                           ({"c": -1.0}, "c must be"), ({"d3": 2.0}, "d3"),
                                           ({"a": float("nan")}, "a must be")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
