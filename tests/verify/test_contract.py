"""The contract every check follows, tested once for all of them.

Each check is declared with ``verify.core.check.Check``; its ``run()`` is keyword-only, documents every
parameter in its numpydoc docstring (which is also the ``--help`` text), validates ``seed`` and
``device`` once, refuses booleans for numbers, and returns a ``CheckResult`` whose verdict is
derived from typed records, each deciding record stating where its tolerance comes from.
"""

import inspect
import json
import math

import pytest

from spectral.validation import InputError
from verify.core import claims
from verify.core.check import Check
from verify.core.cli import parse_parameters
from verify.core.result import CheckResult

NAMES = tuple(claims.available_checks())


def _declared(name):
    module = claims.load_check(name)
    assert isinstance(getattr(module, "CHECK", None), Check), f"{name} is not declared with verify.core.check.Check"
    return module


def _one_line_error(capsys, module, argv):
    code = module.main(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


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


@pytest.mark.parametrize("name", NAMES)
def test_declaration(name):
    module = _declared(name)
    assert module.CHECK.name == name
    assert module.CHECK.claims == claims.CHECKS[name]
    assert module.run is module.CHECK.run
    sig = inspect.signature(module.run)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    assert "seed" in sig.parameters and "device" in sig.parameters
    assert sig.return_annotation is CheckResult
    documented = parse_parameters(module.run.__doc__)
    missing = [p for p in sig.parameters if not documented.get(p, ("", ""))[1]]
    assert not missing, f"run() docstring does not document {missing}"
    assert inspect.signature(module.main).parameters["argv"].default is None


@pytest.mark.parametrize("name", NAMES)
def test_help_documents_every_option(name, capsys):
    module = _declared(name)
    assert module.main(["--help"]) == 0
    out = capsys.readouterr().out
    for param in inspect.signature(module.run).parameters:
        assert "--" + param.replace("_", "-") in out
    assert "--json" in out and "--quiet" in out and "--plot" in out


@pytest.mark.parametrize("name", NAMES)
def test_negative_seed_and_gpu(name, capsys):
    module = _declared(name)
    assert "seed" in _one_line_error(capsys, module, ["--seed", "-1", "--quiet"])
    if "gpu" not in module.CHECK.devices:
        err = _one_line_error(capsys, module, ["--device", "gpu", "--quiet"])
        assert "runs on the host only" in err
    with pytest.raises(InputError, match="seed"):
        module.run(seed=True)


@pytest.mark.parametrize("name", NAMES)
def test_numeric_options_refuse_bool_nan_and_inf(name, capsys):
    module = _declared(name)
    for param, p in inspect.signature(module.run).parameters.items():
        d = p.default
        if isinstance(d, bool) or param in ("seed", "device"):
            continue
        if isinstance(d, (int, float)):
            with pytest.raises(InputError, match=param):
                module.run(**{param: True})
        if isinstance(d, float):
            for bad in ("nan", "inf"):
                err = _one_line_error(capsys, module, [f"--{param.replace('_', '-')}", bad, "--quiet"])
                assert param.replace("_", " ") in err.replace("_", " ") or param in err, err
        if isinstance(d, tuple) and d and all(isinstance(v, float) for v in d):
            argv = [f"--{param.replace('_', '-')}", ",".join(["nan", *map(repr, d[1:])]), "--quiet"]
            _one_line_error(capsys, module, argv)


@pytest.mark.parametrize("name", NAMES)
def test_default_run_passes_with_typed_records(name, default_result):
    _declared(name)
    result = default_result(name)
    assert result.passed, result.failures
    deciding = [r for r in result.records if r.deciding]
    assert deciding, "a check must assert something"
    assert all(r.why for r in deciding), [r.name for r in deciding if not r.why]
    assert result.passed == all(r.passed for r in deciding)
    assert result.parameters["seed"] == 0 and result.versions["attention-limits"]
    back = CheckResult.from_json(result.to_json())
    assert back.records == result.records or _records_equal(back, result)
    assert back.passed == result.passed and back.parameters.keys() == result.parameters.keys()
    json.loads(result.to_json())  # valid JSON (non-finite numbers as strings)


def _records_equal(a, b):
    for x, y in zip(a.records, b.records, strict=True):
        for field in ("name", "sense", "why", "label"):
            assert getattr(x, field) == getattr(y, field)
        if isinstance(x.measured, float) and math.isnan(x.measured):
            assert math.isnan(y.measured)
    return True
