"""verify.pde_cost (PDE-16, PDE-18): cost laws of dense/banded/factored refinement; output diffusion.

Measured once at sizes 64, 128 and 256; held to the printed claim (PDE-16 fails, PDE-18 holds, as the
ledger says), to diffusion along the wrong axis, to altered counts and errors, and to NaNs from
evolve_attention.
"""

import dataclasses

import numpy as np
import pytest

from verify import pde_cost as check
from verify.testing import (assert_fails, assert_passes, assert_printed_agrees, assert_round_trip, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"sizes": (64, 128, 256)}  # > 2 (band/2 + steps) + g + steps = 52
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["reflect_factored_row_sum_deviation"] > 1e-8  # reflection needs renormalising
    assert q.dense_flops == {T: 5 * 4 * T * T for T in (64, 128, 256)}


def test_printed_fails_on_pde16_only_and_agrees_with_the_ledger(small):
    p, q = small
    printed = dataclasses.replace(p, claim="printed")
    assert_fails(CHECK, q, printed, "printed_dense_flop_exponent", only=True)  # D.0.5 as printed (PDE-16)
    res = assert_printed_agrees(CHECK, q, p, holding=("PDE-18",))  # PDE-18 holds as printed: its part passes
    assert res.record("key_axis_output_difference").passed  # asserted in both modes
    assert "[paper: PDE-16 holds under stated assumptions; PDE-18 holds as printed]" in res.final_line()
    assert "should hold" not in res.final_line()


def test_narrow_band_without_global_tokens_passes():
    p, q = measured(CHECK, **SMALL, steps=2, band=9, n_global=0)
    assert_passes(CHECK, q, p)


def test_diffusing_the_wrong_axis_fails(monkeypatch):
    """A toolkit that diffused along the keys when asked for the queries breaks the output identity."""
    import spectral

    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, **kw: true_evolve(a0, **{**kw, "axis": "key"}))
    p, q = measured(CHECK, sizes=(64, 96, 128), steps=1)
    assert_fails(CHECK, q, p, "query_axis_output_identity", only=True)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"fill_in_pattern_mismatches": 3}, "fill_in_pattern_mismatches"),
    ({"band_width_error": 1}, "band_width_error"),
    ({"banded_flops_affine_residual": 1e-3}, "banded_flops_affine_residual"),
    ({"factored_flop_exponent": 1.1}, "factored_flop_exponent"),
    ({"factored_vs_dense_relative": 1e-9}, "factored_vs_dense_relative"),
    ({"factored_renormalised_row_sum_deviation": 1e-6}, "factored_renormalised_row_sum_deviation"),
    ({"dense_flops": {64: 5 * 4 * 64 * 64, 128: 5 * 4 * 128}}, "dense_flops_mismatches"),
    ({"query_axis_output_identity": 1e-8}, "query_axis_output_identity"),
    ({"key_axis_output_difference": 1e-3}, "key_axis_output_difference"),
    ({"factored_vs_dense_relative": float("nan")}, "factored_vs_dense_relative"),  # a NaN never passes
])


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: the flop tables, their integer sizes


test_bad_input = refusals(check.run, [({"band": 32}, "band"), ({"sizes": (64, 64, 128)}, "sizes"),
                                      ({"steps": 0}, "steps"), ({"features": 1}, "features")])


#: evolve_attention at SMALL (steps 4): per size 4 dense, 4 sparse and 4 factored steps (0-35); factored against
#: dense for neumann, reflect, periodic (36-41), reflect and renormalised (42, 43); then per boundary (periodic,
#: neumann, reflect, dirichlet, fixed) and n = 1..8 the query- and key-axis evolutions (44 + 16 b + 2 (n - 1) + axis)
@pytest.mark.parametrize("call, failed", [
    (39, "factored_vs_dense_relative"),         # reflect's dense reference: Python's max over boundaries kept neumann's
    (44 + 16 + 4, "query_axis_output_identity"),  # neumann, n = 3: after finite errors
    (44 + 16 + 5, "key_axis_output_difference"),  # min over the loop kept the finite differences
])
def test_a_nan_from_the_toolkit_fails(small, inject_nan, call, failed):
    p = small[0]
    poisoned = inject_nan("spectral.evolve_attention", call=call, field="attention", at=70)
    q = CHECK.measure(p)
    assert poisoned == [call]
    assert np.isnan(assert_fails(CHECK, q, p, failed, only=True).measured[failed])


def test_a_nan_stored_in_the_band_fails(small, monkeypatch):
    # the last sparse step at T = 64 (call 7) stores a NaN inside the band: it is non-zero, so the pattern matched
    import spectral

    real, calls = spectral.evolve_attention, []

    def evolve(*args, **kwargs):
        res = real(*args, **kwargs)
        calls.append(len(calls))
        if len(calls) == 8:
            res.attention.data[10] = np.nan
        return res

    p = small[0]
    monkeypatch.setattr(spectral, "evolve_attention", evolve)
    q = CHECK.measure(p)
    res = assert_fails(CHECK, q, p, "fill_in_pattern_mismatches", only=True)
    assert res.measured["fill_in_pattern_mismatches"] == 1
