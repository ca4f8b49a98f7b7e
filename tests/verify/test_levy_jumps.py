"""verify.levy_jumps (FNA-20): FNA attention-walk jumps have tail exponent alpha; the ambient d_M fails."""

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
