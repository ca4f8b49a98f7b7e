"""What a check returns: typed assertion records, the recorder that makes them, and the result.

A check states each assertion once, next to the rationale of its tolerance::

    rec = Recorder()
    rec.close("slope_gap", slope, slope_ref, atol=0.02,
              why="grid discretisation <= 1e-3 in slope (measured 0.0009 over alpha 1..2)")
    rec.at_most("shape_error", shape, 0.01, why="measured <= 0.0017 at the defaults")
    rec.info("naive_slope_j", naive)          # shown apart, never decides
    return rec.finish("lambda_k follows the continuum spectrum of the same kernel")

Every :class:`Record` holds the name, the measured value, the expected value or bound, the
tolerance, the sense of the comparison and the one-line rationale; :attr:`CheckResult.passed` is
derived from the records, and the table, the JSON, sweeps and figures read the records.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from verify.core import claims, quantities
from verify.core.calibration import Tolerance
from verify.core.plain import jsonable, unjson
from verify.core.quantities import to_plain
from verify.core.registry import registered

__all__ = ["Record", "Recorder", "Findings", "CheckResult", "SENSES", "format_value", "jsonable", "timed_into",
           "write_json"]

#: How a record compares its measured value: ``close`` |m - e| <= atol + rtol |e|; ``at_most``
#: m <= bound; ``at_least`` m >= bound; ``within`` lo <= m <= hi; ``equal`` m == e exactly;
#: ``info`` no comparison (informational, never decides).
SENSES = ("close", "at_most", "at_least", "within", "equal", "info")


def format_value(value: Any) -> str:
    """Short human form of a number, tuple or string for tables."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v == 0 or not math.isfinite(v):
            return repr(v)
        return f"{v:.4g}" if 1e-3 <= abs(v) < 1e5 else f"{v:.3e}"
    if isinstance(value, complex):
        return f"{value.real:.4g}{value.imag:+.4g}j"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(format_value(v) for v in value) + ")"
    return str(value)


def _scalar(value: Any) -> Any:
    """numpy scalars -> Python scalars; arrays refused (records hold one number each)."""
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return value.item()
        raise TypeError("a record holds one value; reduce arrays to a statistic (e.g. the max error) first")
    if isinstance(value, np.generic):
        return value.item()
    return value


