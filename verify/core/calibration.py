"""Tolerances as data: each one once, with its value, its reason and where it was calibrated.

A check keeps its measured tolerances in one table at the top of its module::

    CALIBRATION = Calibration(
        Tolerance("slope_gap", 0.02, setting={"manifold": "circle", "points": "grid"},
                  measured=0.0009, over=({"alpha": (1.0, 1.2, 1.5, 1.8, 2.0)},), valid={"n": (1000, None)},
                  why="grid discretisation of the slope; kernel alpha 1.25 claimed as 1.2 gives 0.037"),
        ...
    )

and asserts with it (``rec.at_most("slope_gap", q.slope_gap, CALIBRATION.get("slope_gap", p))``).
A row says

* ``name``: the record it decides, or a pattern with ``*`` for a family of records named after a
  parameter (``"tail_error_a*"``; a row named exactly wins);
* ``value``: the tolerance (a bound for ``at_most``/``at_least``, the absolute tolerance of ``close``,
  or its relative tolerance with ``rtol=``; an interval ``(lo, hi)`` for ``within``);
* ``why``: where it comes from (the margin over what was measured, what a wrong input gives);
* ``setting``: the parameter values the row applies to (the most specific matching row wins);
* ``measured``: the worst value of the statistic seen when it was calibrated;
* ``over``: the grids of parameter values (seeds included) it was calibrated over, which
  ``python -m verify.calibrate CHECK`` measures again to report drift;
* ``valid``: the range of the parameters it is known to hold in (``(lo, hi)`` with numbers or None
  is an interval; a list, set or other tuple lists the allowed values). A run outside it still asserts the
  tolerance, says so in a note, and a failure names the range and how to calibrate the new setting;
* ``cpu``: the CPU class ``measured`` was measured on (:mod:`verify.core.cpu`): ``"x86-64 AVX-512"`` (the
  default, :data:`verify.core.cpu.REFERENCE`) or ``"x86-64 AVX2"``, or both (``cpu=(AVX512, AVX2)``,
  ``measured`` then the worst of them). Rounding differs between the classes; a tolerance must hold on both
  (tests/verify/test_cpu_class.py runs the deciding checks with this machine limited to AVX2).

Tolerances that are not measured (exact algebra at a few eps, bounds computed from theory in the
check) stay next to their assertion with their reason: only measured numbers live here.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from verify.core.cpu import REFERENCE

__all__ = ["Tolerance", "Calibration", "grid_points", "statistic"]


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _values_text(values) -> str:
    values = tuple(values)
    if len(values) > 3 and all(isinstance(v, int) for v in values) and values == tuple(
            range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(_fmt(v) for v in values)


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """One calibrated tolerance (see the module docstring for the fields)."""

    name: str
    value: float
    why: str
    setting: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    measured: Any = None
    over: tuple[Mapping[str, Sequence], ...] = ()
    valid: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    cpu: str | tuple[str, ...] = REFERENCE

    def __post_init__(self):
        if not self.why.strip():
            raise ValueError(f"tolerance {self.name!r} needs its reason (why=...)")
        cpu = (self.cpu,) if isinstance(self.cpu, str) else tuple(self.cpu)
        if not cpu or not all(isinstance(c, str) and c.strip() for c in cpu):
            raise ValueError(f"tolerance {self.name!r}: cpu must name the CPU class(es) it was measured on, got "
                             f"{self.cpu!r}")
        object.__setattr__(self, "cpu", cpu[0] if len(cpu) == 1 else cpu)
        if isinstance(self.over, Mapping):
            object.__setattr__(self, "over", (self.over,))
        object.__setattr__(self, "over", tuple({k: tuple(v) for k, v in g.items()} for g in self.over))
        values = self.value if isinstance(self.value, tuple) else (self.value,)
        if not (len(values) in (1, 2) and all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)):
            raise ValueError(f"tolerance {self.name!r}: value must be a finite number, or an interval (lo, hi) for "
                             f"within(), got {self.value!r}")

    def names(self, record: str) -> bool:
        """Whether this row decides record ``record``: its name, or a pattern with ``*`` matching it."""
        return self.name == record or ("*" in self.name and fnmatch.fnmatchcase(record, self.name))

    def matches(self, params) -> bool:
        """Whether ``params`` (a Params object or a mapping) has this row's setting."""
        return all(_get(params, k) == v for k, v in self.setting.items())

    @property
    def cpu_text(self) -> str:
        """The CPU class(es) it was measured on, in words: ``x86-64 AVX-512 and x86-64 AVX2``."""
        return self.cpu if isinstance(self.cpu, str) else " and ".join(self.cpu)

    def calibrated_text(self) -> str:
        """Where it was calibrated, in words: ``measured 0.0009 on x86-64 AVX-512 over alpha in {1, 1.2}``."""
        parts = []
        if self.measured is not None:
            parts.append((f"measured {_fmt(self.measured)}" if not isinstance(self.measured, tuple)
                          else f"measured in [{_fmt(self.measured[0])}, {_fmt(self.measured[1])}]")
                         + f" on {self.cpu_text}")
        grids = ["; ".join(f"{k} in {{{_values_text(v)}}}" for k, v in g.items()) for g in self.over]
        if grids:
            parts.append("over " + " and ".join(grids))
        if self.setting:
            parts.append("at " + ", ".join(f"{k}={_fmt(v)}" for k, v in self.setting.items()))
        return ", ".join(parts)

    def valid_text(self) -> str:
        parts = []
        for k, rng in self.valid.items():
            if _is_interval(rng):
                lo, hi = rng
                if lo is not None and hi is not None:
                    parts.append(f"{_fmt(lo)} <= {k} <= {_fmt(hi)}")
                elif lo is not None:
                    parts.append(f"{k} >= {_fmt(lo)}")
                elif hi is not None:
                    parts.append(f"{k} <= {_fmt(hi)}")
            else:
                parts.append(f"{k} in {{{_values_text(rng)}}}")
        return ", ".join(parts)

    def outside(self, params) -> list[str]:
        """The parameters of ``params`` outside :attr:`valid`, as ``"n = 600"`` phrases."""
        out = []
        for k, rng in self.valid.items():
            v = _get(params, k)
            if v is None:
                continue
            if _is_interval(rng):
                lo, hi = rng
                if (lo is not None and v < lo) or (hi is not None and v > hi):
                    out.append(f"{k} = {_fmt(v)}")
            elif v not in tuple(rng):
                out.append(f"{k} = {_fmt(v)}")
        return out

    def reason(self) -> str:
        """The record's ``why``: the reason and where the number was calibrated."""
        where = self.calibrated_text()
        return f"{self.why} [{where}]" if where else self.why

    def hint(self, params, check: str = "") -> str:
        """For a run outside :attr:`valid`: the range it was calibrated for and how to calibrate the new one."""
        outside = self.outside(params)
        if not outside:
            return ""
        cmd = f"python -m verify.calibrate {check}" if check else "python -m verify.calibrate"
        # the row's own setting first (it picks the row), then the values outside its range
        sets = " ".join([f"--set {k}={_fmt(v)}" for k, v in self.setting.items()]
                        + [f"--set {o.replace(' = ', '=')}" for o in outside])
        return (f"tolerance of {self.name} calibrated for {self.valid_text()}; this run has {', '.join(outside)}: "
                f"outside the calibrated range (stay inside it, or measure this setting with {cmd} {sets})")


