"""Fixtures for the checks: each check's default run, computed once per session."""

import pytest

from verify.core.claims import load_check

_CACHE = {}


@pytest.fixture(scope="session")
def default_result():
    """``default_result(name)``: ``verify.<name>.run()`` at its defaults, cached for the session."""

    def get(name):
        if name not in _CACHE:
            _CACHE[name] = load_check(name).run()
        return _CACHE[name]

    return get


class NamespaceSpy:
    """Array namespace that delegates to array_api_strict and remembers which names were used."""

    def __init__(self, xp):
        self._xp, self.used = xp, set()

    def __getattr__(self, name):
        self.used.add(name)
        return getattr(self._xp, name)


@pytest.fixture
def strict_xp():
    """A spy over array_api_strict to pass as ``CHECK.measure(p, xp=strict_xp)``.

    A check declared for the GPU must create its arrays through the namespace it is given
    (``strict_xp.used`` names what it called) and, since array_api_strict wraps NumPy, give the
    same quantities as on NumPy.
    """
    return NamespaceSpy(pytest.importorskip("array_api_strict"))


@pytest.fixture
def evolve_on_device(strict_xp, monkeypatch):
    """``(xp, seen)``: ``strict_xp`` refusing the creation keywords bare CuPy lacks, and the namespaces of the
    matrices given to ``spectral.evolve_attention`` from now on (``"array_api_strict"``, ``"numpy"``, ...).

    No GPU here: array_api_strict stands in for CuPy (the gpu-marked parity on a device is
    tests/verify/test_gpu_parity.py). A check's tests measure with ``CHECK.measure(p, xp=xp)`` and assert that
    every evolution ran on arrays of the namespace given.
    """
    import spectral
    from tests.conftest import cupy_strict

    cupy_strict(monkeypatch, strict_xp._xp)
    seen, true_evolve = [], spectral.evolve_attention

    def recording(a0, **kwargs):
        seen.append(type(a0).__module__.split(".")[0])
        return true_evolve(a0, **kwargs)

    monkeypatch.setattr(spectral, "evolve_attention", recording)
    return strict_xp, seen


@pytest.fixture
def available_memory(monkeypatch):
    """``available_memory(nbytes)``: the host memory available now is ``nbytes``, whatever the machine.

    The one reader every guard uses (``spectral.floor.memory.available_memory_bytes``) is fixed; the
    checks' guards read it at run time.
    """

    def fix(nbytes):
        monkeypatch.setattr("spectral.floor.memory.available_memory_bytes", lambda device="cpu": nbytes)

    return fix


@pytest.fixture(scope="session")
def command_options():
    """``command_options(name)``: the option strings of ``python -m verify.<name>`` (its generated parser)."""
    from verify.core.claims import load_check
    from verify.core.cli import build_check_parser

    def options(name):
        parser = build_check_parser(load_check(name).CHECK, prog=f"python -m verify.{name}")
        return {opt for action in parser._actions for opt in action.option_strings}

    return options


def _poisoned(out, value, at, field):
    """``out`` with the entry at flat index ``at`` of its array (or of ``out.<field>``) set to ``value``."""
    import dataclasses

    import numpy as np

    if field is not None:
        inner = _poisoned(getattr(out, field), value, at, None)
        if dataclasses.is_dataclass(out):
            return dataclasses.replace(out, **{field: inner})
        if hasattr(out, "_replace"):  # a named tuple
            return out._replace(**{field: inner})
        setattr(out, field, inner)
        return out
    if isinstance(out, (float, np.floating)) or (isinstance(out, np.ndarray) and out.ndim == 0):
        return type(out)(value) if isinstance(out, (float, np.floating)) else np.asarray(value, dtype=out.dtype)
    arr = np.array(out, dtype=np.result_type(np.asarray(out).dtype, np.float64), copy=True)
    arr.reshape(-1)[at] = value
    return arr


@pytest.fixture
def inject_nan(monkeypatch):
    """``inject_nan("package.module.function", at=-1, call=None, field=None, value=nan)``: one NaN in its result.

    The function the check measures is wrapped so that what it returns has the entry at flat index
    ``at`` replaced by ``value`` (NaN unless told): the returned array, a returned float, or the array
    in the attribute ``field`` of a returned object (a dataclass or named tuple is rebuilt). With
    ``call`` (0-based) only that call is poisoned: a later call puts the NaN after finite values,
    where Python's ``max`` drops it. Patch the name where the check looks it up (a check calls the library
    through its package or module, ``spectral.markov_spectrum(...)``, at each call); ``target`` may name a method
    (``"spectral.metric.ResidualMLP.__call__"``). Returns the list of the poisoned calls' indices,
    to assert that the NaN was produced.
    """
    import importlib

    def patch(target, *, at=-1, call=None, field=None, value=float("nan")):
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable prefix, then attributes (a class's method)
            try:
                owner = importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
        for attr in parts[cut:-1]:
            owner = getattr(owner, attr)
        name = parts[-1]
        real = getattr(owner, name)
        count, poisoned = [0], []

        def wrapped(*args, **kwargs):
            out = real(*args, **kwargs)
            i, count[0] = count[0], count[0] + 1
            if call is None or i == call:
                poisoned.append(i)
                return _poisoned(out, value, at, field)
            return out

        monkeypatch.setattr(owner, name, wrapped)
        return poisoned

    return patch
