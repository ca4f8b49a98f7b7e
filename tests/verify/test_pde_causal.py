"""verify.pde_causal (PDE-15, PDE-17): the causal leak, re-masking, arithmetic, the causal stencil.

Measured once at size 64; held to the printed claims, to a step that never leaks, to flipped arithmetic
statements and altered quantities, to NaNs in the evolution and the causal stencil, and to the same numbers
in array_api_strict.
"""

import dataclasses

import numpy as np
import pytest

from verify import pde_causal as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, changed_fields,
                            measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"size": 64, "steps": (1, 3), "vocab": 16, "stencil_steps": 50}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["oracle_perplexity_leaky"] < 1.2
    assert res.measured["oracle_perplexity_remasked_value"] == pytest.approx(16)
    assert res.measured["eq4_ppl_pde_at_10_percent"] == pytest.approx(-38.21, abs=0.01)
    assert sorted(q.future_mass_mean) == [1, 3] and q.future_mass_mean[3] > q.future_mass_mean[1] > 0


def test_printed_fails_on_each_statement(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), {
        "printed_future_mass", "printed_arithmetic_inconsistencies", "printed_causal_stencil_max_amplification"},
        only=True)


def test_a_small_r_passes():
    """The leaked weights are first order in r = alpha dt: at alpha = 1e-3 (0.79 r = 7.9e-4 < 1e-3, a wrong FAIL
    with the old fixed bound) the right step passes."""
    p, q = measured(CHECK, size=32, steps=(1, 2), stencil_steps=10, alpha=1e-3)
    assert_passes(CHECK, q, p)
    assert 1e-5 < q.min_future_mass < 1e-3


@pytest.mark.parametrize("alpha", [0.1, 1e-3])
def test_a_step_that_never_leaks_fails(monkeypatch, alpha):
    """A toolkit that re-masked the future after every step would hide the leak the check asserts (at the default
    and at a small alpha, where the bounds r / 100 are small)."""
    import spectral

    true_evolve = spectral.evolve_attention

    def remasked(a0, **kwargs):
        if isinstance(a0, np.ndarray):  # the dense matrices of the leak and the oracle (not the stencil's factors)
            kwargs = {**kwargs, "causal_remask": True, "renormalize": True}
        return true_evolve(a0, **kwargs)

    monkeypatch.setattr(spectral, "evolve_attention", remasked)
    p, q = measured(CHECK, size=32, steps=(1, 2), stencil_steps=10, alpha=alpha)
    assert_fails(CHECK, q, p, {"min_future_mass", "periodic_wraparound_weight", "oracle_perplexity_with_leak"})


def test_causal_stencil_loop():
    x = np.random.default_rng(0).standard_normal(12)
    assert np.allclose(check._causal_stencil(x, 0.1, 3), check._causal_stencil_fast(x, 0.1, 3), rtol=0, atol=1e-14)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"first_step_leak_error": 1e-3}, "first_step_leak_error"),
    ({"remasked_future_weight": 1e-3}, "remasked_future_weight"),
    ({"remasked_renormalised_row_sum_deviation": 1e-6}, "remasked_renormalised_row_sum_deviation"),
    ({"min_future_mass": 0.0}, "min_future_mass"),
    ({"weight_beyond_steps_non_periodic": 1e-9}, "weight_beyond_steps_non_periodic"),
    ({"periodic_wraparound_weight": 0.0}, "periodic_wraparound_weight"),
    ({"remasked_unnormalised_mass_loss": 0.0}, "remasked_unnormalised_mass_loss"),
    ({"oracle_perplexity_leaky": 5.0}, "oracle_perplexity_with_leak"),
    ({"oracle_perplexity_remasked": 3.0}, "oracle_perplexity_remasked"),
    ({"symbol_max_vs_closed_form": 1e-3}, "symbol_max_vs_closed_form"),
    ({"symbol_min_excess": 0.0}, "symbol_min_excess"),
    ({"causal_loop_vs_shifted": 1e-6}, "causal_loop_vs_shifted"),
    ({"nyquist_growth_relative_error": 1e-3}, "nyquist_growth_relative_error"),
    ({"random_growth": {0.01: 1.0, 0.1: 1.0}}, "random_growth_over_bound"),
    ({"centred_growth": 1.5}, "centred_growth_ratio"),
    ({"oracle_perplexity_leaky": float("nan")}, "oracle_perplexity_with_leak"),  # a NaN never passes
])


