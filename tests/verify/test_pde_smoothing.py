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
