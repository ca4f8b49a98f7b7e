"""The check-authoring API in one import, and the transitional helpers of the old check form.

A check is declared with :class:`~verify.check.Check`, records its assertions with
:class:`~verify.result.Recorder` and fits rates with :mod:`verify.fits`; validation and error
types come from :mod:`spectral.validation`. See :mod:`verify.check` for the one form every check
takes. The helpers below the line (``make_result``, ``require_*``, ``cli_main``) serve checks not
yet moved to that form and are removed when the last one is.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from typing import Any

from spectral.validation import (
    ConvergenceError,
    InputError,
    UnavailableError,
    check_int,
    check_option,
    check_real,
    check_reals,
    check_seed,
    child_rng,
)
from verify.check import Check, device_namespace
from verify.cli import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, OneLineParser
from verify.fits import PowerLawFit, fit_linear, fit_power_law
from verify.provenance import versions
from verify.result import CheckResult, Record, Recorder

__all__ = [
    "Check", "Recorder", "Record", "CheckResult", "device_namespace",
    "PowerLawFit", "fit_power_law", "fit_linear", "versions",
    "InputError", "UnavailableError", "ConvergenceError",
    "check_real", "check_reals", "check_int", "check_option", "check_seed", "child_rng",
    "EXIT_PASS", "EXIT_FAIL", "EXIT_ERROR",
    # transitional (old check form)
    "make_result", "Timer", "require", "require_range", "require_int", "cli_main", "build_parser",
]


# ------------------------------------------------------------- transitional: the old check form


def make_result(*, check: str, claims, statement: str, measured: Mapping[str, Any], expected: Mapping[str, Any],
                tolerance: Mapping[str, Any], parameters: Mapping[str, Any], failures=(),
                timings: Mapping[str, float] | None = None, arrays: Mapping[str, Any] | None = None) -> CheckResult:
    """Old-form result: every measured number as an informational record, each failure as one
    failed assertion (transitional; the new form records typed assertions)."""
    import numpy as np

    records = []
    for name, value in measured.items():
        if isinstance(value, np.ndarray) and value.ndim > 0:
            value = str(value.tolist())
        records.append(Record(name, value.item() if hasattr(value, "item") else value))
    for i, text in enumerate(failures):
        records.append(Record(f"failure_{i}", False, "equal", True, 0, label=text))
    return CheckResult(check=check, claims=tuple(claims), statement=statement, records=tuple(records),
                       parameters=dict(parameters), timings=dict(timings or {}), versions=versions(),
                       arrays=dict(arrays or {}))


class Timer:
    """Collect named wall-clock timings: ``with timer("spectrum"): ...``; ``timer.timings``."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0


def require(condition: bool, message: str) -> None:
    """Raise :class:`InputError` unless ``condition``."""
    if not condition:
        raise InputError(message)


def require_range(name: str, value, *, low=None, high=None, low_open=False, high_open=False) -> None:
    """Check ``low (<|<=) value (<|<=) high``; the error names the parameter and the allowed range."""
    check_real(name, value, low=low, high=high, low_open=low_open, high_open=high_open)


def require_int(name: str, value, *, low=None, high=None) -> None:
    """Check that ``value`` is an integer in ``[low, high]``."""
    check_int(name, value, low=low, high=high)


def _parse_tuple(kind):
    def parse(text: str):
        parts = [p for p in text.replace(",", " ").split() if p]
        try:
            return tuple(kind(p) for p in parts)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"expected comma-separated {kind.__name__} values, got {text!r}") from exc

    return parse


def _parse_bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true/false, got {text!r}")


def _parse_optional_float(text: str):
    if text.lower() in ("none", "auto"):
        return None
    return float(text)


