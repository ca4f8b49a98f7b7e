"""Finding a check's figure without importing the layer that draws it.

``verify`` never imports ``figures`` (figures import verify: a figure draws a check's data). The
drawers are found through the entry-point group ``attention_limits.figures``: each entry names an
object (a module) with ``check_drawer(name)`` (the drawer of check ``name``'s result, or None) and
``save_check_figure(result, path)``. This distribution registers its own ``figures`` package there
(``pyproject.toml``); another installed package can register drawers for its own checks the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

__all__ = ["GROUP", "figure_saver", "figure_formats"]

GROUP = "attention_limits.figures"

#: the file formats a figure can be saved in (by the suffix of --plot PATH)
FIGURE_FORMATS = (".png", ".pdf", ".svg")


def _providers():
    for entry in entry_points(group=GROUP):
        try:
            yield entry.load()
        except ImportError:  # a provider that cannot be imported draws nothing
            continue


def figure_saver(name: str) -> Callable | None:
    """``save(result, path)`` for check ``name``'s figure, or None when no installed provider draws it."""
    for provider in _providers():
        if provider.check_drawer(name) is not None:
            return provider.save_check_figure
    return None


def figure_formats() -> tuple[str, ...]:
    """The suffixes ``--plot PATH`` accepts."""
    return FIGURE_FORMATS
