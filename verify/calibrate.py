"""Re-measure a check's calibrated tolerances and report drift; measure a new setting.

``python -m verify.calibrate CHECK`` runs the check at every point of the grids each tolerance of
its calibration table (``verify.<check>.CALIBRATION``) was calibrated over, and prints one row per
tolerance: the worst value measured now against the value recorded when it was calibrated, the
tolerance, the margin between them and a status:

* ``ok``: the tolerance still holds everywhere on its grid and the worst value moved by less than
  ``--drift`` (25 % by default) from the recorded one;
* ``drift``: it holds, but the worst value moved by more than that: the recorded number (and
  perhaps the tolerance) is out of date;
* ``EXCEEDS``: the tolerance failed at a point of its own grid: a regression or a tolerance that
  was never right.

``--set NAME=VALUE`` (repeatable) measures another setting instead, over ``--seeds``: each
tolerance that applies there is reported with the worst value measured at that setting, so that
a tolerance for a setting outside the calibrated range is derived from measurement (the report
suggests twice the worst value; whether a wrong input still fails with it is for the check's tests
to show). Each row names the CPU class its recorded value was measured on, and the report names the
class of this machine (:mod:`verify.core.cpu`; a drift between classes is rounding, not a regression, but the
tolerance must still hold). Exit code 0 when nothing exceeds, 1 when a tolerance failed, 2 for bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys

from spectral.floor.validation import InputError
from verify.core import claims
from verify.core.calibration import Calibration, grid_points, statistic
from verify.core.cli import (EXIT_FAIL, EXIT_PASS, USER_ERRORS, OneLineParser, check_output_path, parse_float,
                             parse_int, report_error)
from verify.core.cpu import cpu_class
from verify.core.progress import silenced

__all__ = ["CalibrationRow", "calibrate", "main"]


@dataclasses.dataclass(frozen=True)
class CalibrationRow:
    """The re-measurement of one calibrated tolerance.

    Attributes
    ----------
    name : str
        The record the tolerance decides.
    setting : dict
        The setting of the table row (or the ``--set`` values).
    sense : str
        How the record compares (``at_most``, ``at_least``, ``close``).
    tolerance : float
        The tolerance (bound, or absolute tolerance of ``close``).
    recorded : object
        The worst value recorded when the tolerance was calibrated (None if none was).
    worst : float
        The worst value measured now over the points (max, or min for ``at_least``).
    points : int
        How many parameter points were measured.
    failed : int
        At how many of them the record failed.
    status : str
        ``ok``, ``drift`` or ``EXCEEDS``.
    recorded_on : str
        The CPU class(es) the recorded value was measured on (the row's ``cpu``).
    """

    name: str
    setting: dict
    sense: str
    tolerance: float
    recorded: object
    worst: float
    points: int
    failed: int
    status: str
    recorded_on: str = ""

    @property
    def margin(self) -> float:
        """How far the worst value is from the tolerance (> 1: inside), in the sense of the record."""
        if self.sense == "within":  # distance to the nearer bound over the half-width, plus 1: > 1 inside
            lo, hi = self.tolerance
            half = (hi - lo) / 2 or 1.0
            return 1.0 + min(self.worst - lo, hi - self.worst) / half
        if self.sense == "at_least":
            return self.worst / self.tolerance if self.tolerance else math.inf
        return self.tolerance / self.worst if self.worst else math.inf

    @property
    def drift(self) -> float | None:
        """Relative change of the worst value from the recorded one."""
        if not isinstance(self.recorded, (int, float)) or self.recorded == 0:
            return None
        return (self.worst - self.recorded) / abs(self.recorded)


def _table(module):
    table = getattr(module, "CALIBRATION", None)
    if not isinstance(table, Calibration):
        raise InputError(f"{module.CHECK.name} has no calibration table (verify.{module.CHECK.name}.CALIBRATION)")
    return table


def calibrate(name: str, *, names=None, setting=None, seeds=(0, 1, 2, 3, 4), drift: float = 0.25,
              progress=None) -> list[CalibrationRow]:
    """Re-measure the tolerances of check ``name`` (see the module docstring).

    Parameters
    ----------
    name : str
        The check (``"weyl"``).
    names : sequence of str, optional
        Only these tolerances.
    setting : dict, optional
        Measure this setting (parameter values) over ``seeds`` instead of the calibration grids.
    seeds : sequence of int
        Seeds of a ``setting`` run.
    drift : float
        Relative change of the worst value beyond which a tolerance that holds is reported as drifted.
    progress : callable, optional
        Called with a short text after each measured point.
    """
    module = claims.load_check(name)
    check = module.CHECK
    table = _table(module)
    rows = [r for r in table if names is None or r.name in names]
    if names is not None:
        unknown = sorted(set(names) - {r.name for r in table})
        if unknown:
            raise InputError(f"{name} has no calibrated tolerance {', '.join(unknown)}; it has: "
                             f"{', '.join(table.names())}")
    exact = {r.name for r in table if "*" not in r.name}  # records a pattern row leaves to their own rows
    results = {}

    def measure(point):
        key = tuple(sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in point.items()))
        if key not in results:
            p = check.choose(check.params(**point))
            results[key] = check.assess(check.measure(p), p)
            if progress is not None:
                progress(", ".join(f"{k}={v}" for k, v in point.items()) or "defaults")
        return results[key]

    out = []
    if setting is not None:
        base = check.params(**setting)
        rows = [r for r in rows if r.matches(base)]
        # the most specific row per name applies at this setting
        by_name = {}
        for r in rows:
            if r.name not in by_name or len(r.setting) > len(by_name[r.name].setting):
                by_name[r.name] = r
        for row in by_name.values():
            points = [{**setting, "seed": s} for s in seeds]
            out.append(_row(row, [measure(pt) for pt in points], dict(setting), drift, exact))
        return out
    for row in rows:
        out.append(_row(row, [measure(pt) for pt in grid_points(row)], dict(row.setting), drift, exact))
    return out


def _decided_by(row, res, exact) -> list:
    """The records of ``res`` that ``row`` decides: the one named so, or every record a pattern row matches that no
    exactly named row takes."""
    if "*" not in row.name:
        try:
            return [res.record(row.name)]
        except KeyError:
            return []
    return [r for r in res.records if row.names(r.name) and r.name not in exact]


def _row(row, results, setting, drift_limit, exact=frozenset()) -> CalibrationRow:
    values, failed, sense = [], 0, "at_most"
    for res in results:
        for record in _decided_by(row, res, exact):
            sense = record.sense
            value = statistic(record)
            if value is not None:
                values.append(value)
            failed += record.passed is False
    if not values:
        raise InputError(f"{row.name} is not asserted at the setting {setting or 'defaults'}")
    if any(math.isnan(v) for v in values):  # a NaN is the worst of all (min and max pass over it)
        worst = math.nan
    elif sense == "within":  # the value nearest a bound of the interval
        lo, hi = row.value
        worst = min(values, key=lambda v: min(v - lo, hi - v))
    else:
        worst = min(values) if sense == "at_least" else max(values)
    status = "EXCEEDS" if failed else "ok"
    result = CalibrationRow(row.name, setting, sense, row.value, row.measured, worst, len(results), failed, status,
                            row.cpu_text)
    d = result.drift
    if status == "ok" and d is not None and abs(d) > drift_limit:
        result = dataclasses.replace(result, status="drift")
    return result


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3g}" if math.isfinite(v) else repr(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt(x) for x in v) + ")"
    return str(v)


def _parse_setting(items) -> dict:
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise InputError(f"--set takes NAME=VALUE, got {item!r}")
        value = text
        for parse in (parse_int, parse_float):
            try:
                value = parse(text)
                break
            except (argparse.ArgumentTypeError, ValueError):
                continue
        if isinstance(value, str) and "," in value:
            parts = value.split(",")
            try:
                value = tuple(parse_int(x) for x in parts)
            except argparse.ArgumentTypeError:
                value = tuple(parse_float(x) for x in parts)
        if value in ("true", "false"):
            value = value == "true"
        out[key.replace("-", "_")] = value
    return out


def _parse_seeds(text: str) -> tuple[int, ...]:
    if "-" in text and "," not in text:
        lo, hi = text.split("-")
        return tuple(range(int(lo), int(hi) + 1))
    return tuple(int(s) for s in text.split(","))


def main(argv=None) -> int:
    prog = "python -m verify.calibrate"
    parser = OneLineParser(prog=prog, description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("check", help="the check whose tolerances are re-measured (e.g. weyl)")
    parser.add_argument("--name", action="append", default=None, help="only this tolerance (repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="measure this setting over --seeds instead of the calibration grids (repeatable)")
    parser.add_argument("--seeds", default="0-4", help="seeds of a --set run: 0-4 or 0,3,7 (default: 0-4)")
    parser.add_argument("--drift", type=float, default=0.25,
                        help="relative change of the worst value reported as drift (default: 0.25)")
    parser.add_argument("--json", metavar="PATH", default=None, help="write the rows as JSON to PATH")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)

    try:
        check_output_path("--json", ns.json)
        setting = _parse_setting(ns.set) if ns.set else None
        seeds = _parse_seeds(ns.seeds)
        progress = None if ns.quiet else (lambda text: print(f"  measured {text}", file=sys.stderr, flush=True))
        with silenced(ns.quiet):  # --quiet also silences the checks' own progress
            rows = calibrate(ns.check, names=ns.name, setting=setting, seeds=seeds, drift=ns.drift,
                             progress=progress)
    except ValueError as exc:  # unknown check names come as ValueError from the ledger
        if not isinstance(exc, USER_ERRORS):
            exc = InputError(str(exc))
        return report_error(prog, exc)
    except USER_ERRORS as exc:
        return report_error(prog, exc)

    head = ("tolerance", "setting", "sense", "tolerance value", "recorded", "recorded on", "worst now", "margin",
            "drift", "points", "status")
    lines = [head]
    for r in rows:
        d = r.drift
        lines.append((r.name, ", ".join(f"{k}={_fmt(v)}" for k, v in r.setting.items()) or "defaults", r.sense,
                      _fmt(r.tolerance), _fmt(r.recorded), r.recorded_on, _fmt(r.worst), _fmt(r.margin),
                      "" if d is None else f"{100 * d:+.0f} %", str(r.points), r.status))
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    for j, row in enumerate(lines):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))
    if setting is not None:
        print("suggested tolerances at this setting (twice the worst value; check that wrong inputs still fail): "
              + ", ".join(f"{r.name} {_fmt(2 * r.worst if r.sense != 'at_least' else r.worst / 2)}" for r in rows))
    exceeded = [r for r in rows if r.status == "EXCEEDS"]
    drifted = [r for r in rows if r.status == "drift"]
    print(f"calibration of {ns.check} on {cpu_class()}: {len(rows)} tolerances, {len(exceeded)} exceeded, "
          f"{len(drifted)} drifted")
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump([{**dataclasses.asdict(r), "margin": r.margin, "drift": r.drift} for r in rows], fh, indent=2,
                      default=str)
    return EXIT_FAIL if exceeded else EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main())
