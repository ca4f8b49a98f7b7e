"""verify.pde_cost (PDE-16, PDE-18): cost laws of dense/banded/factored refinement; output diffusion.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import numpy as np
import pytest

from spectral.validation import InputError
from verify import pde_cost as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = {"sizes": (64, 128, 256)}  # > 2 (band/2 + steps) + g + steps = 52


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def test_small_settings_pass(small):
    p, q = small
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    assert res.measured["reflect_factored_row_sum_deviation"] > 1e-8  # reflection needs renormalising
    assert q.dense_flops == {T: 5 * 4 * T * T for T in (64, 128, 256)}


def test_printed_fails_on_pde16_only_and_agrees_with_the_ledger(small):
    from verify.core.claims import claim_records, printed_disagreements

    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_dense_flop_exponent"}  # D.0.5 as printed (PDE-16, holds under assumptions)
    assert all(r.passed for r in claim_records(res, "PDE-18"))  # PDE-18 holds as printed: its part passes
    assert res.record("key_axis_output_difference").passed  # asserted in both modes
    assert printed_disagreements(res) == []
    assert "[paper: PDE-16 holds under stated assumptions; PDE-18 holds as printed]" in res.final_line()
    assert "should hold" not in res.final_line()


def test_narrow_band_without_global_tokens_passes():
    p = CHECK.params(**SMALL, steps=2, band=9, n_global=0)
    res = CHECK.assess(CHECK.measure(p), p)
    assert res.passed, res.failures


def test_diffusing_the_wrong_axis_fails(monkeypatch):
    """A toolkit that diffused along the keys when asked for the queries breaks the output identity."""
    import spectral

    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, **kw: true_evolve(a0, **{**kw, "axis": "key"}))
    p = CHECK.params(sizes=(64, 96, 128), steps=1)
    res = CHECK.assess(CHECK.measure(p), p)
    assert [r.name for r in res.records if r.passed is False] == ["query_axis_output_identity"]


@pytest.mark.parametrize("change, name", [
    ({"fill_in_pattern_mismatches": 3}, "fill_in_pattern_mismatches"),
    ({"band_width_error": 1}, "band_width_error"),
    ({"banded_flops_affine_residual": 1e-3}, "banded_flops_affine_residual"),
    ({"factored_flop_exponent": 1.1}, "factored_flop_exponent"),
    ({"factored_vs_dense_relative": 1e-9}, "factored_vs_dense_relative"),
    ({"factored_renormalised_row_sum_deviation": 1e-6}, "factored_renormalised_row_sum_deviation"),
    ({"dense_flops": {64: 5 * 4 * 64 * 64, 128: 5 * 4 * 128}}, "dense_flops_mismatches"),
    ({"query_axis_output_identity": 1e-8}, "query_axis_output_identity"),
    ({"key_axis_output_difference": 1e-3}, "key_axis_output_difference"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, change, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **change), p)
    assert not res.passed and res.record(name).passed is False


def test_nan_never_passes(small):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, factored_vs_dense_relative=float("nan")), p)
    assert res.record("factored_vs_dense_relative").passed is False


def test_json_round_trip(small):
    p, q = small
    back = CheckResult.from_json(CHECK.assess(q, p).to_json())
    assert type(back.quantities) is type(q)
    assert back.quantities.banded_flops == q.banded_flops and all(type(k) is int for k in back.quantities.dense_flops)


@pytest.mark.parametrize("kwargs, match", [({"band": 32}, "band"), ({"sizes": (64, 64, 128)}, "sizes"),
                                           ({"steps": 0}, "steps"), ({"features": 1}, "features")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)


#: evolve_attention at SMALL (steps 4): per size 4 dense, 4 sparse and 4 factored steps (0-35); factored against
#: dense for neumann, reflect, periodic (36-41), reflect and renormalised (42, 43); then per boundary (periodic,
#: neumann, reflect, dirichlet, fixed) and n = 1..8 the query- and key-axis evolutions (44 + 16 b + 2 (n - 1) + axis)
@pytest.mark.parametrize("call, failed", [
    (39, "factored_vs_dense_relative"),         # reflect's dense reference: Python's max over boundaries kept neumann's
    (44 + 16 + 4, "query_axis_output_identity"),  # neumann, n = 3: after finite errors
    (44 + 16 + 5, "key_axis_output_difference"),  # min over the loop kept the finite differences
])
def test_a_nan_from_the_toolkit_fails(inject_nan, call, failed):
    poisoned = inject_nan("spectral.evolve_attention", call=call, field="attention", at=70)
    p = CHECK.params(**SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert poisoned == [call]
    assert [r.name for r in res.records if r.passed is False] == [failed] and np.isnan(res.measured[failed])


def test_a_nan_stored_in_the_band_fails(monkeypatch):
    # the last sparse step at T = 64 (call 7) stores a NaN inside the band: it is non-zero, so the pattern matched
    import spectral

    real, calls = spectral.evolve_attention, []

    def evolve(*args, **kwargs):
        res = real(*args, **kwargs)
        calls.append(len(calls))
        if len(calls) == 8:
            res.attention.data[10] = np.nan
        return res

    monkeypatch.setattr(spectral, "evolve_attention", evolve)
    p = CHECK.params(**SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert [r.name for r in res.records if r.passed is False] == ["fill_in_pattern_mismatches"]
    assert res.measured["fill_in_pattern_mismatches"] == 1
