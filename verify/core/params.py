"""Declared parameters of a check: one typed declaration each, from which everything else is made.

A check declares its parameters once, as the fields of a class::

    @CHECK.parameters
    class Params:
        n: int = Int(2000, "Number of points", low=8, unit="points")
        alpha: float = Real(1.2, "Claimed exponent alpha (FNA eq. 10)", low=0, high=2, low_open=True)
        points: str = Choice("grid", ("grid", "random"), "Equispaced grid or i.i.d. uniform points")
        sizes: tuple = Ints((8, 64), "Sequence lengths T", low=4, high=4096, min_len=1)

Each declaration (:class:`Spec`) holds the kind, the constraint (an interval or a set of options, a
length for sequences), the default, a one-line doc and a unit. From it the skeleton
(:mod:`verify.core.check`) generates the validation of every call (the same wording for every check,
through :mod:`spectral.floor.validation`), the command line and its ``--help``, the numpydoc of ``run()``,
the validation of a sweep's grid before anything runs, and the JSON description of the parameters
(:func:`describe`). The class becomes a frozen, keyword-only dataclass: the check's body receives an
instance (``p.n``, ``p.alpha``), never a dict.

An automatic parameter has ``None`` as its default and says in ``auto`` what it resolves to; the
class's optional ``resolve(self) -> Params`` method fills the automatic values and checks the rules
between parameters (the only hand-written validation a check keeps).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["Spec", "Int", "Real", "Choice", "Flag", "Text", "Ints", "Reals", "Options", "spec_of", "specs",
           "RESOLVED", "check_resolved",
           "describe", "validate_value", "interval_text"]

KINDS = ("int", "float", "str", "bool", "ints", "floats", "strs")
SEQUENCES = ("ints", "floats", "strs")


#: The smallest relative change float64 resolves with half its digits: sqrt(eps) = 1.5e-8.
RESOLVED = math.sqrt(float(np.finfo(np.float64).eps))


def check_resolved(name: str, value: float, what: str, *, floor: float = RESOLVED) -> float:
    """Refuse a parameter whose effect float64 cannot resolve: ``value`` (a rate per step, a relative change) below
    ``floor`` (sqrt(eps) by default), named by ``name`` and described by ``what`` (``"r = alpha dt"``).

    A step that changes entries of size 1 by less than sqrt(eps) moves them by rounding only: a check run there
    measures nothing (``--dt 1e-300`` stopped pde_conservation with a traceback). A rule between parameters, so it
    lives in a check's ``resolve`` and runs before anything is computed (a sweep checks it for its whole grid).
    """
    if not value >= floor:
        raise InputError(f"{name} must keep {what} >= {floor:.2g} (below it a step moves entries of size 1 by "
                         f"rounding only), got {value:.3g}")
    return value


def interval_text(low, high, low_open: bool = False, high_open: bool = False) -> str:
    """``[0, 2]``, ``(0, inf)``, ``[4, 4096]``: the interval in the words the error messages use."""
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    left = "(" if (low is None or low_open) else "["
    right = ")" if (high is None or high_open) else "]"
    return f"{left}{lo}, {hi}{right}"


@dataclasses.dataclass(frozen=True)
class Spec:
    """The declaration of one parameter.

    Attributes
    ----------
    kind : {"int", "float", "str", "bool", "ints", "floats", "strs"}
        What the value is: a scalar, or (``ints``, ``floats``, ``strs``) a tuple of scalars.
    default : object
        The default value; ``None`` for an automatic parameter (see ``auto``).
    doc : str
        One line: what the parameter is, with the paper and equation it refers to.
    low, high : float, optional
        Bounds of the allowed interval (each element's, for a sequence).
    low_open, high_open : bool
        Whether each bound is excluded.
    choices : tuple of str, optional
        The allowed values of a ``str`` parameter (of each element of a ``strs`` one); ``None`` for
        free text.
    unit : str
        Unit of the value (``"points"``, ``"s"``), shown in ``--help``.
    auto : str
        For an automatic parameter (default ``None``): what it resolves to, in words.
    min_len, max_len : int
        Allowed number of elements of a sequence.
    name : str
        Set by the skeleton from the field's name.
    """

    kind: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None
    unit: str = ""
    auto: str = ""
    min_len: int = 1
    max_len: int | None = None
    name: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if not self.doc or not self.doc.strip():
            raise ValueError("every parameter needs a one-line doc")
        if self.default is None and not self.auto:
            raise ValueError("an automatic parameter (default None) must say what it resolves to (auto=...)")

    # -- constraint -----------------------------------------------------------------------------
    @property
    def interval(self) -> str | None:
        """The allowed interval in words, or None when the parameter has none."""
        if self.low is None and self.high is None:
            return None
        return interval_text(self.low, self.high, self.low_open, self.high_open)

    def constraint(self) -> str:
        """The constraint in words: ``in (0, 2]``, ``one of grid, random``, ``each in [4, 4096], at least 3``."""
        parts = []
        if self.choices is not None:
            parts.append(("each one of " if self.kind == "strs" else "one of ") + ", ".join(self.choices))
        elif self.interval is not None:
            parts.append(("each in " if self.kind in SEQUENCES else "in ") + self.interval)
        if self.kind in SEQUENCES:
            if self.max_len == self.min_len:
                parts.append(f"{self.min_len} values")
            elif self.min_len > 1 or self.max_len is not None:
                count = f"at least {self.min_len}" if self.max_len is None else f"{self.min_len} to {self.max_len}"
                parts.append(f"{count} values")
        return ", ".join(parts)

    def validate(self, value):
        """The value, normalised (Python int/float, tuples), or :class:`InputError` naming the parameter."""
        name = self.name or "value"
        if value is None:
            if self.default is None:
                return None
            raise InputError(f"{name} must be given ({self.constraint() or self.kind}), got None")
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise InputError(f"{name} must be True or False, got {value!r}")
            return bool(value)
        if self.kind == "str":
            if not isinstance(value, str):
                raise InputError(f"{name} must be a string, got {value!r}")
            return check_option(name, value, self.choices) if self.choices is not None else value
        if self.kind in ("int", "float"):
            return self._scalar(name, value)
        if self.kind == "strs" and isinstance(value, str):  # one comma-separated string: "relu,tanh"
            value = tuple(v.strip() for v in value.split(",") if v.strip())
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") or isinstance(value, Mapping):
            what = {"ints": "integers", "floats": "numbers", "strs": "strings"}[self.kind]
            raise InputError(f"{name} must be a sequence of {what}, got {value!r}")
        out = tuple(self._scalar(name, v) for v in value)
        if len(out) < self.min_len or (self.max_len is not None and len(out) > self.max_len):
            want = (f"exactly {self.min_len}" if self.max_len == self.min_len else
                    f"at least {self.min_len}" if self.max_len is None else
                    f"{self.min_len} to {self.max_len}")
            raise InputError(f"{name} must hold {want} value(s), got {len(out)}")
        return out

    def _scalar(self, name, value):
        if self.kind == "strs":
            if not isinstance(value, str):
                raise InputError(f"{name} must hold strings, got {value!r}")
            return check_option(name, value, self.choices) if self.choices is not None else value
        if self.kind in ("int", "ints"):
            return check_int(name, value, low=self.low, high=self.high)
        return check_real(name, value, low=self.low, high=self.high, low_open=self.low_open,
                          high_open=self.high_open)

    # -- descriptions -----------------------------------------------------------------------------
    def type_text(self) -> str:
        """The numpydoc type: ``int``, ``float``, ``{"grid", "random"}``, ``tuple of int``, ``bool``."""
        if self.choices is not None:
            braces = "{" + ", ".join(f'"{c}"' for c in self.choices) + "}"
            return "tuple of " + braces if self.kind == "strs" else braces
        base = {"int": "int", "float": "float", "str": "str", "bool": "bool", "ints": "tuple of int",
                "floats": "tuple of float", "strs": "tuple of str"}[self.kind]
        return base + (", optional" if self.default is None else "")

    def default_text(self) -> str:
        if self.default is None:
            return f"automatic: {self.auto}"
        if isinstance(self.default, tuple):
            return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in self.default)
        if isinstance(self.default, float):
            return f"{self.default:g}"
        return str(self.default)

    def help_text(self) -> str:
        """One line for ``--help`` and the docstring: doc, unit, constraint and default."""
        extra = [p for p in (self.constraint(), f"unit: {self.unit}" if self.unit else "") if p]
        text = self.doc.rstrip(".")
        if extra:
            text += " (" + "; ".join(extra) + ")"
        return text + "."

    def to_dict(self) -> dict:
        """The declaration as plain JSON (for tools and the result's JSON)."""
        out = {"name": self.name, "kind": self.kind, "default": _plain(self.default), "doc": self.doc}
        for key in ("low", "high", "choices", "unit", "auto"):
            value = getattr(self, key)
            if value not in (None, ""):
                out[key] = _plain(value)
        if self.low is not None and self.low_open:
            out["low_open"] = True
        if self.high is not None and self.high_open:
            out["high_open"] = True
        if self.kind in SEQUENCES:
            out["min_len"], out["max_len"] = self.min_len, self.max_len
        return out


def _plain(value):
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _field(spec: Spec):
    if spec.default is not None:
        spec.validate(spec.default)  # a default outside its own constraint is a bug of the declaration
    return dataclasses.field(default=spec.default, metadata={"spec": spec})


def Int(default, doc, *, low=None, high=None, unit="", auto=""):  # noqa: N802 - reads as a type
    """An integer parameter in ``[low, high]``."""
    return _field(Spec("int", default, doc, low=low, high=high, unit=unit, auto=auto))


def Real(default, doc, *, low=None, high=None, low_open=False, high_open=False, unit="", auto=""):  # noqa: N802
    """A finite real parameter in the interval given by the bounds."""
    return _field(Spec("float", None if default is None else float(default), doc, low=low, high=high,
                       low_open=low_open, high_open=high_open, unit=unit, auto=auto))


def Choice(default, choices, doc, *, auto=""):  # noqa: N802
    """A string parameter, one of ``choices``."""
    return _field(Spec("str", default, doc, choices=tuple(choices), auto=auto))


def Text(default, doc, *, auto=""):  # noqa: N802
    """A free-text string parameter (validated by the check's ``resolve``)."""
    return _field(Spec("str", default, doc, auto=auto))


def Flag(default, doc):  # noqa: N802
    """A boolean parameter (``--name`` alone on the command line means true)."""
    return _field(Spec("bool", bool(default), doc))


def Ints(default, doc, *, low=None, high=None, min_len=1, max_len=None, unit="", auto=""):  # noqa: N802
    """A tuple of integers, each in ``[low, high]``, with ``min_len`` to ``max_len`` elements."""
    default = None if default is None else tuple(default)
    return _field(Spec("ints", default, doc, low=low, high=high, min_len=min_len, max_len=max_len, unit=unit,
                       auto=auto))


def Reals(default, doc, *, low=None, high=None, low_open=False, high_open=False, min_len=1, max_len=None,
          unit="", auto=""):  # noqa: N802
    """A tuple of finite reals, each in the interval, with ``min_len`` to ``max_len`` elements."""
    default = None if default is None else tuple(float(v) for v in default)
    return _field(Spec("floats", default, doc, low=low, high=high, low_open=low_open, high_open=high_open,
                       min_len=min_len, max_len=max_len, unit=unit, auto=auto))


def Options(default, choices, doc, *, min_len=1, max_len=None, auto=""):  # noqa: N802
    """A tuple of strings, each one of ``choices`` (``None``: free text), with ``min_len`` to ``max_len`` elements.

    On the command line (and as a Python string) the elements are comma-separated: ``relu,tanh``.
    """
    default = None if default is None else tuple(default)
    return _field(Spec("strs", default, doc, choices=None if choices is None else tuple(choices), min_len=min_len,
                       max_len=max_len, auto=auto))


def spec_of(field: dataclasses.Field) -> Spec:
    """The declaration of a dataclass field made by :func:`Int`, :func:`Real`, ..., named after the field."""
    return dataclasses.replace(field.metadata["spec"], name=field.name)


def specs(params_type) -> dict[str, Spec]:
    """``name -> Spec`` of a declared parameters class, in declaration order."""
    return {f.name: spec_of(f) for f in dataclasses.fields(params_type)}


def describe(params_type) -> list[dict]:
    """The parameters of a check as plain JSON: one dict per declaration (:meth:`Spec.to_dict`)."""
    return [s.to_dict() for s in specs(params_type).values()]


def validate_value(params_type, name: str, value):
    """Validate one value of parameter ``name`` (a sweep's grid is checked this way before anything runs)."""
    table = specs(params_type)
    if name not in table:
        raise InputError(f"unknown parameter {name!r}; the parameters are: {', '.join(table)}")
    return table[name].validate(value)