def _is_interval(rng) -> bool:
    """``(lo, hi)`` with numbers or None is an interval; any other collection lists the allowed values."""
    return (isinstance(rng, tuple) and len(rng) == 2
            and all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in rng))


def _get(params, key):
    if isinstance(params, Mapping):
        return params.get(key)
    return getattr(params, key, None)


class Calibration:
    """The calibrated tolerances of one check, looked up by name and setting."""

    def __init__(self, *rows: Tolerance):
        self.rows = tuple(rows)
        seen = set()
        for row in self.rows:
            key = (row.name, tuple(sorted(row.setting.items())))
            if key in seen:
                raise ValueError(f"tolerance {row.name!r} is declared twice for setting {dict(row.setting)}")
            seen.add(key)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.name for r in self.rows))

    def get(self, name: str, params=None) -> Tolerance:
        """The row deciding record ``name`` whose setting matches ``params`` (the most specific one).

        A row named exactly ``name`` wins over a pattern row (``"tail_error_a*"``); the row returned
        carries the record's name.
        """
        rows = [r for r in self.rows if r.name == name and (params is None or r.matches(params))]
        if not rows:
            rows = [dataclasses.replace(r, name=name) for r in self.rows
                    if r.names(name) and (params is None or r.matches(params))]
        if params is None:
            rows = [r for r in rows if not r.setting] or rows
        if not rows:
            known = sorted({r.name for r in self.rows})
            raise KeyError(f"no calibrated tolerance {name!r} for this setting; the table has: {', '.join(known)}")
        return max(rows, key=lambda r: len(r.setting))

    def __getitem__(self, name: str) -> Tolerance:
        return self.get(name)

    def borrow(self, name: str, params=None, *families: str, at: float | None = None) -> Tolerance:
        """The row of record ``name``, or for a record off the calibrated grid the row of a calibrated relative.

        Records of one family are named after a parameter (``"tail_exponent_a1.2"``: family
        ``"tail_exponent_a"``). A run at a value that was not calibrated (``alpha = 1.3``) takes the
        row of a relative: with ``at`` (the run's value), the row whose name ends in the next
        calibrated value at or above it (the largest when none is); without, the first row of the
        first family that applies to ``params``. The row comes back under ``name``, with no recorded
        ``measured`` and no grid, and its reason says whose row it is.
        """
        try:
            return self.get(name, params)
        except KeyError:
            pass
        for family in families:
            rows = [r for r in self.rows if r.name.startswith(family) and (params is None or r.matches(params))]
            if not rows:
                continue
            if at is not None:
                rows.sort(key=lambda r: float(r.name[len(family):]))
                row = next((r for r in rows if float(r.name[len(family):]) >= at), rows[-1])
            else:
                row = rows[0]
            return dataclasses.replace(row, name=name, measured=None, over=(),
                                       why=f"{row.why} [the row of {row.name}: {name} was not calibrated]")
        known = ", ".join(families) or "none given"
        raise KeyError(f"no calibrated tolerance {name!r} and no row of the families {known} for this setting")


def grid_points(row: Tolerance) -> list[dict]:
    """Every parameter point of ``row``'s calibration grids (cartesian product of each grid), with its setting."""
    points = []
    for grid in row.over or ({},):
        keys = list(grid)
        for values in itertools.product(*(grid[k] for k in keys)):
            point = dict(row.setting)
            point.update(dict(zip(keys, values)))
            if point not in points:
                points.append(point)
    return points


def statistic(record) -> float | None:
    """The number a tolerance bounds for ``record``.

    ``close``: ``|measured - expected|``, or ``|measured - expected| / |expected|`` when the record's
    tolerance is relative only (``rtol`` given, ``atol`` 0); otherwise the measured value.
    """
    m = record.measured
    if not isinstance(m, (int, float)) or isinstance(m, bool):
        return None
    if record.sense == "close":
        gap = abs(m - record.expected)
        if record.rtol and not record.atol and record.expected:
            return gap / abs(record.expected)
        return gap
    return float(m)