@contextmanager
def timed_into(timings: dict[str, float], phase: str):
    """Add the wall-clock seconds of the ``with`` block to ``timings[phase]`` (a check's phases:
    :meth:`Recorder.timed`, :meth:`verify.core.check.Context.timed`)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[phase] = timings.get(phase, 0.0) + time.perf_counter() - t0


def write_json(data, path=None, *, indent: int | None = 2) -> str:
    """JSON text of ``data``; also written to ``path`` (with a final newline) when given."""
    text = json.dumps(data, indent=indent)
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return text


@dataclasses.dataclass(frozen=True)
class Record:
    """One named quantity of a check and, unless informational, the assertion made on it.

    Attributes
    ----------
    name : str
        Identifier of the quantity (``"slope_gap"``).
    measured : float, int, bool or str
        The value the check computed.
    sense : str
        One of :data:`SENSES`.
    expected : object, optional
        Reference value (``close``, ``equal``); ``None`` for bounds.
    tolerance : object, optional
        ``close``: the absolute tolerance ``atol + rtol |expected|``; ``at_most`` / ``at_least``:
        the bound; ``within``: the interval ``(lo, hi)``; ``equal``: 0.
    rtol, atol : float
        The relative and absolute parts of a ``close`` tolerance.
    why : str
        One line: where the tolerance comes from (measured, bound, dtype).
    label : str
        What the assertion means, used in the failure message (``"FNA-16 entropy"``).
    hint : str
        Appended to the failure message: what to change when it fails for a known reason.
    """

    name: str
    measured: Any
    sense: str = "info"
    expected: Any = None
    tolerance: Any = None
    rtol: float = 0.0
    atol: float = 0.0
    why: str = ""
    label: str = ""
    hint: str = ""

    def __post_init__(self):
        if self.sense not in SENSES:
            raise ValueError(f"sense must be one of {SENSES}, got {self.sense!r}")

    @property
    def deciding(self) -> bool:
        """Whether this record is an assertion (every sense but ``info``)."""
        return self.sense != "info"

    @property
    def passed(self) -> bool | None:
        """Outcome of the assertion (``None`` for informational records).

        A non-finite measured value (NaN, +-inf) never passes, whatever the sense: an overflow is not
        "at least" a bound and a NaN compares false everywhere.
        """
        m = self.measured
        try:
            if self.sense == "info":
                return None
            if isinstance(m, (float, complex)) and not math.isfinite(abs(m)):
                return False
            if self._vacuous():
                return False
            if self.sense == "equal":
                return bool(m == self.expected)
            if self.sense == "close":
                return bool(abs(m - self.expected) <= self.tolerance)
            if self.sense == "at_most":
                return bool(m <= self.tolerance)
            if self.sense == "at_least":
                return bool(m >= self.tolerance)
            lo, hi = self.tolerance
            return bool(lo <= m <= hi)
        except TypeError:
            return False

    def _vacuous(self) -> bool:
        """Whether the reference makes the assertion pass whatever was measured (an overflowed bound).

        A tolerance, expected value or bound that is NaN or infinite in the direction that admits
        everything (``<= inf``, ``>= -inf``, ``+- inf``, ``in [-inf, inf]``) is a deciding number that
        is not finite: it never passes, like a non-finite measured value.
        """
        def bad(v, sign=0):
            return isinstance(v, float) and (math.isnan(v) or (math.isinf(v) and (sign == 0 or v * sign > 0)))

        if self.sense == "close":
            return bad(self.expected) or bad(self.tolerance)
        if self.sense == "at_most":
            return bad(self.tolerance, +1)
        if self.sense == "at_least":
            return bad(self.tolerance, -1)
        if self.sense == "within":
            try:
                lo, hi = self.tolerance
            except (TypeError, ValueError):
                return False
            return (isinstance(lo, float) and math.isnan(lo)) or (isinstance(hi, float) and math.isnan(hi)) or \
                (bad(lo, -1) and bad(hi, +1))
        return False

    def expectation(self) -> str:
        """The expectation in words: ``1.2 +- 0.02``, ``<= 0.01``, ``in [0.9, 1.1]``, ``== 3``."""
        if self.sense == "close":
            return f"{format_value(self.expected)} +- {format_value(self.tolerance)}"
        if self.sense == "at_most":
            return f"<= {format_value(self.tolerance)}"
        if self.sense == "at_least":
            return f">= {format_value(self.tolerance)}"
        if self.sense == "within":
            lo, hi = self.tolerance
            return f"in [{format_value(lo)}, {format_value(hi)}]"
        if self.sense == "equal":
            return f"== {format_value(self.expected)}"
        return ""

    def failure(self) -> str:
        """One line saying what failed (empty when the record passed or is informational)."""
        if self.passed in (None, True):
            return ""
        head = f"{self.label}: " if self.label else ""
        if self.sense == "equal" and isinstance(self.expected, bool) and self.label:
            text = self.label
        else:
            text = f"{head}{self.name} = {format_value(self.measured)}, expected {self.expectation()}"
        return f"{text} [{self.hint}]" if self.hint else text

    def to_dict(self) -> dict:
        out = {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        out["passed"] = self.passed
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> Record:
        data = {k: unjson(v) for k, v in data.items() if k != "passed"}
        if data.get("sense") == "within" and data.get("tolerance") is not None:
            data["tolerance"] = tuple(data["tolerance"])
        if isinstance(data.get("measured"), list):  # a tuple of numbers (an interval, local orders)
            data["measured"] = tuple(data["measured"])
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class Findings:
    """What a check's body hands back: the statement and what the recorder collected."""

    statement: str
    records: tuple[Record, ...]
    arrays: Mapping[str, Any]
    timings: Mapping[str, float]
    notes: tuple[str, ...]
    resolved: Mapping[str, Any]
    #: the user's code the run held to the check's contract (``package.module:function``), "" otherwise
    implementation: str = ""


