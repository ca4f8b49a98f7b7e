"""verify.fig2bc (FNA-15): robust statements pass; the printed "alpha = 2: intra-cluster only" fails at kappa = 1."""

import subprocess
import sys

import numpy as np
import pytest

from verify import fig2bc as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def default():
    return check.run()


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_default_passes_and_reports_counts(default):
    assert default.passed, default.failures
    m = default.measured
    # ledger FNA-15 reference at kappa = 1: alpha = 2 draws ~30 inter-cluster edges, never none
    assert 15 < m["inter_edges_mean_alpha2"] < 60
    assert m["draws_without_inter_edges_alpha2"] == 0.0
    assert m["inter_mass_mean_alpha1.2"] > 5 * m["inter_mass_mean_alpha2"]


def test_labels_follow_the_mixture():
    x, lab = check.draw(check.mixture("paper"), 3000, np.random.default_rng(0))
    for k, mu in enumerate(check.mixture("paper").means):
        pts = x[lab == k]
        # 1000 draws per mode, sd 1/2: the sample mean is within 5 sigma = 5 * 0.5 / sqrt(1000)
        assert np.abs(pts.mean(0) - mu).max() < 5 * 0.5 / np.sqrt(900)
        assert abs(pts.std(0).mean() - 0.5) < 0.05


def test_printed_claim_fails_at_kappa_1_and_small_kappa():
    res = check.run(seeds=50, claim="paper")
    assert not res.passed
    assert any("printed claim" in f for f in res.failures)
    # even kappa = 0.5 leaves inter-cluster edges in some draws (ledger: 12 %)
    assert not check.run(seeds=100, kappa=0.5, claim="paper").passed


def test_printed_claim_holds_for_equilateral_layout():
    res = check.run(seeds=50, layout="equilateral", claim="paper")
    assert res.passed, res.failures
    assert res.measured["draws_without_inter_edges_alpha2"] == 1.0


def test_json_round_trip(default):
    back = CheckResult.from_json(default.to_json())
    assert back.passed == default.passed and back.measured == default.measured
    np.testing.assert_array_equal(back.arrays["labels"], default.arrays["labels"])


def test_cli_exit_codes(capsys):
    assert check.main(["--seeds", "20", "--quiet"]) == 0
    assert check.main(["--seeds", "20", "--claim", "paper", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--kappa", "0"]) == 2
    err = capsys.readouterr().err
    assert "kappa must be" in err and err.count("\n") == 1
    assert check.main(["--layout", "square"]) == 2


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.fig2bc", "--seeds", "20", "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS fig2bc")


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 2.0}, "alpha"), ({"n": 3}, "n must"), ({"seeds": 5}, "seeds"),
    ({"threshold": 0.0}, "threshold"), ({"layout": "x"}, "layout"), ({"claim": "x"}, "claim"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_plot(default, tmp_path):
    path = tmp_path / "fig2bc.png"
    check.plot(default, path)
    assert path.stat().st_size > 1000


def test_wide_kernel_fails_and_says_why():
    # kappa = 3 is 0.87 of the closest cluster-mean distance: alpha = 2 is no longer local there
    res = check.run(kappa=3.0, seeds=40)
    assert not res.passed
    assert all("not local at the cluster scale" in f for f in res.failures)
    assert res.measured["kappa_over_cluster_spacing"] == pytest.approx(3.0 / 12**0.5)
