"""verify.similarity_taxonomy (DRIFT-2): Table-1 compositions and the FCM centre-update discrepancy."""

import subprocess
import sys

import pytest

from verify import similarity_taxonomy as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def passed():
    return check.run(n=120)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_compositions_pass(passed):
    assert passed.passed, passed.failures
    assert passed.measured["fcm_centre_gap_m2"] > 0.05          # printed update is not Bezdek's
    assert passed.measured["fcm_centre_gap_m1.05"] < 0.01       # ... except in the k-means limit


@pytest.mark.parametrize("perturb, needle", [
    ("dmap_without_N2", "diffusion_map"), ("tsne_gamma_-2", "tsne_low_dim"),
    ("umap_plain_sum", "umap_union"), ("fcm_equal", "Bezdek"),
])
def test_wrong_compositions_fail(perturb, needle):
    res = check.run(n=60, perturb=perturb, fcm_m=(1.05, 2.0))
    assert not res.passed
    assert any(needle in f for f in res.failures), res.failures


def test_operators_small_example():
    import numpy as np

    m = np.array([[1.0, 3.0], [2.0, 2.0]])
    assert np.allclose(check.op_Nr(m).sum(axis=1), 1) and np.allclose(check.op_Nc(m).sum(axis=0), 1)
    assert check.op_Ng(m).sum() == pytest.approx(1.0)
    assert np.allclose(check.op_gamma(m, -1), -1 / m)
    assert np.allclose(check.op_N2(m), m / np.outer(m.sum(1), m.sum(1)))


def test_json_round_trip(passed):
    assert CheckResult.from_json(passed.to_json()).measured == passed.measured


def test_cli(capsys):
    assert check.main(["--n", "40", "--fcm-m", "1.05,2", "--quiet"]) == 0
    assert check.main(["--n", "40", "--fcm-m", "1.05,2", "--perturb", "umap_plain_sum", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--n", "3"]) == 2
    err = capsys.readouterr().err
    assert "n must be" in err and err.count("\n") == 1


@pytest.mark.parametrize("kwargs, match", [({"fcm_m": (1.5, 3.0)}, "fcm_m"), ({"perturb": "q"}, "perturb")])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.similarity_taxonomy", "--n", "40", "--fcm-m", "1.05,2",
                          "--quiet"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS similarity_taxonomy")
