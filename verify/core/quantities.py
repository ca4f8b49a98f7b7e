"""Typed measured quantities to and from plain JSON, guided by the dataclass's field types.

A check's ``measure`` returns a frozen dataclass whose fields are typed: ``float``, ``int``,
``bool``, ``str``, ``numpy.ndarray``, ``tuple[float, ...]``, ``dict[float, numpy.ndarray]``,
``X | None``, nested dataclasses. :func:`to_plain` writes it as JSON types (non-finite numbers as
the strings ``"nan"``, ``"inf"``, ``"-inf"``; dictionary keys as strings) and :func:`from_plain`
reads it back with the declared types (keys of ``dict[float, ...]`` become floats again, lists
become arrays or tuples), so a result read from JSON gives figures the same typed fields as a
fresh run.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from typing import Any

import numpy as np

__all__ = ["to_plain", "from_plain"]


def to_plain(value: Any) -> Any:
    """JSON types from a quantities dataclass (or any nesting of numbers, arrays, tuples, dicts)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {_key_text(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        if np.iscomplexobj(value):
            return {"real": to_plain(value.real), "imag": to_plain(value.imag)}
        return to_plain(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else repr(v)
    if isinstance(value, (complex, np.complexfloating)):
        return {"real": to_plain(value.real), "imag": to_plain(value.imag)}
    return value


def _key_text(key) -> str:
    if isinstance(key, (float, np.floating)):
        return repr(float(key))
    if isinstance(key, tuple):
        return ",".join(_key_text(k) for k in key)
    return str(key)


def _number(value):
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return float(value)
    return value


def _array(value) -> np.ndarray:
    if isinstance(value, dict) and set(value) == {"real", "imag"}:
        return _array(value["real"]) + 1j * _array(value["imag"])

    def unstr(v):
        if isinstance(v, list):
            return [unstr(x) for x in v]
        return _number(v)

    return np.asarray(unstr(value))


def from_plain(kind, value: Any) -> Any:
    """Inverse of :func:`to_plain` for a value of declared type ``kind``."""
    if value is None:
        return None
    if isinstance(kind, str):  # postponed annotation that was not resolved: leave as read
        return value
    if dataclasses.is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        known = {f.name for f in dataclasses.fields(kind)}
        return kind(**{k: from_plain(hints.get(k, Any), v) for k, v in value.items() if k in known})
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        for option in options:
            try:
                return from_plain(option, value)
            except (TypeError, ValueError):
                continue
        return value
    if kind is np.ndarray or origin is np.ndarray:
        return _array(value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], v) for v in value)
        if args:
            return tuple(from_plain(a, v) for a, v in zip(args, value))
        return tuple(value)
    if origin is list:
        return [from_plain(args[0] if args else Any, v) for v in value]
    if origin is dict or kind is dict:
        kt, vt = args if args else (Any, Any)
        return {_key(kt, k): from_plain(vt, v) for k, v in value.items()}
    if kind is float:
        return float(_number(value))
    if kind is int:
        return int(value)
    if kind is bool:
        return bool(value)
    if kind is complex:
        return complex(_number(value["real"]), _number(value["imag"])) if isinstance(value, dict) else complex(value)
    return value


def _key(kind, text: str):
    if kind is float:
        return float(text)
    if kind is int:
        return int(text)
    if typing.get_origin(kind) is tuple:
        parts = text.split(",")
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_key(args[0], p) for p in parts)
        return tuple(_key(a, p) for a, p in zip(args, parts))
    return text
