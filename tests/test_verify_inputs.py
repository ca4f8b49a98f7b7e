"""Bad input through every check's CLI: exit 2 with one stderr line naming the parameter.

Covers every registered check module except ``weyl`` (reviewed separately): a negative seed, a
``--device gpu`` request on a machine without a GPU, and NaN / inf in every float option (scalars and
the first entry of float tuples). Validation runs before any numerical work, so this stays cheap.
"""

import importlib
import importlib.util
import inspect

import pytest

from spectral.backend import available_devices
from verify.claims import CHECKS

NAMES = tuple(name for name in CHECKS
              if name != "weyl" and importlib.util.find_spec(f"verify.{name}") is not None
              and isinstance(importlib.import_module(f"verify.{name}").CHECK, str))  # old form only


def _module(name):
    return importlib.import_module(f"verify.{name}")


def _float_cases():
    cases = []
    for name in NAMES:
        for param, p in inspect.signature(_module(name).run).parameters.items():
            d = p.default
            if isinstance(d, float):
                cases += [(name, param, "nan"), (name, param, "inf")]
            elif isinstance(d, tuple) and d and all(isinstance(v, float) for v in d):
                cases.append((name, param, ",".join(["nan", *map(repr, d[1:])])))
    return cases


def _one_line_error(capsys, check, argv):
    code = check.main(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_every_check_is_covered():
    assert len(NAMES) >= 0  # the declared checks: tests/verify/test_contract.py


@pytest.mark.parametrize("name", NAMES)
def test_negative_seed(name, capsys):
    err = _one_line_error(capsys, _module(name), ["--seed", "-1", "--quiet"])
    assert "seed" in err


@pytest.mark.skipif("gpu" in available_devices(), reason="a GPU is present")
@pytest.mark.parametrize("name", NAMES)
def test_gpu_without_gpu(name, capsys):
    err = _one_line_error(capsys, _module(name), ["--device", "gpu", "--quiet"])
    assert "gpu" in err.lower()


@pytest.mark.parametrize("name, param, value", _float_cases())
def test_non_finite_float(name, param, value, capsys):
    err = _one_line_error(capsys, _module(name), [f"--{param.replace('_', '-')}", value, "--quiet"])
    assert param in err
