"""The contract every check follows, tested once for all of them.

Each check is declared with ``verify.core.check.Check``: its parameters once each (the skeleton
generates the validation, ``run()``'s signature and numpydoc, ``--help`` and the sweep's grid
validation from them), a measurement returning typed quantities and the assertions on them. The
default run of every check is the slow tier's (``test_default_run_passes_with_typed_records``);
each check's own tests measure at small settings and hold the assertions to altered quantities.
"""

import ast
import dataclasses
import inspect
import json
import math
from pathlib import Path

import pytest

from spectral.floor.validation import InputError
from verify.core import claims
from verify.core.calibration import Calibration
from verify.core.check import Check
from verify.core.cli import parse_parameters
from verify.core.result import CheckResult

NAMES = tuple(claims.available_checks())
ROOT = Path(__file__).resolve().parents[2]

#: hand-written calls of spectral.floor.validation's validators allowed in all check modules together: the
#: rules between parameters that a declaration cannot state (issue: at most 40)
MAX_HAND_VALIDATORS = 40


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
    assert module.CHECK.claims == claims.CHECKS.get(name, ())  # a contract check decides no ledger claim
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
def test_parameters_measure_and_assess_are_declared(name):
    module = _declared(name)
    check = module.CHECK
    params = check.Params
    assert dataclasses.is_dataclass(params) and params.__dataclass_params__.frozen
    specs = check.specs()
    assert list(specs) == list(inspect.signature(module.run).parameters)
    for spec in specs.values():
        assert spec.doc.strip() and spec.help_text()
    default = check.params()
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.seed = 1  # the body gets a frozen object, not a dict
    kind = check.quantities_type
    assert dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen, \
        f"{name}: measure() must be annotated to return a frozen dataclass of quantities"
    if hasattr(module, "CALIBRATION"):
        assert isinstance(module.CALIBRATION, Calibration)
        assert all(row.why for row in module.CALIBRATION)
    described = check.describe()
    assert [p["name"] for p in described["parameters"]] == list(specs)
    json.dumps(described)


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
def test_plot_format_refused_before_any_work(name, capsys, tmp_path):
    module = _declared(name)
    err = _one_line_error(capsys, module, ["--plot", str(tmp_path / "figure.txt"), "--quiet"])
    assert "--plot" in err


def _validator_calls(path: Path) -> int:
    import spectral.floor.validation as validation

    names = {n for n in dir(validation) if n.startswith("check_")}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            count += called in names
    return count


def test_hand_written_validation_is_the_rules_between_parameters():
    """Bounds and choices are declared once; the checks keep only what a declaration cannot state."""
    counts = {name: _validator_calls(ROOT / "verify" / f"{name}.py") for name in NAMES}
    total = sum(counts.values())
    worst = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    assert total <= MAX_HAND_VALIDATORS, f"{total} hand-written validator calls; worst {worst}"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_default_run_passes_with_typed_records(name, default_result):
    """The integration test: every check's full default run passes, and its result survives JSON."""
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
    if result.quantities is not None:
        assert type(back.quantities) is type(result.quantities)
        _quantities_equal(back.quantities, result.quantities)
    json.loads(result.to_json())  # valid JSON (non-finite numbers as strings)


def _quantities_equal(a, b, where="quantities"):
    """Typed quantities read back from JSON equal the measured ones (arrays, dicts, tuples, nested)."""
    import numpy as np

    if dataclasses.is_dataclass(b):
        assert type(a) is type(b), where
        for f in dataclasses.fields(b):
            _quantities_equal(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(b, np.ndarray):
        np.testing.assert_array_equal(np.asarray(a), b, err_msg=where)
    elif isinstance(b, dict):
        assert isinstance(a, dict) and a.keys() == b.keys(), where
        for k in b:
            _quantities_equal(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _quantities_equal(x, y, f"{where}[{i}]")
    elif isinstance(b, float) and math.isnan(b):
        assert math.isnan(a), where
    else:
        assert a == b, (where, a, b)


def _records_equal(a, b):
    for x, y in zip(a.records, b.records, strict=True):
        for field in ("name", "sense", "why", "label"):
            assert getattr(x, field) == getattr(y, field)
        if isinstance(x.measured, float) and math.isnan(x.measured):
            assert math.isnan(y.measured)
    return True
