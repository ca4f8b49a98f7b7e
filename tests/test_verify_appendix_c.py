"""verify.appendix_c (DRIFT-13): corrected first-order coefficient passes, printed 1/m0 fails."""

import subprocess
import sys

import pytest

from verify import appendix_c as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def passed():
    return check.run()


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_corrected_coefficient(passed):
    assert passed.passed, passed.failures
    assert passed.measured["coefficient_1d"] == pytest.approx(1.35, abs=1e-6)  # ledger: c=2, d3=0.6, a=0.5


def test_printed_coefficient_fails():
    res = check.run(formula="printed")
    assert not res.passed and len(res.failures) == 2
    assert res.expected["coefficient_1d"] == pytest.approx(0.448, abs=1e-3)


@pytest.mark.parametrize("c, d3, a", [(1.0, -0.4, -0.3), (3.0, 0.0, 0.0)])
def test_other_parameters_pass(c, d3, a):
    assert check.run(c=c, d3=d3, a=a).passed


@pytest.mark.parametrize("c, d3, a, eps_max", [(0.5, 1.0, -2.0, 5e-3), (10.0, -1.0, -1.0, 1e-4), (2.0, 0.0, -1.0, 0.02)])
def test_range_corners_pass_without_warnings(c, d3, a, eps_max):
    # corners where adaptive quad raised IntegrationWarning (filterwarnings=error) or Richardson was short
    res = check.run(c=c, d3=d3, a=a, eps_max=eps_max)
    assert res.passed, res.failures
    assert not check.run(formula="printed", c=c, d3=d3, a=2.0, eps_max=eps_max).passed


def test_json_round_trip(passed):
    assert CheckResult.from_json(passed.to_json()).measured == passed.measured


def test_cli(capsys):
    assert check.main(["--quiet"]) == 0
    assert check.main(["--formula", "printed", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--c", "-1"]) == 2
    err = capsys.readouterr().err
    assert "c must be" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"eps_max": 1.0}, "eps_max"), ({"formula": "z"}, "formula"),
                                           ({"c": 0.5, "eps_max": 0.02}, "eps_max / c"),
                                           ({"a": float("nan")}, "a must be"), ({"seed": -1}, "seed")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.appendix_c", "--quiet"], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS appendix_c")
