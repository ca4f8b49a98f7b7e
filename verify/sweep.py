"""Parameter sweeps of a check: serial by default, on Dask with --scheduler, resumable with --jsonl.

``python -m verify.sweep weyl --grid alpha=1.0,1.2,1.5 --grid n=1000,2000 [--repeats 3] [--seed 0]
[--scheduler ADDRESS] [--jsonl PATH] [--json PATH]`` runs the check's public ``run`` at every point
of the Cartesian grid, ``--repeats`` times per point, prints one line per point (its parameters,
its verdict and, on a FAIL, what failed) and exits 1 if any point failed.

Seeds: unless ``seed`` itself is swept, every run gets its own child seed, drawn from
``numpy.random.SeedSequence(seed)`` with a spawn key made of the point's values and the repeat
number. Each run draws from an independent stream whatever the execution order, and adding a value
to the grid never changes another point's seed (so a resumed sweep with a longer grid reuses every
run already done). The root seed and every child seed are recorded. Grid values are read as the
check's own command line reads them (``n=1e3`` is an integer, a choice must be one of its values);
a tuple-valued parameter takes its points separated by ``;``
(``--grid "eps-grid=0.002,0.004,0.008,0.016;0.004,0.008,0.016,0.032"``), and a grid with one
value fixes a parameter (``--grid claim=printed``).

Deterministic settings: with ``--repeats`` >= 2 the first two repeats of every point run first.
Where their records, arrays and notes are identical (two different seeds, the same numbers: the
check does not use the seed there, like weyl on an equispaced grid), the point is shown once, the
sweep says so once, and its remaining repeats are skipped instead of repeating the same run.

Resuming: ``--jsonl PATH`` appends every finished run to PATH as one JSON line the moment it
finishes (a header line first). Rerunning the same command reads PATH and skips the runs already
there, so an interrupted sweep continues where it stopped.

Points are independent, so on Dask each run becomes one ``dask.delayed`` call of ``run``; workers
return :class:`~verify.core.result.CheckResult` objects (host data only) and only this process writes.
A point whose numerics did not converge is an ERROR row and the others still run. Dask is the
optional ``dask`` extra (``pip install "attention-limits[dask]"``).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import inspect
import itertools
import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import ConvergenceError, InputError, UnavailableError, check_int, check_seed
from verify.core.claims import load_check
from verify.core.cli import (EXIT_FAIL, EXIT_PASS, USER_ERRORS, OneLineParser, build_check_parser, check_output_path,
                             report_error)
from verify.core.locks import Claims
from verify.core.progress import progress as report, silenced
from verify.core.provenance import versions
from verify.core.result import CheckResult, format_value, jsonable, write_json
from verify.core.tasks import check_scheduler, client_for_items, gather_as_completed

__all__ = ["SweepPoint", "PointResult", "SweepResult", "sweep_points", "sweep", "parse_grid", "main"]

#: Dask's local schedulers; anything else given as ``scheduler`` is a cluster address.
LOCAL_SCHEDULERS = ("threads", "processes", "synchronous")
_ADDRESS = re.compile(r"^[a-z]+://\S+$|^[\w.\-]+:\d+$|^local(:\d+)?$")  # tcp://host:8786, host:8786, local:4
_JSONL_FORMAT = "attention-limits sweep runs v1"


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep: the keyword arguments passed to ``run`` (seed included).

    ``index`` is the position of the point's values in the grid and ``repeat`` the repeat number
    (0-based); they are bookkeeping and are not passed to ``run``.
    """

    params: Mapping[str, Any]
    index: int = 0
    repeat: int = 0


