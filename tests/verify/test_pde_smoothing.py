"""verify.pde_smoothing (PDE-11): S, C decay for diffusion only; wave conserves energy; reaction grows C.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import numpy as np
import pytest

from spectral.validation import InputError
from verify import pde_smoothing as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = {"size": 64, "steps": 500}


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def test_small_settings_pass(small):
    p, q = small
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    wave, diffusion = q.linear[("wave", "periodic")], q.linear[("diffusion", "periodic")]
    c_wave = wave.consistency[-1] / wave.consistency0
    assert c_wave > 0.25 and diffusion.consistency[-1] / diffusion.consistency0 < c_wave
    assert sorted(q.reaction) == [0.02, 1.0]


def test_printed_fails_for_wave_and_reaction(small):
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    assert not res.passed
    label = res.failures[0]
    assert "wave" in label and "reaction-diffusion" in label and "diffusion (periodic)" not in label


def test_a_wave_with_the_wrong_speed_fails(monkeypatch):
    """A toolkit whose wave step used c 1 % off no longer conserves the energy of the stated c."""
    import spectral

    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, c=0.15, **kw: true_evolve(a0, c=1.01 * c, **kw))
    p = CHECK.params(size=16, steps=100, beta_reaction=(1.0,))
    res = CHECK.assess(CHECK.measure(p), p)
    assert [r.name for r in res.records if r.passed is False] == ["wave_energy_drift"]


def _scaled(curves, factor):
    return dataclasses.replace(curves, consistency=curves.consistency * factor)


@pytest.mark.parametrize("change, name", [
    (lambda q: {"rho": {**q.rho, ("diffusion", "neumann"): 0.5}}, "spectral_rate_bound_ratio"),
    (lambda q: {"wave_energy": q.wave_energy * np.linspace(1.0, 1.001, q.wave_energy.size)}, "wave_energy_drift"),
    (lambda q: {"linear": {**q.linear, ("wave", "periodic"): _scaled(q.linear[("wave", "periodic")], 0.1)}},
     "wave_late_consistency_fraction"),
    (lambda q: {"reaction": {**q.reaction, 0.02: _scaled(q.reaction[0.02], 1e-3)}}, "reaction_max_consistency_ratio"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, change, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **change(q)), p)
    assert not res.passed and res.record(name).passed is False


def test_nan_never_passes(small):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, wave_energy=np.full_like(q.wave_energy, np.nan)), p)
    assert res.record("wave_energy_drift").passed is False


def test_json_round_trip(small):
    p, q = small
    back = CheckResult.from_json(CHECK.assess(q, p).to_json())
    assert type(back.quantities) is type(q)
    assert back.quantities.rho == q.rho and set(back.quantities.linear) == set(q.linear)
    np.testing.assert_array_equal(back.quantities.reaction[1.0].consistency, q.reaction[1.0].consistency)


@pytest.mark.parametrize("kwargs, match", [({"alpha": 0.3}, "alpha"), ({"c": 1.0}, "c"),
                                           ({"beta_advection": 0.3}, "beta_advection"),
                                           ({"beta_reaction": ()}, "beta_reaction"), ({"steps": 10}, "steps")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)


# ------------------------------------------------------------------------------------------------ device
# No GPU here: array_api_strict, refusing the creation keywords bare CuPy lacks, stands in for CuPy (the
# gpu-marked parity on a device is tests/verify/test_gpu_parity.py).


def test_computes_in_the_given_namespace(strict_xp, monkeypatch):
    import spectral
    from tests.conftest import cupy_strict

    cupy_strict(monkeypatch, strict_xp._xp)
    seen, true_evolve = [], spectral.evolve_attention

    def recording(a0, **kwargs):
        seen.append(type(a0).__module__.split(".")[0])
        return true_evolve(a0, **kwargs)

    p = CHECK.params(size=32, steps=400)
    ref = CHECK.measure(p)
    monkeypatch.setattr(spectral, "evolve_attention", recording)
    got = CHECK.measure(p, xp=strict_xp)
    # every evolution (5 linear runs and the reaction runs, one call per checkpoint) ran in the namespace given
    assert len(seen) == (5 + len(p.beta_reaction)) * got.steps.size and set(seen) == {"array_api_strict"}
    assert {"asarray", "sum", "var"} <= strict_xp.used
    # the step's whole-array path against NumPy's row-block path: S and C to the round-off of their values at
    # n = 0 (measured <= 5.6e-15 of them; S grows to 100 S(0) for beta = 1), the wave's energy to 2.4e-16 relative
    for table in ("linear", "reaction"):
        for key, curves in getattr(ref, table).items():
            other = getattr(got, table)[key]
            assert type(other.smoothness0) is float and type(other.consistency0) is float
            np.testing.assert_allclose(other.smoothness, curves.smoothness, rtol=0, atol=1e-13 * curves.smoothness0)
            np.testing.assert_allclose(other.consistency, curves.consistency, rtol=0,
                                       atol=1e-13 * curves.consistency0)
    np.testing.assert_allclose(got.wave_energy, ref.wave_energy, rtol=1e-13)
    assert got.rho == ref.rho and got.lambda_min == ref.lambda_min
    verdict, same = CHECK.assess(ref, p), CHECK.assess(got, p)
    assert same.passed and [(r.name, r.passed) for r in same.records] == [(r.name, r.passed) for r in verdict.records]


def test_a_nan_curve_fails_and_is_named(small, inject_nan):
    # the last checkpoint of periodic diffusion (its first track, one evolve_attention call per checkpoint): under
    # the printed claim its bound ratio is NaN, and the failure names the run (NaN > 1 is false: it was left out)
    p, last = small[0], len(small[1].steps) - 1
    poisoned = inject_nan("spectral.evolve_attention", call=last, field="attention", at=70)
    q = CHECK.measure(p)
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    assert poisoned == [last]
    assert np.isnan(res.measured["printed_max_bound_ratio"]) and "diffusion (periodic)" in res.failures[0]
    corrected = CHECK.assess(q, p)
    assert [r.name for r in corrected.records if r.passed is False] == ["spectral_rate_bound_ratio"]
