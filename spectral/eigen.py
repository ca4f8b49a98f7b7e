"""Spectra of attention (Markov) matrices ``A = D^-1 C``: dense, Lanczos, matrix-free, circulant.

:func:`markov_spectrum` is the one entry point.  Symmetric scores (``Q = K``,
FNA Assumptions 1 and 2) are solved through the symmetric conjugate
``D^-1/2 C D^-1/2`` (FNA eq. 33): real eigenvalues, orthonormal ``v``,
right eigenvectors ``psi = D^-1/2 v`` and left ones ``phi = D^1/2 v`` (eq. 35).
Non-symmetric scores (``Q != K``, dot-product attention) give complex
eigenvalues ordered by modulus.  An equispaced circle grid gives a circulant
``C`` whose exact spectrum is one real FFT of its first row
(:func:`circulant_spectrum`).  Before solving, the connected components of the
kernel graph are counted (eigenvalue 1 has that multiplicity, and Lanczos
solvers return an arbitrary number of its copies on a disconnected graph);
dense requests pass the memory guard of :mod:`spectral.memory` first.

Host boundary: component counting and the non-symmetric eigensolvers
(``numpy.linalg.eig``, ARPACK ``eigs``) run on the host (``to_numpy``); the
array API has no general eigensolver.  Symmetric dense solves use
:func:`spectral.backend.eigh` on the input's namespace (CuPy stays on the GPU).

References
----------
FNA: "Fractional neural attention" (``../shared/papers/fractional-neural-attention.txt``),
eqs. (19)-(20), (33)-(35).  DESIGN.md sections 3.1 (circulant spectrum, performance
notes) and 5 (GPU eigensolvers).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral import backend
from spectral.backend import array_namespace, from_numpy, to_numpy
from spectral.memory import DenseMemoryError, check_dense_memory
from spectral.normalize import (
    _check_scores,
    _row_sums_checked,
    _scan_scores,
    _symmetry_defect,
    symmetry_tolerance,
)

__all__ = [
    "METHODS",
    "DENSE_MAX_N",
    "FLOAT32_FROM_N",
    "DisconnectedGraphError",
    "DisconnectedGraphWarning",
    "GeneratorEigenvalues",
    "Spectrum",
    "circulant_spectrum",
    "count_components",
    "generator_eigenvalues",
    "markov_spectrum",
]

METHODS = ("auto", "dense", "lanczos", "matrix-free", "circulant")
#: ``method="auto"`` uses the dense solver up to this n (and whenever all eigenvalues are asked
#: for); above it ARPACK on the stored conjugate.  Measured (1 BLAS thread, FNA kernel on random
#: circle points, k = 10): n = 1000 dense 0.20 s / Lanczos 0.17 s; n = 2000 dense 1.64 s /
#: Lanczos 0.38 s.  Dense ``eigh`` is O(n^3) (~65 s at n = 5000 under load, DESIGN.md 3.1).
DENSE_MAX_N = 1000
#: From this n the Lanczos path stores the conjugate in float32 (DESIGN.md 3.1: ARPACK on the
#: stored matrix needs 3 GiB in float64 at n = 20000).
FLOAT32_FROM_N = 10_000
#: Matvec budget of the breadth-first component count on operators (each matvec is O(n^2)).
OPERATOR_BFS_MATVECS = 32


class DisconnectedGraphWarning(UserWarning):
    """The kernel graph has more than one connected (closed) component."""


class DisconnectedGraphError(ValueError):
    """Raised instead of :class:`DisconnectedGraphWarning` when ``strict=True``."""


@dataclass(frozen=True)
class Spectrum:
    """Leading eigenpairs of an attention matrix ``A = D^-1 C``.

    Attributes
    ----------
    eigenvalues : array of shape (k,)
        Descending (real, symmetric path) or ordered by decreasing modulus, ties by
        decreasing real then imaginary part (complex, non-symmetric path).
    right_vectors : array of shape (n, k) or None
        Right eigenvectors ``psi_j`` (``A psi_j = eta_j psi_j``) when ``vectors=True``.
        Symmetric path: ``psi_j = D^-1/2 v_j`` with unit ``v_j`` (FNA eq. 35).
        Non-symmetric path: unit 2-norm, largest-|entry| real positive.
    left_vectors : array of shape (n, k) or None
        Left eigenvectors ``phi_j`` (``phi_j^T A = eta_j phi_j^T``), bi-orthonormal to
        the right ones: ``phi_i^T psi_j = delta_ij``.  Symmetric path: ``D^1/2 v_j``.
    conjugate_vectors : array of shape (n, k) or None
        Symmetric path: the orthonormal eigenvectors ``v_j`` of ``D^-1/2 C D^-1/2``,
        signs fixed so the largest-|entry| is positive.
    method : str
        The path used: ``"dense"``, ``"lanczos"``, ``"matrix-free"`` or ``"circulant"``.
    solver : str
        The routine that computed the eigenvalues (e.g. ``"numpy.linalg.eigh"``).
    residual : float or None
        ``max_j ||A psi_j - eta_j psi_j|| / ||psi_j||`` over the returned pairs
        (2-norms); ``None`` when not measured: circulant path without a matrix or
        without vectors (exact up to FFT round-off), general dense path without vectors.
    n_components : int or None
        Connected components of the kernel graph (symmetric ``C``) or closed
        communicating classes (non-symmetric ``C``): the multiplicity of eigenvalue 1.
    components_exact : bool
        False when the operator count stopped at its matvec budget (``n_components``
        is then a lower bound).
    symmetric : bool
        Whether the symmetric (real) path was used.
    degrees : array of shape (n,) or None
        Row sums ``D`` of ``C``.
    n : int
        Size of ``A``.
    frequencies : array of shape (k,) or None
        Circulant path: the Fourier index ``m`` of each eigenvalue (eigenvector
        ``cos(2 pi j m / n)`` or ``sin``).
    max_imag : float
        Largest ``|imag|`` of the eigenvalues before a cast to real (0 when none).
    storage_dtype : str
        dtype in which the matrix was stored for the solver.
    """

    eigenvalues: Any
    right_vectors: Any
    left_vectors: Any
    conjugate_vectors: Any
    method: str
    solver: str
    residual: float | None
    n_components: int | None
    components_exact: bool
    symmetric: bool
    degrees: Any
    n: int
    frequencies: Any = None
    max_imag: float = 0.0
    storage_dtype: str = "float64"

    @property
    def psi(self):
        """Alias of :attr:`right_vectors` (FNA notation)."""
        return self.right_vectors

    @property
    def phi(self):
        """Alias of :attr:`left_vectors` (FNA notation)."""
        return self.left_vectors


# ----------------------------------------------------------------------------- validation


def _check_option(value, name: str, valid: tuple) -> str:
    if not isinstance(value, str) or value not in valid:
        raise ValueError(f"{name} must be one of {', '.join(repr(v) for v in valid)}; got {value!r}")
    return value


def _check_k(k, n: int, *, method: str):
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be an integer in [1, {n}] or None, got {k!r}")
    k = int(k)
    if method in ("lanczos", "matrix-free"):
        if not (1 <= k <= n - 2):
            raise ValueError(
                f"k must be in [1, n-2] = [1, {n - 2}] for method={method!r} (ARPACK needs k < n-1), got {k}; "
                "use method='dense' for all eigenvalues"
            )
    elif not (1 <= k <= n):
        raise ValueError(f"k must be in [1, n] = [1, {n}], got {k}")
    return k


def _check_nonneg_number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    value = float(value)
    if not (value >= 0.0 and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def _is_operator(C) -> bool:
    return hasattr(C, "matvec") and hasattr(C, "row_sums") and not hasattr(C, "__array_namespace__")


def _dtype_name(dtype) -> str:
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype).rsplit(".", 1)[-1]


# ----------------------------------------------------------------------------- components


def count_components(C, *, symmetric: bool | None = None) -> int:
    """Multiplicity of eigenvalue 1 of ``N_R(C)`` read off the graph of ``C > 0``.

    Parameters
    ----------
    C : array of shape (n, n)
        Nonnegative scores.
    symmetric : bool, optional
        ``True``: count connected components.  ``False``: count closed
        communicating classes (strong components with no edge leaving them),
        which is the multiplicity of eigenvalue 1 of a stochastic matrix.
        ``None``: decide from ``C == C^T`` within 4 sqrt(eps) (relative).

    Returns
    -------
    int

    Notes
    -----
    A matrix with all entries positive is connected (one O(n^2) pass on the
    device, no copy).  Otherwise ``C`` crosses the host boundary and the edge list
    is built in row blocks (8 bytes per nonzero) for
    :func:`scipy.sparse.csgraph.connected_components`.
    """
    xp = array_namespace(C)
    if symmetric is None:
        symmetric = _symmetry_defect(C, xp) <= symmetry_tolerance(C.dtype, xp)
    return _count_components(C, symmetric=symmetric, cmin=xp.min(C))


def _count_components(C, *, symmetric: bool, cmin) -> int:
    """:func:`count_components` given ``min(C)`` from a validation pass (no pass when positive)."""
    if float(cmin) > 0.0:
        return 1
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    Ch = to_numpy(C)
    n = Ch.shape[0]
    block = max(1, (1 << 22) // max(n, 1))
    rows, cols = [], []
    for i0 in range(0, n, block):
        r, c = np.nonzero(Ch[i0 : i0 + block] > 0)
        rows.append((r + i0).astype(np.int32))
        cols.append(c.astype(np.int32))
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    graph = sp.csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
    ncomp, labels = connected_components(graph, directed=True, connection="strong")
    if symmetric:
        return int(ncomp)
    leaving = labels[rows] != labels[cols]
    open_classes = np.unique(labels[rows[leaving]])
    return int(ncomp - open_classes.size)


def _operator_components(op, n: int, xp_like, *, symmetric: bool, strict: bool):
    """Components of an operator's graph by breadth-first search with indicator matvecs.

    ``reach <- reach | (C reach > 0)`` (and ``C^T reach`` for non-symmetric operators:
    weak components) until it stops growing; one matvec per hop.  The kernel
    entries are never stored.  Stops after :data:`OPERATOR_BFS_MATVECS` matvecs
    (returning a lower bound) or, with ``strict``, at the second component found.
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
            v = from_numpy(reach, like=xp_like)
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