def build_parser(run: Callable, *, prog: str, description: str = "", help: Mapping[str, str] | None = None,
                 choices: Mapping[str, tuple] | None = None, annotations: Mapping[str, type] | None = None,
                 flags: Mapping[str, Mapping[str, Any]] | None = None) -> argparse.ArgumentParser:
    """argparse parser from ``run``'s keyword-only signature.

    Each keyword ``name`` becomes ``--name`` (underscores also accepted as dashes) with the default
    and the help text ``help[name]``. Types follow the default: bool -> true/false, int, float,
    str, tuple -> comma-separated; ``None`` defaults are floats unless ``annotations`` says otherwise.
    ``flags`` adds extra options (e.g. ``--paper-setting``) passed to ``run`` as keywords.
    """
    help = dict(help or {})
    choices = dict(choices or {})
    annotations = dict(annotations or {})
    parser = OneLineParser(prog=prog, description=description)
    sig = inspect.signature(run)
    for name, par in sig.parameters.items():
        if par.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        default = par.default
        opts = ["--" + name.replace("_", "-")]
        if "_" in name:
            opts.append("--" + name)
        text = help.get(name, "")
        if "default" not in text.lower():  # state the default once, unless the help already does
            shown = "automatic" if default is None else (",".join(map(str, default)) if isinstance(default, tuple)
                                                         else default)
            text = f"{text} (default: {shown})".strip()
        kwargs: dict[str, Any] = {"dest": name, "default": default, "help": text}
        kind = annotations.get(name)
        if kind is None:
            if isinstance(default, bool):
                kind = bool
            elif isinstance(default, tuple):
                kind = tuple
            elif default is None:
                kind = "optional_float"
            else:
                kind = type(default)
        if kind is bool:
            # "--full" alone means true; "--full false" / "--full true" are accepted too
            kwargs["type"] = _parse_bool
            kwargs["nargs"] = "?"
            kwargs["const"] = True
            kwargs["metavar"] = "{true,false}"
        elif kind is tuple:
            elem = type(default[0]) if default else float
            kwargs["type"] = _parse_tuple(elem)
            kwargs["metavar"] = "A,B"
        elif kind == "optional_float":
            kwargs["type"] = _parse_optional_float
        else:
            kwargs["type"] = kind
        if name in choices:
            kwargs["choices"] = choices[name]
        parser.add_argument(*opts, **kwargs)
    for flag, spec in (flags or {}).items():
        parser.add_argument(flag, **spec)
    out = parser.add_argument_group("output")
    out.add_argument("--json", metavar="PATH", default=None, help="write the full result as JSON to PATH")
    out.add_argument("--plot", metavar="PATH", default=None, help="save a figure of the check to PATH (matplotlib)")
    out.add_argument("--quiet", action="store_true", help="print only the final PASS/FAIL line")
    return parser


def cli_main(run: Callable, argv=None, *, prog: str | None = None, description: str = "",
             help: Mapping[str, str] | None = None, choices: Mapping[str, tuple] | None = None,
             annotations: Mapping[str, type] | None = None, flags: Mapping[str, Mapping[str, Any]] | None = None,
             plot: Callable[[CheckResult, str], None] | None = None) -> int:
    """Command-line entry point shared by every check; returns the exit code (0, 1 or 2).

    Bad input (``ValueError``, ``TypeError`` from validation), memory refusals (``MemoryError``) and
    environment problems (``RuntimeError``, e.g. ``--device gpu`` without CuPy) print one line on
    stderr and return 2, never a traceback.
    """
    module = sys.modules.get(run.__module__)
    module_name = run.__module__
    if module_name == "__main__" and module is not None and getattr(module, "__spec__", None) is not None:
        module_name = module.__spec__.name  # run as `python -m verify.x`
    prog = prog or f"python -m {module_name}"
    description = description or (module.__doc__ or "").strip().split("\n\n")[0]
    parser = build_parser(run, prog=prog, description=description, help=help, choices=choices,
                          annotations=annotations, flags=flags)
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    kwargs = {k: v for k, v in vars(ns).items() if k not in ("json", "plot", "quiet")}
    try:
        result = run(**kwargs)
    except (ValueError, TypeError, MemoryError, RuntimeError) as exc:  # transitional: old form
        name = type(exc).__name__
        message = " ".join(str(exc).split())  # one line, whatever the exception text
        label = "error" if name in ("ValueError", "TypeError") else name
        sys.stderr.write(f"{prog}: {label}: {message}\n")
        return EXIT_ERROR
    if not ns.quiet:
        print(result.summary())
    print(result.final_line())
    try:
        if ns.json:
            result.to_json(ns.json)
        if ns.plot:
            if plot is None:
                raise ValueError("this check has no figure (--plot is not supported)")
            plot(result, ns.plot)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"{prog}: error: {exc}\n")
        return EXIT_ERROR
    return EXIT_PASS if result.passed else EXIT_FAIL
