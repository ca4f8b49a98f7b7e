"""verify.levy_jumps: FNA attention-walk jumps have tail exponent alpha (FNA-20); the ambient d_M fails."""

import inspect
import subprocess
import sys

import pytest

from verify import levy_jumps as lj
from verify.claims import CHECKS
from verify.core import CheckResult

CHEAP = dict(circle_n=800, circle_scale=0.12, circle_window=(0.6, 3.0), torus_n=800, torus_scale=0.02,
             torus_window=(0.15, 0.45), jumps=0)


@pytest.fixture(scope="module")
def result():
    # default geometry; 2e4 sampled jumps instead of 5e4 (the sampled tolerance scales with the stderr)
    return lj.run(jumps=20_000)


@pytest.mark.slow
def test_cli_default_passes():
    assert lj.run().passed


def test_contract():
    assert lj.CLAIMS == CHECKS["levy_jumps"]
    assert set(inspect.signature(lj.run).parameters) <= set(lj.HELP)


def test_default_passes(result):
    assert result.passed, result.failures
    m = result.measured
    assert abs(m["circle_exponent_a1.2"] - 1.2) < 0.005
    assert abs(m["sampled_exponent_a1.5"] - 1.5) < 0.1
    assert m["torus_window_mass_a2"] < 1e-10


def test_ambient_dimension_fails():
    r = lj.run(alphas=(1.2,), dim_offset=1.0, **CHEAP)
    assert not r.passed
    assert any(f.startswith("circle_exponent_a1.2 = 2.2") for f in r.failures)


def test_json_round_trip(result):
    assert CheckResult.from_json(result.to_json()).measured == result.measured


def test_cli(capsys, tmp_path):
    cheap = ["--alphas", "1.5,2", "--circle-n", "800", "--circle-scale", "0.12", "--circle-window", "0.6,3.0",
             "--torus-n", "800", "--torus-scale", "0.02", "--torus-window", "0.15,0.45", "--jumps", "0", "--quiet"]
    assert lj.main(cheap) == 0
    assert lj.main(cheap + ["--dim-offset", "1"]) == 1
    capsys.readouterr()
    for argv, word in ((["--alphas", "2.5"], "alphas"), (["--circle-window", "0.01,1"], "circle_window"),
                       (["--torus-n", "5"], "torus_n"), (["--jumps", "-1"], "jumps")):
        assert lj.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err
    out = tmp_path / "j.png"
    assert lj.main(cheap + ["--plot", str(out)]) == 0 and out.stat().st_size > 1000


def test_subprocess():
    proc = subprocess.run([sys.executable, "-m", "verify.levy_jumps", "--alphas", "1.5", "--circle-n", "800",
                           "--circle-scale", "0.12", "--circle-window", "0.6,3.0", "--torus-n", "800",
                           "--torus-scale", "0.02", "--torus-window", "0.15,0.45", "--jumps", "0", "--quiet"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + proc.stdout


@pytest.mark.parametrize("kwargs", [{"circle_scale": 0.1}, {"torus_scale": 0.03}])
def test_window_inside_the_core_is_refused(kwargs):
    # measured: r_min / scale = 3 (circle) and 3.3 (torus) failed (tail not reached)
    with pytest.raises(ValueError, match="tail regime"):
        lj.run(**kwargs)
