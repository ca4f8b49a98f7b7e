"""verify.neural_geometry (NEURAL-5): paraboloid vs the creased, piecewise-linear ReLU-MLP surface of Fig. 1.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses
import math

import numpy as np
import pytest

import spectral
from verify import neural_geometry as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(grid=101, surface_grid=31)
small = measurement_fixture(CHECK, **SMALL)


@pytest.fixture(scope="module", params=["tanh", "gelu"])
def smooth(request):
    return measured(CHECK, activation=request.param, **SMALL)


def test_small_settings_count_every_cell(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    c, h = q.cells, p.hidden
    # the sign-pattern enumeration equals 1 + L + I and respects 1 + h + C(h, 2)
    assert c.regions_by_sign_patterns == 1 + c.lines_crossing_square + c.crossings_inside_square
    assert c.regions_by_sign_patterns <= 1 + h + math.comb(h, 2) == res.measured["arrangement_bound"]
    assert c.regions_seen_on_grid <= c.regions_by_sign_patterns
    assert q.curvature_growth >= 2.0 and q.z_na.shape == (31, 31) and c.creases_xyz.shape == (h, 100, 3)


def test_arrangement_of_two_lines():
    # x = 0 and y = 0 through the square: 4 cells, found by the vertex samples
    lines = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    samples = check.cell_samples(lines, 1.0)
    assert len(np.unique(check.sign_codes(lines, samples[:, 0], samples[:, 1]))) == 4
    L, inter, _ = check.crossings(lines, 1.0)
    assert (L, inter) == (2, 1)


def test_smooth_sigma_has_no_creases_and_the_printed_sharp_edges_fail(smooth):
    p, q = smooth
    res = assert_passes(CHECK, q, p)
    assert q.cells is None and res.record("smooth_curvature_growth").measured < 1.5
    assert assert_round_trip(CHECK, q, p).quantities.cells is None
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "printed_sharp_edges", only=True)


def test_printed_sharp_edges_hold_for_relu(small):
    p, q = small
    assert CHECK.assess(q, dataclasses.replace(p, claim="printed")).passed


def test_no_crease_in_the_square_fails_and_says_why():
    p, q = measured(CHECK, hidden=1, half_width=0.1, seed=3, **SMALL)
    res = CHECK.assess(q, p)
    assert not res.passed and "no crease line crosses the square" in res.final_line()


def test_wrong_surface_fails(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, **kw: real(q, k, mlp, **kw) + 1e-3 * q[:, :1])
    p, q = measured(CHECK, **SMALL)
    assert_fails(CHECK, q, p, "surface_formula_error", only=True)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"surface_formula_error": 1e-9}, "surface_formula_error"),
    ({"dp_hessian_deviation": 1e-6}, "dp_hessian_deviation"),
    ({"curvature_growth": 1.0}, "crease_curvature_growth"),
    ({("cells", "cell_hessian_max"): 1.0}, "cell_hessian_max"),
    ({("cells", "regions_by_sign_patterns"): 1}, "regions_by_sign_patterns"),
    ({("cells", "grid_patterns_are_cells"): False}, "grid_patterns_are_cells"),
], only=True)


def test_more_cells_than_the_bound_fail(small):
    p, q = small
    many = dataclasses.replace(q.cells, crossings_inside_square=200, regions_by_sign_patterns=201 +
                               q.cells.lines_crossing_square)
    assert_fails(CHECK, q, p, "regions_vs_bound", only=True, cells=many)


def test_creases_on_a_smooth_surface_fail(smooth):
    p, q = smooth
    assert_fails(CHECK, q, p, "smooth_curvature_growth", only=True, curvature_growth=4.0)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, "curvature_growth", "crease_curvature_growth")


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert type(back.cells) is check.Cells
    assert back.cells.regions_by_sign_patterns == q.cells.regions_by_sign_patterns
    assert np.array_equal(back.z_na, q.z_na)
    assert np.array_equal(back.cells.creases_xyz, q.cells.creases_xyz, equal_nan=True)


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"hidden": 0}, "hidden"), ({"hidden": 63}, "hidden"), ({"activation": "exp"}, "activation"),
    ({"half_width": 0.0}, "half_width"), ({"grid": 10}, "grid"), ({"surface_grid": 5}, "surface_grid"),
])
