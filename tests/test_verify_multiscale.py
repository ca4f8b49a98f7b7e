"""verify.multiscale (FNA-16..19): the ledger's bandwidth-dependent statements pass, the printed
bandwidth-free claim fails (under equal kappa the gap and hop orderings reverse)."""

import math
import subprocess
import sys

import numpy as np
import pytest

from verify import multiscale as check
from verify.claims import CHECKS
from verify.core import CheckResult

# A cheap setting that still holds every asserted statement (one data set, one d, n up to 128).
CHEAP = ["--datasets", "gaussian", "--dims", "8", "--seeds", "2", "--dm-dims", "8", "--dm-n", "200",
         "--alphas", "1.2,2"]


@pytest.fixture(scope="module")
def default():
    return check.run()


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_default_passes(default):
    assert default.passed, default.failures
    m = default.measured
    # the mechanism: FNA rows near-uniform, LA and DP not (FNA-16)
    assert m["entropy_fna_gaussian_d8_n128"] > m["entropy_local_gaussian_d8_n128"] > m["entropy_dp_gaussian_d8_n128"]
    # equal kappa: FNA's gap collapses (ledger reference 1.3e-2 at d = 8, 5.8e-12 at d = 32)
    assert m["gap_fna_equal_gaussian_d8"] < 0.05 and m["gap_fna_equal_gaussian_d32"] < 1e-8


def test_printed_claim_fails_under_equal_kappa(default):
    res = check.run(datasets=("gaussian",), dims=(8,), seeds=2, dm_dims=(8,), dm_n=200, alphas=(1.2, 2.0),
                    claim="paper")
    assert not res.passed
    assert all("_equal_" in f for f in res.failures)  # paper and matched protocols still pass
    assert any("frac_gap_fna_gt_local_equal" in f for f in res.failures)
    assert any("hops_fna_worst_n_equal" in f for f in res.failures)


def test_tokens_and_bandwidths():
    rng = np.random.default_rng(0)
    for data in check.DATASETS:
        x = check.tokens(data, 400, 8, rng)
        assert x.shape == (400, 8)
        # every token set has E|x|^2 about d (within 30 %)
        assert abs(np.mean(np.sum(x**2, axis=1)) / 8 - 1) < 0.3
    kf, kl = check.bandwidths("matched", 8, 1.2)
    # half maximum of (1 + r/kf)^-(d+alpha) equals that of exp(-(r/kl)^2)
    r = kf * (2 ** (1 / 9.2) - 1)
    assert math.isclose(math.exp(-((r / kl) ** 2)), 0.5, rel_tol=1e-12)
    assert check.bandwidths("equal", 8, 1.2) == (math.sqrt(8), math.sqrt(8))


def test_row_entropy_bounds():
    assert check.row_entropy(np.full((4, 4), 0.25)) == pytest.approx(1.0)
    assert check.row_entropy(np.eye(4)) == 0.0


def test_json_round_trip(default):
    back = CheckResult.from_json(default.to_json())
    assert back.passed == default.passed and back.measured == default.measured
    np.testing.assert_array_equal(back.arrays["example_hops_paper_dp"], default.arrays["example_hops_paper_dp"])


def test_cli_exit_codes(capsys):
    assert check.main(CHEAP + ["--quiet"]) == 0
    assert check.main(CHEAP + ["--claim", "paper", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--alpha", "2.5"]) == 2
    err = capsys.readouterr().err
    assert "alpha must be" in err and err.count("\n") == 1
    assert check.main(["--datasets", "images"]) == 2
    assert check.main(["--claim", "both"]) == 2


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.multiscale", *CHEAP, "--quiet"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("PASS multiscale")


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha": 2.0}, "alpha"), ({"dims": (1,)}, "dims"), ({"sizes": (64,)}, "sizes"),
    ({"sizes": (128, 64)}, "sizes"), ({"seeds": 1}, "seeds"), ({"datasets": ("x",)}, "datasets"),
    ({"alphas": (1.2,)}, "alphas"), ({"dm_eps": 0.0}, "dm_eps"), ({"claim": "x"}, "claim"),
    ({"device": "tpu"}, "device"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_plot(default, tmp_path):
    path = tmp_path / "gap.png"
    check.plot(default, path)
    assert path.stat().st_size > 1000


@pytest.mark.slow
def test_full_protocol_passes():
    res = check.run(full=True)
    assert res.passed, res.failures


def test_low_dimension_fails_and_says_why():
    # d = 4: FNA entropy 0.987 < 0.99 and worst hops 1.05 > 1.01 (distances do not concentrate)
    res = check.run(dims=(4,), datasets=("gaussian",), seeds=2, dm_dims=(8,), dm_n=200, alphas=(1.2, 2.0))
    assert not res.passed
    assert all("d = 4 < 8" in f for f in res.failures), res.failures