@dataclasses.dataclass(frozen=True)
class PointResult:
    """The outcome of one run: its keyword arguments and the check's result, or why it has none.

    ``error`` is set (and ``result`` is None) when the check's numerics did not converge.
    ``identical_seeds`` lists the seeds of further repeats that gave identical records, arrays and
    notes (the check is deterministic at this point), and ``skipped`` counts the repeats left out
    because of it; such a point is one row standing for all its repeats.
    """

    params: Mapping[str, Any]
    result: CheckResult | None
    error: str = ""
    identical_seeds: tuple[int, ...] = ()
    skipped: int = 0

    @property
    def verdict(self) -> str:
        """``PASS``, ``FAIL`` or ``ERROR``."""
        return "ERROR" if self.result is None else self.result.verdict

    @property
    def failures(self) -> tuple[str, ...]:
        """What failed, one line each (the error for an ERROR row)."""
        return (self.error,) if self.result is None else self.result.failures

    @property
    def deterministic(self) -> bool:
        """Whether two different seeds gave identical records here (the seed is not used)."""
        return bool(self.identical_seeds)

    def to_dict(self, parameters: Mapping[str, Any] | None = None) -> dict:
        """Readable summary: the parameters, the verdict and the deciding records (or the error)."""
        out: dict[str, Any] = {"parameters": jsonable(dict(self.params if parameters is None else parameters)),
                               "verdict": self.verdict}
        if self.deterministic:
            out["deterministic"] = {"identical_seeds": list(self.identical_seeds), "repeats_skipped": self.skipped}
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
        Root seed of the child seeds (unused when ``seed`` is swept).
    points : tuple of PointResult
        One per run in grid order (repeats adjacent); a point where the check is deterministic is
        one row for all its repeats.
    versions : dict
        Provenance: toolkit and library versions, git commit, time and the command line.
    resumed : int
        Runs read back from the ``jsonl`` file of an earlier, interrupted sweep instead of computed.
    """

    check: str
    grid: Mapping[str, tuple]
    repeats: int
    seed: int
    points: tuple[PointResult, ...]
    versions: Mapping[str, str] = dataclasses.field(default_factory=dict)
    resumed: int = 0

    @property
    def passed(self) -> bool:
        """True when every point passed."""
        return all(p.verdict == "PASS" for p in self.points)

    @property
    def counts(self) -> dict[str, int]:
        """Number of rows per verdict (a deterministic point is one row)."""
        return {v: sum(p.verdict == v for p in self.points) for v in ("PASS", "FAIL", "ERROR")}

    @property
    def runs(self) -> int:
        """Number of check runs behind the rows (identical repeats included, skipped ones not)."""
        return sum(1 + len(p.identical_seeds) for p in self.points)

    @property
    def results(self) -> tuple[CheckResult | None, ...]:
        """Each row's CheckResult (None for an ERROR row)."""
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

    def deterministic_note(self) -> str:
        """One sentence when the check gave identical records for different seeds somewhere (else "")."""
        same = [p for p in self.points if p.deterministic]
        if not same:
            return ""
        settings = len({_key({k: v for k, v in p.params.items() if k != "seed"}) for p in self.points})
        where = "every swept setting" if len(same) == settings else f"{len(same)} of {settings} swept settings"
        skipped = sum(p.skipped for p in same)
        tail = f", and their other {skipped} repeats were skipped" if skipped else ""
        return (f"{self.check} is deterministic at {where}: two different seeds gave identical records there, "
                f"so each such point is shown once{tail}")

    def to_dict(self) -> dict:
        """Plain-JSON dictionary meant to be read: provenance first, then one entry per point."""
        fixed = self.fixed_parameters()
        claims = next((list(p.result.claims) for p in self.points if p.result is not None), [])
        out = {
            "check": self.check,
            "claims": claims,
            "passed": self.passed,
            "counts": self.counts,
            "runs": self.runs,
            "resumed": self.resumed,
            "root_seed": self.seed,
            "repeats": self.repeats,
            "grid": jsonable(dict(self.grid)),
            "fixed_parameters": fixed,
            "versions": jsonable(dict(self.versions)),
            "points": [p.to_dict(self._point_parameters(p, fixed)) for p in self.points],
        }
        note = self.deterministic_note()
        if note:
            out["note"] = note
        return out

    def to_json(self, path=None, *, indent: int | None = 2) -> str:
        """JSON text of :meth:`to_dict`; also written to ``path`` when given."""
        return write_json(self.to_dict(), path, indent=indent)

    def lines(self) -> list[str]:
        """One line per row: the verdict, the parameters and, on a FAIL or ERROR, why.

        A row where the check is deterministic leaves the seed out (it does not matter there); the
        sweep's :meth:`deterministic_note` comes first when there is one.
        """
        note = self.deterministic_note()
        out = [f"note: {note}"] if note else []
        for p in self.points:
            params = {k: v for k, v in p.params.items() if not (p.deterministic and k == "seed")}
            head = f"{p.verdict:<5}  {_describe(params)}"
            if p.verdict == "PASS":
                out.append(head)
                continue
            first, *rest = p.failures or ("(no failure recorded)",)
            out.append(f"{head}: {first}")
            out += [f"         and: {f}" for f in rest]
        return out

    def final_line(self) -> str:
        c = self.counts
        text = f"{self.check}: {c['PASS']} passed, {c['FAIL']} failed"
        text += f", {c['ERROR']} did not converge" if c["ERROR"] else ""
        extra = [f"{self.runs} runs"]
        if self.resumed:
            extra.append(f"{self.resumed} read back from the run log")
        skipped = sum(p.skipped for p in self.points)
        if skipped:
            extra.append(f"{skipped} identical repeats skipped")
        return text + f" ({'; '.join(extra)})"

    def __repr__(self) -> str:
        return (f"SweepResult(check={self.check!r}, runs={self.runs}, "
                f"counts={self.counts}, grid={dict(self.grid)})")


