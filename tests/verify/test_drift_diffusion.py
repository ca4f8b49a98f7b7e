"""verify.drift_diffusion (DRIFT-4): drift coefficient 2; the printed drift and wrong limits fail."""

import pytest

from spectral.backend import array_namespace
from spectral.validation import InputError
from verify import drift_diffusion as check

GRID = {"tiers": ("circle_grid",), "grid_n": 3000}


def test_default_passes(default_result):
    res = default_result("drift_diffusion")
    assert res.passed, res.failures
    coef = res.record("circle_grid_drift_coef")  # drift 2 in (1/2)(Delta + 2 <., .>): B = 1
    assert coef.expected == 1.0 and abs(coef.measured - 1.0) <= coef.tolerance
    assert res.record("sphere_continuum_remainder_slope").passed


@pytest.mark.parametrize("kwargs", [{"claim": "printed"}, {"wrong_limit": "no_drift"},
                                    {"wrong_limit": "missing_half"}, {"wrong_limit": "sign_flip"}])
def test_printed_and_wrong_limits_fail(kwargs):
    res = check.run(**kwargs, **GRID)
    assert not res.passed
    rms = res.record("circle_grid_relative_rms")
    assert rms.passed is False and rms.measured > 0.3  # measured >= 0.35 for every wrong limit
    assert any("relative RMS" in f for f in res.failures)


def test_continuum_remainder_slope():
    assert check.run(tiers=("sphere_continuum",)).passed
    wrong = check.run(wrong_limit="missing_half", tiers=("sphere_continuum",))
    assert wrong.record("sphere_continuum_remainder_slope").passed is False  # O(eps) remainder: slope 1
    assert any(f.startswith("sphere_continuum") for f in wrong.failures)


def test_coifman_lafon_family():
    res = check.run(a=0.5, **GRID)
    assert res.passed, res.failures
    assert res.record("circle_grid_drift_coef").expected == 0.5
    wrong = check.run(a=0.5, claim="printed", **GRID)  # a = 0.5 but drift (1-a) instead of 2(1-a): fails
    assert not wrong.passed and wrong.record("circle_grid_drift_coef").passed is False


def test_drift_only_claim_needs_a_non_uniform_tier():
    # sphere_continuum alone has a uniform density: no_drift passed there before this guard
    with pytest.raises(InputError, match="cannot test the 'no_drift' limit"):
        check.run(tiers=("sphere_continuum",), wrong_limit="no_drift")
    with pytest.raises(InputError, match="cannot test the 'printed' limit"):
        check.run(tiers=("sphere_continuum",), claim="printed")


def test_streamed_tiers_compute_in_the_device_namespace(monkeypatch, default_result):
    # array_api_strict stands in for the device: the i.i.d. tiers' streamed kernel must run on arrays of
    # that namespace, and give numpy's records up to summation order (measured: equal or 1 ulp apart);
    # each tier has its own random stream, so the default run's sphere_iid records are the reference
    array_api_strict = pytest.importorskip("array_api_strict")
    import spectral

    built = []
    heat_markov = spectral.heat_markov

    def spy(x, **kwargs):
        hm = heat_markov(x, **kwargs)
        built.append((kwargs["method"], array_namespace(x), array_namespace(hm.degrees)))
        return hm

    monkeypatch.setattr(spectral, "heat_markov", spy)
    monkeypatch.setattr("verify.core.check.device_namespace", lambda device: array_api_strict)
    res = check.run(tiers=("sphere_iid",))
    assert built == [("streamed", array_api_strict, array_api_strict)]
    ref = default_result("drift_diffusion")
    assert res.passed == ref.passed and [r.name for r in res.records]
    for rec in res.records:
        assert rec.measured == pytest.approx(ref.record(rec.name).measured, rel=1e-12), rec.name


@pytest.mark.parametrize("kwargs, match", [({"a": 1.5}, "a must"), ({"grid_n": 100}, "grid_n"),
                                           ({"claim": "drift_x1"}, "claim"), ({"wrong_limit": "x"}, "wrong_limit"),
                                           ({"tiers": ("torus",)}, "tiers"), ({"tiers": ()}, "tiers"),
                                           ({"claim": "printed", "wrong_limit": "no_drift"}, "wrong_limit")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
