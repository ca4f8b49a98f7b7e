"""verify.testing.assert_claims and the pytest plugin (--verify-claims, the verify_claims fixture)."""

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

from spectral.validation import InputError
from verify.testing import assert_claims, resolve_checks


def test_ids_and_names_resolve_to_checks_once():
    assert resolve_checks(["DRIFT-13", "appendix_c", "drift-6"]) == ["appendix_c", "metric_scaling"]
    with pytest.raises(InputError, match="unknown claim id or check 'nosuch'"):
        resolve_checks(["nosuch"])
    with pytest.raises(InputError, match="FNA-6 has no check .*tests/spectral/test_kernel_identities.py"):
        resolve_checks(["FNA-6"])
    with pytest.raises(InputError, match="at least one"):
        resolve_checks([])


def test_passing_claims_return_their_results():
    (res,) = assert_claims("PDE-3", size=64)  # pde_modes: 0.02 s a run
    assert res.check == "pde_modes" and res.passed and res.parameters["size"] == 64


def test_a_failing_claim_raises_with_what_failed():
    with pytest.raises(AssertionError, match=r"1 of 1 checks failed:\nFAIL pde_modes \[paper: PDE-3 holds under "
                                             r"stated assumptions; PDE-4 false as printed\]: Prop. D.4\(1\) as printed"):
        assert_claims("pde_modes", claim="printed")


def test_a_keyword_no_check_takes_is_refused():
    with pytest.raises(InputError, match="no selected check takes 'no_such_option'"):
        assert_claims("appendix_c", no_such_option=1)


def _run_pytest(folder, *args):
    registered = any(ep.value == "verify.pytest_plugin" for ep in entry_points(group="pytest11"))
    plugin = [] if registered else ["-p", "verify.pytest_plugin"]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, *args],
                          cwd=folder, capture_output=True, text=True, timeout=300, check=False)


def test_pytest_option_and_fixture(tmp_path):
    (tmp_path / "test_user.py").write_text(
        "def test_fixture(verify_claims):\n"
        "    assert verify_claims('PDE-3')[0].check == 'pde_modes'\n"
        "\n"
        "def test_printed_fails(verify_claims):\n"
        "    import pytest\n"
        "    with pytest.raises(AssertionError):\n"
        "        verify_claims('pde_modes', claim='printed')\n")
    out = _run_pytest(tmp_path, "--verify-claims", "PDE-3", "-rA")  # pde_modes: 0.02 s a run
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout and "verify[pde_modes]" in out.stdout


def test_pytest_option_with_an_unknown_id_is_a_usage_error():
    from verify import pytest_plugin

    class Config:
        def getoption(self, name):
            return {"verify_claims": "nosuch", "verify_full": False}[name]

    with pytest.raises(pytest.UsageError, match="--verify-claims: unknown claim id or check 'nosuch'"):
        pytest_plugin.pytest_collection_modifyitems(None, Config(), [])
    items = []
    Config.getoption = lambda self, name: None
    pytest_plugin.pytest_collection_modifyitems(None, Config(), items)  # no option: adds nothing
    assert items == []
