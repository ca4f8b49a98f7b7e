"""verify.nearest_point (DRIFT-11, DRIFT-12): Example 3 minimiser and the zeroth-order limit."""

import pytest

from spectral.validation import InputError
from verify import nearest_point as check

FAST = {"candidates": 20000, "n_lattice": 20000, "trials": 6, "eps_grid": (0.004, 0.008, 0.016, 0.032)}


def test_corrected_minimiser_passes(default_result):
    res = default_result("nearest_point")
    assert res.passed, res.failures
    # the printed formula coincides with the argmax, not the argmin
    assert res.measured["printed_minus_argmax"] <= res.record("example3_symmetric").tolerance


def test_printed_formula_fails_on_its_own_records():
    res = check.run(claim="printed", **FAST)
    assert not res.passed
    failed = {r.name for r in res.records if r.passed is False}
    # DRIFT-11 as printed: the formula is the argmax, at distance 2 from the minimiser (returns -x for Q = K = I)
    assert {"example3_symmetric", "example3_identity_case"} <= failed
    assert res.measured["example3_symmetric"] == pytest.approx(2.0, abs=1e-6)
    assert res.measured["example3_identity_case"] == pytest.approx(2.0, abs=1e-6)
    # the limit taken at the printed root does not converge
    assert {"point_limit_slope", "point_limit_min_error"} <= failed
    # general M has no printed formula: still compared with M^T x/|M^T x|, and the circle limit is unaffected
    assert res.record("example3_general").passed and res.record("circle_limit_slope").passed
    assert not any("[" in f for f in res.failures)  # no regime hint on a wrong claim


def test_coarse_lattice_fails_and_says_why():
    # spacing sqrt(4 pi / 5000) = 0.050 > sqrt(2e-4) = 0.014: point slope -0.83 (seed 0)
    res = check.run(eps_grid=(1e-4, 2e-4, 4e-4, 8e-4), n_lattice=5000, candidates=5000, trials=2)
    assert not res.passed and all("raise n_lattice" in f for f in res.failures)


def test_large_eps_fails_and_says_why():
    res = check.run(eps_grid=(0.008, 0.016, 0.032, 0.064), candidates=5000, trials=2)
    assert not res.passed and res.record("circle_limit_slope").passed is False
    assert "O(eps^2)" in res.failures[0]


def test_limit_computes_in_the_device_namespace(device_spy):
    ref = check.run(**FAST)
    spy = device_spy.install()
    res = check.run(**FAST)
    assert {"asarray", "exp", "sum"} <= spy.used
    assert res.records == ref.records  # array_api_strict wraps numpy: same numbers


@pytest.mark.parametrize("kwargs, match", [
    ({"dim": 1}, "dim"), ({"claim": "x"}, "claim"), ({"trials": 1}, "trials"), ({"candidates": 10}, "candidates"),
    ({"n_lattice": 10}, "n_lattice"), ({"eps_grid": (1.0, 2.0, 3.0, 4.0)}, "eps_grid"),
    ({"eps_grid": (0.01, 0.02)}, "eps_grid"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
