"""verify.density_normalisation (FNA-14): stationary law rho^(1-2a) and column sums 1; eq. (43) as
printed fails, and so does a density-independent stationary law."""

import re

import numpy as np
import pytest

from spectral.validation import InputError
from verify import density_normalisation as dn

CHEAP = dict(densities=("cosine",), alphas=(2.0,), n=800)


def _failed(result):
    return {r.name for r in result.records if r.passed is False}


def test_default_passes(default_result):
    r = default_result("density_normalisation")
    assert r.passed, r.failures
    m = r.measured
    for dens in ("cosine", "vonmises"):
        for a in (0, 0.5, 1):
            law = r.record(f"law_slope_{dens}_alpha2_a{a:g}")
            assert law.expected == 1 - 2 * a and abs(law.measured - law.expected) < 1e-3
            assert r.record(f"stationarity_resid_{dens}_alpha1.2_a{a:g}").measured < 1e-13
            assert abs(m[f"column_sum_slope_{dens}_alpha1.2_a{a:g}"]) < 0.05
    assert m["grid_gap_over_scale_vonmises"] < 0.6  # inside the measured regime


def test_eq43_as_printed_fails():
    r = dn.run(claim="printed", densities=("cosine",), alphas=(2.0,), n=600, exponents=(0.0,))
    assert _failed(r) == {"column_sum_slope_cosine_alpha2_a0"}, r.failures
    assert "eq. (43) as printed" in r.failures[0]
    assert r.record("column_sum_slope_cosine_alpha2_a0").expected == 1.0
    assert not r.record("column_sum_max_dev_cosine_alpha2_a0").deciding


def test_density_independent_law_fails():
    r = dn.run(law="rho", **CHEAP)
    # a = 0 gives rho^1 (passes); a = 1/2 and a = 1 fail
    assert _failed(r) == {"law_slope_cosine_alpha2_a0.5", "law_slope_cosine_alpha2_a1"}, r.failures
    assert all("stationary law" in f for f in r.failures)


def test_cheap_setting_passes():
    r = dn.run(**CHEAP)
    assert r.passed, r.failures


def test_unresolved_grid_fails_and_says_why():
    # n = 500 at s = 0.02: widest grid gap 2.2 s, stationary-law slope 0.79-0.82 instead of 1
    r = dn.run(n=500)
    assert not r.passed
    assert all("grid gap / scale" in f for f in r.failures), r.failures


@pytest.mark.parametrize("kwargs, word", [
    (dict(exponents=(1.5,)), "exponents"), (dict(exponents=()), "exponents"), (dict(alphas=(0.2,)), "alphas"),
    (dict(n=10), "n"), (dict(scale=1.0), "scale"), (dict(law="x"), "law"), (dict(claim="paper"), "claim"),
    (dict(densities=("normal",)), "densities"), (dict(densities=()), "densities"),
])
def test_bad_input(kwargs, word):
    with pytest.raises(InputError, match=word):
        dn.run(**kwargs)


def test_computes_in_the_device_namespace(device_spy):
    ref = dn.run(**CHEAP)
    spy = device_spy.install()
    res = dn.run(**CHEAP)
    assert {"asarray", "abs", "minimum", "sum", "max"} <= spy.used
    # array_api_strict wraps numpy: the same operations give the same numbers
    assert [r.measured for r in res.records] == pytest.approx([r.measured for r in ref.records], rel=1e-12)
    assert res.passed == ref.passed



# ------------------------------------------------------------------------------ --method matrix-free

GIB = 1 << 30


def test_matrix_free_gives_the_dense_numbers():
    kwargs = dict(n=600, alphas=(1.2, 2.0), densities=("cosine",))
    dense, free = dn.run(method="dense", **kwargs), dn.run(method="matrix-free", **kwargs)
    assert dense.parameters["method"] == "dense" and free.parameters["method"] == "matrix-free"
    assert [r.name for r in free.records] == [r.name for r in dense.records]
    # measured: every record within 1.1e-15 absolute (the residuals are rounding noise of ~1e-15 on
    # both paths; slopes and column sums agree to ~1e-16), the pi vectors within 3.5e-15 relative
    for r in dense.records:
        assert free.record(r.name).measured == pytest.approx(r.measured, rel=1e-12, abs=1e-13), r.name
        assert free.record(r.name).passed == r.passed, r.name
    for name, pi in dense.arrays.items():
        assert np.asarray(free.arrays[name]) == pytest.approx(np.asarray(pi), rel=1e-12), name


def test_matrix_free_printed_claim_still_fails():
    r = dn.run(claim="printed", densities=("cosine",), alphas=(2.0,), n=600, exponents=(0.0,), method="matrix-free")
    assert _failed(r) == {"column_sum_slope_cosine_alpha2_a0"}, r.failures


def test_auto_takes_the_matrix_free_path_when_dense_does_not_fit(available_memory):
    # n = 1500: dense needs 16 MiB + 40 n^2 = 102 MiB, matrix-free 88 MiB + a few hundred bytes per point
    available_memory(96 << 20)
    r = dn.run(n=1500, densities=("cosine",), alphas=(2.0,))
    assert r.parameters["method"] == "matrix-free" and r.passed, r.failures
    available_memory(GIB)
    assert dn.run(n=1500, densities=("cosine",), alphas=(2.0,)).parameters["method"] == "dense"


def test_dense_refusal_names_the_matrix_free_path_and_real_options(available_memory, command_options):
    from spectral.memory import DenseMemoryError

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


def test_matrix_free_computes_in_the_device_namespace(device_spy):
    kwargs = dict(CHEAP, method="matrix-free")
    ref = dn.run(**kwargs)
    spy = device_spy.install()
    res = dn.run(**kwargs)
    assert {"asarray", "abs", "minimum", "sum", "stack", "concat"} <= spy.used
    assert [r.measured for r in res.records] == pytest.approx([r.measured for r in ref.records], rel=1e-12)
    assert res.passed == ref.passed
