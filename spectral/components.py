"""Connectivity of the kernel graph: components of ``C > 0`` and numerical disconnection.

Eigenvalue 1 of ``A = D^-1 C`` has the multiplicity of the connected components of the graph
``C > 0`` (closed communicating classes when ``C`` is not symmetric); on a disconnected graph its
eigenvectors are not unique and Lanczos solvers return an arbitrary number of its copies. Two counts
are made:

* structural: the components of ``C > 0`` (:func:`count_components`; for an operator, breadth-first
  search with indicator matvecs, :func:`operator_components`), before solving;
* numerical: the eigenvalues within :func:`near_one_tolerance` of 1 among those computed
  (:func:`near_one_count`), after solving: the graph is disconnected in floating point when more of
  them are near 1 than there are components (scores between the parts below round-off; then the
  conductance of the cut is, too). Two clusters 10 apart at ``eps = 0.5`` have cross-cluster
  heat-kernel entries of 1e-77..1e-22: all positive, so the graph is connected, but eigenvalue 1 is
  double to 1e-15.

:func:`report_components` raises :class:`DisconnectedGraphWarning` (or, with ``strict=True``,
:class:`DisconnectedGraphError`) with the numbers in either case.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from spectral.floor.backend import dtype_name, from_numpy, to_numpy
from spectral.scores import scan_scores, symmetry_defect, symmetry_tolerance
from spectral.floor.validation import InputError, check_real

__all__ = ["DisconnectedGraphError", "DisconnectedGraphWarning", "count_components"]

#: Entries per row tile when :func:`count_components` reads a stored matrix (a boolean tile and the
#: int64 positions of its positive entries: ~10 bytes per entry, 2.5 MiB per tile).
COMPONENT_TILE_ENTRIES = 1 << 18
#: Matvec budget of the breadth-first component count on operators (each matvec is O(n^2)).
OPERATOR_BFS_MATVECS = 32
#: Eigenvalues within ``NEAR_ONE_EPS * eps(dtype)`` of 1 count as copies of 1 (at least; see
#: :func:`near_one_tolerance`). Measured errors of the computed eigenvalue 1 on FNA (circle) and heat
#: (S^2) kernels, n = 200-2000: <= 4.4e-16 dense, <= 2.0e-15 ARPACK (Lanczos and matrix-free), so
#: 100 eps (2.2e-14 in float64, 1.2e-5 in float32 storage) is round-off with a margin of 10.
NEAR_ONE_EPS = 100
#: The tolerance is at least this multiple of the computed eigenvalue 1's own error |1 - eta_0|: a
#: matrix accepted as symmetric within 4 sqrt(eps) but not exactly symmetric (a row-normalised
#: attention matrix of nearly uniform degrees) gives |1 - eta_0| up to 7e-12 (measured, verify.multiscale),
#: and the other eigenvalues near 1 are no more accurate than that.
NEAR_ONE_ERROR_FACTOR = 10


class DisconnectedGraphWarning(UserWarning):
    """The kernel graph has more than one connected (closed) component, structurally or numerically."""


class DisconnectedGraphError(InputError):
    """Raised instead of :class:`DisconnectedGraphWarning` when ``strict=True``."""


def count_components(C, *, symmetric: bool | None = None, cmin=None) -> int:
    """Multiplicity of eigenvalue 1 of ``N_R(C)`` read off the graph of ``C > 0``.

    Parameters
    ----------
    C : array of shape (n, n), or scipy.sparse array/matrix
        Nonnegative scores (a sparse ``C``: its stored positive entries, :func:`sparse_components`).
    symmetric : bool, optional
        ``True``: count connected components.  ``False``: count closed communicating classes
        (strong components with no edge leaving them), which is the multiplicity of eigenvalue 1
        of a stochastic matrix.  ``None``: decide from ``C == C^T`` within 4 sqrt(eps) (relative).
    cmin : 0-d array or float, optional
        ``min(C)`` when a validation pass already has it: a positive minimum answers 1 without
        another pass over ``C``. Without it, ``C`` is validated here.

    Returns
    -------
    int

    Raises
    ------
    spectral.floor.validation.InputError
        (without ``cmin``) ``C`` not a square float matrix, or with NaN, inf or negative entries: the
        graph of ``C > 0`` would drop a NaN score without a word.

    Notes
    -----
    A matrix with all entries positive is connected (one O(n^2) pass on the device, no copy).
    Otherwise ``C`` crosses the host boundary and is read in row tiles of about
    :data:`COMPONENT_TILE_ENTRIES` entries: a first pass counts the positive entries of each row and
    answers 1 when every off-diagonal entry is positive (i.i.d. points whose kernel drops its
    self-loops: ``min(C) = 0`` on the diagonal only), with no copy of ``C``; otherwise a second pass
    writes the column indices of the positive entries (int32, 4 bytes per edge: half a float64 copy
    when nearly every entry is positive) into a compressed-row graph for
    :func:`scipy.sparse.csgraph.connected_components` (its unused weights are one broadcast 1.0).
    Measured peak (tracemalloc, beyond ``C``) with one zero off the diagonal: 0.64 and 0.56 float64
    copies of ``C`` at n = 2000 and 3000 (the edge list built before took 5.1 and 3.3); zero diagonal
    only: 0.017 and 0.008 (before: the same 5.1 and 3.3). Entries that
    are positive but below round-off are edges here; :func:`near_one_count` sees those.

    Examples
    --------
    >>> import numpy as np
    >>> count_components(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    2
    """
    sparse = sys.modules.get("scipy.sparse")
    if sparse is not None and sparse.issparse(C):
        if symmetric is None:
            diff = abs(C - C.T)
            top = float(abs(C).max()) if C.nnz else 0.0
            symmetric = top == 0.0 or float(diff.max()) <= symmetry_tolerance(C.dtype) * top
        return sparse_components(C, symmetric=bool(symmetric))
    if cmin is None:  # a direct call: one validating pass (NaN, inf and negatives refused) gives min(C)
        _, stats = scan_scores(C, square=True, symmetry=symmetric is None)
        cmin = stats.cmin
        if symmetric is None:
            symmetric = stats.defect <= symmetry_tolerance(C.dtype)
    elif symmetric is None:  # min(C) from the caller's validation pass
        symmetric = symmetry_defect(C) <= symmetry_tolerance(C.dtype)
    if float(cmin) > 0.0:
        return 1
    Ch = to_numpy(C)
    n = Ch.shape[0]
    rows = max(1, COMPONENT_TILE_ENTRIES // max(n, 1))
    counts = np.empty(n, dtype=np.int64)
    full = True  # every off-diagonal entry positive so far
    for i0 in range(0, n, rows):
        tile = Ch[i0 : i0 + rows] > 0
        counts[i0 : i0 + tile.shape[0]] = np.count_nonzero(tile, axis=1)
        if full:
            r = np.arange(tile.shape[0])
            full = bool(np.all(counts[i0 : i0 + tile.shape[0]] - tile[r, r + i0] == n - 1))
    if full:
        return 1  # n >= 2 nodes all joined to each other (one closed class)
    edges = int(counts.sum())
    index = np.int32 if max(edges, n) < np.iinfo(np.int32).max else np.int64  # one dtype: no index copy
    indptr = np.zeros(n + 1, dtype=index)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(edges, dtype=index)
    for i0 in range(0, n, rows):
        flat = np.flatnonzero(Ch[i0 : i0 + rows] > 0)
        indices[indptr[i0] : indptr[i0] + flat.size] = flat % n
    return _csr_components(indices, indptr, n, symmetric=symmetric)


def sparse_components(matrix, *, symmetric: bool) -> int:
    """:func:`count_components` of a SciPy sparse score matrix (its stored positive entries), O(nnz).

    Parameters
    ----------
    matrix : scipy.sparse array or matrix of shape (n, n)
        Nonnegative scores; stored zeros are not edges.
    symmetric : bool
        Connected components (``True``) or closed communicating classes (``False``).

    Returns
    -------
    int

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> sparse_components(sp.csr_array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), symmetric=True)
    2
    """
    import scipy.sparse as sp

    g = sp.csr_array(matrix)
    if g.nnz and not np.all(g.data > 0):
        g = g.copy()
        g.data[~(g.data > 0)] = 0.0
        g.eliminate_zeros()
    g.sort_indices()
    return _csr_components(g.indices, g.indptr, g.shape[0], symmetric=symmetric)


def _csr_components(indices, indptr, n: int, *, symmetric: bool) -> int:
    """Strong components (symmetric) or closed classes (not) of the graph with these CSR edges."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    ones = np.broadcast_to(np.float64(1.0), indices.shape)  # csgraph wants float64 weights; never read
    graph = sp.csr_array((ones, indices, indptr), shape=(n, n))
    ncomp, labels = connected_components(graph, directed=True, connection="strong")
    if symmetric:
        return int(ncomp)
    # a class is closed when no edge leaves it; checked per row tile of edges
    leaves = np.zeros(ncomp, dtype=bool)
    counts = np.diff(indptr)
    rows = max(1, COMPONENT_TILE_ENTRIES // max(n, 1))
    for i0 in range(0, n, rows):
        i1 = min(n, i0 + rows)
        src = np.repeat(labels[i0:i1], counts[i0:i1])
        dst = labels[indices[indptr[i0] : indptr[i1]]]
        leaves[src[src != dst]] = True
    return int(ncomp - np.count_nonzero(leaves))


def operator_components(op, n: int, like, *, symmetric: bool, strict: bool):
    """Components of an operator's graph by breadth-first search with indicator matvecs.

    ``reach <- reach | (C reach > 0)`` (and ``C^T reach`` for non-symmetric operators: weak
    components) until it stops growing; one matvec per hop. The kernel entries are never stored.
    Stops after :data:`OPERATOR_BFS_MATVECS` matvecs (returning a lower bound) or, with ``strict``,
    at the second component found.

    Returns
    -------
    (int, bool)
        The count and whether it is exact (False: a lower bound).
    """
    labels = np.full(n, -1)
    count, used = 0, 0
    while True:
        free = np.flatnonzero(labels < 0)
        if free.size == 0:
            return count, True
        if used >= OPERATOR_BFS_MATVECS or (strict and count >= 2):
            return count + 1, False  # at least one more component
        reach = np.zeros(n)
        reach[free[0]] = 1.0
        count += 1
        while used < OPERATOR_BFS_MATVECS:
            v = from_numpy(reach, like=like)
            grow = to_numpy(op.matvec(v)) > 0
            if not symmetric and hasattr(op, "rmatvec"):
                grow |= to_numpy(op.rmatvec(v)) > 0
                used += 1
            used += 1
            new = grow | (reach > 0)
            if new.sum() == (reach > 0).sum():
                break
            reach = new.astype(float)
        labels[(reach > 0) & (labels < 0)] = count - 1


def near_one_tolerance(dtype, *, solver_tol: float = 0.0, eigenvalues=None) -> float:
    """Distance from 1 within which a computed eigenvalue counts as a copy of 1.

    ``max(NEAR_ONE_EPS eps(dtype), solver_tol, NEAR_ONE_ERROR_FACTOR |1 - eta_0|)``: the eigensolver's
    round-off (:data:`NEAR_ONE_EPS`), ARPACK's requested accuracy when coarser, and ten times the
    error of the computed eigenvalue 1 (``eta_0``, the one of ``eigenvalues`` closest to 1; the exact
    value is 1), which measures how accurate the solver was near 1 for this matrix.

    Examples
    --------
    >>> import numpy as np
    >>> near_one_tolerance(np.float64)
    2.220446049250313e-14
    >>> float(f"{near_one_tolerance(np.float64, eigenvalues=np.array([1 - 1e-12, 0.5])):.3g}")
    1e-11
    """
    solver_tol = check_real("solver_tol", solver_tol, low=0.0)
    tol = max(NEAR_ONE_EPS * float(np.finfo(np.dtype(dtype_name(dtype))).eps), solver_tol)
    if eigenvalues is not None:
        eta = np.asarray(to_numpy(eigenvalues)).reshape(-1)
        if eta.size:
            tol = max(tol, NEAR_ONE_ERROR_FACTOR * float(np.min(np.abs(eta - 1.0))))
    return tol


def near_one_count(eigenvalues, tol: float) -> int:
    """Number of eigenvalues with ``|eta - 1| <= tol`` (complex eigenvalues by their distance to 1)."""
    eta = np.asarray(to_numpy(eigenvalues)).reshape(-1)
    return int(np.sum(np.abs(eta - 1.0) <= tol))


def report_components(ncomp, exact: bool, strict: bool, *, near_one: int | None = None, tol: float = 0.0,
                      eigenvalues=None, complete: bool = False, stacklevel: int = 3) -> None:
    """Warn (or raise with ``strict``) when the graph is disconnected, structurally or numerically.

    Parameters
    ----------
    ncomp : int or None
        Components of the graph ``C > 0`` (None: not counted).
    exact : bool
        False when ``ncomp`` is a lower bound.
    strict : bool
        Raise :class:`DisconnectedGraphError` instead of warning.
    near_one : int, optional
        Computed eigenvalues within ``tol`` of 1 (:func:`near_one_count`); a numerical disconnection
        is reported when it exceeds ``max(ncomp, 1)``.
    tol : float
        The tolerance behind ``near_one``.
    eigenvalues : array, optional
        The computed eigenvalues (the first few near 1 are quoted in the message).
    complete : bool
        Whether ``eigenvalues`` are all ``n`` eigenvalues (else ``near_one`` is a lower bound when
        every computed eigenvalue is near 1).
    stacklevel : int
        Passed to :func:`warnings.warn`.
    """
    if ncomp is not None and ncomp > 1:
        bound = "" if exact else "at least "
        msg = (
            f"the kernel graph has {bound}{ncomp} connected components: eigenvalue 1 has multiplicity "
            f"{bound}{ncomp}, its eigenvectors are not unique and iterative solvers return an arbitrary "
            "number of copies of it; analyse the components separately or enlarge the kernel scale"
        )
    elif near_one is not None and near_one > max(ncomp or 1, 1):
        eta = np.asarray(to_numpy(eigenvalues)).reshape(-1) if eigenvalues is not None else np.zeros(0)
        close = eta[np.abs(eta - 1.0) <= tol]
        gaps = ", ".join(f"{float(abs(1.0 - e)):.2g}" for e in close[:4])
        bound = "at least " if (not complete and eta.size and near_one == eta.size) else ""
        msg = (
            f"the kernel graph is numerically disconnected: {bound}{near_one} eigenvalues lie within "
            f"{tol:.2g} of 1 (|1 - eta| = {gaps}{', ...' if close.size > 4 else ''}) although the graph "
            "C > 0 is connected; scores between the parts are below round-off, so eigenvalue 1 is multiple in "
            "floating point and its eigenvectors are not unique; analyse the parts separately or enlarge the "
            "kernel scale"
        )
    else:
        return
    if strict:
        raise DisconnectedGraphError(msg + " (strict=True)")
    warnings.warn(msg, DisconnectedGraphWarning, stacklevel=stacklevel)