def _report_components(ncomp, exact: bool, strict: bool):
    if ncomp is None or ncomp <= 1:
        return
    bound = "" if exact else "at least "
    msg = (
        f"the kernel graph has {bound}{ncomp} connected components: eigenvalue 1 has multiplicity "
        f"{bound}{ncomp}, its eigenvectors are not unique and iterative solvers return an arbitrary "
        "number of copies of it; analyse the components separately or enlarge the kernel scale"
    )
    if strict:
        raise DisconnectedGraphError(msg + " (strict=True)")
    warnings.warn(msg, DisconnectedGraphWarning, stacklevel=3)


# ----------------------------------------------------------------------------- helpers


def _colnorm(V, xp):
    """2-norms of the columns of a real ``V``."""
    return xp.sqrt(xp.sum(V * V, axis=0))


def _astype(x, dtype, xp, copy=False):
    if hasattr(xp, "astype"):
        return xp.astype(x, dtype, copy=copy)
    return x.astype(dtype, copy=copy)


def _argsort_desc(w, xp):
    """Stable descending order (ties keep their input order)."""
    if xp is np:
        return np.argsort(-w, kind="stable")
    try:
        return xp.argsort(w, descending=True, stable=True)
    except TypeError:  # namespaces without the array-API keywords (stable by default there)
        return xp.argsort(-w)


