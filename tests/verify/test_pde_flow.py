"""verify.pde_flow (PDE-5, 6, 7): first-order error, layers as time, hybrid bound; printed claims fail.

Measured once at size 16 (the hybrid at 64); held to the printed claims, to a scheme with the wrong alpha,
to altered errors and bounds, and to a NaN in the hybrid evolution.
"""

import dataclasses

import numpy as np
import pytest

from verify import pde_flow as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"size": 16, "times": (1.0, 10.0), "dt_exponents": (2, 3, 4), "long_dt": 1.0, "hybrid_size": 64,
         "hybrid_steps": (0, 4, 64, 256)}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["hybrid_distance_final"] > res.measured["hybrid_eps0"]  # grows, not decays
    assert res.measured["recomputed_relative_error_dt1"] > 10 * res.measured["carried_relative_error_dt1"]
    assert sorted(q.error_slope["wave"]) == [1.0, 10.0] and q.error_vs_t["wave"].shape == (7,)


def test_printed_fails_on_each_statement(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {
        "printed_continuum_error_order", "printed_recomputed_relative_error", "printed_laplacian_of_true_attention",
        "printed_hybrid_error_max_increment"}, only=True)


def test_a_scheme_with_the_wrong_alpha_does_not_converge(monkeypatch):
    """A toolkit that used alpha 1 % off converges to another flow: the error no longer vanishes with dt."""
    import spectral

    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention",
                        lambda a0, alpha=0.1, **kw: true_evolve(a0, alpha=1.01 * alpha, **kw))
    p, q = measured(CHECK, **{**SMALL, "times": (10.0,), "hybrid_steps": (0, 1, 4)})
    assert_fails(CHECK, q, p, "error_order_deviation")


def test_the_wave_error_grows_at_a_smaller_c_and_a_wave_with_c_for_c2_fails(monkeypatch):
    """At c = 0.1 the wave's secular error overtakes its bounded one only from t_b = 3 / (c^2 dt) = 300 (growth 1.99
    from t = 100 to 1000 was a wrong FAIL): its envelope grows ~5.5-fold from t_b to 10 t_b and the right wave passes;
    a wave that multiplies the Laplacian by c instead of c^2 (an O(1) phase error from the start) fails there."""
    import spectral

    settings = {**SMALL, "c": 0.1, "times": (1.0,), "hybrid_steps": (0, 1, 4)}
    p, q = measured(CHECK, **settings)
    assert_passes(CHECK, q, p)
    assert q.wave_growth_times[0] == pytest.approx(300) and q.wave_growth_envelope[1] > 4 * q.wave_growth_envelope[0]
    true_evolve = spectral.evolve_attention

    def c_for_c2(a0, *, pde="diffusion", c=0.15, **kw):
        return true_evolve(a0, pde=pde, c=c ** 0.5 if pde == "wave" else c, **kw)

    monkeypatch.setattr(spectral, "evolve_attention", c_for_c2)
    p, q = measured(CHECK, **settings)
    assert_fails(CHECK, q, p, {"wave_error_growth_over_a_decade", "error_order_deviation"})


def test_the_wave_growth_is_not_decided_below_the_courant_floor(small):
    """At c long_dt < 0.01 the growth would need > 3.8e5 steps: not run, not asserted, and the note says so."""
    p, q = measured(CHECK, **{**SMALL, "c": 0.005, "times": (1.0,), "hybrid_steps": (0, 1, 4)})
    res = assert_passes(CHECK, q, p)
    assert q.wave_growth_envelope == () and "wave_error_growth_over_a_decade" not in res.measured
    assert any("not decided" in note for note in res.notes)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("error_slope", "wave"): {1.0: 1.0, 10.0: 1.5}}, "error_order_deviation"),
    ({"initial_norm": 1e-3}, "diffusion_sup_error_over_t"),
    ({("error_vs_t", "diffusion"): np.full(7, 1e-3)}, "diffusion_error_decay_t1000"),
    ({"wave_growth_envelope": (1e-3, 1e-3)}, "wave_error_growth_over_a_decade"),
    ({"carried_error_order": 2.0}, "carried_error_order"),
    ({"recomputed_relative_error": (0.01, 0.005, 0.0025)}, "recomputed_relative_discrepancy"),
    ({"laplacian_of_true_attention": 0.0}, "laplacian_of_true_attention"),
    (lambda q: {"hybrid_distance_to_true": q.hybrid_distance_to_true[::-1]}, "hybrid_error_min_increment"),
    (lambda q: {"hybrid_row_mean_limit": 10 * q.hybrid_row_mean_limit}, "hybrid_error_fraction_of_limit"),
    ({"contraction_bound_ratio": 1.01}, "contraction_bound_ratio"),
    ({"triangle_bound_excess": 1e-6}, "triangle_bound_excess"),
    ({"carried_error_order": float("nan")}, "carried_error_order"),  # a NaN never passes
])


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: the slopes, the error times, the hybrid distances


test_bad_input = refusals(check.run, [({"dt_exponents": (2, 3)}, "dt_exponents"),
                                      ({"hybrid_steps": (4, 1, 16)}, "hybrid_steps"), ({"alpha": 0.9}, "alpha"),
                                      ({"times": (0.1,)}, "times"), ({"size": 8}, "size"),
                                      # the measurement stopped in its slope fit (errors at rounding)
                                      ({"alpha": 1e-300}, "alpha and dt_exponents must keep alpha dt"),
                                      ({"c": 1e-8}, "c and dt_exponents must keep c dt")])


@pytest.mark.parametrize("call, failed", [
    # _hybrid evolves A_final (even calls) and E_T A_true (odd calls) at N_t = 0, 4, 64, 256: a NaN at N_t = 256
    # (the last, so that no later step refuses it). In E_T A_true, the contraction ratio and the triangle excess
    # are NaN and Python's max kept those of N_t = 4 and 64; in A_final, the distances to A_true too
    (7, {"contraction_bound_ratio", "triangle_bound_excess"}),
    (6, {"contraction_bound_ratio", "triangle_bound_excess", "hybrid_error_min_increment",
         "hybrid_error_fraction_of_limit"}),
])
def test_a_nan_in_the_hybrid_evolution_fails(small, inject_nan, call, failed):
    p, q = small
    poisoned = inject_nan("spectral.evolve_attention", call=call, field="attention", at=100)
    hybrid = check._hybrid(p.hybrid_size, p.hybrid_steps, p.seed)  # measure() runs this part last
    assert poisoned == [call]
    assert_fails(CHECK, q, p, failed, only=True, **hybrid)
