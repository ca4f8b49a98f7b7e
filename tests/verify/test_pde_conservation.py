"""verify.pde_conservation (PDE-1): row sums and positivity by PDE, axis and boundary; the printed claim fails.

Measured once at sizes 16 and 32; held to the printed claim, to Neumann ends implemented as reflection,
to altered row sums and entries, to NaNs from evolve_attention and the reference stencil, and to the same
numbers in array_api_strict (standing in for CuPy).
"""

import dataclasses

import numpy as np
import pytest

from verify import pde_conservation as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"sizes": (16, 32), "steps": (1, 4, 20)}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.record("conserving_pairs_mismatched").measured == 0
    assert res.measured["wave_min_entry"] < 0 <= res.measured["diffusion_min_entry"]
    assert q.fig16_steps == (0, 1, 2, 4, 8)
    for pde in ("diffusion", "wave", "reaction-diffusion", "advection-diffusion"):
        assert q.fig16[pde].rows.shape == (5, 64) and q.fig16[pde].min_entry.shape == (5,)


def test_printed_fails_on_sums_and_positivity(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                       {"printed_max_row_sum_deviation", "printed_min_entry"}, only=True)
    assert "PDE-1 as printed" in res.failures[0]


def test_neumann_ends_implemented_as_reflection_fail(monkeypatch):
    """A toolkit whose 'neumann' ends are ghost reflection stops conserving the row sums where it should."""
    import spectral

    true_evolve = spectral.evolve_attention

    def reflecting(a0, *, boundary="neumann", **kwargs):
        return true_evolve(a0, boundary="reflect" if boundary == "neumann" else boundary, **kwargs)

    monkeypatch.setattr(spectral, "evolve_attention", reflecting)
    p, q = measured(CHECK, sizes=(16,), steps=(1, 4))
    assert_fails(CHECK, q, p, {"diffusion_conserving_row_sum_deviation", "wave_conserving_row_sum_deviation",
                               "advection-diffusion_conserving_row_sum_deviation", "one_step_row_sum_change_error"})


def _worse(table, pick, value):
    return {k: (value if pick(k) else v) for k, v in table.items()}


def test_peaked_rows_of_one_head_dimension_pass_and_no_reaction_fails(monkeypatch):
    """d = 1 makes peaked softmax rows: the least increment beta dt (1 - sum a^2) is 0.21 beta dt at the default sizes,
    under the old fixed beta dt / 4 (a wrong FAIL; 0.35 beta dt here); the bound is half the closed form of A(0). A
    reaction term that adds nothing fails."""
    import spectral

    p, q = measured(CHECK, **SMALL, d=1)
    assert_passes(CHECK, q, p)
    assert 0 < q.reaction_min_row_sum_increment_closed_form < 0.5 * p.beta_reaction * p.dt  # 0.66 beta dt at d = 16
    true_evolve = spectral.evolve_attention
    monkeypatch.setattr(spectral, "evolve_attention", lambda a0, **kw: true_evolve(a0, **{**kw, "beta": 0.0}))
    p, q = measured(CHECK, **SMALL, d=1)
    assert_fails(CHECK, q, p, "reaction_min_row_sum_increment")


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("row_sum_deviation", ("wave", "key", "periodic")): 1e-9}, "wave_conserving_row_sum_deviation"),
    ({("row_sum_deviation", ("diffusion", "key", "dirichlet")): 1e-14}, "nonconserving_min_row_sum_change"),
    ({("conserving", ("diffusion", "query", "reflect")): False}, "conserving_pairs_mismatched"),
    ({"one_step_row_sum_change_error": 1e-10}, "one_step_row_sum_change_error"),
    ({"reflect_key_trapezoid_sum_change": 1e-6}, "reflect_key_trapezoid_sum_change"),
    ({"reaction_one_step_increment_error": 1e-6}, "reaction_one_step_increment_error"),
    ({"reaction_min_row_sum_increment": 0.0}, "reaction_min_row_sum_increment"),
    (lambda q: {"min_entry": _worse(q.min_entry, lambda k: k[0] == "diffusion", -1e-3)}, "diffusion_min_entry"),
    (lambda q: {"min_entry": _worse(q.min_entry, lambda k: k[0] == "advection-diffusion", -1e-3)},
     "advection_min_entry"),
    (lambda q: {"min_entry": _worse(q.min_entry, lambda k: k[0] == "wave", 0.0)}, "wave_min_entry"),
    ({"identity_min_entry_at_threshold": -0.01}, "identity_min_entry_at_threshold"),
    ({"identity_min_entry_beyond_threshold": 0.0}, "identity_min_entry_beyond_threshold"),
    ({"advection_strong_min_entry": 0.0}, "advection_strong_min_entry"),
    ({"one_step_row_sum_change_error": float("nan")}, "one_step_row_sum_change_error"),  # a NaN never passes
])


