"""verify.clusters (DRIFT-9): K near-1 eigenvalues and a large eigengap for separated clusters."""

import subprocess
import sys

import pytest

from verify import clusters as check
from verify.claims import CHECKS
from verify.core import CheckResult

FAST = {"cluster_counts": (2, 3), "seeds": 1, "points_per_cluster": 60}


@pytest.fixture(scope="module")
def passed():
    return check.run(cluster_counts=(2, 4), seeds=2)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_heat_kernel_clusters(passed):
    assert passed.passed, passed.failures
    assert passed.measured["min_gap_ratio"] >= 46
    assert passed.measured["within_between_spread"] < 0.05 < passed.measured["within_between_spread_initial"]
    assert passed.measured["fna_max_gap_ratio"] < 46  # multiscale connectivity of the power-law kernel


def test_fna_kernel_fails_cluster_claim():
    res = check.run(kernel="fna", **FAST)
    assert not res.passed and "fna kernel" in res.failures[0]


def test_overlapping_clusters_fail():
    res = check.run(separations=(4.0,), **FAST)
    assert not res.passed and "gap ratio" in res.failures[0]
    assert "< 6.5 sigma" in res.failures[0]


def test_six_sigma_seed_ensemble_boundary():
    # seed 1 at Delta = 6 sigma: min gap ratio 42.6 < 46 (DESIGN.md's 6 sigma is not enough on every
    # seed); 6.5 sigma passes there (min 73 over seeds 0-9)
    res = check.run(separations=(6.0,), seed=1)
    assert not res.passed and "needs ~6.5 sigma" in res.failures[0]
    assert check.run(separations=(6.5,), seed=1).passed


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.measured == passed.measured


def test_cli(capsys):
    assert check.main(["--cluster-counts", "2,3", "--seeds", "1", "--points-per-cluster", "60", "--quiet"]) == 0
    assert check.main(["--cluster-counts", "2,3", "--seeds", "1", "--points-per-cluster", "60",
                       "--kernel", "fna", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--cluster-counts", "1"]) == 2
    err = capsys.readouterr().err
    assert "cluster_counts" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"separations": (0.1,)}, "separations"), ({"kernel": "dp"}, "kernel"),
                                           ({"seeds": 0}, "seeds")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.clusters", "--cluster-counts", "2,3", "--seeds", "1",
                          "--points-per-cluster", "60", "--quiet"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS clusters")
