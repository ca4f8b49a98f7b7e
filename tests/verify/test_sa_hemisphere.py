"""verify.sa_hemisphere (SA-2): cone collapse at the linearised rate, r(t) monotone, Wendel's probability.

Measured once at small settings; the assertions are held to altered quantities and to wrong dynamics:
the other normaliser and a wrong beta (the rate is 1 for SA, e^beta for USA), and repelling tokens.
"""

import dataclasses

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import sa_hemisphere as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = dict(n=6, dims=(2,), uniform_n=4, betas=(0.0, 1.0), draws=3, t_max=30.0, mc_draws=100)
TINY = dict(n=5, dims=(3,), uniform_n=3, betas=(1.0,), draws=2, t_max=20.0, mc_draws=20)


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
    for key, rate in q.rate.items():
        assert np.all(np.abs(rate / q.rate_linear[key] - 1.0) < 1e-5)
    assert q.mc_count[8, 8] == p.mc_draws and q.mc_count[8, 12] == p.mc_draws  # d >= n: always in a hemisphere


def _wrapped(monkeypatch, change):
    real = spectral.attention_flow
    monkeypatch.setattr(spectral, "attention_flow", lambda X0, **kw: real(X0, **change(X0, dict(kw))))
    p = CHECK.params(**TINY)
    return _failed(CHECK.assess(CHECK.measure(p), p))


def test_the_other_normaliser_fails_on_the_rate(monkeypatch):
    swap = {"softmax": "uniform", "uniform": "softmax"}
    failed = _wrapped(monkeypatch, lambda X0, kw: {**kw, "normalisation": swap[kw.get("normalisation", "softmax")]})
    assert "rate_relative_error" in failed and "r_decrease" not in failed


def test_a_wrong_beta_fails_on_the_usa_rate(monkeypatch):
    failed = _wrapped(monkeypatch, lambda X0, kw: {**kw, "beta": 1.2 * kw["beta"]})
    assert failed == {"rate_relative_error"}


def test_repelling_tokens_leave_the_hemisphere(monkeypatch):
    failed = _wrapped(monkeypatch, lambda X0, kw: {**kw, "value": -np.eye(X0.shape[-1])})
    assert {"r_decrease", "largest_first_run_diameter"} <= failed


@pytest.mark.parametrize("alter, name", [
    (lambda q: dataclasses.replace(q, r_decrease={**q.r_decrease, ("hemisphere", 2, 1.0, "softmax"): 1e-4}),
     "r_decrease"),
    (lambda q: dataclasses.replace(q, diameter={**q.diameter, ("uniform", 4, 0.0, "uniform"): np.array([0, 0, 1.0])}),
     "largest_first_run_diameter"),
    (lambda q: dataclasses.replace(q, rate={**q.rate, ("hemisphere", 2, 1.0, "uniform"): np.array([1.0, 1.0, 1.0])}),
     "rate_relative_error"),
    (lambda q: dataclasses.replace(q, uniform_in_hemisphere=np.array([True, False, True])),
     "uniform_starts_outside_hemisphere"),
    (lambda q: dataclasses.replace(q, norm_error=1e-9), "norm_error"),
    (lambda q: dataclasses.replace(q, mc_count={**q.mc_count, (8, 8): 99}), "hemisphere_misses_when_d_ge_n"),
    (lambda q: dataclasses.replace(q, mc_count={**q.mc_count, (8, 4): 80}), "wendel_z_score"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, alter, name):
    p, q = small
    assert _failed(CHECK.assess(alter(q), p)) == {name}


def test_the_lemma_bound_fails_on_a_slow_rate(small):
    p, q = small
    slow = {k: (v * 1e-3 if k[3] == "softmax" else v) for k, v in q.rate.items()}
    assert "rate_over_lemma_bound" in _failed(CHECK.assess(dataclasses.replace(q, rate=slow), p))


def test_nan_never_passes(small):
    p, q = small
    bad = {**q.rate, ("uniform", 4, 1.0, "softmax"): np.array([np.nan] * 3)}
    res = CHECK.assess(dataclasses.replace(q, rate=bad), p)
    assert res.record("rate_relative_error").passed is False


def test_json_round_trip(small):
    p, q = small
    back = CheckResult.from_json(CHECK.assess(q, p).to_json()).quantities
    assert type(back) is type(q) and set(back.rate) == set(q.rate) and set(back.mc_count) == set(q.mc_count)
    assert back.uniform_in_hemisphere.dtype == bool or set(np.unique(back.uniform_in_hemisphere)) <= {0, 1}


@pytest.mark.parametrize("kwargs, name", [({"dims": (1,)}, "dims"), ({"mc_draws": 5}, "mc_draws"),
                                          ({"betas": (-1.0,)}, "betas")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)

@pytest.mark.slow  # array_api_strict costs ~20 us per operation: several seconds for these runs
def test_computes_in_the_given_namespace(strict_xp):
    """Declared for the GPU: the flows run in the namespace given (array_api_strict wraps NumPy: the same records)."""
    p = CHECK.params(**dict(n=4, dims=(2,), uniform_n=3, betas=(1.0,), draws=2, t_max=20.0, mc_draws=20))
    ref, got = CHECK.assess(CHECK.measure(p), p), CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert "asarray" in strict_xp.used and got.verdict == ref.verdict
    for rec in ref.records:
        other = got.record(rec.name).measured
        if isinstance(rec.measured, (bool, str, int)):
            assert other == rec.measured, rec.name
        else:
            assert other == pytest.approx(rec.measured, rel=1e-6, abs=1e-12), rec.name
