"""pytest plugin of attention-limits: ``--verify-claims IDS`` and the ``verify_claims`` fixture.

Registered under the ``pytest11`` entry point, so it is active wherever the package is installed:

* ``pytest --verify-claims FNA-10,DRIFT-4`` (ledger ids or check names, or ``all``) adds one test
  item per check and setting of its claims, ``verify[weyl]``, ``verify[weyl,manifold=sphere]`` (FNA-11),
  ..., to the run, even in a folder without test files;
  ``--verify-full`` runs the heavy tier of the checks that have one.
* the fixture ``verify_claims`` is :func:`verify.testing.assert_claims`.

Without ``--verify-claims`` the plugin adds nothing to a run.
"""

from __future__ import annotations

import pytest

from spectral.floor.validation import InputError


def pytest_addoption(parser):
    group = parser.getgroup("attention-limits", "checks of the attention papers' claims")
    group.addoption("--verify-claims", metavar="IDS", default=None,
                    help="run the attention-limits checks covering these ledger ids or check names "
                         "(comma-separated, or 'all') as test items")
    group.addoption("--verify-full", action="store_true", default=False,
                    help="with --verify-claims: the heavy tier (full=True) of the checks that have one")


class ClaimCheckItem(pytest.Item):
    """One check run as a test, in one setting of its claims: it fails with the check's failed assertions."""

    def __init__(self, *, check: str, full: bool, setting=None, **kwargs):
        super().__init__(**kwargs)
        self.check = check
        self.full = full
        self.setting = dict(setting or {})

    def runtest(self):
        from verify.core.claims import load_check
        from verify.core.runner import accepts
        from verify.testing import assert_claims

        params = {"full": True} if self.full and accepts(load_check(self.check).run, "full") else {}
        assert_claims(self.check, **params, **self.setting)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (AssertionError, InputError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, None, f"verify.{self.check}"


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselection, which then applies to these items too
def pytest_collection_modifyitems(session, config, items):
    spec = config.getoption("verify_claims")
    if not spec:
        return
    from verify.core.claims import run_label
    from verify.testing import resolve_runs

    try:
        runs = resolve_runs(spec.split(","))
    except InputError as exc:
        raise pytest.UsageError(f"--verify-claims: {exc}") from None
    full = config.getoption("verify_full")
    items.extend(ClaimCheckItem.from_parent(session, name=_item_name(run_label(name, where)), check=name, full=full,
                                            setting=where) for name, where in runs)


def _item_name(label: str) -> str:
    """``weyl`` -> ``verify[weyl]``; ``weyl[manifold=sphere]`` -> ``verify[weyl,manifold=sphere]``."""
    return "verify[" + label.replace("[", ",").rstrip("]") + "]"


@pytest.fixture
def verify_claims():
    """:func:`verify.testing.assert_claims`: ``verify_claims("FNA-10", seed=3)`` runs and asserts checks."""
    from verify.testing import assert_claims

    return assert_claims
