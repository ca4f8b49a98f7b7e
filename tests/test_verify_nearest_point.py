"""verify.nearest_point (DRIFT-11, DRIFT-12): Example 3 minimiser and the zeroth-order limit."""

import subprocess
import sys

import pytest

from verify import nearest_point as check
from verify.claims import CHECKS
from verify.core import CheckResult

FAST = {"candidates": 20000, "n_lattice": 20000, "trials": 6, "eps_grid": (0.004, 0.008, 0.016, 0.032)}


@pytest.fixture(scope="module")
def passed():
    return check.run()


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_corrected_minimiser_passes(passed):
    assert passed.passed, passed.failures
    # the printed formula coincides with the argmax (distance 0), not the argmin
    assert passed.measured["printed_minus_argmax"] < 1e-8


def test_printed_formula_fails():
    res = check.run(formula="printed", **FAST)
    assert not res.passed
    assert res.measured["example3_symmetric"] == pytest.approx(2.0, abs=1e-6)
    assert res.measured["example3_identity_case"] == pytest.approx(2.0, abs=1e-6)  # returns -x
    assert any("point_limit_slope" in f for f in res.failures)


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.measured == passed.measured


def test_cli(capsys):
    assert check.main(["--candidates", "20000", "--n-lattice", "20000", "--quiet"]) == 0
    assert check.main(["--candidates", "20000", "--n-lattice", "20000", "--formula", "printed", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--eps-grid", "0.01,0.02"]) == 2
    err = capsys.readouterr().err
    assert "eps_grid" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"dim": 1}, "dim"), ({"formula": "x"}, "formula"), ({"eps_grid": (1.0, 2.0, 3.0, 4.0)}, "eps_grid"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.nearest_point", "--candidates", "20000", "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS nearest_point")
