"""JSON-ready plain data: what results, quantities and task records are stored as.

:func:`jsonable` turns numpy scalars and arrays, tuples and nested mappings into plain JSON types (a non-finite
float becomes the string ``'inf'``, ``'-inf'`` or ``'nan'``, a complex number ``{"real": ., "imag": .}``);
:func:`unjson` reads them back. Shared by :mod:`verify.core.result` and :mod:`verify.core.tasks`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["jsonable", "unjson"]


def jsonable(value: Any) -> Any:
    """Plain JSON types from numpy scalars/arrays, tuples and nested mappings (non-finite -> str)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else repr(v)  # 'inf', '-inf', 'nan' survive the round trip
    if isinstance(value, (np.complexfloating, complex)):
        return {"real": jsonable(value.real), "imag": jsonable(value.imag)}
    return value


def unjson(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"real", "imag"}:
            return complex(unjson(value["real"]), unjson(value["imag"]))
        return {k: unjson(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unjson(v) for v in value]
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value
