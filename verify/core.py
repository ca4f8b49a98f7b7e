"""The contract every check follows: results, fits, tolerances and the CLI.

A check is a module ``verify.<name>`` with

* ``CHECK`` (its name) and ``CLAIMS`` (ledger ids, see :mod:`verify.claims`),
* ``run(*, ..., seed=0, device="cpu") -> CheckResult``: keyword-only parameters with defaults,
* ``HELP``: a dict parameter name -> help text naming the paper equation,
* ``main(argv=None) -> int``: ``return cli_main(run, argv, help=HELP, ...)``.

:func:`cli_main` turns the signature of ``run`` into argparse options, prints a short table and
a final ``PASS <check>: <statement>`` / ``FAIL <check>: <what differed>`` line, and returns the exit
code: 0 pass, 1 the claim failed, 2 bad input or environment (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import platform
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = [
    "CheckResult",
    "PowerLawFit",
    "fit_power_law",
    "fit_linear",
    "make_result",
    "versions",
    "Timer",
    "require",
    "require_range",
    "require_int",
    "cli_main",
    "EXIT_PASS",
    "EXIT_FAIL",
    "EXIT_ERROR",
]

EXIT_PASS, EXIT_FAIL, EXIT_ERROR = 0, 1, 2


# --------------------------------------------------------------------------------------- results


def _jsonable(value: Any) -> Any:
    """Plain JSON types from numpy scalars/arrays, tuples and nested mappings (non-finite -> str)."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else repr(v)  # 'inf', '-inf', 'nan' survive the round trip
    if isinstance(value, (np.complexfloating, complex)):
        return {"real": _jsonable(value.real), "imag": _jsonable(value.imag)}
    return value


