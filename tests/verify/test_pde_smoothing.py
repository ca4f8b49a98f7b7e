"""verify.pde_smoothing (PDE-11): S, C decay for diffusion only; wave conserves energy; reaction grows C.

Measured once at size 64 over 500 steps; held to the printed claim (it fails for the wave and the
reaction), to a wave with the wrong speed, to altered curves, to a NaN curve, and to the same numbers in
array_api_strict.
"""

import dataclasses

import numpy as np

from verify import pde_smoothing as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"size": 64, "steps": 500}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    assert_passes(CHECK, q, p)
    wave, diffusion = q.linear[("wave", "periodic")], q.linear[("diffusion", "periodic")]
    c_wave = wave.consistency[-1] / wave.consistency0
    assert c_wave > 0.25 and diffusion.consistency[-1] / diffusion.consistency0 < c_wave
    assert sorted(q.reaction) == [0.02, 1.0]


def test_printed_fails_for_wave_and_reaction(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "printed_max_bound_ratio", only=True)
    label = res.failures[0]
    assert "wave" in label and "reaction-diffusion" in label and "diffusion (periodic)" not in label


def test_a_wave_with_the_wrong_speed_fails(monkeypatch):
    """A toolkit whose wave step used c 1 % off no longer conserves the energy of the stated c."""
    import spectral

    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, c=0.15, **kw: true_evolve(a0, c=1.01 * c, **kw))
    p, q = measured(CHECK, size=16, steps=100, beta_reaction=(1.0,))
    assert_fails(CHECK, q, p, "wave_energy_drift", only=True)


def test_the_reaction_growth_is_decided_once_beta_t_reaches_6(monkeypatch):
    """C grows only once the logistic term has acted (beta t >= 6): at beta t = 2 (steps 100, beta 0.02; dt = 0.01 at
    the default steps was a wrong FAIL) it is recorded and noted, not asserted; at a small dt with beta t = 10 the
    right step passes and one that drops the reaction term fails."""
    import spectral

    p, q = measured(CHECK, size=16, steps=100, beta_reaction=(0.02,))
    res = assert_passes(CHECK, q, p)
    assert "reaction_max_consistency_ratio" not in res.measured and any("beta t = 2" in n for n in res.notes)
    moved = {"size": 64, "steps": 1000, "dt": 0.1, "beta_reaction": (0.1,)}
    p, q = measured(CHECK, **moved)
    assert_passes(CHECK, q, p)
    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, pde="diffusion", beta=0.0, **kw: true_evolve(
        a0, pde=pde, beta=0.0 if pde == "reaction-diffusion" else beta, **kw))
    p, q = measured(CHECK, **moved)
    assert_fails(CHECK, q, p, "reaction_max_consistency_ratio", only=True)


def test_the_reaction_growth_is_decided_at_size_128_whatever_the_size_and_a_step_without_it_fails(monkeypatch):
    """At T = 16 C grows only x0.65 (beta = 0.02, alpha = 0.1: the slowest mode's damping alpha mu_1 = 0.015 nearly
    cancels beta; a wrong FAIL before): the growth is decided on the T = 128 run and the T = 16 one recorded. A step
    that drops the reaction term fails at size 16 too."""
    import spectral

    settings = {"size": 16, "steps": 400, "beta_reaction": (0.02,)}
    p, q = measured(CHECK, **settings)
    res = assert_passes(CHECK, q, p)
    assert res.measured["reaction_max_consistency_ratio_size16_beta0.02"] < 1.0
    assert res.measured["reaction_max_consistency_ratio"] > 10 and any("decided at T = 128" in n for n in res.notes)
    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, pde="diffusion", beta=0.0, **kw: true_evolve(
        a0, pde=pde, beta=0.0 if pde == "reaction-diffusion" else beta, **kw))
    p, q = measured(CHECK, **settings)
    assert_fails(CHECK, q, p, "reaction_max_consistency_ratio", only=True)


