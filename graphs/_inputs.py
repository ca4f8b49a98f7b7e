"""Input kinds of the graph analyses: dense arrays of any namespace, or SciPy sparse arrays.

The graph functions take an attention (or weight) matrix as a dense array (NumPy, CuPy or another
array-API library) or as a ``scipy.sparse`` array or matrix (csr, csc, coo, lil, dok, bsr, dia),
the form csgraph users have. :func:`input_kind` says which and refuses anything else with an
:class:`~spectral.floor.validation.InputError` naming the accepted types; :func:`sparse_stochastic`
validates a sparse attention matrix as :func:`spectral.scores.check_row_stochastic` validates a
dense one.
"""

from __future__ import annotations

import sys

import numpy as np

from spectral import scores
from spectral.floor.backend import is_cupy_array
from spectral.scores import row_stochastic_tolerance
from spectral.floor.validation import InputError

__all__: list[str] = []  # internal helpers of graphs (no public names)

ACCEPTED = ("a 2-D array (NumPy, CuPy or another array-API library such as array_api_strict) or a scipy.sparse "
            "array or matrix (csr, csc, coo, lil, dok, bsr, dia)")


def is_sparse(A) -> bool:
    """True for a ``scipy.sparse`` array or matrix (SciPy is looked up in ``sys.modules``, never imported)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(A)


def input_kind(A, *, name: str = "A") -> str:
    """``"numpy"``, ``"sparse"`` or ``"array"`` (CuPy or another array-API namespace) for a 2-D square ``A``.

    Raises
    ------
    spectral.floor.validation.InputError
        ``A`` is none of the accepted types (a list, a pandas frame, a NumPy matrix of objects...) or
        not a square 2-D matrix; the message names the accepted types and the shape.
    """
    if is_sparse(A):
        kind = "sparse"
    elif isinstance(A, np.ndarray):
        if A.dtype == object or not (np.issubdtype(A.dtype, np.number) or A.dtype == np.bool_):
            raise InputError(f"{name} must be a numeric matrix, got a NumPy array of dtype {A.dtype}")
        kind = "numpy"
    elif is_cupy_array(A) or hasattr(A, "__array_namespace__"):
        kind = "array"
    else:
        raise InputError(f"{name} must be {ACCEPTED}, got {type(A).__module__}.{type(A).__name__}")
    shape = tuple(A.shape)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        raise InputError(f"{name} must be a square (n, n) matrix with n >= 1, got shape {shape}")
    return kind


def sparse_csr(A, *, name: str = "A"):
    """A canonical ``csr_array`` copy of a sparse ``A`` (duplicates summed, indices sorted) in float64.

    Raises
    ------
    spectral.floor.validation.InputError
        Entries that are not real numbers (complex, object).
    """
    import scipy.sparse as sp

    if not (np.issubdtype(A.dtype, np.number) or A.dtype == np.bool_) or np.issubdtype(A.dtype, np.complexfloating):
        raise InputError(f"{name} must have real entries, got dtype {A.dtype}")
    g = sp.csr_array(A, dtype=np.float64, copy=True)
    g.sum_duplicates()  # coo input may repeat an entry: summed, as scipy does on conversion
    g.sort_indices()
    return g


def sparse_stochastic(A, *, name: str = "A"):
    """Validate a sparse attention matrix; return it as a canonical float64 ``csr_array``.

    Stored entries must be finite and nonnegative and every row sum within
    :func:`spectral.scores.row_stochastic_tolerance` (``4 sqrt(eps)`` of the input dtype) of 1; stored
    zeros are zero attention (no edge).

    Raises
    ------
    spectral.floor.validation.InputError
        Non-finite or negative stored entries, or a row sum off by more than the tolerance.
    """
    g = sparse_csr(A, name=name)
    if g.nnz and not np.all(np.isfinite(g.data)):
        raise InputError(f"{name} must have finite entries (no NaN or inf)")
    if g.nnz and g.data.min() < 0:
        raise InputError(f"{name} must have nonnegative entries, got a minimum of {g.data.min():.3g}")
    dtype = A.dtype if np.issubdtype(A.dtype, np.floating) else np.float64
    tol = row_stochastic_tolerance(dtype)
    dev = float(np.max(np.abs(np.asarray(g.sum(axis=1)).reshape(-1) - 1.0)))
    if dev > tol:
        raise InputError(f"{name} must be row-stochastic: every row sum in [1 - {tol:.2g}, 1 + {tol:.2g}], "
                         f"got a row sum off by {dev:.3g}")
    return g


def check_flag(name: str, value) -> bool:
    """A True/False option (``numpy.bool_`` accepted); anything else is an InputError naming it."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r}")


def dense_stochastic(A, *, what: str, name: str = "A"):
    """:func:`spectral.scores.check_row_stochastic` for the analyses that need a dense ``A``; its namespace.

    Raises
    ------
    spectral.floor.validation.InputError
        A scipy.sparse ``A`` (the message says to densify it and which functions take it as it is),
        a type that is no array, or what ``check_row_stochastic`` refuses.
    """
    if is_sparse(A):
        raise InputError(f"{what} needs a dense {name} (NumPy, CuPy or another array-API array); convert the "
                         f"scipy.sparse {name} with {name}.toarray() (shortest_paths and spectral_gap take it as it is)")
    if not (isinstance(A, np.ndarray) or is_cupy_array(A) or hasattr(A, "__array_namespace__")):
        raise InputError(f"{name} must be a 2-D array (NumPy, CuPy or another array-API library such as "
                         f"array_api_strict), got {type(A).__module__}.{type(A).__name__}")
    return scores.check_row_stochastic(A, name=name)
