"""verify.heat_rate (DRIFT-3): Singer's bias and variance exponents on S^1 and S^2."""

import subprocess
import sys

import numpy as np
import pytest

from verify import heat_rate as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def passed():
    return check.run(reps=20)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_singer_rates_pass(passed):
    assert passed.passed, passed.failures
    assert passed.measured["S1_variance_eps_slope"] == pytest.approx(-0.75, abs=0.1)
    assert passed.measured["S2_variance_eps_slope"] == pytest.approx(-1.0, abs=0.1)


def test_continuum_factor_against_quadrature():
    """Independent oracle for the Bessel ratios: direct quadrature of the kernel on S^1 and S^2."""
    from scipy.integrate import quad

    eps = 0.05
    num = quad(lambda t: np.exp((np.cos(t) - 1) / eps) * np.cos(2 * t), -np.pi, np.pi, epsabs=0, epsrel=1e-13)[0]
    den = quad(lambda t: np.exp((np.cos(t) - 1) / eps), -np.pi, np.pi, epsabs=0, epsrel=1e-13)[0]
    assert check._continuum_factor(1, 2, eps) == pytest.approx(num / den, rel=1e-11)
    num = quad(lambda u: np.exp((u - 1) / eps) * 0.5 * (3 * u * u - 1), -1, 1, epsabs=0, epsrel=1e-13)[0]
    den = quad(lambda u: np.exp((u - 1) / eps), -1, 1, epsabs=0, epsrel=1e-13)[0]
    assert check._continuum_factor(2, 2, eps) == pytest.approx(num / den, rel=1e-11)


def test_wrong_variance_law_fails():
    res = check.run(variance_law="d_over_2", reps=8, test_points=8)
    assert not res.passed and sum("variance_eps_slope" in f for f in res.failures) == 2


def test_wrong_bias_order_fails():
    res = check.run(bias_order=2.0, reps=4, test_points=4)
    assert any("bias_slope" in f for f in res.failures)


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.measured == passed.measured
    assert np.allclose(back.arrays["S1_variance_rms"], passed.arrays["S1_variance_rms"])


def test_cli(capsys):
    assert check.main(["--reps", "8", "--test-points", "8", "--quiet"]) == 0
    assert check.main(["--reps", "4", "--test-points", "4", "--bias-order", "2", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--reps", "1"]) == 2
    err = capsys.readouterr().err
    assert "reps must be" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"variance_law": "x"}, "variance_law"), ({"test_points": 1}, "test_points")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.heat_rate", "--reps", "6", "--test-points", "8", "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS heat_rate")
