"""verify.conformal (DRIFT-7, DRIFT-8): Theorem 4 with 4/(n-2), heat form, invariant density p^2."""

import subprocess
import sys

import pytest

from verify import conformal as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def passed():
    return check.run(n=2000, bins=16)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_corrected_statement_passes(passed):
    assert passed.passed, passed.failures
    for n in (1, 3, 4):
        assert passed.measured[f"theorem4_n{n}_remainder_at_point"] == 0.0
    assert passed.measured["n2_f_lap_minus_lap_is_zero"] is True  # no conformal form in n = 2
    assert passed.measured["heat_form_n2_is_zero"] is True       # but the heat form holds
    assert passed.measured["s1_spectrum_relative_error"] < 1e-3   # DRIFT-7 numerically on S^1 (f = p^-4)


def test_literal_exponent_fails():
    res = check.run(exponent="literal", n=1000, bins=8)
    assert not res.passed
    assert sum("Theorem 4" in f for f in res.failures) == 3  # n = 1, 3, 4 all fail
    assert any("spectrum" in f for f in res.failures)
    assert all(res.measured[f"theorem4_n{n}_remainder_at_point"] > 0.1 for n in (1, 3, 4))


def test_wrong_invariant_density_fails():
    res = check.run(weight_power=1.0, n=1000, bins=8)
    assert not res.passed
    assert any("symmetric" in f for f in res.failures)
    assert any("stationary density" in f for f in res.failures)


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.measured == passed.measured and back.passed


def test_cli(capsys):
    assert check.main(["--n", "1000", "--bins", "8", "--quiet"]) == 0
    assert check.main(["--n", "1000", "--bins", "8", "--exponent", "literal", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--eps", "2"]) == 2
    err = capsys.readouterr().err
    assert "eps must be" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"kappa": 0.0}, "kappa"), ({"n": 10}, "n must"), ({"n": 1000, "bins": 100}, "bins"),
    ({"exponent": "x"}, "exponent"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.conformal", "--n", "800", "--bins", "8", "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS conformal")


@pytest.mark.parametrize("kwargs, match", [({"kappa": 3.0}, "n too small for kappa and eps"),
                                           ({"kappa": 2.0, "eps": 0.02}, "eps too large for kappa")])
def test_unresolved_settings_are_refused(kwargs, match):
    # measured: kappa = 3, n = 4000, eps = 1e-3 gave a 0.58 profile deviation (grid gap 4.9 sqrt(eps))
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


@pytest.mark.slow
def test_concentrated_density_passes_when_resolved():
    res = check.run(kappa=3.0, n=20000)
    assert res.passed, res.failures
