"""verify.pde_stability (PDE-2, 10, 14): CFL limits, contraction, dt scaling; the printed claims fail.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import pytest

from verify import pde_stability as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
FAST = {"sizes": (8, 63), "growth_steps": 400, "norm_size": 32, "norm_steps": 16, "lengths": (64, 256, 1024)}
fast = measurement_fixture(CHECK, **FAST)


def test_fast_settings_pass(fast):
    p, q = fast
    assert_passes(CHECK, q, p)
    assert q.dt_max_wave > q.dt_max_diffusion  # the wave bound is the looser one at the paper's alpha, c
    assert q.limit_neumann_T8 == pytest.approx(0.5198, abs=1e-4)  # 1 / (2 cos^2(pi / 16))


def test_printed_fails_on_each_printed_statement(fast):
    p, q = fast
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {
        "printed_wave_at_equality_growth", "printed_wave_more_restrictive", "printed_norm_8_steps_unstable",
        "printed_dt_max_slope_token_units", "printed_dt_max_slope_normalised"}, only=True)


def test_wave_tighter_when_fast():
    # c > 2 alpha / ds: the paper's 'more restrictive' holds there, and the corrected check says so
    p, q = measured(CHECK, **FAST, alpha=0.05, c=0.15)
    assert assert_passes(CHECK, q, p).record("wave_tighter").measured is True
    assert CHECK.assess(q, dataclasses.replace(p, claim="printed")).record("printed_wave_more_restrictive").passed


def test_a_wrong_stability_limit_fails(monkeypatch):
    """A limit 1 % too large (the classical 1/2 for every boundary, say) fails the closed forms and the bisection."""
    import spectral

    true_limit = spectral.stability_limit
    monkeypatch.setattr(spectral, "stability_limit", lambda *a, **k: 1.01 * true_limit(*a, **k))
    p, q = measured(CHECK, **FAST)
    assert_fails(CHECK, q, p, {"limit_vs_closed_form_max_relative_error", "diffusion_limit_vs_bisection",
                               "wave_limit_vs_bisection"})


def test_the_wave_map_exceeds_one_and_a_damped_wave_fails(monkeypatch):
    """At c = 0.01 the map first exceeds norm 1 near n = pi / theta_max = 158, past norm_steps: the sweep reaches it
    (sup = 1 there was a wrong FAIL) and the right wave passes; a wave whose velocity loses 1 % per step is a
    contraction and fails the lower end there."""
    import spectral

    assert check.wave_map_steps(32, 16, 0.01)[-1] > 158 > 16
    p, q = measured(CHECK, **FAST, c=0.01)
    assert_passes(CHECK, q, p)
    assert q.wave_map_sup_norm - 1 == pytest.approx(q.wave_map_closed_form_sup - 1, rel=1e-6)
    true_evolve = spectral.evolve_attention

    def damped(a0, *, pde="diffusion", steps, velocity=None, **kw):
        if pde != "wave":
            return true_evolve(a0, pde=pde, steps=steps, velocity=velocity, **kw)
        res = true_evolve(a0, pde="wave", steps=0, velocity=velocity, **kw)
        for _ in range(steps):
            res = true_evolve(res.attention, pde="wave", steps=1, velocity=0.99 * res.velocity, **kw)
        return res

    monkeypatch.setattr(spectral, "evolve_attention", damped)
    p, q = measured(CHECK, **FAST, c=0.01)
    assert_fails(CHECK, q, p, "wave_map_sup_norm")


def test_short_and_unsorted_lengths_pass_and_a_limit_without_the_neumann_correction_fails(monkeypatch):
    """At N = 16, 64, 256 the finite-N slope is 2 - 0.0035 (r_max = 1/(2 cos^2(pi/2N))): compared with 2 +- 1e-3 it was
    a wrong FAIL, and so was r_limit_range with the shortest length listed last. A stability limit of 1/2 for every
    length (the periodic value for Neumann) gives slope 2 exactly and fails the closed-form slope."""
    import spectral

    lengths = (256, 64, 16)
    tok, norm = check.neumann_scaling_slopes(lengths)
    assert tok == pytest.approx(1.99653, abs=1e-5) and norm == pytest.approx(-0.00347, abs=1e-5)
    settings = {**FAST, "lengths": lengths, "sizes": (8,)}
    p, q = measured(CHECK, **settings)
    assert_passes(CHECK, q, p)
    true_limit = spectral.stability_limit
    monkeypatch.setattr(spectral, "stability_limit", lambda pde, *, T, boundary="periodic", **kw: (
        0.5 if (pde, boundary, kw.get("axis", "key")) == ("diffusion", "neumann", "key") and T in lengths
        else true_limit(pde, T=T, boundary=boundary, **kw)))
    p, q = measured(CHECK, **settings)
    assert_fails(CHECK, q, p, {"dt_max_slope_token_units", "dt_max_slope_normalised"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "fast", [
    ({"contraction_norm2_deviation": 1e-6}, "contraction_norm2_deviation"),
    ({"diffusion_growth_below_limit": 1.5}, "diffusion_growth_below_limit"),
    ({"wave_at_limit_growth_ratio": 1.0}, "wave_at_limit_growth_ratio"),
    ({"dt_max_slope_token_units": 1.0}, "dt_max_slope_token_units"),
    ({"unstable_norm_growth_per_step": 1.0}, "unstable_norm_growth_per_step"),
    ({"wave_map_sup_norm": 1.0}, "wave_map_sup_norm"),
    (lambda q: {"wave_growth_below_limit": 1.01 * q.wave_amplitude_bound}, "wave_growth_below_limit"),
    ({"wave_growth_above_limit": 1.0}, "wave_growth_above_limit"),  # no growth at 1.01 x the wave limit
    (lambda q: {"dt_max_wave": 1.01 * q.dt_max_wave}, "dt_ratio_wave_over_diffusion"),
    (lambda q: {"dt_max_wave_fast": 2 * q.dt_max_diffusion}, "wave_tighter_when_c_above_2alpha"),
    ({"max_norm_8_steps_learned_alpha": 1.01}, "norm_8_steps_learned_alpha"),
    ({"r_limit_spacing_dependence": 1e-6}, "r_limit_spacing_dependence"),
    ({"r_limit_offset": 1e-3}, "r_limit_range"),  # r_max = 1/2 + 1e-3 at N = 64: an O(1/N) offset, not O(1/N^2)
    ({"diffusion_length_tokens_spread": 1e-6}, "diffusion_length_tokens_spread"),
])


def test_nan_never_passes(fast):
    p, q = fast
    assert_nan_fails(CHECK, q, p, "limit_vs_closed_form", "limit_vs_closed_form_max_relative_error")


test_bad_input = refusals(check.run, [
    ({"lengths": (64, 128)}, "lengths"), ({"lengths": (64, 64, 128)}, "lengths must hold at least 3 distinct"), ({"growth_size": 4}, "growth_size"), ({"alpha": 0.0}, "alpha"),
    ({"c": 2.0}, "c"), ({"sizes": ()}, "sizes"), ({"norm_steps": 4}, "norm_steps"),
    ({"c": 1e-300}, "c must keep c dt"), ({"alpha": 1e-300}, "alpha must keep r = alpha dt"),  # steps of rounding
    ({"c": 1e-6}, "c must be >= 1e-05"),  # the wave map's excess over norm 1 at rounding
])


@pytest.mark.parametrize("target, call, part, failed", [
    # a NaN limit after finite ones (Python's max(worst, nan) kept worst): the closed forms, then a bisection
    ("spectral.stability_limit", 3, "limits", {"limit_vs_closed_form_max_relative_error"}),
    ("spectral.stability_limit", 43, "limits", {"wave_limit_vs_bisection"}),
    # evolve_attention: a NaN below the limit (neumann), a NaN above it (min(grown, nan) kept grown)
    ("spectral.evolve_attention", 2, "growth", {"diffusion_growth_below_limit"}),
    ("spectral.evolve_attention", 3, "growth", {"diffusion_growth_above_limit"}),
    # the refinement's norms: the last checkpoint of r = 0.1 (stable) and of r = 0.55 (unstable), periodic
    ("spectral.evolve_attention", 13, "norms", {"contraction_norm2_deviation", "contraction_norm1_inf_deviation"}),
    ("spectral.evolve_attention", 48, "norms", {"unstable_norm_vs_closed_form", "unstable_norm_growth_per_step"}),
])
def test_a_nan_from_the_toolkit_fails(fast, inject_nan, target, call, part, failed):
    p, q = fast
    field = "attention" if target.endswith("evolve_attention") else None
    poisoned = inject_nan(target, call=call, field=field, at=5)
    parts = {"limits": lambda: check._limits(p.sizes),
             "growth": lambda: check._growth(p.growth_size, p.growth_steps, p.seed),
             "norms": lambda: check._norms(p.norm_size, p.norm_steps, p.c)}
    changes = parts[part]()  # measure() runs these parts in turn
    assert poisoned == [call]
    assert_fails(CHECK, q, p, failed, only=True, **changes)
