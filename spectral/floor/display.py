"""Short text for result objects: an array as its shape and dtype, or its first few values.

Result dataclasses hold arrays of ``n`` or ``n x k`` numbers; their default ``repr`` printed them all
(7 KB for one spectrum). Their ``__repr__`` uses these helpers instead, as SciPy's ``OptimizeResult``
summarises a result in a few lines.
"""

from __future__ import annotations

import numpy as np

from spectral.floor.backend import dtype_name, to_numpy

__all__ = ["array_summary", "result_repr"]


def array_summary(x) -> str:
    """``"<float64 (200, 5)>"`` for an array, ``"None"`` for None, ``repr`` for anything else.

    Examples
    --------
    >>> array_summary(np.zeros((3, 2)))
    '<float64 (3, 2)>'
    """
    if x is None:
        return "None"
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return f"<{dtype_name(x.dtype)} {tuple(x.shape)}>"
    return repr(x)


def leading_values(x, count: int = 4) -> str:
    """The first ``count`` entries of a 1-d array with 6 significant digits, ``...`` if there are more (-0 shows as 0).

    Examples
    --------
    >>> leading_values(np.array([1.0, 0.5, 0.25, 0.125, 0.0625]))
    '[1, 0.5, 0.25, 0.125, ...]'
    >>> leading_values(np.array([1 + 0j, 0.5j]))
    '[1+0j, 0+0.5j]'
    """
    if x is None:
        return "None"
    v = np.asarray(to_numpy(x)).reshape(-1)
    if np.iscomplexobj(v):
        shown = ", ".join(f"{complex(e):.6g}".strip("()") for e in v[:count])
    else:
        shown = ", ".join(f"{float(e) + 0.0:.6g}" for e in v[:count])
    return f"[{shown}{', ...' if v.size > count else ''}]"


def result_repr(obj, **fields) -> str:
    """``"Name(a=..., b=...)"`` from already formatted fields (strings are inserted as they are)."""
    inner = ", ".join(f"{k}={v}" for k, v in fields.items())
    return f"{type(obj).__name__}({inner})"
