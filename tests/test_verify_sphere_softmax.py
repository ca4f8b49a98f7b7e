"""verify.sphere_softmax (DRIFT-1): corrected Example-1 identity passes, the printed one fails."""

import subprocess
import sys

import pytest

from verify import sphere_softmax as check
from verify.claims import CHECKS
from verify.core import CheckResult


@pytest.fixture(scope="module")
def passed():
    return check.run(n=256)


def test_registered():
    assert check.CLAIMS == CHECKS[check.CHECK]


def test_corrected_identity_passes(passed):
    assert passed.passed, passed.failures
    assert passed.measured["max_error_sphere"] <= passed.tolerance["max_error_sphere"]


@pytest.mark.parametrize("kwargs, needle", [
    ({"convention": "paper"}, "sphere"),          # the printed -2 + |x-y|^2 (width tau instead of 2 tau)
    ({"key_norms": "unequal"}, "sphere"),         # hypothesis of the identity violated
])
def test_wrong_claims_fail(kwargs, needle):
    res = check.run(n=128, dims=(3, 16), **kwargs)
    assert not res.passed
    assert any(needle in f for f in res.failures)
    assert res.measured["max_error_sphere"] > 0.1


def test_json_round_trip(passed):
    back = CheckResult.from_json(passed.to_json())
    assert back.passed == passed.passed and back.measured == passed.measured


def test_cli_exit_codes(capsys):
    assert check.main(["--n", "64", "--dims", "3", "--quiet"]) == 0
    assert check.main(["--n", "64", "--dims", "3", "--convention", "paper", "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--n", "1"]) == 2
    err = capsys.readouterr().err
    assert "n must be" in err and err.count("\n") == 1
    assert check.main(["--device", "tpu"]) == 2


@pytest.mark.parametrize("kwargs, match", [
    ({"taus": (0.0,)}, "taus"), ({"dims": (1,)}, "dims"), ({"convention": "x"}, "convention"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        check.run(**kwargs)


def test_subprocess():
    out = subprocess.run([sys.executable, "-m", "verify.sphere_softmax", "--n", "32", "--dims", "3",
                          "--quiet"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("PASS sphere_softmax")


def test_memory_is_blocked_by_rows():
    # the direct differences were one n x n x d array (2 x 151 MB here, 2 GB at n = 2048, d = 64);
    # row blocks keep the peak near 4M doubles (32 MB) whatever n and d
    import tracemalloc

    tracemalloc.start()
    try:
        res = check.run(n=384, dims=(128,), taus=(1.0,))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.passed, res.failures
    assert peak < 120e6, peak
