"""verify.density_normalisation (FNA-14): stationary law rho^(1-2a) and column sums 1; eq. (43) as
printed fails, and so does a density-independent stationary law."""

import pytest

from spectral.validation import InputError
from verify import density_normalisation as dn

CHEAP = dict(densities=("cosine",), alphas=(2.0,), n=800)


def _failed(result):
    return {r.name for r in result.records if r.passed is False}


def test_default_passes(default_result):
    r = default_result("density_normalisation")
    assert r.passed, r.failures
    m = r.measured
    for dens in ("cosine", "vonmises"):
        for a in (0, 0.5, 1):
            law = r.record(f"law_slope_{dens}_alpha2_a{a:g}")
            assert law.expected == 1 - 2 * a and abs(law.measured - law.expected) < 1e-3
            assert r.record(f"stationarity_resid_{dens}_alpha1.2_a{a:g}").measured < 1e-13
            assert abs(m[f"column_sum_slope_{dens}_alpha1.2_a{a:g}"]) < 0.05
    assert m["grid_gap_over_scale_vonmises"] < 0.6  # inside the measured regime


def test_eq43_as_printed_fails():
    r = dn.run(claim="printed", densities=("cosine",), alphas=(2.0,), n=600, exponents=(0.0,))
    assert _failed(r) == {"column_sum_slope_cosine_alpha2_a0"}, r.failures
    assert "eq. (43) as printed" in r.failures[0]
    assert r.record("column_sum_slope_cosine_alpha2_a0").expected == 1.0
    assert not r.record("column_sum_max_dev_cosine_alpha2_a0").deciding


def test_density_independent_law_fails():
    r = dn.run(law="rho", **CHEAP)
    # a = 0 gives rho^1 (passes); a = 1/2 and a = 1 fail
    assert _failed(r) == {"law_slope_cosine_alpha2_a0.5", "law_slope_cosine_alpha2_a1"}, r.failures
    assert all("stationary law" in f for f in r.failures)


def test_cheap_setting_passes():
    r = dn.run(**CHEAP)
    assert r.passed, r.failures


def test_unresolved_grid_fails_and_says_why():
    # n = 500 at s = 0.02: widest grid gap 2.2 s, stationary-law slope 0.79-0.82 instead of 1
    r = dn.run(n=500)
    assert not r.passed
    assert all("grid gap / scale" in f for f in r.failures), r.failures


@pytest.mark.parametrize("kwargs, word", [
    (dict(exponents=(1.5,)), "exponents"), (dict(exponents=()), "exponents"), (dict(alphas=(0.2,)), "alphas"),
    (dict(n=10), "n"), (dict(scale=1.0), "scale"), (dict(law="x"), "law"), (dict(claim="paper"), "claim"),
    (dict(densities=("normal",)), "densities"), (dict(densities=()), "densities"),
])
def test_bad_input(kwargs, word):
    with pytest.raises(InputError, match=word):
        dn.run(**kwargs)


def test_computes_in_the_device_namespace(device_spy):
    ref = dn.run(**CHEAP)
    spy = device_spy.install()
    res = dn.run(**CHEAP)
    assert {"asarray", "abs", "minimum", "sum", "max"} <= spy.used
    # array_api_strict wraps numpy: the same operations give the same numbers
    assert [r.measured for r in res.records] == pytest.approx([r.measured for r in ref.records], rel=1e-12)
    assert res.passed == ref.passed