def _scaled(curves, factor):
    return dataclasses.replace(curves, consistency=curves.consistency * factor)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("rho", ("diffusion", "neumann")): 0.5}, "spectral_rate_bound_ratio"),
    (lambda q: {"wave_energy": q.wave_energy * np.linspace(1.0, 1.001, q.wave_energy.size)}, "wave_energy_drift"),
    (lambda q: {"linear": {**q.linear, ("wave", "periodic"): _scaled(q.linear[("wave", "periodic")], 0.1)}},
     "wave_late_consistency_fraction"),
    (lambda q: {"reaction_decided": {**q.reaction_decided, 0.02: _scaled(q.reaction_decided[0.02], 1e-3)}},
     "reaction_max_consistency_ratio"),
    (lambda q: {"wave_energy": np.full_like(q.wave_energy, np.nan)}, "wave_energy_drift"),  # NaN never passes
])


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: rho, the linear runs' and the reactions' curves


test_bad_input = refusals(check.run, [({"alpha": 0.3}, "alpha"), ({"c": 1.0}, "c"),
                                      ({"beta_advection": 0.3}, "beta_advection"),
                                      ({"beta_reaction": ()}, "beta_reaction"), ({"steps": 10}, "steps"),
                                      ({"c": 1e-300}, "c and dt must keep c dt >= 1.5e-08"),  # was a NaN drift
                                      ({"dt": 1e-300}, "alpha and dt must keep r = alpha dt")])


def test_computes_in_the_given_namespace(evolve_on_device):
    xp, seen = evolve_on_device  # array_api_strict as strict as bare CuPy (tests/verify/conftest.py)
    p = CHECK.params(size=32, steps=400, beta_reaction=(1.0,))
    ref = CHECK.measure(p)
    seen.clear()
    got = CHECK.measure(p, xp=xp)
    # every evolution (5 linear runs and the reaction runs, one call per checkpoint) ran in the namespace given
    # (the reaction runs twice: at size 32 and at 128, where its growth is decided)
    assert len(seen) == (5 + 2 * len(p.beta_reaction)) * got.steps.size and set(seen) == {"array_api_strict"}
    assert {"asarray", "sum", "var"} <= xp.used
    # the step's whole-array path against NumPy's row-block path: S and C to the round-off of their values at
    # n = 0 (measured <= 5.6e-15 of them; S grows to 100 S(0) for beta = 1), the wave's energy to 2.4e-16 relative
    for table in ("linear", "reaction", "reaction_decided"):
        for key, curves in getattr(ref, table).items():
            other = getattr(got, table)[key]
            assert type(other.smoothness0) is float and type(other.consistency0) is float
            # (at T = 128 with beta = 1, S grows to 4600 S(0) and C x46: the round-off scales with the largest value)
            np.testing.assert_allclose(other.smoothness, curves.smoothness, rtol=0,
                                       atol=1e-13 * max(curves.smoothness0, float(np.max(curves.smoothness))))
            np.testing.assert_allclose(other.consistency, curves.consistency, rtol=0,
                                       atol=1e-13 * max(curves.consistency0, float(np.max(curves.consistency))))
    np.testing.assert_allclose(got.wave_energy, ref.wave_energy, rtol=1e-13)
    assert got.rho == ref.rho and got.lambda_min == ref.lambda_min
    assert_same_records(CHECK.assess(ref, p), assert_passes(CHECK, got, p))


def test_a_nan_curve_fails_and_is_named(small, inject_nan):
    # the last checkpoint of periodic diffusion (its first track, one evolve_attention call per checkpoint): under
    # the printed claim its bound ratio is NaN, and the failure names the run (NaN > 1 is false: it was left out)
    p, last = small[0], len(small[1].steps) - 1
    poisoned = inject_nan("spectral.evolve_attention", call=last, field="attention", at=70)
    q = CHECK.measure(p)
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    assert poisoned == [last]
    assert np.isnan(res.measured["printed_max_bound_ratio"]) and "diffusion (periodic)" in res.failures[0]
    assert_fails(CHECK, q, p, "spectral_rate_bound_ratio", only=True)