def _unjson(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"real", "imag"}:
            return complex(_unjson(value["real"]), _unjson(value["imag"]))
        return {k: _unjson(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unjson(v) for v in value]
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """Outcome of one check: the claim, what was measured, against what, and whether it held.

    Attributes
    ----------
    check : str
        Name of the check (``"weyl"``).
    claims : tuple of str
        Ledger ids covered (``("FNA-10",)``).
    passed : bool
        Whether every assertion of the check held.
    statement : str
        One sentence: the (corrected, precise) claim that was tested.
    measured, expected, tolerance : dict
        Named numbers. ``tolerance[name]`` bounds ``|measured[name] - expected[name]|`` or, for
        one-sided statistics, ``measured[name]`` itself; the check documents which.
    parameters : dict
        Everything needed to rerun the check, seed included.
    timings : dict
        Wall-clock seconds per phase.
    versions : dict
        Python, numpy, scipy and toolkit versions.
    failures : tuple of str
        Human-readable description of each assertion that failed (empty when passed).
    arrays : dict
        Optional arrays for plots (kept out of :meth:`summary`, included in JSON as lists).
    """

    check: str
    claims: tuple[str, ...]
    passed: bool
    statement: str
    measured: Mapping[str, Any]
    expected: Mapping[str, Any]
    tolerance: Mapping[str, Any]
    parameters: Mapping[str, Any]
    timings: Mapping[str, float] = dataclasses.field(default_factory=dict)
    versions: Mapping[str, str] = dataclasses.field(default_factory=dict)
    failures: tuple[str, ...] = ()
    arrays: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain-JSON dictionary of every field."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_json(self, path=None, *, indent: int | None = 2) -> str:
        """JSON text of the result; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent, sort_keys=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    @classmethod
    def from_json(cls, text_or_path: str) -> CheckResult:
        """Inverse of :meth:`to_json` (accepts JSON text or a file path)."""
        text = text_or_path
        if not text.lstrip().startswith("{"):
            with open(text_or_path, encoding="utf-8") as fh:
                text = fh.read()
        data = _unjson(json.loads(text))
        data["claims"] = tuple(data["claims"])
        data["failures"] = tuple(data.get("failures", ()))
        data["arrays"] = {k: np.asarray(v) for k, v in data.get("arrays", {}).items()}
        return cls(**data)

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def final_line(self) -> str:
        """``PASS <check>: <statement>`` or ``FAIL <check>: <what differed>``."""
        if self.passed:
            return f"PASS {self.check}: {self.statement}"
        what = "; ".join(self.failures) if self.failures else self.statement
        return f"FAIL {self.check}: {what}"

    def summary(self) -> str:
        """Human-readable table: each statistic with its expected value and tolerance."""
        rows = [("quantity", "measured", "expected", "tolerance")]
        for name, value in self.measured.items():
            rows.append(
                (
                    name,
                    _fmt(value),
                    _fmt(self.expected.get(name, "")),
                    _fmt(self.tolerance.get(name, "")),
                )
            )
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [f"{self.check}  [{', '.join(self.claims)}]"]
        for j, row in enumerate(rows):
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
            if j == 0:
                lines.append("  ".join("-" * w for w in widths))
        params = ", ".join(f"{k}={_fmt(v)}" for k, v in self.parameters.items())
        lines.append(f"parameters: {params}")
        if self.timings:
            lines.append("time: " + ", ".join(f"{k} {v:.3g} s" for k, v in self.timings.items()))
        return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v == 0 or not math.isfinite(v):
            return repr(v)
        return f"{v:.4g}" if 1e-3 <= abs(v) < 1e5 else f"{v:.3e}"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_fmt(v) for v in value) + ")"
    return str(value)


def versions() -> dict[str, str]:
    """Versions recorded with every result (Python, numpy, scipy, the toolkit)."""
    out = {"python": platform.python_version(), "numpy": np.__version__}
    try:
        import scipy

        out["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    try:
        from importlib.metadata import version

        out["attention-limits"] = version("attention-limits")
    except Exception:  # not installed (running from a source tree)
        out["attention-limits"] = "source"
    return out


def make_result(
    *,
    check: str,
    claims,
    statement: str,
    measured: Mapping[str, Any],
    expected: Mapping[str, Any],
    tolerance: Mapping[str, Any],
    parameters: Mapping[str, Any],
    failures=(),
    timings: Mapping[str, float] | None = None,
    arrays: Mapping[str, Any] | None = None,
) -> CheckResult:
    """Build a :class:`CheckResult`; ``passed`` is ``not failures``, versions filled in."""
    failures = tuple(failures)
    return CheckResult(
        check=check,
        claims=tuple(claims),
        passed=not failures,
        statement=statement,
        measured=dict(measured),
        expected=dict(expected),
        tolerance=dict(tolerance),
        parameters=dict(parameters),
        timings=dict(timings or {}),
        versions=versions(),
        failures=failures,
        arrays=dict(arrays or {}),
    )


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


# ------------------------------------------------------------------------------------------- fits


@dataclasses.dataclass(frozen=True)
class PowerLawFit:
    """Least-squares fit ``log y = intercept + slope log x`` with standard errors.

    ``slope_stderr`` is the usual OLS standard error (residual variance with n - 2 degrees of
    freedom); it is 0 for an exact two-point fit and ``nan`` when undefined.
    """

    slope: float
    intercept: float
    slope_stderr: float
    intercept_stderr: float
    r_squared: float
    n_points: int

    def predict(self, x):
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope

    def slope_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Two-sided confidence interval for the slope (Student t, n - 2 degrees of freedom)."""
        from scipy import stats

        if self.n_points <= 2 or not math.isfinite(self.slope_stderr):
            return (self.slope, self.slope)
        q = stats.t.ppf(0.5 + level / 2, self.n_points - 2)
        return (self.slope - q * self.slope_stderr, self.slope + q * self.slope_stderr)


def fit_linear(x, y) -> PowerLawFit:
    """Ordinary least squares ``y = intercept + slope x`` with standard errors (no logs)."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"fit needs at least two (x, y) pairs of equal length, got {x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("fit data must be finite")
    n = x.size
    xm, ym = x.mean(), y.mean()
    sxx = float(np.sum((x - xm) ** 2))
    if sxx == 0:
        raise ValueError("fit needs at least two distinct x values")
    slope = float(np.sum((x - xm) * (y - ym)) / sxx)
    intercept = float(ym - slope * xm)
    resid = y - (intercept + slope * x)
    sst = float(np.sum((y - ym) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / sst if sst > 0 else 1.0
    if n > 2:
        s2 = float(np.sum(resid**2)) / (n - 2)
        se_slope = math.sqrt(s2 / sxx)
        se_int = math.sqrt(s2 * (1.0 / n + xm**2 / sxx))
    else:
        se_slope = se_int = 0.0
    return PowerLawFit(slope, intercept, se_slope, se_int, r2, n)


def fit_power_law(x, y) -> PowerLawFit:
    """Fit ``y = exp(intercept) x^slope`` by least squares in log-log coordinates.

    Raises
    ------
    ValueError
        If any x or y is not strictly positive (a power law cannot be fitted through them).
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if np.any(~(x > 0)) or np.any(~(y > 0)):
        raise ValueError("power-law fit needs strictly positive, finite x and y")
    return fit_linear(np.log(x), np.log(y))


# ----------------------------------------------------------------------------------- validation


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition`` (input validation in checks)."""
    if not condition:
        raise ValueError(message)


def require_range(name: str, value, *, low=None, high=None, low_open=False, high_open=False) -> None:
    """Check ``low (<|<=) value (<|<=) high``; the error names the parameter and the allowed range."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(float(value))
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = "-inf" if low is None else f"{low}"
        hi = "inf" if high is None else f"{high}"
        interval = ("(" if low_open or low is None else "[") + f"{lo}, {hi}" + (")" if high_open or high is None else "]")
        raise ValueError(f"{name} must be in {interval}, got {value!r}")


def require_int(name: str, value, *, low=None, high=None) -> None:
    """Check that ``value`` is an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    require_range(name, value, low=low, high=high)


# ------------------------------------------------------------------------------------------ CLI


class _OneLineParser(argparse.ArgumentParser):
    """argparse with usage errors reported as one line on stderr (exit 2, no usage dump)."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}\n")


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
    parser = _OneLineParser(prog=prog, description=description)
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
    except (ValueError, TypeError, MemoryError, RuntimeError) as exc:
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
