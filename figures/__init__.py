"""Regenerate the papers' figures from the checks' data.

``python -m figures`` lists the figures with a one-line description each;
``python -m figures NAME [NAME...] | all --out DIR [--format png,pdf] [--dpi 300] [--seed 0]`` draws them.
Every module ``figures/<paper>_*.py`` exports ``FIGURES = {"fna-1": function, ...}``; each function
takes ``(out_dir, *, formats, seed=0)`` (``seed`` only when the figure draws random data) and returns
the list of files written; the first line of its docstring is its description in the listing. A module
may also export ``CHECK_FIGURES = {"<check>": draw}`` with ``draw(result, ax)`` drawing one check's
result on a matplotlib axes: that is what ``python -m verify.<check> --plot PATH`` saves. Figures
take their numbers from ``verify`` runs and do no numerics of their own; settings a paper left
unstated are stated in the caption. Every figure uses the house style ``figures/house.mplstyle``.
Importing this package loads neither matplotlib nor the figure modules.
"""

from __future__ import annotations

import importlib
import pkgutil

from figures._plotting import pyplot

__all__ = ["registry", "describe", "check_figures", "check_drawer", "save_check_figure"]


def _modules():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"{__name__}.{info.name}")


def registry() -> dict:
    """Figure name -> function, collected from every ``figures`` module with a ``FIGURES`` dict."""
    found = {}
    for module in _modules():
        found.update(getattr(module, "FIGURES", {}))
    return dict(sorted(found.items()))


def describe(function) -> str:
    """One line saying what a figure shows: the first line of its function's docstring."""
    doc = (function.__doc__ or "").strip()
    return doc.splitlines()[0].strip() if doc else "(no description)"


def check_figures() -> dict:
    """Check name -> ``draw(result, ax)``, collected from every module's ``CHECK_FIGURES``."""
    found = {}
    for module in _modules():
        found.update(getattr(module, "CHECK_FIGURES", {}))
    return found


def check_drawer(check: str):
    """The drawer of ``check``'s result, or None when the check has no figure."""
    return check_figures().get(check)


def save_check_figure(result, path) -> None:
    """Draw ``result`` (a ``CheckResult``) with its check's drawer and save it to ``path``."""
    draw = check_drawer(result.check)
    if draw is None:
        raise ValueError(f"check {result.check!r} has no figure")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        draw(result, ax)
        fig.savefig(path)  # format from the suffix; 300-dpi PNG from the house style
    finally:
        plt.close(fig)
