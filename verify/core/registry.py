"""The checks declared in this process, by name: filled as check modules are imported.

:class:`verify.core.check.Check` registers itself here when it is declared; reading a result back from JSON
(:meth:`verify.core.result.CheckResult.from_json`) looks its check up here to type its quantities. Kept apart
from both so that neither imports the other.
"""

from __future__ import annotations

from typing import Any

__all__ = ["register", "registered"]

#: check name -> its Check, filled as check modules are imported
_REGISTRY: dict[str, Any] = {}


def register(name: str, check: Any) -> None:
    """Record ``check`` (a :class:`~verify.core.check.Check`) under ``name``; a later declaration replaces it."""
    _REGISTRY[name] = check


def registered(name: str):
    """The :class:`~verify.core.check.Check` called ``name`` if its module has been imported, else None."""
    return _REGISTRY.get(name)
