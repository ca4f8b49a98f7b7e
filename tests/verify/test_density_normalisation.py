"""verify.density_normalisation (FNA-14): stationary law rho^(1-2a) and column sums 1; eq. (43) as
printed fails, and so does a density-independent stationary law.

The measurement runs once at a cheap setting (one density, n = 1000) on the dense path and once on the
matrix-free path; the assertions are held to it, to the printed claim, to the wrong law and to altered
quantities.
"""

import dataclasses
import math
import re

import numpy as np
import pytest

from spectral.floor.memory import DenseMemoryError
from verify import density_normalisation as dn
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_records, failed_records,
                            measured, measurement_fixture, refusals)

CHECK = dn.CHECK
SMALL = dict(densities=("cosine",), n=1000)
GIB = 1 << 30
small = measurement_fixture(CHECK, **SMALL, method="dense")
matrix_free = measurement_fixture(CHECK, **SMALL, method="matrix-free")


def test_small_setting_passes(small):
    p, q = small
    r = assert_passes(CHECK, q, p)
    m = r.measured
    for a in (0, 0.5, 1):
        law = r.record(f"law_slope_cosine_alpha2_a{a:g}")
        assert law.expected == 1 - 2 * a and abs(law.measured - law.expected) < 1e-3
        assert r.record(f"stationarity_resid_cosine_alpha1.2_a{a:g}").measured < 1e-13
        assert abs(m[f"column_sum_slope_cosine_alpha1.2_a{a:g}"]) < 0.05
    assert q.method == "dense" and q.grids["cosine"].normalisations[2.0, 0.5].pi.shape == (1000,)


def test_eq43_as_printed_fails(small):
    p, q = small
    r = assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                     {f"column_sum_slope_cosine_alpha{al:g}_a{a:g}" for al in (1.2, 2) for a in (0, 0.5, 1)}, only=True)
    assert all("eq. (43) as printed" in f for f in r.failures)
    assert r.record("column_sum_slope_cosine_alpha2_a0").expected == 1.0
    assert not r.record("column_sum_max_dev_cosine_alpha2_a0").deciding


def test_density_independent_law_fails(small):
    p, q = small
    # a = 0 gives rho^1 (passes); a = 1/2 and a = 1 fail
    r = assert_fails(CHECK, q, dataclasses.replace(p, law="rho"),
                     {f"law_slope_cosine_alpha{al:g}_a{a:g}" for al in (1.2, 2) for a in (0.5, 1)}, only=True)
    assert all("stationary law" in f for f in r.failures)


@pytest.mark.parametrize("field, value, name", [
    ("stationarity_resid", 1e-9, "stationarity_resid_cosine_alpha2_a0.5"),
    ("law_slope", 0.2, "law_slope_cosine_alpha2_a0.5"),
    ("column_sum_max_dev", 0.01, "column_sum_max_dev_cosine_alpha2_a0.5"),
    ("column_sum_slope", 0.5, "column_sum_slope_cosine_alpha2_a0.5"),
    ("law_slope", math.nan, "law_slope_cosine_alpha2_a0.5"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, field, value, name):
    p, q = small
    grid = q.grids["cosine"]
    wrong = dataclasses.replace(grid.normalisations[2.0, 0.5], **{field: value})
    grid = dataclasses.replace(grid, normalisations={**grid.normalisations, (2.0, 0.5): wrong})
    assert_fails(CHECK, q, p, name, only=True, grids={"cosine": grid})


def test_unresolved_grid_fails_and_says_why():
    # n = 500 at s = 0.02: widest grid gap 2.2 s, stationary-law slope 0.79-0.82 instead of 1
    p, q = measured(CHECK, n=500, method="dense")
    r = CHECK.assess(q, p)
    assert not r.passed and all("grid gap / scale" in f for f in r.failures), r.failures


def test_matrix_free_gives_the_dense_numbers(small, matrix_free):
    (pd, qd), (pf, qf) = small, matrix_free
    dense, free = CHECK.assess(qd, pd), CHECK.assess(qf, pf)
    assert qf.method == "matrix-free" and free.parameters["method"] == "matrix-free"
    # measured: every record within 1.1e-15 absolute (the residuals are rounding noise of ~1e-15 on
    # both paths; slopes and column sums agree to ~1e-16), the pi vectors within 3.5e-15 relative
    assert_same_records(dense, free, rel=1e-12, abs=1e-13)
    for key, norm in qd.grids["cosine"].normalisations.items():
        np.testing.assert_allclose(qf.grids["cosine"].normalisations[key].pi, norm.pi, rtol=1e-12)
    printed = CHECK.assess(qf, dataclasses.replace(pf, claim="printed"))
    assert failed_records(printed) == failed_records(CHECK.assess(qd, dataclasses.replace(pd, claim="printed")))


def test_auto_takes_the_matrix_free_path_when_dense_does_not_fit(available_memory):
    # n = 1500: dense needs 16 MiB + 40 n^2 = 102 MiB, matrix-free 88 MiB + a few hundred bytes per point
    available_memory(96 << 20)
    assert CHECK.choose(CHECK.params(n=1500, densities=("cosine",), alphas=(2.0,))).method == "matrix-free"
    available_memory(GIB)
    assert CHECK.choose(CHECK.params(n=1500, densities=("cosine",), alphas=(2.0,))).method == "dense"


def test_dense_refusal_names_the_matrix_free_path_and_real_options(available_memory, command_options):
    available_memory(GIB)
    with pytest.raises(DenseMemoryError) as info:
        dn.run(n=8000, method="dense")
    message = str(info.value)
    assert "lower --n (at most 5" in message and "or use --method matrix-free (needs 9" in message, message
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named == {"--n", "--method"} and named <= command_options("density_normalisation")
    available_memory(64 << 20)  # below the matrix-free path's fixed part
    with pytest.raises(DenseMemoryError, match=r"matrix-free .* even --n 200 does not fit now$"):
        dn.run(n=8000, method="matrix-free")


@pytest.mark.parametrize("method, names", [("dense", {"asarray", "abs", "minimum", "sum", "max"}),
                                           ("matrix-free", {"asarray", "abs", "minimum", "sum", "stack", "concat"})])
def test_computes_in_the_given_namespace(strict_xp, method, names):
    p, ref = measured(CHECK, densities=("cosine",), alphas=(2.0,), n=400, method=method)
    got = CHECK.measure(p, xp=strict_xp)
    assert names <= strict_xp.used
    for key, norm in ref.grids["cosine"].normalisations.items():
        np.testing.assert_allclose(got.grids["cosine"].normalisations[key].pi, norm.pi, rtol=1e-12)
        assert got.grids["cosine"].normalisations[key].law_slope == pytest.approx(norm.law_slope, rel=1e-12)


def test_json_round_trip_keeps_the_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.grids["cosine"].normalisations) == set(q.grids["cosine"].normalisations)
    np.testing.assert_array_equal(back.grids["cosine"].normalisations[1.2, 1.0].pi,
                                  q.grids["cosine"].normalisations[1.2, 1.0].pi)


test_bad_input = refusals(CHECK.params, [
    (dict(exponents=(1.5,)), "exponents"), (dict(exponents=()), "exponents"), (dict(alphas=(0.2,)), "alphas"),
    (dict(n=10), "n"), (dict(scale=1.0), "scale"), (dict(law="x"), "law"), (dict(claim="paper"), "claim"),
    (dict(densities=("normal",)), "densities"), (dict(densities=()), "densities"), (dict(method="qr"), "method"),
])
