"""Fixtures for the checks: each check's default run, computed once per session."""

import pytest

from verify.claims import load_check

_CACHE = {}


@pytest.fixture(scope="session")
def default_result():
    """``default_result(name)``: ``verify.<name>.run()`` at its defaults, cached for the session."""

    def get(name):
        if name not in _CACHE:
            _CACHE[name] = load_check(name).run()
        return _CACHE[name]

    return get
