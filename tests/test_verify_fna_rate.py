"""verify.fna_rate: the FNA generator bias decays like s^(2-alpha) (FNA-13); the paper's O(t) fails."""

import inspect
import math
import subprocess
import sys

import numpy as np
import pytest

from verify import fna_rate
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def result():
    # the default ladder starts at 2e-4 (n up to 2e6); 5e-4 keeps the test at ~2-4 s with the same verdict
    return fna_rate.run(scale_min=5e-4)


def test_contract():
    assert fna_rate.CLAIMS == CHECKS["fna_rate"]
    assert set(inspect.signature(fna_rate.run).parameters) <= set(fna_rate.HELP)


def test_passes_with_exponent_two_minus_alpha(result):
    assert result.passed, result.failures
    for a in (1.2, 1.5, 1.8):
        assert abs(result.measured[f"exponent_a{a:g}_k2"] - (2 - a)) < 0.03
        assert result.measured[f"stable_control_bias_a{a:g}"] < 1e-8
        # the raw bias is orders of magnitude above the stable control and the discretisation
        assert abs(result.measured[f"bias_smallest_scale_a{a:g}_k2"]) > 100 * result.measured[f"discretisation_max_a{a:g}"]


def test_paper_rate_fails():
    r = fna_rate.run(rate="paper", alphas=(1.8,), n_scales=4)
    assert not r.passed
    assert all("t = s^alpha" in f for f in r.failures) and len(r.failures) == 2


def test_bias_constants_match_alpha_three_halves():
    # C_1.5 = -2 Gamma(-1/2) c_{1,1.5} / Gamma(5/2); c_{1,1.5} = Gamma(5/2) sin(3 pi/4)/pi
    big_c, c_prime = fna_rate.bias_constants(1.5)
    assert big_c == pytest.approx(2 * 2 * math.sqrt(math.pi) * math.sin(3 * math.pi / 4) / math.pi, rel=1e-12)
    assert c_prime == pytest.approx(1.0, rel=1e-12)


def test_json_round_trip(result):
    back = CheckResult.from_json(result.to_json())
    assert back.measured == result.measured
    np.testing.assert_allclose(back.arrays["bias_a1.5"], result.arrays["bias_a1.5"])


def test_cli_and_errors(capsys, tmp_path):
    assert fna_rate.main(["--alphas", "1.8", "--n-scales", "4", "--scale-min", "1e-3", "--quiet"]) == 0
    assert fna_rate.main(["--alphas", "1.8", "--n-scales", "4", "--scale-min", "1e-3", "--rate", "paper", "--quiet"]) == 1
    capsys.readouterr()
    for argv, word in ((["--alphas", "2.0"], "alphas"), (["--n-scales", "2"], "n_scales"),
                       (["--rate", "fast"], "rate"), (["--scale-min", "0"], "scale_min"),
                       (["--h-ratio", "16"], "h_ratio")):
        assert fna_rate.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err
    out = tmp_path / "p.png"
    assert fna_rate.main(["--alphas", "1.5", "--n-scales", "4", "--scale-min", "1e-3", "--quiet", "--plot", str(out)]) == 0
    assert out.stat().st_size > 1000


def test_subprocess():
    proc = subprocess.run([sys.executable, "-m", "verify.fna_rate", "--alphas", "1.8", "--n-scales", "4",
                           "--scale-min", "1e-3", "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("PASS fna_rate")


@pytest.mark.slow
def test_default_and_full():
    assert fna_rate.run().passed
    r = fna_rate.run(full=True)
    assert r.passed, r.failures
