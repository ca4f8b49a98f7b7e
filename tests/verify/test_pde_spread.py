"""verify.pde_spread (PDE-8, 9, 12): exact variance growth, compact/Gaussian decay, range laws.

Measured once at size 512 over 100 steps; held to the printed claims, to a wrong variance rate and a step
with the wrong rate, to altered spreads and fits, and to NaNs in the evolved delta and the wave front.
"""

import dataclasses

import numpy as np
import pytest

from verify import pde_spread as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"size": 512, "steps": 100, "random_rows": 2, "softmax_draws": 8}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["gaussian_fit_r2"] > res.measured["exponential_fit_r2"] > res.measured["power_fit_r2"]
    assert sorted(q.spread) == [0.1, 0.25, 0.5] and q.variance[0.5].shape == (q.spread_steps.size, 3)


def test_printed_fails_on_each_statement(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {
        "printed_spread_speed_exponent", "printed_power_over_gaussian_r2", "printed_vanilla_log_slope",
        "printed_linear_range_ratio"}, only=True)


@pytest.mark.parametrize("rate", [1.0, 2.1])
def test_wrong_variance_rate_fails(small, rate):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, variance_rate=rate), "variance_identity_relative_error", only=True)


def test_a_step_with_the_wrong_rate_fails(monkeypatch):
    """A toolkit whose step used r 1 % too small spreads the rows more slowly than 2 r n."""
    import spectral

    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention",
                        lambda a0, alpha=0.1, **kw: true_evolve(a0, alpha=0.99 * alpha, **kw))
    p, q = measured(CHECK, **{**SMALL, "steps": 32, "size": 256, "rates": (0.25,)})
    assert_fails(CHECK, q, p, {"variance_identity_relative_error", "heat_kernel_second_order",
                               "heat_kernel_relative_error"})


def test_few_steps_pass_with_the_lattice_term():
    """At 32 steps the delta is 0.040 off the heat kernel at 3 sigma (the lattice term -He4(x) / (24 n) gives 0.039;
    against the old 0.02 that was a wrong FAIL); what the term leaves is 1.01 / n^2. At size 256 the support-width
    test reached the ends at n = 100 (another wrong FAIL): it stops at steps."""
    p, q = measured(CHECK, **{**SMALL, "steps": 32, "size": 256, "rates": (0.25,)})
    assert_passes(CHECK, q, p)
    assert q.heat_kernel_relative_error > 0.03 and q.heat_kernel_second_order < 1.1
    x = np.array([0.0, 3.0])  # offsets in units of sigma = sqrt(2 r n) = 4 at r = 1/4, n = 32
    assert check.lattice_kernel_correction(4.0 * x, 0.25, 32) == pytest.approx([-3 / (24 * 32), -30 / (24 * 32)])


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"support_extent_error": 1}, "support_extent_error"),
    ({"spread_slope": {0.1: 0.5, 0.25: 0.45, 0.5: 0.5}}, "spread_slope_deviation"),
    ({"saturated_variance": 80.0}, "saturated_variance"),
    ({"spread_speed_slope": {0.1: -0.4, 0.25: -0.4, 0.5: -0.4}}, "spread_speed_exponent"),
    ({"nonzero_beyond_steps": 2}, "nonzero_beyond_steps"),
    ({"heat_kernel_relative_error": 0.05}, "heat_kernel_relative_error"),
    ({"heat_kernel_second_order": 4.0}, "heat_kernel_second_order"),
    ({"peak_height_exponent": -0.45}, "peak_height_exponent"),
    ({"exponential_fit_r2": 0.999}, "gaussian_over_exponential_r2"),
    ({"vanilla_max_bin_z": 50.0}, "vanilla_max_bin_z"),
    ({"support_width_error": 1}, "support_width_error"),
    ({"wave_front_speed": 0.1}, "wave_front_speed"),
    ({"linear_extrapolation_overshoot": 1.0}, "linear_extrapolation_overshoot"),
    # a NaN never passes
    (lambda q: {"variance": {r: np.full_like(v, np.nan) for r, v in q.variance.items()},
                "heat_kernel_relative_error": float("nan")},
     {"variance_identity_relative_error", "heat_kernel_relative_error"}),
])


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: the slopes, the variance curves


test_bad_input = refusals(check.run, [({"steps": 400, "size": 512}, "steps"), ({"steps": 16}, "steps"), ({"rates": (0.0,)}, "rates"),
                                      ({"variance_rate": 0.0}, "variance_rate"),
                                      ({"softmax_draws": 2}, "softmax_draws"), ({"size": 100}, "size"),
                                      ({"rates": (1e-300,)}, "rates must keep each mesh ratio r >= 1.5e-08")])


def test_a_nan_inside_the_evolved_delta_fails(small, inject_nan):
    # _evolve_rows (the toolkit's evolved key factor): one call per rate and checkpoint, the saturation run, then
    # the delta after N_t = 1, 2, 4 steps. A NaN at N_t = 2 within 2 tokens of the centre was no entry beyond N_t
    p = small[0]
    ns = np.unique(np.round(np.geomspace(1, p.steps, 24)).astype(int))
    call = len(p.rates) * len(ns) + 1 + 1
    poisoned = inject_nan("verify.pde_spread._evolve_rows", call=call, at=p.size // 2 + 1)
    q = CHECK.measure(p)
    assert poisoned == [call]
    assert assert_fails(CHECK, q, p, "nonzero_beyond_steps", only=True).measured["nonzero_beyond_steps"] == 1


def test_a_nan_wave_front_stops_the_measurement_as_a_failure(monkeypatch):
    # np.argmax returns a NaN's position: a NaN in the last wave profile made a finite front there
    import spectral

    real, waves = spectral.evolve_attention, []
    last = 1 + len(range(200, min(2001, int((SMALL["size"] / 2 - 60) / check._C)), 200))

    def evolve(*args, **kwargs):
        res = real(*args, **kwargs)
        if kwargs.get("pde") == "wave":
            waves.append(len(waves))
            if len(waves) == last:
                res.attention.key[SMALL["size"] // 2 + 230, 0] = np.nan  # ahead of the front (~180)
        return res

    monkeypatch.setattr(spectral, "evolve_attention", evolve)
    res = check.run(**SMALL)
    assert len(waves) == last and not res.passed
    assert [r.name for r in res.records] == ["measurement_completed"] and "finite" in res.failures[0]


def test_a_small_rate_passes_and_a_truncating_step_still_fails(monkeypatch):
    """At r = 0.01 the outermost entry r^n leaves the normal floats from n = 154: the support is compared where it is a normal
    float (the right step passes), and a step that flushes entries below 1e-100 to zero (the support stops growing
    from n = 51) still fails there."""
    import spectral

    assert check.support_resolved_steps(0.01) == 153 and check.support_resolved_steps(0.1) >= 200
    small_rate = {**SMALL, "rates": (0.01,), "steps": 200, "random_rows": 1, "softmax_draws": 8}
    p, q = measured(CHECK, **small_rate)
    assert_passes(CHECK, q, p)
    true_evolve = spectral.evolve_attention

    def truncating(a0, **kw):
        res = true_evolve(a0, **kw)
        key = res.attention.key
        return dataclasses.replace(res, attention=spectral.FactoredAttention(res.attention.query,
                                                                              np.where(key < 1e-100, 0.0, key)))

    monkeypatch.setattr(spectral, "evolve_attention", truncating)
    p, q = measured(CHECK, **small_rate)
    assert_fails(CHECK, q, p, "support_extent_error")