def _sign_flip(V, xp):
    """Flip columns so that the first largest-|entry| of each is positive (STYLE.md item 4)."""
    n, k = V.shape
    idx = xp.argmax(xp.abs(V), axis=0)
    picks = xp.take(xp.reshape(V, (-1,)), idx * k + xp.arange(k, dtype=idx.dtype))
    signs = xp.sign(picks)
    signs = xp.where(signs == 0, xp.ones_like(signs), signs)
    return V * signs[None, :]


def _phase_fix(V: np.ndarray) -> np.ndarray:
    """Unit 2-norm columns with the first largest-|entry| real positive (host, complex)."""
    V = V / np.linalg.norm(V, axis=0)[None, :]
    idx = np.argmax(np.abs(V), axis=0)
    picks = V[idx, np.arange(V.shape[1])]
    return V * (np.abs(picks) / picks)[None, :]


def _order_complex(w: np.ndarray) -> np.ndarray:
    """Indices ordering ``w`` by decreasing modulus, then real part, then imaginary part."""
    return np.lexsort((-w.imag, -w.real, -np.abs(w)))


def _residual_symmetric(apply_S, V, w, d, xp) -> float:
    """``max_j ||A psi_j - eta_j psi_j|| / ||psi_j||`` with ``psi = D^-1/2 v``.

    ``A psi - eta psi = D^-1/2 (S v - eta v)``.
    """
    s = 1.0 / xp.sqrt(d)
    R = s[:, None] * (apply_S(V) - V * w[None, :])
    P = s[:, None] * V
    num = _colnorm(R, xp)
    den = _colnorm(P, xp)
    return float(xp.max(num / den))


def _finite_or_raise(x, what: str, xp) -> None:
    if not bool(xp.all(xp.isfinite(x))):
        raise FloatingPointError(f"the eigensolver returned non-finite {what}")


def _symmetric_result(w, V, d, *, xp, k, vectors, method, solver, apply_S, ncomp, exact, storage):
    """Sort descending, truncate, sign-fix, build psi/phi and the residual."""
    order = _argsort_desc(w, xp)
    w = xp.take(w, order)
    V = xp.take(V, order, axis=1)
    if k is not None:
        w = w[:k]
        V = V[:, :k]
    _finite_or_raise(w, "eigenvalues", xp)
    _finite_or_raise(V, "eigenvectors", xp)
    V = _sign_flip(V, xp)
    residual = _residual_symmetric(apply_S, V, w, d, xp)
    sq = xp.sqrt(d)
    return Spectrum(
        eigenvalues=w,
        right_vectors=V / sq[:, None] if vectors else None,
        left_vectors=V * sq[:, None] if vectors else None,
        conjugate_vectors=V if vectors else None,
        method=method,
        solver=solver,
        residual=residual,
        n_components=ncomp,
        components_exact=exact,
        symmetric=True,
        degrees=d,
        n=int(d.shape[0]),
        storage_dtype=storage,
    )


def _nonsymmetric_result(w, Vr, *, apply_A, d, like, k, vectors, method, solver, ncomp, exact, want_real, n):
    """Order by modulus, truncate, optional real cast (checked), left vectors from inv(V)."""
    order = _order_complex(w)
    w = w[order]
    Vr = Vr[:, order] if Vr is not None else None
    if not np.all(np.isfinite(w)):
        raise FloatingPointError("the eigensolver returned non-finite eigenvalues")
    left = None
    if Vr is not None:
        Vr = _phase_fix(Vr)
        if vectors and Vr.shape[1] == n:
            left = np.linalg.inv(Vr).T  # rows of V^-1: bi-orthonormal by construction
    if k is not None:
        w = w[:k]
        if Vr is not None:
            Vr = Vr[:, :k]
            left = left[:, :k] if left is not None else None
    max_imag = float(np.max(np.abs(w.imag))) if w.size else 0.0
    residual = None
    if Vr is not None:
        R = apply_A(Vr) - Vr * w[None, :]
        residual = float(np.max(np.linalg.norm(R, axis=0) / np.linalg.norm(Vr, axis=0)))
    if want_real:
        # scale of a Markov spectrum is its radius, 1; STYLE.md item 4: 100 eps * scale
        eps = np.finfo(w.real.dtype).eps
        if max_imag > 100 * eps * max(1.0, float(np.max(np.abs(w)))):
            raise ValueError(
                f"symmetric=True but the spectrum of A has imaginary parts up to {max_imag:.3g} "
                f"(> 100 eps = {100 * eps:.3g}); C is not similar to a symmetric matrix; "
                "use symmetric=None/False for the complex spectrum"
            )
        w = w.real.copy()
        if Vr is not None:
            Vr = Vr.real.copy()
            left = left.real.copy() if left is not None else None
    return Spectrum(
        eigenvalues=from_numpy(w, like=like),
        right_vectors=from_numpy(Vr, like=like) if (vectors and Vr is not None) else None,
        left_vectors=from_numpy(left, like=like) if left is not None else None,
        conjugate_vectors=None,
        method=method,
        solver=solver,
        residual=residual,
        n_components=ncomp,
        components_exact=exact,
        symmetric=bool(want_real),
        degrees=d,
        n=n,
        max_imag=max_imag,
        storage_dtype="float64" if w.real.dtype == np.float64 else "float32",
    )


def _v0(n: int, rng) -> np.ndarray:
    return np.random.default_rng(rng).standard_normal(n)


# ----------------------------------------------------------------------------- circulant


