"""Every deciding record can fail: a finite alteration of the quantities makes it fail.

An assertion that no plausible measurement could fail (a bound of "> the smallest float", a
tolerance computed from the very quantity it bounds) decides nothing. :func:`controls` holds a
check to the opposite: it assesses measured quantities, lists the deciding records, and finds for
each one a negative control:

* the run itself, when the record already fails there (the printed claim, ``claim="printed"``,
  fails on the true measurement: that is its control); or
* finite alterations of the quantities under which the record fails (:func:`alterations`: a
  number scaled, shifted, negated or set to 0, a flag flipped, a text changed, an array scaled,
  shifted or reversed, a sequence lengthened or shortened, a part replaced by a sibling part of the
  same type: the corrected run's quantity where the plain one belongs).

The search is made of assessments only, never measurements, in three passes: every quantity
altered at once (scaled by 1.01, 2, 0, -1, ...: most records fail on one of these); then, for the
records left, which quantities they read (a NaN put into a quantity reaches the records that read
it, since a non-finite measured value never passes); then the alterations of one quantity at a
time, those the record reads first. A NaN alone is never a control: it shows that the record reads
the quantity, not that its bound can be crossed by a number.

``verify.testing.assert_every_record_can_fail`` is the assertion on it, and
``tests/verify/test_controls.py`` applies it to every registered check at the small settings its
tests declare with ``verify.testing.measurement_fixture``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

__all__ = ["Control", "Controls", "leaves", "replaced", "alterations", "controls"]

#: Scale factors of a number: the mildest first (a relative tolerance of 1e-12 fails there), then the large
#: ones (a rounding-level value against its bound), then the rest. With :data:`SHIFTS` they cross any finite
#: bound on either side of a finite value.
FACTORS = (1 + 1e-6, 1 - 1e-6, 1e3, 1e6, 1e12, 0.0, -1.0, 1.01, 0.99, 2.0, 0.5, 10.0, 0.1, 1e-3, 1e-6, 1.5, -1e3)
#: Shifts of a number, relative to its size (1 for a zero).
SHIFTS = (1e-9, -1e-9, 1e-6, -1e-6, 1e-3, -1e-3, 0.1, -0.1, 1.0, -1.0, 10.0, -10.0, 1e3, -1e3, 1e6, -1e6, 1e12,
          -1e12, 1e100, -1e100)
#: The alterations of the first pass, applied to every number and numeric array at once (integers stay).
GLOBAL_FACTORS = (1.01, 0.99, 2.0, 0.5, 0.0, -1.0, 10.0, 0.1, 1e3, 1e-3, 1e6)


@dataclasses.dataclass(frozen=True)
class Control:
    """How one deciding record was made to fail.

    Attributes
    ----------
    record : str
        The record's name.
    mode : str
        The ``claim`` of the run (``"corrected"``, ``"printed"``, ...; ``""`` for a check without one).
    path : tuple or None
        The quantity altered: field names, dictionary keys and sequence indices from the top; ``()`` when
        every quantity was altered at once, None when the record fails on the run itself.
    alteration : str
        What was done (``"x 1.01"``, ``"+ 1e-06 |x|"``, ``"flipped"``), or ``"fails as measured"``.
    """

    record: str
    mode: str
    path: tuple | None = None
    alteration: str = "fails as measured"

    def __str__(self) -> str:
        head = f"{self.record} [{self.mode}]" if self.mode else self.record
        if self.path is None:
            return f"{head}: {self.alteration}"
        if not self.path:
            return f"{head}: every quantity {self.alteration}"
        return f"{head}: {path_text(self.path)} {self.alteration}"


def path_text(path: tuple) -> str:
    """``q.fits[1.2].exponent``: a path into the quantities as code reads it."""
    return "q" + "".join(f".{k}" if isinstance(k, str) and k.isidentifier() else f"[{k!r}]" for k in path)


@dataclasses.dataclass(frozen=True)
class Controls:
    """The outcome of :func:`controls`: a control per deciding record, and the records that have none.

    Attributes
    ----------
    check : str
        The check's name.
    found : tuple of Control
        One control per deciding record (per claim mode) that was made to fail.
    unfailed : tuple of str
        ``"record [mode]"`` of each deciding record that no alteration made fail.
    failing_as_measured : tuple of str
        The records that fail on the unaltered quantities in the run that must pass (the first claim mode):
        the small setting does not pass, so the search says nothing about them.
    assessments : int
        How many assessments the search made.
    """

    check: str
    found: tuple[Control, ...]
    unfailed: tuple[str, ...]
    failing_as_measured: tuple[str, ...]
    assessments: int

    @property
    def complete(self) -> bool:
        """Whether every deciding record was shown failing (and the run that must pass passed)."""
        return not self.unfailed and not self.failing_as_measured

    def summary(self) -> str:
        """A few lines: how many records were shown failing, and which were not."""
        lines = [f"{self.check}: {len(self.found)} deciding records shown failing, {len(self.unfailed)} not "
                 f"({self.assessments} assessments)"]
        if self.failing_as_measured:
            lines.append("failing on the unaltered quantities (the small setting must pass): "
                         + ", ".join(self.failing_as_measured))
        if self.unfailed:
            lines.append("no finite alteration of the quantities makes these fail: " + ", ".join(self.unfailed))
        return "\n".join(lines)


# -- the quantities as leaves ---------------------------------------------------------------------------------
def _is_number(v) -> bool:
    return isinstance(v, (int, float, complex, np.number)) and not isinstance(v, (bool, np.bool_))


def _is_numbers(v) -> bool:
    return isinstance(v, (tuple, list, set, frozenset)) and all(_is_number(x) for x in v)


def leaves(q) -> Iterator[tuple[tuple, Any]]:
    """``(path, value)`` of every part of ``q`` an alteration can change, depth first, in field order.

    The parts: numbers, flags, texts, None, numeric arrays, sequences and sets of numbers (one part each),
    and the nested dataclasses themselves (replaced whole by a sibling of the same type). A path goes
    through dataclass fields (names), dictionary keys and sequence indices.
    """
    yield from _walk(q, ())


def _walk(value, path):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if path:
            yield path, value
        for f in dataclasses.fields(value):
            yield from _walk(getattr(value, f.name), (*path, f.name))
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(v, (*path, k))
    elif _is_numbers(value) or value is None or isinstance(value, (str, bool, np.bool_)) or _is_number(value):
        yield path, value
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            yield from _walk(v, (*path, i))
    elif isinstance(value, np.ndarray) and value.dtype.kind in "biufc" and value.size:
        yield path, value


def replaced(q, path: tuple, value):
    """``q`` with the part at ``path`` replaced (the dataclasses, dictionaries and tuples on the way are copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if dataclasses.is_dataclass(q) and not isinstance(q, type):
        return dataclasses.replace(q, **{head: replaced(getattr(q, head), rest, value)})
    if isinstance(q, Mapping):
        out = dict(q)
        out[head] = replaced(q[head], rest, value)
        return out
    if isinstance(q, (tuple, list)):
        items = list(q)
        items[head] = replaced(q[head], rest, value)
        return _like(q, items)
    raise TypeError(f"cannot go into a {type(q).__name__} at {head!r}")


def _like(seq, items):
    if isinstance(seq, list) or type(seq) is tuple:
        return type(seq)(items)
    if isinstance(seq, (set, frozenset)):
        return type(seq)(items)
    return type(seq)(*items)  # a named tuple


def _mapped(value, fn: Callable):
    """``value`` with ``fn`` applied to each number, numeric array and number sequence (flags, integers, texts
    and None kept)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _mapped(getattr(value, f.name), fn)
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, Mapping):
        return {k: _mapped(v, fn) for k, v in value.items()}
    if isinstance(value, (tuple, list)) and not _is_numbers(value):
        return _like(value, [_mapped(v, fn) for v in value])
    if isinstance(value, (bool, np.bool_, int, np.integer)) or value is None or isinstance(value, str):
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind not in "fc":
        return value
    if _is_numbers(value) and (not value or all(isinstance(x, (int, np.integer)) for x in value)):
        return value
    if _is_number(value) or _is_numbers(value) or isinstance(value, np.ndarray):
        return fn(value)
    return value


# -- alterations ----------------------------------------------------------------------------------------------
def _nan_of(value):
    """The NaN version of a part, or None when it holds no number (flags, texts, None, structures)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iufc":
            return None
        return np.full(value.shape, np.nan, dtype=np.result_type(value.dtype, np.float64))
    if _is_numbers(value):  # floats only: a sequence of integers (indices, counts) is probed by changing it
        floats = value and not isinstance(value, (set, frozenset)) and any(
            isinstance(x, (float, np.floating)) for x in value)
        return _like(value, [float("nan") for _ in value]) if floats else None
    if _is_number(value):
        return math.nan
    return None


#: the names of the floating dtypes: a text holding one is also altered to each of the others
FLOAT_DTYPE_NAMES = ("float16", "float32", "float64")


def alterations(value, siblings=()) -> Iterator[tuple[str, Any]]:
    """Finite alterations of one part, mild first: ``(description, altered value)``.

    A flag is flipped; a text changed (a float dtype's name to the other float dtypes); None becomes a text or a number; a number is scaled by
    :data:`FACTORS` and shifted by :data:`SHIFTS` (relative to its size); an integer also moves by one; an
    array is scaled, shifted and reversed, and its largest and last entries alone are changed; a sequence or
    set of numbers also gains or loses an entry; a nested dataclass is replaced by each of ``siblings`` (the
    other parts of the quantities of the same type). Every altered value is finite.
    """
    if isinstance(value, (bool, np.bool_)):
        yield "flipped", not bool(value)
    elif value is None:
        yield from (("= 'altered'", "altered"), ("= 0", 0.0), ("= 1", 1.0), ("= True", True))
    elif isinstance(value, str):
        yield "changed", "1" if value == "0" else value + " + 1"
        if value:
            yield "emptied", ""
        if value in FLOAT_DTYPE_NAMES:  # a dtype's name: the other float dtypes (a narrower output, say)
            yield from ((f"= {other!r}", other) for other in FLOAT_DTYPE_NAMES if other != value)
    elif dataclasses.is_dataclass(value):
        for text, other in siblings:
            yield f"replaced by {text}", other
    elif isinstance(value, np.ndarray) and value.dtype.kind == "b":
        yield "flipped", ~value
        if value.size > 1:
            one = value.copy()
            one.reshape(-1)[0] = not one.reshape(-1)[0]
            yield "first entry flipped", one
    elif isinstance(value, np.ndarray):
        yield from _array_alterations(value)
    elif _is_numbers(value):
        yield from _sequence_alterations(value)
    elif isinstance(value, (int, np.integer)):
        v = int(value)
        for w in (v + 1, v - 1, 0, 2 * v, v // 2, -v, 10 * v + 10, 1000 * v + 1000):
            if w != v:
                yield f"= {w}", type(value)(w) if isinstance(value, np.integer) else w
    else:
        yield from _number_alterations(value)


def _number_alterations(value):
    v = complex(value) if isinstance(value, (complex, np.complexfloating)) else float(value)
    if not math.isfinite(abs(v)):
        return
    cast = type(value) if isinstance(value, np.floating) else (lambda w: w)
    seen = {v}
    for f in FACTORS:
        w = v * f
        if math.isfinite(abs(w)) and w not in seen:
            seen.add(w)
            yield f"x {f:.7g}", cast(w)
    size = abs(v) or 1.0
    for s in SHIFTS:
        w = v + s * size
        if math.isfinite(abs(w)) and w not in seen:
            seen.add(w)
            yield (f"+ {s:g} |x|" if v else f"+ {s:g}"), cast(w)


def _sequence_alterations(value):
    items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    ints = all(isinstance(x, (int, np.integer)) for x in items)
    if not items:  # an empty sequence: of numbers or of names (of what went wrong)
        yield from (("= (0,)", _like(value, [0])), ("= (1,)", _like(value, [1])),
                    ("= ('altered',)", _like(value, ["altered"])))
        return
    yield "last entry dropped", _like(value, items[:-1])
    top = max(items)
    yield "an entry appended", _like(value, [*items, top + 1 if ints else top * 2 + 1])
    if not ints:
        for text, arr in _array_alterations(np.asarray(items, dtype=float)):
            yield text, _like(value, arr.tolist())
    else:
        yield "every entry + 1", _like(value, [x + 1 for x in items])
        yield "every entry x 2", _like(value, [2 * x for x in items])


def _array_alterations(a: np.ndarray):
    finite = a[np.isfinite(a)] if a.dtype.kind in "fc" else a
    size = float(np.max(np.abs(finite))) if finite.size else 1.0
    size = size or 1.0
    work = a.astype(np.result_type(a.dtype, np.float64))
    for f in FACTORS:
        yield f"x {f:.7g}", work * f
    for s in SHIFTS:
        yield f"+ {s:g} max|x|", work + s * size
    if a.ndim and a.shape[0] > 1:
        yield "reversed", work[::-1].copy()
    flat = work.reshape(-1)
    if flat.size > 1:
        i = int(np.argmax(np.abs(np.nan_to_num(flat))))
        for f in (2.0, 0.0, -1.0, 1e3):
            one = flat.copy()
            one[i] = one[i] * f if one[i] else f
            yield f"largest entry x {f:g}", one.reshape(a.shape)
        for s in (1.0, -1.0, 1e3, -1e3):
            one = flat.copy()
            one[-1] = one[-1] + s * size
            yield f"last entry + {s:g} max|x|", one.reshape(a.shape)


def _globally(factor: float):
    def fn(v):
        if isinstance(v, np.ndarray):
            return v * factor
        if _is_numbers(v):
            return _like(v, [x * factor for x in v])
        w = v * factor
        return w if math.isfinite(abs(w)) else v

    return fn


def _other_mapped(value, fn: Callable):
    """``value`` with ``fn`` applied to each flag, integer and text (numbers and arrays kept)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _other_mapped(getattr(value, f.name), fn)
                                             for f in dataclasses.fields(value) if f.init})
    if isinstance(value, Mapping):
        return {k: _other_mapped(v, fn) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return _like(value, [_other_mapped(v, fn) for v in value])
    if isinstance(value, (bool, np.bool_, str, int, np.integer)):
        return fn(value)
    return value


def _flip(v):
    return (not v) if isinstance(v, (bool, np.bool_)) else v


def _plus_one(v):
    return v + 1 if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) else v


def _changed_text(v):
    return ("1" if v == "0" else v + " + 1") if isinstance(v, str) else v


_GLOBAL_OTHERS = (("flags flipped", _flip), ("integers + 1", _plus_one), ("texts changed", _changed_text))


# -- the search -----------------------------------------------------------------------------------------------
def controls(check, q, p, *, modes=None, budget: int = 20000) -> Controls:
    """For each deciding record of ``check.assess(q, p)``, in each claim mode, a negative control (:class:`Control`).

    Parameters
    ----------
    check : verify.core.check.Check
        The check.
    q, p
        Quantities and the parameters they were measured with (a small setting whose run passes).
    modes : sequence of str, optional
        The values of ``claim`` to assess (default: every claim mode of a check declared with ``printed=``;
        the parameters as they are for a check without one).
    budget : int
        Most assessments in all; the search stops there and reports the records it has not shown failing.

    Returns
    -------
    Controls
        The controls found, the records that have none, and those failing on the unaltered quantities.
    """
    has_claim = any(f.name == "claim" for f in dataclasses.fields(p))
    if modes is None:
        modes = check.claim_modes if has_claim else ("",)
    items = list(leaves(q))
    siblings = _siblings(items)
    search = _Search(check, budget)
    found: list[Control] = []
    shown: dict[str, tuple] = {}  # record -> (path, alteration, altered quantities) that made it fail
    unfailed: list[str] = []
    failing: list[str] = []
    for i, mode in enumerate(modes):
        pm = dataclasses.replace(p, claim=mode) if mode else p
        base = search.values(q, pm)
        if base is None:
            raise RuntimeError(f"{check.name}: assess raised on the unaltered quantities (claim={mode!r})")
        tag = (lambda name, mode=mode: f"{name} [{mode}]" if mode else name)
        pending = {}
        for name, (passed, _) in base.items():
            if passed is not False:
                pending[name] = None
            elif i == 0:  # the corrected run (or the only one) must pass at a small setting
                failing.append(tag(name))
            else:
                found.append(Control(name, mode))

        def take(out, path, text, altered, pending=pending, mode=mode):
            for name in [n for n in pending if out is not None and n in out and out[n][0] is False]:
                found.append(Control(name, mode, path, text))
                shown[name] = (path, text, altered)
                del pending[name]

        def attempt(path, text, altered):
            take(search.values(altered, pm), path, text, altered)

        # 0. what made a record fail in an earlier mode
        earlier = {}
        for name in pending:
            if name in shown:
                path, text, altered = shown[name]
                earlier[(repr(path), text)] = (path, text, altered)
        for path, text, altered in earlier.values():
            attempt(path, text, altered)
        # 1. every number and numeric array altered at once; every flag flipped, every integer moved, every text
        # changed at once
        for f in GLOBAL_FACTORS:
            if not pending:
                break
            attempt((), f"x {f:g}", _mapped(q, _globally(f)))
        for text, fn in _GLOBAL_OTHERS:
            if not pending:
                break
            attempt((), text, _other_mapped(q, fn))
        # 2. which parts the records left read: a probe (a NaN, a flipped flag, an integer + 1, a changed text)
        # in a group of parts that changes a record's value or outcome; groups are split until single parts
        reads: dict[str, list[int]] = {name: [] for name in pending}
        if pending:
            probed = [k for k, (_, value) in enumerate(items) if _probe(value) is not None]
            _locate(search, q, pm, items, probed, 0, list(pending), base, reads)
        # 3. one part at a time: the structures holding the parts a record reads (replaced by a sibling), those
        # parts, then every other part
        for name in list(pending):
            if name not in pending:
                continue  # shown failing by an earlier record's control
            first = reads[name]
            holders = [k for k, (path, value) in enumerate(items) if dataclasses.is_dataclass(value)
                       and any(items[j][0][:len(path)] == path for j in first)]
            order = list(dict.fromkeys(holders + first + list(range(len(items)))))
            for k in order:
                path, value = items[k]
                for text, altered in alterations(value, siblings.get(k, ())):
                    if search.spent:
                        break
                    attempt(path, text, replaced(q, path, altered))
                    if name not in pending:
                        break
                if name not in pending or search.spent:
                    break
        unfailed += [tag(name) for name in pending]
    return Controls(check.name, tuple(found), tuple(unfailed), tuple(failing), search.count)


def _probe(value, k: int = 0):
    """The value that shows whether a record reads this part (None for a structure: its parts are probed).

    A NaN where the part holds a number; otherwise a change that depends on the part's index ``k``, so that
    two equal parts probed together (a measured and a predicted set) do not stay equal.
    """
    if dataclasses.is_dataclass(value):
        return None
    nan = _nan_of(value)
    if nan is not None:
        return nan
    if isinstance(value, (bool, np.bool_)) or value is None:
        return next(alterations(value))[1]
    if isinstance(value, str):
        return f"{value} + {k + 1}"
    if isinstance(value, (int, np.integer)):
        return value + k + 1
    if isinstance(value, np.ndarray):
        return ~value if value.dtype.kind == "b" else value + k + 1
    if _is_numbers(value):
        items = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        return _like(value, [*items, (max(items) if items else 0) + k + 1])
    return next((altered for _, altered in alterations(value)), None)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _locate(search, q, p, items, members, depth, names, base, reads) -> None:
    """Add to ``reads[name]`` the parts among ``members`` (indices of ``items``) whose probe changes record
    ``name`` (one of ``names``): probe them all at once, then each group of the next path component (or each
    half), down to single parts."""
    if not members or not names or search.spent:
        return
    probed_q = q
    for k in members:
        probed_q = replaced(probed_q, items[k][0], _probe(items[k][1], k))
    out = search.values(probed_q, p)
    if out is None:
        hit = list(names)
    else:
        hit = [n for n in names if n not in out or out[n][0] != base[n][0] or not _same(out[n][1], base[n][1])]
    if not hit:
        return
    if len(members) == 1:
        for n in hit:
            reads[n].append(members[0])
        return
    groups: dict[Any, list[int]] = {}
    for k in members:
        path = items[k][0]
        groups.setdefault(path[depth] if len(path) > depth else None, []).append(k)
    if len(groups) == 1:
        key, only = next(iter(groups.items()))
        if key is not None and all(len(items[k][0]) > depth + 1 for k in only):
            _locate(search, q, p, items, only, depth + 1, hit, base, reads)
            return
        half = len(members) // 2
        parts = [members[:half], members[half:]]
        for part in parts:
            _locate(search, q, p, items, part, depth, hit, base, reads)
        return
    for group in groups.values():
        _locate(search, q, p, items, group, depth + 1, hit, base, reads)


def _siblings(items) -> dict[int, list[tuple[str, Any]]]:
    """For each nested dataclass among ``items``, the other parts of the same type (``(path text, value)``)."""
    out: dict[int, list[tuple[str, Any]]] = {}
    structs = [(k, path, value) for k, (path, value) in enumerate(items) if dataclasses.is_dataclass(value)]
    for k, path, value in structs:
        out[k] = [(path_text(other_path), other) for j, other_path, other in structs
                  if j != k and type(other) is type(value)]
    return out


class _Search:
    """The assessments of one search, counted against its budget."""

    def __init__(self, check, budget: int):
        self.check, self.budget, self.count = check, budget, 0

    @property
    def spent(self) -> bool:
        return self.count >= self.budget

    def values(self, q, p) -> dict[str, tuple] | None:
        """``name -> (passed, measured)`` of the deciding records of ``check.assess(q, p)``; None when it raised.

        An assessment that raises on altered quantities (an index from a changed count, a NaN where an
        integer is needed) shows nothing about the records: the alteration is passed over.
        """
        self.count += 1
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                res = self.check.assess(q, p)
            except Exception:  # noqa: BLE001 - an altered assessment that raises only means: no control here
                return None
        return {r.name: (r.passed, r.measured) for r in res.records if r.deciding}
