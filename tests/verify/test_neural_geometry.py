"""verify.neural_geometry (NEURAL-5): paraboloid vs the creased, piecewise-linear ReLU-MLP surface of Fig. 1."""

import math

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import neural_geometry as check

CHEAP = dict(grid=201, surface_grid=41)


def test_default_counts_every_cell(default_result):
    res = default_result("neural_geometry")
    assert res.passed, res.failures
    m, h = res.measured, res.parameters["hidden"]
    # the sign-pattern enumeration equals 1 + L + I and respects 1 + h + C(h, 2)
    assert m["regions_by_sign_patterns"] == 1 + m["lines_crossing_square"] + m["crossings_inside_square"]
    assert m["regions_by_sign_patterns"] <= 1 + h + math.comb(h, 2) == m["arrangement_bound"]
    assert m["regions_seen_on_grid"] <= m["regions_by_sign_patterns"]
    assert res.record("crease_curvature_growth").measured >= res.record("crease_curvature_growth").tolerance


def test_arrangement_of_two_lines():
    # x = 0 and y = 0 through the square: 4 cells, found by the vertex samples
    lines = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    samples = check.cell_samples(lines, 1.0)
    assert len(np.unique(check.sign_codes(lines, samples[:, 0], samples[:, 1]))) == 4
    L, inter, _ = check.crossings(lines, 1.0)
    assert (L, inter) == (2, 1)


@pytest.mark.parametrize("activation", ["tanh", "gelu"])
def test_smooth_sigma_has_no_creases_and_the_printed_sharp_edges_fail(activation):
    res = check.run(activation=activation, **CHEAP)
    assert res.passed, res.failures
    assert res.record("smooth_curvature_growth").measured < 1.5
    printed = check.run(activation=activation, claim="printed", **CHEAP)
    assert not printed.passed and printed.record("printed_sharp_edges").passed is False


def test_printed_sharp_edges_hold_for_relu():
    assert check.run(claim="printed", **CHEAP).passed


def test_no_crease_in_the_square_fails_and_says_why():
    res = check.run(hidden=1, half_width=0.1, seed=3, **CHEAP)
    assert not res.passed
    assert "no crease line crosses the square" in res.final_line()


def test_wrong_surface_fails(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, **kw: real(q, k, mlp, **kw) + 1e-3 * q[:, :1])
    res = check.run(**CHEAP)
    assert not res.passed and res.record("surface_formula_error").passed is False


@pytest.mark.parametrize("kwargs, name", [({"hidden": 0}, "hidden"), ({"hidden": 63}, "hidden"),
                                          ({"activation": "exp"}, "activation"), ({"half_width": 0.0}, "half_width"),
                                          ({"grid": 10}, "grid"), ({"surface_grid": 5}, "surface_grid")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)