def circulant_spectrum(first_row, k=None, *, vectors=False, strict=False):
    """Exact spectrum of the row-normalised circulant matrix with the given first row.

    On an equispaced circle grid ``C[i, j] = c[(j - i) mod n]``; the Markov matrix
    is circulant with eigenvectors ``cos(2 pi j m / n)``, ``sin(2 pi j m / n)``
    and eigenvalues (one real FFT of the first row; the n x n matrix is never built)

    .. math:: \\eta_m = \\sum_j c_j \\cos(2\\pi j m / n) \\Big/ \\sum_j c_j .

    Parameters
    ----------
    first_row : array of shape (n,)
        Nonnegative, finite, even (``c_j = c_{n-j}`` within 4 sqrt(eps): a symmetric
        kernel of the geodesic distance), with positive sum.
    k : int, optional
        Number of leading eigenvalues (default: all ``n``).
    vectors : bool
        Also return the (real, Fourier) eigenvectors; ``psi = v / sqrt(D)``,
        ``phi = v sqrt(D)`` with the constant degree ``D = sum_j c_j``.
    strict : bool
        Raise :class:`DisconnectedGraphError` instead of warning on a
        disconnected graph (``gcd(n, support of c) > 1``).

    Returns
    -------
    Spectrum
        ``method="circulant"``; ``frequencies`` gives the Fourier index of each
        eigenvalue (frequencies ``m`` and ``n - m`` give the same eigenvalue; the
        cosine comes first).  ``residual`` is None (exact up to FFT round-off).

    Raises
    ------
    ValueError
        ``first_row`` not 1-D, NaN/inf, negative, zero sum or not even; bad ``k``;
        ``vectors=True`` beyond the memory available.

    Notes
    -----
    The number of connected components of the circulant graph is
    ``gcd(n, {j : c_j > 0})`` (the subgroup of Z_n generated by the support).

    References
    ----------
    DESIGN.md 3.1 ("Equispaced grid = circulant matrix"); FNA Fig. 2a setting.

    Examples
    --------
    >>> import numpy as np
    >>> c = np.array([2.0, 1.0, 0.0, 1.0])
    >>> circulant_spectrum(c).eigenvalues
    array([1. , 0.5, 0.5, 0. ])
    """
    xp = array_namespace(first_row)
    shape = tuple(getattr(first_row, "shape", ()))
    if len(shape) != 1 or shape[0] < 2:
        raise ValueError(f"first_row must be a 1-D array of length n >= 2, got shape {shape}")
    c = first_row
    if c.dtype not in (xp.float32, xp.float64):
        raise ValueError(f"first_row must have a real floating dtype, got {c.dtype}")
    # NaN/inf and negatives from min and max alone (NaN propagates through both): no boolean temporaries
    cmin, cmax = float(xp.min(c)), float(xp.max(c))
    if not (math.isfinite(cmin) and math.isfinite(cmax)):
        raise ValueError("first_row must be finite; it contains NaN or inf")
    if cmin < 0:
        raise ValueError("first_row must be nonnegative")
    n = shape[0]
    k = _check_k(k, n, method="circulant")
    total = xp.sum(c)
    if not cmax > 0:
        raise ValueError("first_row must have a positive sum (degree)")
    # evenness c_j = c_(n-j): compare j = 1..n//2 with its mirror n-1..n-n//2 (half the row suffices)
    h = n // 2
    asym = float(xp.max(xp.abs(c[1 : h + 1] - xp.flip(c[n - h :])))) / cmax
    tol = symmetry_tolerance(c.dtype, xp)
    if asym > tol:
        raise ValueError(
            f"first_row must be even (c_j = c_(n-j)) for a symmetric circulant matrix: relative "
            f"asymmetry {asym:.3g} > 4 sqrt(eps) = {tol:.3g}"
        )
    if float(c[1]) > 0:  # 1 in the support generates Z_n: connected, no pass over the row
        ncomp = 1
    else:
        support = np.flatnonzero(to_numpy(c > 0))
        ncomp = int(np.gcd.reduce(np.concatenate([support, [n]])))
    _report_components(ncomp, True, strict)
    half = xp.real(xp.fft.rfft(c)) / total  # eta_m for m = 0 .. n // 2
    m_host, kind_host = _circulant_order(half, n, k, xp)
    m_idx = from_numpy(m_host, like=c)
    eta = xp.take(half, m_idx)
    freqs = m_idx
    order_len = int(m_host.shape[0])
    d = total * xp.ones((n,), dtype=c.dtype) if vectors else None
    right = left = conj = None
    if vectors:
        check_dense_memory(n, order_len, dtype=_dtype_name(c.dtype), copies=3, what="circulant eigenvectors")
        kinds = from_numpy(kind_host, like=c)
        j = xp.arange(n, dtype=m_idx.dtype)
        phase = xp.remainder(j[:, None] * freqs[None, :], n)  # exact integer reduction first
        angle = xp.astype(phase, c.dtype) * (2.0 * math.pi / n)
        V = xp.where(kinds[None, :] == 0, xp.cos(angle), xp.sin(angle))
        V = V / _colnorm(V, xp)[None, :]
        conj = _sign_flip(V, xp)
        sq = xp.sqrt(d)
        right, left = conj / sq[:, None], conj * sq[:, None]
    return Spectrum(
        eigenvalues=eta,
        right_vectors=right,
        left_vectors=left,
        conjugate_vectors=conj,
        method="circulant",
        solver=f"{xp.__name__}.fft.rfft",
        residual=None,
        n_components=ncomp,
        components_exact=True,
        symmetric=True,
        degrees=d,
        n=n,
        frequencies=freqs,
        storage_dtype=_dtype_name(c.dtype),
    )


def _circulant_order(half, n: int, k, xp):
    """Fourier index and kind (0 cos, 1 sin) of the leading ``k`` circulant eigenvalues (host arrays).

    The full spectrum lists ``m = 0``, then ``m`` (cos) and ``n - m`` (sin) for ``m = 1 ..
    (n-1)//2``, then ``n/2`` (n even), all with value ``half[m]``; its stable descending order is
    by value, then ``m``, cos before sin.  So only ``half`` (``n//2 + 1`` values) is ordered,
    and for ``k`` given only its top ``k``: ``argpartition`` picks them in O(n), every value
    tied with the ``k``-th is kept (ties break by ``m``), and only those few are sorted.
    Same result as a stable descending sort of the full spectrum.
    """
    h = n // 2
    if k is not None and k < h + 1 and xp is np:
        top = np.argpartition(half, h + 1 - k)[h + 1 - k :]  # the k largest, in no particular order
        cand = np.flatnonzero(half >= half[top].min())  # ascending m; includes every tie at the boundary
        m_sorted = cand[np.argsort(-half[cand], kind="stable")]
    else:
        m_sorted = to_numpy(_argsort_desc(half, xp)).astype(np.int64)
    twice = (m_sorted > 0) & (2 * m_sorted != n)  # cos and sin: two eigenvalues
    reps = np.where(twice, 2, 1)
    m_full = np.repeat(m_sorted, reps)
    kind = np.zeros(m_full.shape[0], dtype=np.int64)
    starts = np.cumsum(reps) - reps
    kind[starts[twice] + 1] = 1
    if k is not None:
        m_full, kind = m_full[:k], kind[:k]
    return m_full.astype(np.int64), kind