class Recorder:
    """Collects the assertions, informational values, arrays, notes and timings of one check run.

    Each assertion method takes the name, the measured value, the reference, and ``why``: the
    one-line origin of its tolerance, written once, next to the number. ``label`` says what the
    assertion means in a failure message and ``hint`` what to try when it fails for a known
    reason (e.g. an unresolved grid).
    """

    def __init__(self, params=None, check: str = "") -> None:
        self.params = params
        self.check = check
        self._records: dict[str, Record] = {}
        self.arrays: dict[str, Any] = {}
        self.timings: dict[str, float] = {}
        self.notes: list[str] = []
        self.resolved: dict[str, Any] = {}
        self.implementation = ""

    # -- assertions ---------------------------------------------------------------------------
    def _add(self, record: Record) -> Record:
        if record.name in self._records:
            raise ValueError(f"record {record.name!r} was already made in this check")
        self._records[record.name] = record
        return record

    def _tolerance(self, name, value, why, hint):
        """A number, or a calibrated :class:`~verify.core.calibration.Tolerance`: (value, why, hint)."""
        if isinstance(value, Tolerance):
            if not value.names(name):
                raise ValueError(f"record {name!r} asserted with the tolerance of {value.name!r}")
            extra = value.hint(self.params, self.check) if self.params is not None else ""
            if extra:
                self.note(extra)
            return value.value, (why or value.reason()), "; ".join(h for h in (hint, extra) if h)
        if not why:
            raise ValueError(f"record {name!r}: say where its tolerance comes from (why=...)")
        return value, why, hint

    def close(self, name, measured, expected, *, rtol=0.0, atol=0.0, why="", label="", hint="") -> Record:
        """Assert ``|measured - expected| <= atol + rtol |expected|`` (either may be a calibrated Tolerance)."""
        if isinstance(rtol, Tolerance):
            rtol, why, hint = self._tolerance(name, rtol, why, hint)
        else:
            atol, why, hint = self._tolerance(name, atol, why, hint) if (atol or why) else (atol, why, hint)
        if not why:
            raise ValueError(f"record {name!r}: say where its tolerance comes from (why=...)")
        if not (rtol > 0 or atol > 0):
            raise ValueError("close() needs rtol > 0 or atol > 0 (use equal() for exact values)")
        expected = _scalar(expected)
        tol = float(atol) + float(rtol) * abs(expected)
        return self._add(Record(name, _scalar(measured), "close", expected, tol, float(rtol), float(atol),
                                why, label, hint))

    def at_most(self, name, measured, bound, *, why="", label="", hint="") -> Record:
        """Assert ``measured <= bound`` (``bound`` may be a calibrated Tolerance)."""
        bound, why, hint = self._tolerance(name, bound, why, hint)
        return self._add(Record(name, _scalar(measured), "at_most", None, _scalar(bound), why=why, label=label,
                                hint=hint))

    def at_least(self, name, measured, bound, *, why="", label="", hint="") -> Record:
        """Assert ``measured >= bound`` (``bound`` may be a calibrated Tolerance)."""
        bound, why, hint = self._tolerance(name, bound, why, hint)
        return self._add(Record(name, _scalar(measured), "at_least", None, _scalar(bound), why=why, label=label,
                                hint=hint))

    def within(self, name, measured, interval, *, why="", label="", hint="") -> Record:
        """Assert ``lo <= measured <= hi`` for ``interval = (lo, hi)`` (or a calibrated Tolerance holding it)."""
        interval, why, hint = self._tolerance(name, interval, why, hint)
        lo, hi = interval
        return self._add(Record(name, _scalar(measured), "within", None, (_scalar(lo), _scalar(hi)), why=why,
                                label=label, hint=hint))

    def equal(self, name, measured, expected, *, why, label="", hint="") -> Record:
        """Assert ``measured == expected`` exactly (integers, booleans, strings)."""
        return self._add(Record(name, _scalar(measured), "equal", _scalar(expected), 0, why=why, label=label,
                                hint=hint))

    def holds(self, name, condition, *, why, label, hint="") -> Record:
        """Assert that a condition is true; ``label`` is the failure message when it is not."""
        return self.equal(name, bool(condition), True, why=why, label=label, hint=hint)

    def info(self, name, value) -> Record:
        """Record an informational value (shown apart; never decides the verdict)."""
        return self._add(Record(name, _scalar(value)))

    # -- the rest of the result ----------------------------------------------------------------
    def array(self, name, value) -> None:
        """Keep an array for figures (in the JSON, not in the table)."""
        self.arrays[name] = value

    def note(self, text: str) -> None:
        """A sentence the reader needs (e.g. ``"diagonal self-score dropped"``)."""
        if text not in self.notes:
            self.notes.append(text)

    def resolve(self, name: str, value) -> None:
        """Record the value a parameter given as ``None`` (automatic) resolved to."""
        self.resolved[name] = value

    def contract_of(self, implementation: str) -> None:
        """This run holds the user's code ``implementation`` (``package.module:function``) to the check's contract.

        Its final line then states the contract's verdict on that code
        (``[contract on mymod:f: holds]``) instead of the ledger's verdict on the paper, which a
        third party's implementation says nothing about (see :mod:`verify.core.implementation`).
        """
        self.implementation = str(implementation)

    def timed(self, phase: str):
        """Accumulate the wall-clock seconds of ``phase`` (:func:`timed_into`)."""
        return timed_into(self.timings, phase)

    def __getitem__(self, name: str) -> Record:
        return self._records[name]

    def __contains__(self, name: str) -> bool:
        return name in self._records

    @property
    def records(self) -> tuple[Record, ...]:
        return tuple(self._records.values())

    @property
    def passed(self) -> bool:
        """Whether every assertion made so far held."""
        return all(r.passed is not False for r in self._records.values())

    def finish(self, statement: str) -> Findings:
        """Close the run: the statement tested and everything collected."""
        return Findings(statement, self.records, dict(self.arrays), dict(self.timings), tuple(self.notes),
                        dict(self.resolved), self.implementation)


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """Outcome of one check: the claim, every assertion with its numbers, and whether all held.

    Attributes
    ----------
    check : str
        Name of the check (``"weyl"``).
    claims : tuple of str
        Ledger ids covered (``("FNA-10",)``).
    statement : str
        One sentence: the (corrected, precise) claim that was tested.
    records : tuple of Record
        Every assertion and informational value, in the order the check made them.
    parameters : dict
        Everything needed to rerun the check, seed included (automatic values resolved).
    timings : dict
        Wall-clock seconds per phase.
    versions : dict
        Provenance: toolkit and library versions, git commit when available, time, command line.
    arrays : dict
        Arrays for figures (in the JSON, not in the table).
    notes : tuple of str
        Sentences the reader needs to interpret the numbers.
    implementation : str
        The user's code this run held to the check's contract (``package.module:function``); empty
        for a run of the toolkit's own mechanism. When set, the final line states the contract's
        verdict on that code, not the ledger's verdict on the paper.
    """

    check: str
    claims: tuple[str, ...]
    statement: str
    records: tuple[Record, ...]
    parameters: Mapping[str, Any]
    timings: Mapping[str, float] = dataclasses.field(default_factory=dict)
    versions: Mapping[str, str] = dataclasses.field(default_factory=dict)
    arrays: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    notes: tuple[str, ...] = ()
    quantities: Any = dataclasses.field(default=None, compare=False)
    implementation: str = ""

    # -- derived views ------------------------------------------------------------------------
    @property
    def passed(self) -> bool:
        """True when every deciding record held (derived from :attr:`records`)."""
        return all(r.passed is not False for r in self.records)

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    @property
    def failures(self) -> tuple[str, ...]:
        """One line per failed assertion."""
        return tuple(r.failure() for r in self.records if r.passed is False)

    def record(self, name: str) -> Record:
        """The record called ``name`` (KeyError listing the names otherwise)."""
        for r in self.records:
            if r.name == name:
                return r
        raise KeyError(f"no record {name!r} in {self.check}; records: {', '.join(r.name for r in self.records)}")

    @property
    def measured(self) -> dict[str, Any]:
        """Every record's measured value by name."""
        return {r.name: r.measured for r in self.records}

    @property
    def expected(self) -> dict[str, Any]:
        """Reference value or bound of every deciding record by name."""
        return {r.name: (r.expected if r.expected is not None else r.expectation()) for r in self.records
                if r.deciding}

    @property
    def tolerance(self) -> dict[str, Any]:
        """Tolerance (or bound / interval) of every deciding record by name."""
        return {r.name: r.tolerance for r in self.records if r.deciding}

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain-JSON dictionary: every field plus the derived verdict and failures."""
        out = {
            "check": self.check,
            "claims": list(self.claims),
            "passed": self.passed,
            "statement": self.statement,
            "failures": list(self.failures),
            "records": [r.to_dict() for r in self.records],
            "parameters": jsonable(self.parameters),
            "notes": list(self.notes),
            "timings": jsonable(self.timings),
            "versions": jsonable(self.versions),
            "arrays": jsonable(self.arrays),
        }
        if self.implementation:
            out["implementation"] = self.implementation
        if self.quantities is not None:
            out["quantities"] = to_plain(self.quantities)
        return out

    def to_json(self, path=None, *, indent: int | None = 2) -> str:
        """JSON text of the result; also written to ``path`` when given."""
        return write_json(self.to_dict(), path, indent=indent)

    @classmethod
    def from_json(cls, text_or_path: str) -> CheckResult:
        """Inverse of :meth:`to_json` (accepts JSON text or a file path)."""
        text = text_or_path
        if not text.lstrip().startswith("{"):
            with open(text_or_path, encoding="utf-8") as fh:
                text = fh.read()
        data = json.loads(text)
        quantities = None
        if data.get("quantities") is not None:
            quantities = _read_quantities(data["check"], data["quantities"])
        return cls(
            check=data["check"],
            claims=tuple(data["claims"]),
            statement=data["statement"],
            records=tuple(Record.from_dict(r) for r in data["records"]),
            parameters=unjson(data["parameters"]),
            timings=unjson(data.get("timings", {})),
            versions=data.get("versions", {}),
            arrays={k: np.asarray(unjson(v)) for k, v in data.get("arrays", {}).items()},
            notes=tuple(data.get("notes", ())),
            quantities=quantities,
            implementation=data.get("implementation", ""),
        )

    # -- human output -------------------------------------------------------------------------
    def paper_reading(self) -> str:
        """The ledger's verdict on the paper's claims, read with this run (see :mod:`verify.core.claims`).

        Empty for a run that held a user's implementation to the contract: it says nothing about the paper.
        """
        if self.implementation or not self.claims:  # a user's code or own claim: no paper to read
            return ""
        try:
            return claims.paper_reading(self.claims, printed=self.parameters.get("claim") == "printed")
        except ValueError:  # claims not in the ledger (a user's own check)
            return ""

    def final_line(self) -> str:
        """``PASS <check> [paper: ...]: <statement>`` or ``FAIL <check> [paper: ...]: <what differed>``.

        The bracket is the ledger's verdict on the paper's printed claim, so that a PASS of a check
        that asserts a corrected statement is not read as "the paper is right".
        """
        reading = self.paper_reading()
        if self.implementation:  # a user's code held to the contract: the contract's verdict on it
            reading = f"contract on {self.implementation}: {'holds' if self.passed else 'violated'}"
        tag = f" [{reading}]" if reading else ""
        if self.passed:
            return f"PASS {self.check}{tag}: {self.statement}"
        return f"FAIL {self.check}{tag}: {'; '.join(self.failures)}"

    def summary(self) -> str:
        """Human-readable table: the deciding assertions first, informational values apart."""
        lines = [f"{self.check}  [{', '.join(self.claims)}]" if self.claims else self.check]
        if self.implementation:
            lines.append(f"contract of the user's implementation {self.implementation} (the paper's verdict does "
                         "not apply)")
        deciding = [r for r in self.records if r.deciding]
        info = [r for r in self.records if not r.deciding]
        if deciding:
            rows = [("assertion", "measured", "expected", "ok")]
            rows += [(r.name, format_value(r.measured), r.expectation(), "yes" if r.passed else "NO")
                     for r in deciding]
            lines += _table(rows)
        if info:
            lines.append("informational:")
            lines += _table([("quantity", "value")] + [(r.name, format_value(r.measured)) for r in info])
        for note in self.notes:
            lines.append(f"note: {note}")
        params = ", ".join(f"{k}={format_value(v)}" for k, v in self.parameters.items())
        lines.append(f"parameters: {params}")
        if self.timings:
            lines.append("time: " + ", ".join(f"{k} {v:.3g} s" for k, v in self.timings.items()))
        return "\n".join(lines)

    def __repr__(self) -> str:
        n = sum(r.deciding for r in self.records)
        failed = sum(r.passed is False for r in self.records)
        return (f"CheckResult(check={self.check!r}, verdict={self.verdict}, claims={self.claims}, "
                f"assertions={n}, failed={failed})")


def _read_quantities(check: str, data):
    """The typed quantities of check ``check`` from their JSON (plain data when the check is unknown)."""
    declared = registered(check)
    if declared is None:
        try:
            claims.load_check(check)
        except ValueError:
            return data
        declared = registered(check)
    kind = None if declared is None else declared.quantities_type
    return data if kind is None else quantities.from_plain(kind, data)  # looked up at each call: a test replaces it


def _table(rows) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for j, row in enumerate(rows):
        out.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if j == 0:
            out.append("  " + "  ".join("-" * w for w in widths))
    return out
