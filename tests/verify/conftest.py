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
def available_memory(monkeypatch):
    """``available_memory(nbytes)``: the host memory available now is ``nbytes``, whatever the machine.

    The one reader every guard uses (``spectral.memory.available_memory_bytes``) is fixed; the
    checks' guards read it at run time.
    """

    def fix(nbytes):
        monkeypatch.setattr("spectral.memory.available_memory_bytes", lambda device="cpu": nbytes)

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