def _check_circulant(C, xp) -> None:
    """Refuse a matrix that is not circulant (sampled rows vs shifts of row 0)."""
    n = C.shape[0]
    row0 = C[0, :]
    scale = float(xp.max(xp.abs(row0)))
    tol = symmetry_tolerance(C.dtype, xp)
    for i in sorted({1, n // 3, n // 2, n - 1} - {0}):
        err = float(xp.max(xp.abs(C[i, :] - xp.roll(row0, i)))) / scale
        if err > tol:
            raise ValueError(
                f"method='circulant' (or grid=True) needs a circulant C (equispaced circle grid): row {i} "
                f"differs from row 0 shifted by {i} by {err:.3g} (relative) > 4 sqrt(eps); use method='dense'"
            )


# ----------------------------------------------------------------------------- main entry


def markov_spectrum(
    C,
    k=None,
    *,
    method="auto",
    vectors=False,
    grid=False,
    strict=False,
    symmetric=None,
    max_memory=None,
    tol=0.0,
    dtype=None,
    rng=None,
):
    """Leading eigenvalues (and eigenvectors) of the attention matrix ``A = D^-1 C``.

    Parameters
    ----------
    C : array of shape (n, n) or operator
        Nonnegative finite scores (``C[i, j]``: query ``i``, key ``j``), or a
        matrix-free operator with ``shape``, ``dtype``, ``matvec(v)``,
        ``row_sums()`` (and ``rmatvec(v)``, ``symmetric`` optionally), e.g.
        :class:`spectral.kernels.KernelOperator` (treated as symmetric when its keys
        ``y`` are its queries ``x``: a kernel of a symmetric distance).
    k : int, optional
        Number of leading eigenpairs; ``None``: all ``n`` (dense or circulant only).
        ``1 <= k <= n-2`` for ``"lanczos"`` and ``"matrix-free"`` (ARPACK).
    method : {"auto", "dense", "lanczos", "matrix-free", "circulant"}
        ``"auto"``: circulant when ``grid=True``; operator input: matrix-free;
        otherwise dense when ``k is None`` or ``n <= DENSE_MAX_N`` and Lanczos
        (ARPACK on the stored conjugate, float32 from ``n = FLOAT32_FROM_N``) above;
        a solver refused by the memory guard falls back to the next lighter one
        (dense -> lanczos -> matrix-free).  An explicit method is never changed.
    vectors : bool
        Return right/left eigenvectors (``psi``, ``phi``).
    grid : bool
        ``C`` comes from an equispaced circle grid (circulant): with ``"auto"``
        use the exact FFT path (the circulant structure is verified on sampled rows).
    strict : bool
        Raise :class:`DisconnectedGraphError` instead of warning
        (:class:`DisconnectedGraphWarning`) on a disconnected kernel graph.
    symmetric : bool, optional
        ``None``: detect (``max|C - C^T| <= 4 sqrt(eps) max|C|``).  ``True``: demand a real
        spectrum; a non-symmetric ``C`` is then solved on the general path and
        refused (``ValueError``) if any ``|imag| > 100 eps``.  ``False``: general path.
    max_memory : float, optional
        Byte limit for dense work (default: memory available now).
    tol : float >= 0
        ARPACK relative accuracy (0: machine precision of the storage dtype).
    dtype : {None, "float32", "float64"}
        Storage dtype for the Lanczos / matrix-free paths; None: float32 from
        ``n = FLOAT32_FROM_N`` for Lanczos, else the input's dtype.
    rng : numpy.random.Generator or int, optional
        Seeds ARPACK's start vector (results agree to round-off across seeds).

    Returns
    -------
    Spectrum

    Raises
    ------
    ValueError
        Non-square ``C``, NaN/inf, negative entries, a zero row sum, bad ``k`` (range
        stated), unknown ``method`` or ``dtype``, a non-circulant ``C`` on the circulant
        path, ``symmetric=True`` with a complex spectrum.
    DisconnectedGraphError
        ``strict=True`` and more than one component.
    spectral.memory.DenseMemoryError
        An explicitly requested dense/Lanczos path would exceed the memory limit.

    Notes
    -----
    Symmetric ``C``: :math:`S = D^{-1/2} C D^{-1/2} = V \\Lambda V^T`, ``A`` has
    eigenvalues :math:`\\Lambda`, right eigenvectors :math:`\\psi = D^{-1/2} v` and
    left :math:`\\phi = D^{1/2} v` (FNA eqs. 33-35), so :math:`\\phi_i^T \\psi_j = \\delta_{ij}`.
    Host boundary: the non-symmetric paths run on the host (the array API has no
    general ``eig``); Lanczos runs ARPACK on NumPy and cupyx on CuPy arrays, and on a
    host copy of the stored conjugate for other namespaces; matrix-free products cross
    the host boundary once per ARPACK iteration except on NumPy.
    Connectivity: the components of the graph ``C > 0`` are counted before solving
    (:func:`count_components`; operators: breadth-first search by indicator matvecs,
    at most ``OPERATOR_BFS_MATVECS`` of them) and reported as ``n_components``.

    References
    ----------
    FNA eqs. (19)-(20), (33)-(35); DESIGN.md 3.1 and 5.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[2.0, 1.0, 0.5], [1.0, 2.0, 1.0], [0.5, 1.0, 2.0]])
    >>> spec = markov_spectrum(C)
    >>> round(float(spec.eigenvalues[0]), 12), spec.method, spec.n_components
    (1.0, 'dense', 1)
    """
    method = _check_option(method, "method", METHODS)
    if dtype is not None:
        dtype = _check_option(dtype, "dtype", ("float32", "float64"))
    tol = _check_nonneg_number(tol, "tol")
    if symmetric is not None and not isinstance(symmetric, bool):
        raise ValueError(f"symmetric must be True, False or None, got {symmetric!r}")
    if _is_operator(C):
        return _operator_spectrum(C, k, method=method, vectors=vectors, strict=strict, symmetric=symmetric,
                                  tol=tol, dtype=dtype, rng=rng)
    circulant = method == "circulant" or (method == "auto" and grid)
    # one tiled pass: NaN/inf, negatives, min, max and (not for the circulant path, whose structure
    # check replaces it) the symmetry defect; the row sums below are the only other checking pass
    xp, stats = _scan_scores(C, square=True, symmetry=not circulant)
    n = C.shape[0]
    if n < 2:
        raise ValueError(f"C must be at least 2 x 2, got shape {tuple(C.shape)}")
    if circulant:
        _check_k(k, n, method="circulant")
        _check_circulant(C, xp)
        spec = circulant_spectrum(C[0, :], k, vectors=vectors, strict=strict)
        if vectors:
            d = spec.degrees  # constant degree: S v = C v / d
            residual = _residual_symmetric(lambda V: (C @ V) / d[:, None], spec.conjugate_vectors,
                                           spec.eigenvalues, d, xp)
            spec = _replace(spec, residual=residual)
        return spec
    d = _row_sums_checked(C, xp, cmax=stats.cmax)
    is_sym = stats.defect <= symmetry_tolerance(C.dtype, xp)
    use_sym = is_sym if symmetric is None else (symmetric and is_sym)
    want_real = bool(symmetric) or use_sym
    ncomp = _count_components(C, symmetric=is_sym, cmin=stats.cmin)  # no pass over C when min(C) > 0
    _report_components(ncomp, True, strict)

    itemsize_name = _dtype_name(C.dtype)
    if method == "auto":
        _check_k(k, n, method="dense")
        candidates = ["dense"] if (k is None or n <= DENSE_MAX_N or k > n - 2) else []
        if k is not None and k <= n - 2:
            candidates += ["lanczos", "matrix-free"]
        chosen = None
        for cand in candidates:
            try:
                _memory_check(cand, n, k, itemsize_name, use_sym, vectors, dtype, max_memory)
            except DenseMemoryError:
                if cand == candidates[-1]:
                    raise
                continue
            chosen = cand
            break
        method = chosen
    else:
        _memory_check(method, n, k, itemsize_name, use_sym, vectors, dtype, max_memory)
    k = _check_k(k, n, method=method)
    if method in ("lanczos", "matrix-free") and k is None:
        raise ValueError(f"k must be given (an integer in [1, n-2] = [1, {n - 2}]) for method={method!r}")

    if use_sym:
        return _symmetric_paths(C, d, xp, k=k, method=method, vectors=vectors, ncomp=ncomp, tol=tol,
                                dtype=dtype, rng=rng)
    return _general_paths(C, d, xp, k=k, method=method, vectors=vectors, ncomp=ncomp, tol=tol,
                          want_real=want_real, rng=rng)


def _replace(spec: Spectrum, **changes) -> Spectrum:
    import dataclasses

    return dataclasses.replace(spec, **changes)


def _lanczos_dtype(n: int, dtype, input_dtype: str) -> str:
    if dtype is not None:
        return dtype
    return "float32" if n >= FLOAT32_FROM_N else input_dtype


def _memory_check(method, n, k, dtype_name, use_sym, vectors, dtype, max_memory) -> None:
    """Memory guard (spectral.memory) for the extra dense n x n work of each path.

    dense symmetric: S, eigenvectors, LAPACK syevd workspace (~2 n^2), and S V for the
    residual: 5 copies.  dense general: A, complex V (2), workspace, inverse (2): 6
    (3 without vectors).  lanczos: one stored conjugate in the storage dtype.
    matrix-free: no n x n storage.
    """
    if method == "dense":
        copies = 5 if use_sym else (6 if vectors else 3)
        check_dense_memory(n, dtype=dtype_name, copies=copies, max_bytes=max_memory, what="dense eigensolve")
    elif method == "lanczos":
        check_dense_memory(n, dtype=_lanczos_dtype(n, dtype, dtype_name), copies=1, max_bytes=max_memory,
                           what="stored matrix for Lanczos")
    elif method == "circulant":
        raise ValueError("method='circulant' needs a circulant score matrix (grid=True) or circulant_spectrum")


def _symmetric_paths(C, d, xp, *, k, method, vectors, ncomp, tol, dtype, rng):
    n = C.shape[0]
    s = 1.0 / xp.sqrt(d)
    if method == "dense":
        S = C * s[:, None]  # (C_ij s_i) s_j: one n x n temporary instead of two
        S *= s[None, :]
        w, V = backend.eigh(S)
        return _symmetric_result(w, V, d, xp=xp, k=k, vectors=vectors, method="dense",
                                 solver=f"{getattr(xp, '__name__', 'xp')}.linalg.eigh", apply_S=lambda X: S @ X,
                                 ncomp=ncomp, exact=True, storage=_dtype_name(C.dtype))
    native = xp is np or backend.is_cupy_array(C)  # other namespaces: ARPACK on a host copy
    if method == "lanczos":
        sd = _lanczos_dtype(n, dtype, _dtype_name(C.dtype))
        sd_x = getattr(xp, sd)
        s_sd = _astype(s, sd_x, xp)
        if xp is np:  # cast and first scaling in one pass (same float ops as cast, then multiply)
            S = np.multiply(C, s_sd[:, None], dtype=sd_x)
        else:
            S = _astype(C, sd_x, xp, copy=True)
            S *= s_sd[:, None]
        S *= s_sd[None, :]
        target = S if native else to_numpy(S)
        w, V = backend.eigsh(target, k, which="LA", v0=_v0(n, rng) if not backend.is_cupy_array(C) else None,
                             tol=tol)
        w = from_numpy(np.asarray(w, dtype=np.float64), like=C) if not backend.is_cupy_array(C) else w
        V = from_numpy(np.asarray(V), like=C) if not backend.is_cupy_array(C) else V
        V = _astype(V, C.dtype, xp)
        w = _astype(w, C.dtype, xp)
        V = V / _colnorm(V, xp)[None, :]
        apply_S = lambda X: _astype(S @ _astype(X, sd_x, xp), C.dtype, xp)  # noqa: E731
        return _symmetric_result(w, V, d, xp=xp, k=k, vectors=vectors, method="lanczos",
                                 solver="scipy.sparse.linalg.eigsh" if not backend.is_cupy_array(C)
                                 else "cupyx.scipy.sparse.linalg.eigsh",
                                 apply_S=apply_S, ncomp=ncomp, exact=True, storage=sd)
    # matrix-free over the stored C: S v = s * (C (s * v)), no second n x n array
    def apply_S(X):
        return s[:, None] * (C @ (s[:, None] * X))

    return _matrix_free_symmetric(apply_S, d, xp, like=C, n=n, k=k, vectors=vectors, ncomp=ncomp, exact=True,
                                  tol=tol, rng=rng, storage=_dtype_name(C.dtype))


def _matrix_free_symmetric(apply_S, d, xp, *, like, n, k, vectors, ncomp, exact, tol, rng, storage):
    if backend.is_cupy_array(like):
        # GPU: the Lanczos iteration and every product stay on the device (no host round trip)
        def mv_device(v):
            return apply_S(v.reshape(n, -1)).reshape(v.shape)

        op = backend.linear_operator((n, n), mv_device, matmat=mv_device, dtype=like.dtype, like=like)
        w, V = backend.eigsh(op, k, which="LA", tol=tol)
        solver = "cupyx.scipy.sparse.linalg.eigsh(LinearOperator)"
    else:
        def mv(v):
            v = np.asarray(v)
            X = from_numpy(v.reshape(n, -1), like=like)
            return to_numpy(apply_S(X)).reshape(v.shape)

        op = backend.linear_operator((n, n), mv, matmat=mv, dtype=np.float64)
        w, V = backend.eigsh(op, k, which="LA", v0=_v0(n, rng), tol=tol)
        w = from_numpy(np.asarray(w, dtype=np.float64), like=like)
        V = from_numpy(np.asarray(V, dtype=np.float64), like=like)
        solver = "scipy.sparse.linalg.eigsh(LinearOperator)"
    V = V / _colnorm(V, xp)[None, :]
    return _symmetric_result(w, V, d, xp=xp, k=k, vectors=vectors, method="matrix-free",
                             solver=solver, apply_S=apply_S, ncomp=ncomp, exact=exact, storage=storage)


def _general_paths(C, d, xp, *, k, method, vectors, ncomp, tol, want_real, rng):
    """Non-symmetric ``C``: eigenpairs of ``A = D^-1 C`` on the host (numpy eig / ARPACK eigs)."""
    n = C.shape[0]
    Ch = to_numpy(C)
    dh = to_numpy(d)
    if method == "dense":
        A = Ch / dh[:, None]
        if vectors:
            w, Vr = np.linalg.eig(A)
        else:
            w, Vr = np.linalg.eigvals(A), None
            # the residual needs vectors; for eigenvalues only it is not measured
        return _nonsymmetric_result(w.astype(complex), Vr, apply_A=lambda X: A @ X, d=d, like=C, k=k,
                                    vectors=vectors, method="dense", solver="numpy.linalg.eig", ncomp=ncomp,
                                    exact=True, want_real=want_real, n=n)
    import scipy.sparse.linalg as sla

    if method == "lanczos":
        A = Ch / dh[:, None]
        target = A
        apply_A = lambda X: A @ X  # noqa: E731
    else:
        def apply_A(X):
            return (Ch @ X) / dh[:, None] if X.ndim == 2 else (Ch @ X) / dh
        target = sla.LinearOperator((n, n), matvec=apply_A, matmat=apply_A, dtype=Ch.dtype)
    w, Vr = sla.eigs(target, k=k, which="LM", v0=_v0(n, rng), tol=tol)
    return _nonsymmetric_result(w, Vr, apply_A=apply_A, d=d, like=C, k=k, vectors=vectors,
                                method=method, solver="scipy.sparse.linalg.eigs", ncomp=ncomp, exact=True,
                                want_real=want_real, n=n)


def _operator_spectrum(op, k, *, method, vectors, strict, symmetric, tol, dtype, rng):
    if method not in ("auto", "matrix-free"):
        raise ValueError(f"method must be 'auto' or 'matrix-free' for an operator C (no stored matrix), got {method!r}")
    shape = tuple(op.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"C must be a square operator (n, n), got shape {shape}")
    n = shape[0]
    k = _check_k(k, n, method="matrix-free")
    if k is None:
        raise ValueError(f"k must be given (an integer in [1, n-2] = [1, {n - 2}]) for an operator C")
    d = op.row_sums()
    xp = array_namespace(d)
    if not bool(xp.all(xp.isfinite(d))) or not bool(xp.all(d > 0)):
        bad = np.flatnonzero(~(to_numpy(d) > 0))
        raise ValueError(f"C has a zero or non-finite row sum (first at row {int(bad[0]) if bad.size else '?'})")
    op_sym = getattr(op, "symmetric", None)
    if op_sym is None and getattr(op, "x", None) is not None and getattr(op, "y", None) is op.x:
        op_sym = True  # KernelOperator with keys = queries: a kernel of a (symmetric) distance
    if symmetric is None:
        if op_sym is None:
            raise ValueError("symmetric must be given (True/False) for an operator C without a 'symmetric' "
                             "attribute and with keys different from queries")
        symmetric = bool(op_sym)
    ncomp, exact = _operator_components(op, n, d, symmetric=symmetric, strict=strict)
    _report_components(ncomp, exact, strict)
    if symmetric:
        s = 1.0 / xp.sqrt(d)

        def apply_S(X):
            return s[:, None] * _op_matmat(op, s[:, None] * X, xp)

        return _matrix_free_symmetric(apply_S, d, xp, like=d, n=n, k=k, vectors=vectors, ncomp=ncomp, exact=exact,
                                      tol=tol, rng=rng, storage=_dtype_name(getattr(op, "dtype", "float64")))
    import scipy.sparse.linalg as sla

    dh = to_numpy(d)

    def apply_A(X):
        X2 = X.reshape(n, -1)
        out = to_numpy(_op_matmat(op, from_numpy(np.ascontiguousarray(X2.real), like=d), xp))
        if np.iscomplexobj(X2):
            out = out + 1j * to_numpy(_op_matmat(op, from_numpy(np.ascontiguousarray(X2.imag), like=d), xp))
        return (out / dh[:, None]).reshape(X.shape)

    target = sla.LinearOperator((n, n), matvec=apply_A, matmat=apply_A, dtype=np.float64)
    w, Vr = sla.eigs(target, k=k, which="LM", v0=_v0(n, rng), tol=tol)
    return _nonsymmetric_result(w, Vr, apply_A=apply_A, d=d, like=d, k=k, vectors=vectors, method="matrix-free",
                                solver="scipy.sparse.linalg.eigs(LinearOperator)", ncomp=ncomp, exact=exact,
                                want_real=False, n=n)


def _op_matmat(op, X, xp):
    """Apply an operator to the columns of ``X`` (uses ``op.matmat`` when it exists)."""
    if hasattr(op, "matmat"):
        return op.matmat(X)
    try:
        out = op.matvec(X)  # KernelOperator.matvec accepts (n, k) blocks
        if tuple(out.shape) == tuple(X.shape):
            return out
    except (ValueError, TypeError):
        pass
    cols = [op.matvec(X[:, j]) for j in range(X.shape[1])]
    return xp.stack(cols, axis=1)


# ----------------------------------------------------------------------------- generator


@dataclass(frozen=True)
class GeneratorEigenvalues:
    """Generator eigenvalues ``lambda = -log(eta) / t`` with the invalid ones reported.

    Attributes
    ----------
    values : array of shape (k,)
        ``-log(eta) / t`` where ``eta > 0``; NaN exactly where ``valid`` is False.
    valid : array of bool, shape (k,)
        ``eta > 0``.
    n_nonpositive : int
        Number of ``eta <= 0`` (no real logarithm: a non-positive-definite kernel,
        e.g. the geodesic Gaussian on the circle, CLAIMS FNA-7).
    min_eta : float
        The smallest ``eta``.
    t : float
        The time step used.
    """

    values: Any
    valid: Any
    n_nonpositive: int
    min_eta: float
    t: float


def generator_eigenvalues(eta, t, *, allow_nonpositive=False):
    """Generator eigenvalues ``lambda = -log(eta) / t`` of a Markov spectrum.

    Parameters
    ----------
    eta : array of shape (k,)
        Real eigenvalues of ``A`` (e.g. ``markov_spectrum(C).eigenvalues``).
    t : float > 0
        Time step of the kernel: ``scale**alpha`` for FNA (DESIGN.md 3.1),
        ``eps / 2`` for the heat kernel.
    allow_nonpositive : bool
        ``False`` (default): any ``eta <= 0`` raises ``ValueError`` with their count.
        ``True``: they are reported in ``valid`` / ``n_nonpositive`` and their
        ``values`` are NaN.

    Returns
    -------
    GeneratorEigenvalues

    Raises
    ------
    ValueError
        ``t`` not a finite number > 0; ``eta`` not 1-D real finite; ``eta <= 0``
        present and ``allow_nonpositive=False``.

    Notes
    -----
    .. math:: A = e^{-t L} \\Rightarrow \\lambda_k = -\\log(\\eta_k) / t.

    References
    ----------
    FNA Theorem 2 and Fig. 2a; DESIGN.md 3.1.

    Examples
    --------
    >>> import numpy as np
    >>> generator_eigenvalues(np.exp(-np.array([0.5, 1.0, 4.0])), 2.0).values
    array([0.25, 0.5 , 2.  ])
    """
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)):
        raise ValueError(f"t must be a finite number > 0, got {t!r}")
    t = float(t)
    if not (t > 0 and math.isfinite(t)):
        raise ValueError(f"t must be a finite number > 0, got {t!r}")
    xp = array_namespace(eta)
    shape = tuple(getattr(eta, "shape", ()))
    if len(shape) != 1:
        raise ValueError(f"eta must be a 1-D array of eigenvalues, got shape {shape}")
    if eta.dtype not in (xp.float32, xp.float64):
        raise ValueError(f"eta must be real floating (a symmetric-path spectrum), got {eta.dtype}")
    if not bool(xp.all(xp.isfinite(eta))):
        raise ValueError("eta must be finite; it contains NaN or inf")
    valid = eta > 0
    n_bad = int(to_numpy(~valid).sum())
    min_eta = float(xp.min(eta)) if shape[0] else float("nan")
    if n_bad and not allow_nonpositive:
        raise ValueError(
            f"eta has {n_bad} non-positive eigenvalue(s) (min {min_eta:.3g}); -log(eta)/t is undefined there "
            "(kernel not positive definite?); pass allow_nonpositive=True to get them masked"
        )
    safe = xp.where(valid, eta, xp.ones_like(eta))
    values = xp.where(valid, -xp.log(safe) / t, xp.full_like(eta, float("nan")))
    return GeneratorEigenvalues(values=values, valid=valid, n_nonpositive=n_bad, min_eta=min_eta, t=t)