def _describe(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in params.items())


def _key(params: Mapping[str, Any]) -> str:
    """Canonical text of a run's parameters: the same run always gives the same key."""
    return json.dumps(jsonable(dict(params)), sort_keys=True)


def _child_seed(root: int, values: Mapping[str, Any], repeat: int) -> int:
    """The seed of one run: ``SeedSequence(root)`` spawned by the point's values and the repeat number."""
    digest = int.from_bytes(hashlib.sha256(_key(values).encode()).digest()[:8], "little")
    return int(np.random.SeedSequence(root, spawn_key=(digest, repeat)).generate_state(1)[0])


def sweep_points(grid: Mapping[str, Sequence], *, repeats: int = 1, seed: int = 0) -> list[SweepPoint]:
    """Cartesian product of ``grid`` times ``repeats`` runs, each with an independent child seed.

    A run's seed comes from ``SeedSequence(seed)`` with a spawn key made of the point's values and
    the repeat number, so every run draws from its own stream whatever the execution order, and
    adding a value to the grid never changes the seed of another point. When ``seed`` is itself a
    grid parameter its values are used as given and ``repeats`` must be 1 (repeats would be
    identical runs).

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
    points = []
    for index, values in enumerate(itertools.product(*(grid[n] for n in names))):
        combo = dict(zip(names, values))
        for repeat in range(repeats):
            params = dict(combo)
            if "seed" not in grid:
                params["seed"] = _child_seed(seed, combo, repeat)
            points.append(SweepPoint(params, index, repeat))
    return points


def _check_grid_names(run: Callable, grid: Mapping[str, Sequence]) -> None:
    valid = list(inspect.signature(run).parameters)
    unknown = [name for name in grid if name not in valid]
    if unknown:
        raise InputError(f"unknown grid parameter {', '.join(map(repr, unknown))}; valid parameters: "
                         f"{', '.join(valid)}")


def _validate_points(run: Callable, grid: Mapping[str, Sequence], points) -> None:
    """Every value, then every point, checked by the check's declarations before anything runs.

    A value outside its declared constraint is refused naming the grid parameter; a point whose
    values break a rule between parameters (the check's ``resolve``) or whose computing path would not
    fit in memory (the check's memory hook, as ``run`` holds it) is refused naming the point: a sweep
    never computes some points and then stops at a later one it could have refused. Checks without
    declarations (a user's own ``run``) are checked by their runs.
    """
    check = getattr(run, "__check__", None)
    if check is None:
        return
    specs = check.specs()
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise InputError(f"grid {name} must be a sequence of values, got {values!r}")
        for value in values:
            try:
                specs[name].validate(value)
            except InputError as exc:
                raise InputError(f"grid {name}: {exc}") from None
    checked = set()
    for point in points:
        values = {k: v for k, v in point.params.items() if k != "seed"}
        key = _key(values)
        if key in checked:  # the repeats of a point differ by their seed only
            continue
        checked.add(key)
        try:
            check.choose(check.params(**point.params))
        except InputError as exc:
            raise InputError(f"grid point {_describe(point.params)}: {exc}") from None
        except DenseMemoryError as exc:
            raise DenseMemoryError(f"grid point {_describe(values)}: {exc}") from None


def _run_point(run: Callable[..., CheckResult], params: Mapping[str, Any]) -> PointResult:
    """Run one point; a numerical method that did not converge gives an ERROR row, not an abort."""
    try:
        return PointResult(dict(params), run(**params))
    except ConvergenceError as exc:
        return PointResult(dict(params), None, f"did not converge: {' '.join(str(exc).split())}")


def _check_name(run: Callable) -> str:
    return getattr(run, "__module__", "check").rpartition(".")[2]


def _identical(a: PointResult, b: PointResult) -> bool:
    """Same records, arrays and notes (NaN never counts as identical: conservative)."""
    if a.result is None or b.result is None:
        return False
    ra, rb = a.result, b.result
    if ra.records != rb.records or tuple(ra.notes) != tuple(rb.notes) or set(ra.arrays) != set(rb.arrays):
        return False
    return all(np.array_equal(np.asarray(ra.arrays[k]), np.asarray(rb.arrays[k])) for k in ra.arrays)


class _RunLog:
    """The ``jsonl`` file of a sweep: runs already finished, new runs appended at once, and the claims of the
    sweeps sharing it (:mod:`verify.core.locks`: ``PATH.lock`` serialises the reads and appends, ``PATH.claims/``
    holds one file per run being computed), so that two sweeps on one log divide the runs."""

    def __init__(self, path, check: str, root_seed: int):
        self.path = path
        self.check = check
        self.done: dict[str, PointResult] = {}
        self._offset = 0
        self.claims = None
        if path is None:
            return
        self.claims = Claims(f"{path}.claims")
        with self.claims.lock():
            if os.path.exists(path) and os.path.getsize(path) > 0:
                self._read()
            else:
                self._append({"format": _JSONL_FORMAT, "check": check, "root_seed": root_seed})
                self._offset = os.path.getsize(path)

    def _read(self) -> None:
        """Read the lines appended since the last read (call under the lock)."""
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        complete, _, torn = data.rpartition(b"\n")
        if torn:  # a line cut short by an interrupted write: dropped, so the next line starts clean
            with open(self.path, "r+b") as fh:
                fh.truncate(self._offset + len(complete) + (1 if complete else 0))
        lines = complete.decode("utf-8").split("\n") if complete else []
        first = self._offset == 0
        self._offset += len(complete) + (1 if complete else 0)
        if first:
            try:
                header = json.loads(lines[0]) if lines else {}
            except json.JSONDecodeError:
                header = {}
            if header.get("format") != _JSONL_FORMAT:
                raise InputError(f"jsonl {self.path!r} is not a sweep run log; give a new path or that of an "
                                 f"earlier sweep to resume it")
            if header.get("check") != self.check:
                raise InputError(f"jsonl {self.path!r} holds runs of {header.get('check')!r}, not {self.check!r}; "
                                 f"give another path")
            lines = lines[1:]
        for number, line in enumerate(lines, 2):
            try:
                entry = json.loads(line)
                params = entry["params"]
                if "error" in entry:
                    self.done[_key(params)] = PointResult(params, None, entry["error"])
                else:
                    self.done[_key(params)] = PointResult(params, CheckResult.from_json(json.dumps(entry["result"])))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise InputError(f"jsonl {self.path!r} line {number} is not a run of this sweep ({exc}); "
                                 f"give another path") from None

    def _append(self, entry: Mapping[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
            fh.flush()

    def write(self, outcome: PointResult) -> None:
        if self.path is None:
            return
        entry: dict[str, Any] = {"params": jsonable(dict(outcome.params))}
        if outcome.result is None:
            entry["error"] = outcome.error
        else:
            entry["result"] = outcome.result.to_dict()
        key = _key(outcome.params)
        with self.claims.lock():
            self._read()  # past the other sweeps' lines, so that this one is read back by nobody twice
            self._append(entry)
            self._offset = os.path.getsize(self.path)
            self.done[key] = outcome
            self.claims.release(key)

    def claim(self, keys: list[str]) -> tuple[list[str], list[str]]:
        """``(keys this sweep runs now, keys another sweep is running)``; keys already in the log in neither."""
        if self.path is None:
            return list(keys), []
        mine, held = [], []
        with self.claims.lock():
            self._read()
            for key in keys:
                if key in self.done:
                    continue
                (mine if self.claims.claim(key) else held).append(key)
        return mine, held

    def wait(self, keys: list[str], desc: str, progress: bool) -> list[str]:
        """Wait until the runs other sweeps hold are in the log; returns the keys whose claims were dropped or
        went stale meanwhile (their sweep stopped): this sweep runs those."""
        free = []
        settled = self.claims.arrivals(keys, lambda key: key in self.done, free, before=self._read)
        for _ in report(settled, total=len(keys), desc=f"{desc}: runs held by another sweep", quiet=not progress):
            pass
        return free

    def release_all(self) -> None:
        if self.claims is not None:
            self.claims.release_all()


#: Seconds between two reads of a shared run log while waiting for another sweep's runs (growing).


def _execute(run, points: list[SweepPoint], log: _RunLog, scheduler, progress: bool, desc: str):
    """Outcomes of ``points`` in their order: read back from the log (this sweep's earlier runs, or another
    sweep's on the same log), or computed and logged at once."""
    outcomes: dict[int, PointResult] = {}
    by_key: dict[str, list[int]] = {}
    for i, point in enumerate(points):
        by_key.setdefault(_key(point.params), []).append(i)

    def read_back(key):
        for i in by_key[key]:
            # the log holds JSON types (tuples as lists): keep the parameters as this sweep gave them
            outcomes[i] = dataclasses.replace(log.done[key], params=dict(points[i].params))

    todo = []
    for key in by_key:
        if key in log.done:
            read_back(key)
        else:
            todo.append(key)
    computed: set[int] = set()
    def done(i, outcome):
        log.write(outcome)
        for j in by_key[_key(points[i].params)]:
            outcomes[j] = outcome if j == i else dataclasses.replace(outcome, params=dict(points[j].params))
            computed.add(j)

    try:
        while todo:
            if scheduler is None:  # one run claimed at a time: sweeps sharing the log take turns
                held: list[str] = []

                def claimed(keys=todo, held=held):
                    for key in keys:
                        mine, other = log.claim([key])
                        if mine:
                            yield by_key[key][0]
                        elif other:
                            held.append(key)
                        else:  # finished by another sweep meanwhile
                            read_back(key)

                for i in report(claimed(), total=len(todo), desc=desc, quiet=not progress,
                                label=lambda i: _describe(points[i].params)):
                    done(i, _run_point(run, points[i].params))
            else:  # every run claimed, then submitted
                mine, held = log.claim(todo)
                for key in set(todo) - set(mine) - set(held):  # finished by another sweep meanwhile
                    read_back(key)
                ids = [by_key[key][0] for key in mine]
                if ids:
                    _dask_compute(run, [points[i] for i in ids], ids, scheduler, progress, done)
            todo = log.wait(held, desc, progress) if held else []
            for key in held:
                if key in log.done and key not in todo:
                    read_back(key)
    finally:
        log.release_all()
    return [outcomes[i] for i in range(len(points))], len(points) - len(computed)


def sweep(run: Callable[..., CheckResult], grid: Mapping[str, Sequence], *, repeats: int = 1, seed: int = 0,
          scheduler: str | None = None, progress: bool = False, jsonl=None) -> SweepResult:
    """Run ``run(**point)`` for every point of the grid; serial, or on Dask when ``scheduler`` is set.

    Parameters
    ----------
    run : callable
        A check's public ``run`` (``verify.<name>.run``: keyword-only, returns a CheckResult).
    grid : mapping
        Parameter name of ``run`` -> the values to sweep (typed as ``run`` takes them).
    repeats : int
        Runs per grid point, each with its own child seed (>= 1). With 2 or more, a point whose
        first two repeats give identical records is deterministic there: it is shown once and its
        other repeats are skipped.
    seed : int
        Root seed of the child seeds (>= 0).
    scheduler : str or dask.distributed.Client, optional
        ``None`` for a serial loop (or the cluster of an enclosing ``spectral.distributed.use_client``);
        ``"threads"``, ``"processes"`` or ``"synchronous"`` for a local Dask scheduler; a Dask scheduler
        address (``tcp://host:8786``), ``local[:N]`` (N worker processes here) or a client for a cluster,
        where each run is one task: a worker that dies is replaced and its unfinished runs rerun, finished
        runs are kept.
    progress : bool
        Report completed points on stderr (serial) or show Dask's progress bar.
    jsonl : str or path, optional
        Run log: every finished run is appended as one JSON line the moment it finishes, and runs
        already in the file (from an interrupted sweep of the same check) are read back, not rerun.
        Sweeps started on the same log divide the runs: each claims a run before it computes it
        (``PATH.claims/``, ``PATH.lock``; :mod:`verify.core.locks` states the guarantees) and waits for
        the runs another sweep holds.

    Returns
    -------
    SweepResult
        Every point's parameters and result, with the grid, the root seed and the provenance.

    Raises
    ------
    InputError
        An unknown grid parameter (the message lists the valid ones), a bad grid, a point whose
        values the check refuses, or a ``jsonl`` file that is not a run log of this check.
    UnavailableError
        ``scheduler`` given without Dask installed, or a cluster that cannot be reached.
    """
    _check_grid_names(run, grid)
    if scheduler is None:  # the cluster of an enclosing spectral.distributed.use_client, if any
        scheduler = client_for_items()
    if isinstance(scheduler, str) and scheduler not in LOCAL_SCHEDULERS and not _ADDRESS.match(scheduler):
        raise InputError(f"scheduler must be one of {', '.join(LOCAL_SCHEDULERS)}, local[:N] or a scheduler address "
                         f"such as tcp://host:8786, got {scheduler!r}")
    if scheduler is not None and not isinstance(scheduler, str) and not callable(getattr(scheduler, "submit", None)):
        raise InputError(f"scheduler must be a name, an address or a dask.distributed.Client, got "
                         f"{type(scheduler).__name__}")
    points = sweep_points(grid, repeats=repeats, seed=seed)
    _validate_points(run, grid, points)
    name = _check_name(run)
    log = _RunLog(jsonl, name, seed)
    desc = f"sweep {name}"
    if isinstance(scheduler, str) and scheduler not in LOCAL_SCHEDULERS:  # one connection for the whole sweep
        client, close = check_scheduler(scheduler)
        try:
            return _sweep(run, grid, points, log, client, progress, desc, name, repeats, seed)
        finally:
            close()
    return _sweep(run, grid, points, log, scheduler, progress, desc, name, repeats, seed)


def _sweep(run, grid, points, log, scheduler, progress, desc, name, repeats, seed) -> SweepResult:
    # First the first two repeats of every point; the rest only where those two differ.
    first = [p for p in points if p.repeat < 2]
    outcomes, resumed = _execute(run, first, log, scheduler, progress, desc)
    by_point: dict[int, list[PointResult]] = {}
    for point, outcome in zip(first, outcomes):
        by_point.setdefault(point.index, []).append(outcome)
    rest = [p for p in points if p.repeat >= 2 and not _pair_identical(by_point[p.index])]
    more, resumed_more = _execute(run, rest, log, scheduler, progress, desc)
    for point, outcome in zip(rest, more):
        by_point[point.index].append(outcome)
    rows: list[PointResult] = []
    for index in sorted(by_point):
        runs = by_point[index]
        if _pair_identical(runs):
            rows.append(dataclasses.replace(runs[0], identical_seeds=(int(runs[1].params["seed"]),),
                                            skipped=repeats - 2))
        else:
            rows += runs
    check = next((o.result.check for o in rows if o.result is not None), name)
    return SweepResult(check=check, grid={k: tuple(v) for k, v in grid.items()}, repeats=repeats, seed=seed,
                       points=tuple(rows), versions=versions(), resumed=resumed + resumed_more)


def _pair_identical(runs: list[PointResult]) -> bool:
    return len(runs) >= 2 and _identical(runs[0], runs[1])


def _dask_compute(run, points, ids, scheduler, progress, on_done) -> None:
    """Compute the runs on Dask, calling ``on_done(id, outcome)`` in this process as each one finishes.

    On a cluster (an address, ``local[:N]`` or a client) each run is one task; a finished run's result is
    gathered and its future released at once, so a worker that dies later costs no finished run (Dask's
    scheduler reruns the tasks the dead worker held, on the other workers or its replacement).
    """
    try:
        import dask
    except ImportError:
        raise UnavailableError("scheduler needs Dask: pip install 'attention-limits[dask]'") from None
    if scheduler in LOCAL_SCHEDULERS:
        tasks = [dask.delayed(_run_point, pure=False)(run, point.params) for point in points]
        _local_compute(tasks, ids, scheduler, progress, on_done)
        return
    try:
        import dask.distributed  # noqa: F401  lazy: optional extra
    except ImportError:
        raise UnavailableError("a scheduler address needs dask.distributed: pip install "
                               "'attention-limits[dask]'") from None

    client = scheduler  # a client: sweep() connected to an address already
    token = f"sweep-{time.time_ns()}"
    futures = {client.submit(_run_point_quietly, run, point.params, key=f"{token}-{i}", pure=False): i
               for i, point in zip(ids, points)}
    params = {i: points[ids.index(i)].params for i in futures.values()}
    gather_as_completed(futures, on_done, desc="sweep on dask", quiet=not progress,
                        label=lambda i: _describe(params[i]))


def _run_point_quietly(run, params) -> PointResult:
    """:func:`_run_point` on a worker: no progress lines there."""
    with silenced(True):
        return _run_point(run, params)


def _local_compute(tasks, ids, scheduler, progress, on_done) -> None:
    """A local Dask scheduler; its callbacks run in this process, so each run is logged as it finishes."""
    import dask
    from dask.callbacks import Callback

    keys = {task.key: i for task, i in zip(tasks, ids)}

    class Finished(Callback):
        def _posttask(self, key, result, dsk, state, worker_id):  # dask's callback signature
            if key in keys:
                on_done(keys[key], result)

    with contextlib.ExitStack() as stack:
        stack.enter_context(Finished())
        if progress:
            from dask.diagnostics import ProgressBar

            stack.enter_context(ProgressBar(out=sys.stderr))
        dask.compute(*tasks, scheduler=scheduler)


def parse_grid(items: Sequence[str], run: Callable) -> dict[str, list]:
    """``["alpha=1.0,1.2", "n=1e3"]`` -> ``{"alpha": [1.0, 1.2], "n": [1000]}``, typed like ``run``'s CLI.

    Each value is read by the check's own command-line parser (same types, choices and
    ``none``/``auto`` for automatic values). Points of a tuple-valued parameter are separated by
    ``;``, those of any other parameter by ``,``.
    """
    check = getattr(run, "__check__", None)
    if check is None:
        raise InputError("parse_grid reads values with a declared check's parser: give a check's run "
                         "(verify.<name>.run)")
    grid: dict[str, list] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name or not text.strip():
            raise InputError(f"--grid takes NAME=V1,V2,..., got {item!r}")
        _check_grid_names(run, {name: ()})
        if name in grid:
            raise InputError(f"--grid {name} given twice; list all its values in one --grid")
        tuple_valued = check.specs()[name].kind in ("ints", "floats", "strs")
        parts = [p.strip() for p in text.split(";" if tuple_valued else ",")]
        if not all(parts):
            raise InputError(f"--grid {name}: empty value in {text!r}")
        parser = build_check_parser(check, prog="python -m verify.sweep")
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
    prog = "python -m verify.sweep"
    parser = OneLineParser(prog=prog, description=__doc__.strip().split("\n\n")[0],
                           epilog="example: python -m verify.sweep appendix_c --grid c=1,2 "
                                  "--grid claim=corrected,printed --repeats 2 --jsonl runs.jsonl")
    parser.add_argument("check", help="check name (python -m verify lists them)")
    parser.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2",
                        help="a swept parameter and its values (repeat for a Cartesian product; ';' separates the "
                             "points of a tuple-valued parameter)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs per grid point, each with its own child seed; where the first two give identical "
                             "records the check is deterministic there: shown once, the other repeats skipped "
                             "(default: 1)")
    parser.add_argument("--seed", type=int, default=0, help="root seed of the child seeds (default: 0)")
    parser.add_argument("--scheduler", default=None,
                        help="Dask scheduler address (tcp://host:8786), local[:N] (N worker processes here), or "
                             "threads, processes, synchronous (default: a serial loop, no Dask)")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="write the sweep (grid, seeds, provenance, each point's parameters, verdict and deciding "
                             "records) as JSON to PATH")
    parser.add_argument("--jsonl", metavar="PATH", default=None,
                        help="run log: append every finished run to PATH as one JSON line; rerunning the same command "
                             "skips the runs already in PATH (resume an interrupted sweep); sweeps started on one PATH "
                             "divide the runs (claims in PATH.claims/)")
    parser.add_argument("--quiet", action="store_true", help="print only the final summary line")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        check_output_path("--json", ns.json)
        check_output_path("--jsonl", ns.jsonl)
        try:
            run = load_check(ns.check).run
        except ValueError as exc:
            raise InputError(str(exc)) from None
        grid = parse_grid(ns.grid, run)
        result = sweep(run, grid, repeats=ns.repeats, seed=ns.seed, scheduler=ns.scheduler,
                       progress=not ns.quiet, jsonl=ns.jsonl)
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
