"""verify.density_normalisation: stationary law rho^(1-2a) and column sums 1 (FNA-14); eq. (43) fails."""

import inspect
import subprocess
import sys

import pytest

from verify import density_normalisation as dn
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def result():
    return dn.run()


def test_contract():
    assert dn.CLAIMS == CHECKS["density_normalisation"]
    assert set(inspect.signature(dn.run).parameters) <= set(dn.HELP)


def test_default_passes(result):
    assert result.passed, result.failures
    m = result.measured
    for dens in ("cosine", "vonmises"):
        for a in (0, 0.5, 1):
            assert abs(m[f"law_slope_{dens}_alpha2_a{a:g}"] - (1 - 2 * a)) < 1e-3
            assert m[f"stationarity_resid_{dens}_alpha1.2_a{a:g}"] < 1e-12
            assert abs(m[f"column_sum_slope_{dens}_alpha1.2_a{a:g}"]) < 0.05


def test_eq43_as_printed_fails():
    r = dn.run(column_claim="paper", densities=("cosine",), alphas=(2.0,), n=600, exponents=(0.0,))
    assert not r.passed
    assert len(r.failures) == 1 and "eq. (43) as printed" in r.failures[0]


def test_density_independent_law_fails():
    r = dn.run(law="rho", densities=("cosine",), alphas=(2.0,), n=800)
    assert not r.passed
    # a = 0 gives rho^1 (passes); a = 1/2 and a = 1 fail
    assert len(r.failures) == 2 and all("stationary law" in f for f in r.failures)


def test_json_round_trip(result):
    assert CheckResult.from_json(result.to_json()).measured == result.measured


def test_cli(capsys, tmp_path):
    cheap = ["--densities", "cosine", "--alphas", "2", "--n", "800", "--quiet"]
    assert dn.main(cheap) == 0
    assert dn.main(cheap + ["--column-claim", "paper"]) == 1
    capsys.readouterr()
    for argv, word in ((["--exponents", "1.5"], "exponents"), (["--n", "10"], "n"), (["--law", "x"], "law"),
                       (["--densities", "normal"], "densities")):
        assert dn.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and word in err
    out = tmp_path / "d.png"
    assert dn.main(cheap + ["--plot", str(out)]) == 0 and out.stat().st_size > 1000


def test_subprocess():
    proc = subprocess.run([sys.executable, "-m", "verify.density_normalisation", "--densities", "cosine",
                           "--alphas", "2", "--n", "800",
                           "--quiet"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_unresolved_grid_fails_and_says_why():
    # n = 500 at s = 0.02: widest grid gap 2.2 s, stationary-law slope 0.79-0.82 instead of 1
    r = dn.run(n=500)
    assert not r.passed
    assert all("grid gap / scale" in f for f in r.failures), r.failures
