"""verify.metric_attention (DRIFT-14): metric properties and the pull-back tensor (P^T P)^-1."""

import subprocess
import sys

import pytest

from verify import metric_attention as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def passed():
    return check.run()


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_metric_attention_passes(passed):
    assert passed.passed, passed.failures
    m = passed.measured
    assert m["residual_lipschitz_bound"] < 1 and m["min_expansion_ratio"] >= 1 - m["residual_lipschitz_bound"]
    assert m["dp_identity_not_self_fraction"] == 0.0 and m["dp_not_self_fraction"] > 0.5


def test_squared_distance_violates_triangle():
    res = check.run(distance="squared", triples=2000)
    assert not res.passed and res.measured["triangle_violations"] > 0


def test_direct_tensor_fails():
    res = check.run(tensor="direct", triples=1000)
    assert not res.passed and "diffusion tensor" in res.failures[0]


def test_json_round_trip(passed):
    assert CheckResult.from_json(passed.to_json()).measured == passed.measured


def test_cli(capsys):
    assert check.main(["--triples", "1000", "--quiet"]) == 0
    assert check.main(["--triples", "1000", "--tensor", "direct", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--grid", "32"]) == 2
    err = capsys.readouterr().err
    assert "grid too coarse" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"gain": 0.0}, "gain"), ({"distance": "l1"}, "distance"),
                                           ({"dim": 1}, "dim")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.metric_attention", "--triples", "1000", "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS metric_attention")
