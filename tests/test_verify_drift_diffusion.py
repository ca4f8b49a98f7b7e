"""verify.drift_diffusion (DRIFT-4): drift coefficient 2; wrong limits fail."""

import subprocess
import sys

import pytest

from verify import drift_diffusion as check
from verify.claims import CHECKS
from verify.core import CheckResult

GRID = {"tiers": ("circle_grid",), "grid_n": 3000}


@pytest.fixture(scope="module")
def passed():
    return check.run(tiers=("circle_grid", "sphere_iid", "sphere_continuum"), grid_n=3000)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_correct_limit_passes(passed):
    assert passed.passed, passed.failures
    assert abs(passed.measured["circle_grid_drift_coef"] - 1.0) < 0.005  # drift 2 in (1/2)(Delta + 2<.,.>)
    assert passed.measured["sphere_iid_relative_rms"] < 0.30


@pytest.mark.parametrize("limit", ["no_drift", "drift_x1", "missing_half", "sign_flip"])
def test_wrong_limits_fail(limit):
    res = check.run(limit=limit, **GRID)
    assert not res.passed
    assert any("relative RMS" in f for f in res.failures)
    assert res.measured["circle_grid_relative_rms"] > 0.3  # measured >= 0.35 for every wrong limit


def test_continuum_remainder_slope(passed):
    assert passed.measured["sphere_continuum_remainder_slope"] == pytest.approx(2.0, abs=0.1)
    wrong = check.run(limit="missing_half", tiers=("sphere_continuum",))
    assert any("sphere_continuum" in f for f in wrong.failures)


def test_coifman_lafon_family():
    res = check.run(a=0.5, **GRID)
    assert res.passed, res.failures
    assert res.measured["circle_grid_drift_coef"] == pytest.approx(0.5, abs=0.005)
    wrong = check.run(a=0.5, limit="drift_x1", **GRID)  # a = 0.5 but drift 2(1-a)/2: fails
    assert not wrong.passed


@pytest.mark.slow
def test_all_tiers_default():
    res = check.run()
    assert res.passed, res.failures


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.measured == passed.measured and back.parameters["tiers"] == list(passed.parameters["tiers"])


def test_cli(capsys, tmp_path):
    assert check.main(["--tiers", "circle_grid", "--grid-n", "2000", "--quiet",
                       "--plot", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 0
    assert check.main(["--tiers", "circle_grid", "--grid-n", "2000", "--limit", "sign_flip", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--tiers", "torus"]) == 2
    err = capsys.readouterr().err
    assert "tiers must be" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"a": 1.5}, "a must"), ({"grid_n": 100}, "grid_n"),
                                           ({"limit": "x"}, "limit")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.drift_diffusion", "--tiers", "circle_grid", "--grid-n", "2000",
                          "--quiet"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS drift_diffusion")


def test_drift_only_claim_needs_a_non_uniform_tier():
    # sphere_continuum alone has a uniform density: no_drift passed there before this guard
    with pytest.raises(ValueError, match="cannot test limit='no_drift'"):
        check.run(tiers=("sphere_continuum",), limit="no_drift")
    assert check.run(tiers=("sphere_continuum",)).passed
    assert not check.run(tiers=("sphere_continuum",), limit="missing_half").passed
