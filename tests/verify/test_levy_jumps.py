"""verify.levy_jumps (FNA-20): FNA attention-walk jumps have tail exponent alpha; the ambient d_M fails."""

import re

import numpy as np
import pytest

from spectral.validation import InputError
from verify import levy_jumps as lj

CHEAP = dict(circle_n=800, circle_scale=0.12, circle_window=(0.6, 3.0), torus_n=800, torus_scale=0.02,
             torus_window=(0.15, 0.45), jumps=0)


def test_default_passes(default_result):
    r = default_result("levy_jumps")
    assert r.passed, r.failures
    m = r.measured
    # the exact S^1 law is much closer than its tolerance (grid term only)
    assert abs(m["circle_exponent_a1.2"] - 1.2) < r.record("circle_exponent_a1.2").tolerance / 4
    assert r.record("sampled_exponent_a1.5").passed and m["sampled_in_window_a1.5"] > 1000
    assert m["torus_window_mass_a2"] <= r.record("torus_window_mass_a2").tolerance


def test_cheap_setting_passes():
    assert lj.run(alphas=(1.5, 2.0), **CHEAP).passed


def test_ambient_dimension_fails():
    # d_M + 1 (the FNA-10 trap) gives tail exponent alpha + 1
    r = lj.run(alphas=(1.2,), dim_offset=1.0, **CHEAP)
    assert not r.passed
    rec = r.record("circle_exponent_a1.2")
    assert rec.passed is False and rec.measured == pytest.approx(2.2, abs=rec.tolerance)
    assert r.record("torus_exponent_a1.2").passed is False


def test_sampled_jumps_decide():
    r = lj.run(alphas=(1.5,), **{**CHEAP, "jumps": 20_000})
    rec = r.record("sampled_exponent_a1.5")
    assert r.passed and rec.sense == "close" and rec.tolerance > 0.02


@pytest.mark.parametrize("kwargs", [{"circle_scale": 0.1}, {"torus_scale": 0.03}])
def test_window_inside_the_core_is_refused(kwargs):
    # measured: r_min / scale = 3 (circle) and 3.3 (torus) failed (tail not reached)
    with pytest.raises(InputError, match="tail regime"):
        lj.run(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"alphas": (2.5,)}, "alphas"), ({"circle_window": (0.01, 1.0)}, "circle_window"),
    ({"circle_window": (0.3,)}, "circle_window"), ({"torus_window": (0.1, 0.6)}, "torus_window"),
    ({"torus_n": 5}, "torus_n"), ({"jumps": -1}, "jumps"), ({"dim_offset": -1.0}, "dim_offset"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        lj.run(**kwargs)


# ------------------------------------------------------------------------------ --method matrix-free

GIB = 1 << 30


def test_matrix_free_gives_the_dense_numbers():
    kwargs = dict(CHEAP, alphas=(1.2, 2.0), jumps=5000)
    dense, free = lj.run(method="dense", **kwargs), lj.run(method="matrix-free", **kwargs)
    assert dense.parameters["method"] == "dense" and free.parameters["method"] == "matrix-free"
    assert [r.name for r in free.records] == [r.name for r in dense.records]
    # measured: the sampled jumps are the same draws (equal exponents); the bin masses differ by the
    # order of the histogram sums only: exponents within 1.4e-14, the alpha = 2 window mass (1.4e-12)
    # within 5.6e-17, the mass arrays within 7.4e-14 of their largest entry
    for r in dense.records:
        assert free.record(r.name).measured == pytest.approx(r.measured, rel=1e-12, abs=1e-13), r.name
        assert free.record(r.name).passed == r.passed, r.name
    assert free.measured["sampled_exponent_a1.2"] == dense.measured["sampled_exponent_a1.2"]
    for name, values in dense.arrays.items():
        values = np.asarray(values)
        np.testing.assert_allclose(free.arrays[name], values, rtol=0, atol=1e-12 * np.max(np.abs(values)))


def test_matrix_free_ambient_dimension_still_fails():
    r = lj.run(alphas=(1.2,), dim_offset=1.0, method="matrix-free", **CHEAP)
    rec = r.record("circle_exponent_a1.2")
    assert rec.passed is False and rec.measured == pytest.approx(2.2, abs=rec.tolerance)
    assert r.record("torus_exponent_a1.2").passed is False


def test_auto_takes_the_matrix_free_path_when_dense_does_not_fit(available_memory):
    # CHEAP: dense needs 16 MiB + 32 * 800^2 + 48 * 800^2 = 65 MiB, matrix-free 64 MiB + 0.1 MiB
    available_memory((64 << 20) + (1 << 19))
    r = lj.run(alphas=(1.5,), **CHEAP)
    assert r.parameters["method"] == "matrix-free" and r.passed, r.failures
    available_memory(GIB)
    assert lj.run(alphas=(1.5,), **CHEAP).parameters["method"] == "dense"


def test_dense_refusal_names_the_matrix_free_path_and_real_options(available_memory, command_options):
    from spectral.memory import DenseMemoryError

    available_memory(GIB)
    with pytest.raises(DenseMemoryError) as info:
        lj.run(circle_n=6000, torus_n=2000, method="dense")
    message = str(info.value)
    assert "lower --circle-n (at most " in message and "or use --method matrix-free (needs 6" in message, message
    named = set(re.findall(r"--[a-z][a-z0-9-]*", message))
    assert named == {"--circle-n", "--method", "--torus-n"} and named <= command_options("levy_jumps")
    available_memory(64 << 20)  # below the matrix-free path's fixed part
    with pytest.raises(DenseMemoryError, match=r"matrix-free .* even --jumps 0 does not fit now$"):
        lj.run(method="matrix-free")
