"""The ledger in code and the contract every installed check follows."""

import inspect

import pytest

from verify import claims
from verify.core import CheckResult


def test_ledger_ids_unique_and_checks_cover_known_claims():
    ids = [c.id for c in claims.LEDGER]
    assert len(ids) == len(set(ids))
    for name, covered in claims.CHECKS.items():
        for cid in covered:
            assert claims.claim(cid).check == name
    with pytest.raises(ValueError, match="unknown claim id"):
        claims.claim("FNA-999")
    with pytest.raises(ValueError, match="unknown check"):
        claims.load_check("no_such_check")


@pytest.mark.parametrize("name", claims.available_checks())
def test_help_documents_every_option(name, capsys):
    module = claims.load_check(name)
    if not isinstance(module.CHECK, str):
        pytest.skip("declared form: tests/verify/test_contract.py")
    assert module.main(["--help"]) == 0
    out = capsys.readouterr().out
    for param in inspect.signature(module.run).parameters:
        assert "--" + param.replace("_", "-") in out
    assert "--json" in out and "--quiet" in out


@pytest.mark.parametrize("name", claims.available_checks())
def test_installed_check_follows_the_contract(name):
    module = claims.load_check(name)
    if not isinstance(module.CHECK, str):
        pytest.skip("declared form: tests/verify/test_contract.py")
    assert module.CHECK == name
    assert tuple(module.CLAIMS) == claims.CHECKS[name]
    sig = inspect.signature(module.run)
    params = sig.parameters
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values()), "run() is keyword-only"
    assert all(p.default is not inspect.Parameter.empty for p in params.values()), "every option has a default"
    assert "seed" in params and "device" in params
    missing = [p for p in params if p not in module.HELP]
    assert not missing, f"HELP lacks {missing}"
    assert callable(module.main)
    assert inspect.signature(module.main).parameters["argv"].default is None
    assert sig.return_annotation in (CheckResult, "CheckResult", inspect.Signature.empty)