@pytest.mark.parametrize("field, name", [("holding", "arithmetic_statements_that_hold"),
                                         ("failing", "arithmetic_inconsistencies_found")])
def test_arithmetic_fails_when_a_statement_flips(small, field, name):
    p, q = small
    flipped = (False,) + getattr(q.arithmetic, field)[1:]
    assert_fails(CHECK, q, p, name, **changed_fields(q, {("arithmetic", field): flipped}))


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: the arithmetic statements, the future masses, the growths


test_bad_input = refusals(check.run, [({"alpha": 0.3}, "alpha"), ({"steps": (0,)}, "steps"),
                                      ({"vocab": 2}, "vocab"), ({"stencil_alphas": (0.0,)}, "stencil_alphas"),
                                      ({"size": 16}, "size"), ({"dt": 1e-300}, "alpha and dt must keep r"),
                                      ({"stencil_alphas": (1e-300,)}, "stencil_alphas must keep")])


def test_computes_in_the_given_namespace(small, evolve_on_device):
    xp, seen = evolve_on_device  # array_api_strict as strict as bare CuPy (tests/verify/conftest.py)
    p, ref = small
    got = CHECK.measure(p, xp=xp)
    # every evolution of a (T, T) matrix ran on arrays of the namespace given; the causal-stencil test evolves
    # one sequence as a factored key column on the host (last)
    assert seen == ["array_api_strict"] * (3 * 5 * len(p.steps) + 2 + 6 + 2) + ["spectral"]
    assert {"asarray", "where", "take", "tril", "exp", "log"} <= xp.used
    # the step's whole-array path against NumPy's row-block path: the same numbers up to round-off (measured
    # equal at the small setting), brought back as host floats
    for field in dataclasses.fields(ref):
        want, have = getattr(ref, field.name), getattr(got, field.name)
        assert type(have) is type(want), field.name
        if isinstance(want, (float, dict)):
            assert have == pytest.approx(want, rel=1e-13, abs=1e-15), field.name
        else:
            assert have == want, field.name
    assert_same_records(CHECK.assess(ref, p), assert_passes(CHECK, got, p))


def _leak_call(axis, boundary, k):
    """Index of evolve_attention's call for (axis, boundary, k-th step count) at SMALL: 2 step counts per pair."""
    return (("key", "query", "both").index(axis) * 5 + check._BOUNDARIES.index(boundary)) * 2 + k


T = SMALL["size"]


@pytest.mark.parametrize("call, at, failed", [
    # leak loop (30 calls): a NaN just ahead of the diagonal (row 5), and in the far corner (0, T - 1); Python's
    # min / max over the loop kept the finite values of the earlier calls
    (_leak_call("key", "neumann", 1), 5 * T + 6, {"min_future_mass"}),
    (_leak_call("query", "dirichlet", 0), T - 1, {"min_future_mass", "weight_beyond_steps_non_periodic"}),
    (_leak_call("both", "periodic", 1), T - 1, {"min_future_mass", "periodic_wraparound_weight"}),
    # the first step on the query axis (call 30 is the key axis's), then re-masking: key, query, both axes, each
    # without and with renormalisation (calls 32-37); a NaN in the past of the query axis's renormalised rows
    (31, 5 * T + 6, {"first_step_leak_error"}),
    (35, 6 * T + 5, {"remasked_renormalised_row_sum_deviation"}),
])
def test_a_nan_in_the_evolution_fails(small, inject_nan, call, at, failed):
    p = small[0]
    poisoned = inject_nan("spectral.evolve_attention", call=call, field="attention", at=at)
    q = CHECK.measure(p)
    assert poisoned == [call]
    assert_fails(CHECK, q, p, failed, only=True)


def test_a_nan_in_the_causal_stencil_fails(small, inject_nan):
    # _stencil: the loop-vs-shifted comparison (call 0), then per alpha the Nyquist sequence and a random one; the
    # second alpha's Nyquist error came after a finite one
    p, q = small
    poisoned = inject_nan("verify.pde_causal._causal_stencil_fast", call=3, at=300)
    stencil = check._stencil(p.stencil_alphas, p.stencil_steps, p.seed)
    assert poisoned == [3]
    assert_fails(CHECK, q, p, "nyquist_growth_relative_error", only=True, **stencil)
