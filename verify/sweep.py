"""Parameter sweeps of a check: serial by default, on Dask with --scheduler.

``python -m verify.sweep weyl --grid alpha=1.0,1.2,1.5 --grid n=1000,2000 [--repeats 3] [--seed 0]
[--scheduler ADDRESS] [--json PATH]`` runs the check's public ``run`` at every point of the
Cartesian grid, ``--repeats`` times per point, prints one line per point (its parameters and
verdict, and what failed) and exits 1 if any point failed.

Seeds: unless ``seed`` itself is swept, every run gets its own child seed from
``numpy.random.SeedSequence(seed).spawn``, so each draws from an independent stream whatever the
execution order; the root seed and every child seed are recorded. Grid values are read as the
check's own command line reads them (``n=1e3`` is an integer, a choice must be one of its
values); a tuple-valued parameter takes its points separated by ``;``
(``--grid "eps-grid=0.002,0.004,0.008,0.016;0.004,0.008,0.016,0.032"``), and a grid with one
value fixes a parameter (``--grid claim=printed``).

Points are independent, so on Dask each becomes one ``dask.delayed`` call of ``run`` and the whole
sweep is one compute; workers return :class:`~verify.result.CheckResult` objects (host data only).
A point whose numerics did not converge is an ERROR row and the others still run. Dask is the
optional ``dask`` extra (``pip install "attention-limits[dask]"``).
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from spectral.validation import ConvergenceError, InputError, UnavailableError, check_int, check_seed
from verify.result import CheckResult, format_value, jsonable

__all__ = ["SweepPoint", "PointResult", "SweepResult", "sweep_points", "sweep", "parse_grid", "main"]

#: Dask's local schedulers; anything else given as ``scheduler`` is a cluster address.
LOCAL_SCHEDULERS = ("threads", "processes", "synchronous")
_ADDRESS = re.compile(r"^[a-z]+://\S+$|^[\w.\-]+:\d+$")  # tcp://host:8786, inproc://..., host:8786


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep: the keyword arguments passed to ``run`` (seed included)."""

    params: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class PointResult:
    """The outcome of one run: its keyword arguments and the check's result, or why it has none.

    ``error`` is set (and ``result`` is None) when the check's numerics did not converge.
    """

    params: Mapping[str, Any]
    result: CheckResult | None
    error: str = ""

    @property
    def verdict(self) -> str:
        """``PASS``, ``FAIL`` or ``ERROR``."""
        return "ERROR" if self.result is None else self.result.verdict

    @property
    def failures(self) -> tuple[str, ...]:
        """What failed, one line each (the error for an ERROR row)."""
        return (self.error,) if self.result is None else self.result.failures

    def to_dict(self, parameters: Mapping[str, Any] | None = None) -> dict:
        """Readable summary: the parameters, the verdict and the deciding records (or the error)."""
        out: dict[str, Any] = {"parameters": jsonable(dict(self.params if parameters is None else parameters)),
                               "verdict": self.verdict}
        if self.result is None:
            out["error"] = self.error
            return out
        out["records"] = [{"name": r.name, "measured": jsonable(r.measured), "expected": r.expectation(),
                           "passed": r.passed} for r in self.result.records if r.deciding]
        if self.result.failures:
            out["failures"] = list(self.result.failures)
        return out

    def __repr__(self) -> str:
        return f"PointResult({self.verdict}, {_describe(self.params)})"


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """A whole sweep: what was swept, with which seeds, and every point's outcome.

    Attributes
    ----------
    check : str
        Name of the check.
    grid : dict
        Parameter name -> the values swept.
    repeats : int
        Runs per grid point (each with its own child seed).
    seed : int
        Root seed of the spawned child seeds (unused when ``seed`` is swept).
    points : tuple of PointResult
        One per run, in grid order (repeats adjacent).
    versions : dict
        Provenance: toolkit and library versions, git commit, time and the command line.
    """

    check: str
    grid: Mapping[str, tuple]
    repeats: int
    seed: int
    points: tuple[PointResult, ...]
    versions: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when every point passed."""
        return all(p.verdict == "PASS" for p in self.points)

    @property
    def counts(self) -> dict[str, int]:
        """Number of points per verdict."""
        return {v: sum(p.verdict == v for p in self.points) for v in ("PASS", "FAIL", "ERROR")}

    @property
    def results(self) -> tuple[CheckResult | None, ...]:
        """Each point's CheckResult (None for an ERROR row)."""
        return tuple(p.result for p in self.points)

    def fixed_parameters(self) -> dict[str, Any]:
        """Parameters that every result shares and that were not swept (the check's defaults)."""
        done = [p.result for p in self.points if p.result is not None]
        if not done:
            return {}
        swept = set(self.grid) | {"seed"}
        first = jsonable(dict(done[0].parameters))
        return {k: v for k, v in first.items()
                if k not in swept and all(jsonable(r.parameters.get(k)) == v for r in done[1:])}

    def _point_parameters(self, point: PointResult, fixed: Mapping[str, Any]) -> dict[str, Any]:
        """A point's swept values and seed, plus any resolved parameter that differs between points."""
        out = dict(point.params)
        if point.result is not None:
            out.update({k: v for k, v in point.result.parameters.items() if k not in fixed and k not in out})
        return out

    def to_dict(self) -> dict:
        """Plain-JSON dictionary meant to be read: provenance first, then one entry per point."""
        fixed = self.fixed_parameters()
        claims = next((list(p.result.claims) for p in self.points if p.result is not None), [])
        return {
            "check": self.check,
            "claims": claims,
            "passed": self.passed,
            "counts": self.counts,
            "root_seed": self.seed,
            "repeats": self.repeats,
            "grid": jsonable(dict(self.grid)),
            "fixed_parameters": fixed,
            "versions": jsonable(dict(self.versions)),
            "points": [p.to_dict(self._point_parameters(p, fixed)) for p in self.points],
        }

    def to_json(self, path=None, *, indent: int | None = 2) -> str:
        """JSON text of :meth:`to_dict`; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    def lines(self) -> list[str]:
        """One line per point (verdict and parameters), its failures indented below it."""
        out = []
        for p in self.points:
            out.append(f"{p.verdict:<5}  {_describe(p.params)}")
            out += [f"         {f}" for f in (p.failures if p.verdict != "PASS" else ())]
        return out

    def final_line(self) -> str:
        c = self.counts
        text = f"{self.check}: {c['PASS']} passed, {c['FAIL']} failed"
        return text + (f", {c['ERROR']} did not converge" if c["ERROR"] else "") + f" ({len(self.points)} runs)"

    def __repr__(self) -> str:
        return (f"SweepResult(check={self.check!r}, runs={len(self.points)}, "
                f"counts={self.counts}, grid={dict(self.grid)})")


def _describe(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in params.items())


def sweep_points(grid: Mapping[str, Sequence], *, repeats: int = 1, seed: int = 0) -> list[SweepPoint]:
    """Cartesian product of ``grid`` times ``repeats`` runs, each with an independent child seed.

    Child seeds come from ``SeedSequence(seed).spawn(number of runs)``, so every run draws from its
    own stream whatever the execution order (SPEC 7). When ``seed`` is itself a grid parameter its
    values are used as given and ``repeats`` must be 1 (repeats would be identical runs).

    Raises
    ------
    InputError
        An empty grid axis, a string given as the values of an axis, ``repeats < 1``, a negative
        root seed, or a swept ``seed`` with ``repeats > 1``.
    """
    repeats = check_int("repeats", repeats, low=1)
    seed = check_seed(seed)
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
            raise InputError(f"grid[{name!r}] must be a non-empty sequence of values, got {values!r}")
    if "seed" in grid and repeats > 1:
        raise InputError(f"repeats must be 1 when seed is swept (repeats of one seed are identical runs), "
                         f"got repeats={repeats}")
    names = list(grid)
    combos = [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]
    combos = [dict(c) for c in combos for _ in range(repeats)]
    if "seed" not in grid:
        for combo, child in zip(combos, np.random.SeedSequence(seed).spawn(len(combos))):
            combo["seed"] = int(child.generate_state(1)[0])
    return [SweepPoint(c) for c in combos]


def _check_grid_names(run: Callable, grid: Mapping[str, Sequence]) -> None:
    valid = list(inspect.signature(run).parameters)
    unknown = [name for name in grid if name not in valid]
    if unknown:
        raise InputError(f"unknown grid parameter {', '.join(map(repr, unknown))}; valid parameters: "
                         f"{', '.join(valid)}")


def _run_point(run: Callable[..., CheckResult], params: Mapping[str, Any]) -> PointResult:
    """Run one point; a numerical method that did not converge gives an ERROR row, not an abort."""
    try:
        return PointResult(dict(params), run(**params))
    except ConvergenceError as exc:
        return PointResult(dict(params), None, f"did not converge: {' '.join(str(exc).split())}")


def _check_name(run: Callable) -> str:
    return getattr(run, "__module__", "check").rpartition(".")[2]


def sweep(run: Callable[..., CheckResult], grid: Mapping[str, Sequence], *, repeats: int = 1, seed: int = 0,
          scheduler: str | None = None, progress: bool = False) -> SweepResult:
    """Run ``run(**point)`` for every point of the grid; serial, or on Dask when ``scheduler`` is set.

    Parameters
    ----------
    run : callable
        A check's public ``run`` (``verify.<name>.run``: keyword-only, returns a CheckResult).
    grid : mapping
        Parameter name of ``run`` -> the values to sweep (typed as ``run`` takes them).
    repeats : int
        Runs per grid point, each with its own child seed (>= 1).
    seed : int
        Root seed of the spawned child seeds (>= 0).
    scheduler : str, optional
        ``None`` for a serial loop; ``"threads"``, ``"processes"`` or ``"synchronous"`` for a local
        Dask scheduler; a Dask scheduler address (``tcp://host:8786``) for a cluster.
    progress : bool
        Report completed points on stderr (serial) or show Dask's progress bar.

    Returns
    -------
    SweepResult
        Every point's parameters and result, with the grid, the root seed and the provenance.

    Raises
    ------
    InputError
        An unknown grid parameter (the message lists the valid ones), a bad grid, or a point whose
        values the check refuses.
    UnavailableError
        ``scheduler`` given without Dask installed, or a cluster that cannot be reached.
    """
    from verify.provenance import versions

    _check_grid_names(run, grid)
    if scheduler is not None and scheduler not in LOCAL_SCHEDULERS and not _ADDRESS.match(scheduler):
        raise InputError(f"scheduler must be one of {', '.join(LOCAL_SCHEDULERS)} or a scheduler address such as "
                         f"tcp://host:8786, got {scheduler!r}")
    points = sweep_points(grid, repeats=repeats, seed=seed)
    if scheduler is None:
        from verify.progress import progress as report  # a bar on a terminal, plain lines otherwise

        outcomes = [_run_point(run, point.params) for point in report(
            points, desc=f"sweep {_check_name(run)}", quiet=not progress, label=lambda p: _describe(p.params))]
    else:
        outcomes = _dask_compute(run, points, scheduler, progress)
    name = next((o.result.check for o in outcomes if o.result is not None), _check_name(run))
    return SweepResult(check=name, grid={k: tuple(v) for k, v in grid.items()}, repeats=repeats, seed=seed,
                       points=tuple(outcomes), versions=versions())


def _dask_compute(run, points, scheduler, progress) -> list[PointResult]:
    """All points as ``dask.delayed`` calls, computed at once; workers return host results only."""
    try:
        import dask
    except ImportError:
        raise UnavailableError("scheduler needs Dask: pip install 'attention-limits[dask]'") from None
    tasks = [dask.delayed(_run_point, pure=False)(run, point.params) for point in points]
    if scheduler in LOCAL_SCHEDULERS:
        if progress:
            from dask.diagnostics import ProgressBar

            with ProgressBar(out=sys.stderr):
                return list(dask.compute(*tasks, scheduler=scheduler))
        return list(dask.compute(*tasks, scheduler=scheduler))
    try:
        from dask.distributed import Client, progress as show_progress  # lazy: optional extra
    except ImportError:
        raise UnavailableError("a scheduler address needs dask.distributed: pip install "
                               "'attention-limits[dask]'") from None
    try:
        client = Client(scheduler, timeout=30)
    except OSError as exc:
        raise UnavailableError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    with client:
        futures = client.compute(tasks)
        if progress:
            show_progress(futures)
        return list(client.gather(futures))


def parse_grid(items: Sequence[str], run: Callable) -> dict[str, list]:
    """``["alpha=1.0,1.2", "n=1e3"]`` -> ``{"alpha": [1.0, 1.2], "n": [1000]}``, typed like ``run``'s CLI.

    Each value is read by the check's own command-line parser (same types, choices and
    ``none``/``auto`` for automatic values). Points of a tuple-valued parameter are separated by
    ``;``, those of any other parameter by ``,``.
    """
    import argparse

    from verify.cli import build_parser, parse_parameters

    signature = inspect.signature(run).parameters
    docs = parse_parameters(run.__doc__)
    grid: dict[str, list] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name or not text.strip():
            raise InputError(f"--grid takes NAME=V1,V2,..., got {item!r}")
        _check_grid_names(run, {name: ()})
        if name in grid:
            raise InputError(f"--grid {name} given twice; list all its values in one --grid")
        tuple_valued = isinstance(signature[name].default, tuple) or docs.get(name, ("", ""))[0].startswith("tuple")
        parts = [p.strip() for p in text.split(";" if tuple_valued else ",")]
        if not all(parts):
            raise InputError(f"--grid {name}: empty value in {text!r}")
        parser = build_parser(run, prog="python -m verify.sweep")
        option = "--" + name.replace("_", "-")

        def fail(message, *, _name=name):
            raise InputError(f"--grid {_name}: {re.sub(r'^argument [^:]+: ', '', message)}")

        parser.error = fail  # a bad value is one InputError, not an argparse exit
        values = []
        for part in parts:
            try:
                values.append(getattr(parser.parse_args([f"{option}={part}"]), name))
            except argparse.ArgumentError as exc:  # pragma: no cover - parse_args reports through error()
                fail(str(exc))
        grid[name] = values
    return grid


def main(argv=None) -> int:
    """``python -m verify.sweep CHECK --grid NAME=V1,V2 ...``; exit 0 all passed, 1 some failed, 2 bad input."""
    from verify.claims import load_check
    from verify.cli import EXIT_FAIL, EXIT_PASS, USER_ERRORS, OneLineParser, check_output_path, report_error

    prog = "python -m verify.sweep"
    parser = OneLineParser(prog=prog, description=__doc__.strip().split("\n\n")[0],
                           epilog="example: python -m verify.sweep appendix_c --grid c=1,2 "
                                  "--grid claim=corrected,printed --repeats 2 --json sweep.json")
    parser.add_argument("check", help="check name (python -m verify lists them)")
    parser.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2",
                        help="a swept parameter and its values (repeat for a Cartesian product; ';' separates the "
                             "points of a tuple-valued parameter)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs per grid point, each with its own child seed (default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="root seed of the spawned child seeds (default: 0)")
    parser.add_argument("--scheduler", default=None,
                        help="Dask scheduler address (tcp://host:8786), or threads, processes, synchronous "
                             "(default: a serial loop, no Dask)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="write the sweep (grid, seeds, provenance, each point's parameters, verdict and deciding "
                             "records) as JSON to PATH")
    parser.add_argument("--quiet", action="store_true", help="print only the final summary line")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        check_output_path("--json", ns.json)
        try:
            run = load_check(ns.check).run
        except ValueError as exc:
            raise InputError(str(exc)) from None
        grid = parse_grid(ns.grid, run)
        result = sweep(run, grid, repeats=ns.repeats, seed=ns.seed, scheduler=ns.scheduler,
                       progress=not ns.quiet)
    except (*USER_ERRORS, ConvergenceError) as exc:
        return report_error(prog, exc)
    if not ns.quiet:
        print("\n".join(result.lines()))
    print(result.final_line())
    if ns.json:
        try:
            result.to_json(ns.json)
        except OSError as exc:
            return report_error(prog, InputError(str(exc)))
    return EXIT_PASS if result.passed else EXIT_FAIL


if __name__ == "__main__":
    raise SystemExit(main())