def test_a_short_wave_travels_to_its_first_negative_entry_and_a_clipped_wave_fails(monkeypatch):
    """At dt = 0.01 the runs end at c t = 0.03, long before the wave's first negative entry (c t ~ 1.3): a wrong FAIL
    until the wave ran on to c t = 3; the right wave passes, one clipped at 0 fails there."""
    import spectral

    p, q = measured(CHECK, **SMALL, dt=0.01)
    assert_passes(CHECK, q, p)
    assert q.wave_min_entry_travelled < -0.1 and min(v for k, v in q.min_entry.items() if k[0] == "wave") > 0
    true_evolve = spectral.evolve_attention

    def clipped(a0, *, pde="diffusion", **kw):
        res = true_evolve(a0, pde=pde, **kw)
        return dataclasses.replace(res, attention=np.maximum(res.attention, 0.0)) if pde == "wave" else res

    monkeypatch.setattr(spectral, "evolve_attention", clipped)
    p, q = measured(CHECK, **SMALL, dt=0.01)
    assert_fails(CHECK, q, p, "wave_min_entry")


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: conserving, the row-sum and entry tables, Fig. 16's rows


test_bad_input = refusals(check.run, [
    ({"alpha": 0.3}, "alpha"), ({"c": 0.8}, "c"), ({"beta_advection": 0.3}, "beta_advection"),
    ({"sizes": (4,)}, "sizes"), ({"steps": (0,)}, "steps"), ({"dt": 0.0}, "dt"), ({"claim": "paper"}, "claim"),
    ({"sizes": ()}, "sizes"),
    # a step float64 cannot resolve (dt = 1e-300 was a ValueError traceback in the assertions)
    ({"dt": 1e-300}, r"alpha and dt must keep r = alpha dt >= 1.5e-08"), ({"c": 1e-300}, "c and dt must keep c dt"),
    ({"beta_reaction": 1e-300}, "beta_reaction and dt must keep"),
    ({"c": 5e-6}, "c dt >= 1e-05")])  # the wave's first negative entry would need > 3e5 steps


def test_computes_in_the_given_namespace(evolve_on_device):
    xp, seen = evolve_on_device  # array_api_strict as strict as bare CuPy (tests/verify/conftest.py)
    p = CHECK.params(sizes=(16,), steps=(20,))
    ref = CHECK.measure(p)
    seen.clear()
    got = CHECK.measure(p, xp=xp)
    # every evolution (sizes, the positivity thresholds, Fig. 16) ran on arrays of the namespace given
    assert len(seen) == 4 * 5 * 3 * 2 + 5 + 4 * 4 and set(seen) == {"array_api_strict"}
    assert {"asarray", "eye", "sum", "max", "min", "stack"} <= xp.used
    # array_api_strict takes the step's whole-array path (NumPy its row-block path): the same numbers up to the
    # round-off of O(1) entries (measured <= 1.6e-15), brought back as host floats and NumPy arrays
    assert got.conserving == ref.conserving and got.row_sum_deviation.keys() == ref.row_sum_deviation.keys()
    for table in ("row_sum_deviation", "min_entry"):
        a, b = getattr(ref, table), getattr(got, table)
        assert all(type(v) is float for v in b.values())
        np.testing.assert_allclose([b[k] for k in a], [a[k] for k in a], rtol=0, atol=1e-14)
    for name in ("one_step_row_sum_change_error", "reflect_key_trapezoid_sum_change",
                 "reaction_one_step_increment_error", "reaction_min_row_sum_increment",
                 "identity_min_entry_at_threshold", "identity_min_entry_beyond_threshold",
                 "advection_strong_min_entry"):
        assert type(getattr(got, name)) is float
        assert getattr(got, name) == pytest.approx(getattr(ref, name), rel=0, abs=1e-14), name
    for pde, rows in ref.fig16.items():
        assert isinstance(got.fig16[pde].rows, np.ndarray)
        np.testing.assert_allclose(got.fig16[pde].rows, rows.rows, rtol=0, atol=1e-15)
        np.testing.assert_allclose(got.fig16[pde].min_entry, rows.min_entry, rtol=0, atol=1e-15)
    assert_same_records(CHECK.assess(ref, p), assert_passes(CHECK, got, p))


#: evolve_attention is called 4 times per (pde, boundary, axis) in the order of _PDES, _BOUNDARIES, _AXES (the
#: steps 1, 4, 20, then one step), 240 calls in all at one size; then the positivity thresholds (240-244)
TINY = {"sizes": (16,), "steps": (1, 4, 20)}


def _call(pde, boundary, axis, k):
    return (((check._PDES.index(pde) * 5 + check._BOUNDARIES.index(boundary)) * 3 + check._AXES.index(axis)) * 4
            + k)


@pytest.mark.parametrize("target, call, failed", [
    # diffusion, key axis, periodic, N_t = 4: Python's max / min over the steps kept N_t = 1's row sums / entries
    ("spectral.evolve_attention", _call("diffusion", "periodic", "key", 1),
     {"diffusion_conserving_row_sum_deviation", "diffusion_min_entry"}),
    # ghost reflection, key axis: the non-conserving change, the trapezoid sums
    ("spectral.evolve_attention", _call("diffusion", "reflect", "key", 1),
     {"nonconserving_min_row_sum_change", "reflect_key_trapezoid_sum_change", "diffusion_min_entry"}),
    # the reaction's one step at Neumann ends, after the periodic ones
    ("spectral.evolve_attention", _call("reaction-diffusion", "neumann", "key", 3),
     {"reaction_one_step_increment_error", "reaction_min_row_sum_increment"}),
    # one step from A = I at both-axes r = 1/4 and 0.3 (min / max with the key-axis value)
    ("spectral.evolve_attention", 242, {"identity_min_entry_at_threshold"}),
    ("spectral.evolve_attention", 243, {"identity_min_entry_beyond_threshold"}),
    # the reference operator (one per PDE and boundary): a NaN made its column sums "non-zero", so the reaction's
    # Neumann increment was not measured; for the linear PDEs it reaches the predicted change
    ("manifolds.references.pde.stencil_matrix", 2 * 5 + 1, {"reaction_one_step_increment_error"}),
    ("manifolds.references.pde.stencil_matrix", 3, {"one_step_row_sum_change_error"}),
])
def test_a_nan_from_the_toolkit_fails(inject_nan, target, call, failed):
    field = "attention" if target.endswith("evolve_attention") else None
    p = CHECK.params(**TINY)
    poisoned = inject_nan(target, call=call, field=field, at=21)
    q = CHECK.measure(p)
    assert poisoned == [call]
    res = assert_fails(CHECK, q, p, failed, only=True)
    assert all(np.isnan(res.measured[name]) for name in failed)
