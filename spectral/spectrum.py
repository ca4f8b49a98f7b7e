"""The :class:`Spectrum` result and eigenpair hygiene: ordering, sign and phase, residuals, real casts.

Every eigensolver path of :func:`spectral.markov_spectrum` (and :func:`spectral.circulant_spectrum`)
turns its raw output into a :class:`Spectrum` here, so that all paths order, normalise and check
their eigenpairs the same way:

* symmetric path (real): descending eigenvalues, unit conjugate vectors ``v`` with the first
  largest-|entry| positive, right vectors ``psi = D^-1/2 v`` and left ``phi = D^1/2 v`` (FNA eq. 35);
* general path (complex): eigenvalues by decreasing modulus, then real part, then imaginary part;
  unit right vectors with the first largest-|entry| real positive; left vectors the rows of
  ``V^-1`` (bi-orthonormal by construction); a cast to real only after checking
  ``max|imag| <= 100 eps``;
* the residual ``max_j ||A psi_j - eta_j psi_j|| / ||psi_j||`` of the returned pairs, and a
  :class:`~spectral.floor.validation.ConvergenceError` on non-finite output.

References
----------
"Fractional neural attention" (FNA), eqs. (33)-(35).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.floor.backend import array_namespace, from_numpy
from spectral.floor.display import array_summary, leading_values, result_repr
from spectral.floor.validation import ConvergenceError, InputError

__all__ = ["Spectrum"]


@dataclass(frozen=True, repr=False)
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
        Connected components of the kernel graph ``C > 0`` (symmetric ``C``) or closed
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
    near_one : int or None
        Eigenvalues within the numerical-disconnection tolerance of 1 among the returned ones
        (:func:`spectral.components.numerical_components`); more than ``n_components`` means
        the graph is disconnected in floating point although every entry is positive.
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
    near_one: int | None = None

    @property
    def psi(self):
        """Alias of :attr:`right_vectors` (FNA notation)."""
        return self.right_vectors

    @property
    def phi(self):
        """Alias of :attr:`left_vectors` (FNA notation)."""
        return self.left_vectors

    def __repr__(self) -> str:
        residual = "None" if self.residual is None else f"{self.residual:.3g}"
        return result_repr(
            self, n=self.n, k=int(self.eigenvalues.shape[0]), method=repr(self.method), solver=repr(self.solver),
            residual=residual, n_components=self.n_components, eigenvalues=leading_values(self.eigenvalues),
            vectors=array_summary(self.right_vectors),
        )


def column_norms(V):
    """2-norms of the columns of a real ``V``."""
    xp = array_namespace(V)
    return xp.sqrt(xp.sum(V * V, axis=0))


def descending_order(w):
    """Indices of a stable descending sort of the real 1-d ``w`` (ties keep their input order)."""
    xp = array_namespace(w)
    if xp is np:
        return np.argsort(-w, kind="stable")
    try:
        return xp.argsort(w, descending=True, stable=True)
    except TypeError:  # namespaces without the array-API keywords (stable by default there)
        return xp.argsort(-w)


def sign_flip(V):
    """Flip columns so that the first largest-|entry| of each is positive (deterministic eigenvectors)."""
    xp = array_namespace(V)
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


def symmetric_residual(apply_S, V, w, d) -> float:
    """``max_j ||A psi_j - eta_j psi_j|| / ||psi_j||`` with ``psi = D^-1/2 v``.

    ``apply_S`` applies the symmetric conjugate ``S = D^-1/2 C D^-1/2`` to the columns of ``V``;
    ``A psi - eta psi = D^-1/2 (S v - eta v)``.
    """
    xp = array_namespace(V)
    s = 1.0 / xp.sqrt(d)
    R = s[:, None] * (apply_S(V) - V * w[None, :])
    P = s[:, None] * V
    return float(xp.max(column_norms(R) / column_norms(P)))


def _finite_or_raise(x, what: str, solver: str) -> None:
    xp = array_namespace(x)
    if not bool(xp.all(xp.isfinite(x))):
        raise ConvergenceError(
            f"{solver} returned non-finite {what}; try method='dense', or check that the scores are "
            "of moderate size (a kernel scale far below the point spacing leaves rows that are 0 up to round-off)"
        )


def symmetric_spectrum(w, V, d, *, k, vectors, method, solver, apply_S, ncomp, exact, storage) -> Spectrum:
    """Spectrum of the symmetric path from eigenpairs ``(w, V)`` of the conjugate ``S``.

    Sorts descending, keeps ``k`` pairs, fixes signs (:func:`sign_flip`), builds ``psi``/``phi`` and
    measures the residual with ``apply_S``.
    """
    xp = array_namespace(w)
    order = descending_order(w)
    w = xp.take(w, order)
    V = xp.take(V, order, axis=1)
    if k is not None:
        w = w[:k]
        V = V[:, :k]
    _finite_or_raise(w, "eigenvalues", solver)
    _finite_or_raise(V, "eigenvectors", solver)
    V = sign_flip(V)
    residual = symmetric_residual(apply_S, V, w, d)
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


def general_spectrum(w, Vr, *, apply_A, d, like, k, vectors, method, solver, ncomp, exact, want_real,
                     n) -> Spectrum:
    """Spectrum of the general (complex) path from host eigenpairs ``(w, Vr)`` of ``A``.

    Orders by modulus, keeps ``k`` pairs, fixes phases, takes left vectors from ``inv(V)`` when all
    ``n`` right vectors are known, and casts to real (``want_real``) only if ``max|imag| <= 100 eps``
    (the spectral radius of a Markov matrix is 1); else raises :class:`~spectral.floor.validation.InputError`.
    """
    order = _order_complex(w)
    w = w[order]
    Vr = Vr[:, order] if Vr is not None else None
    _finite_or_raise(w, "eigenvalues", solver)
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
        eps = np.finfo(w.real.dtype).eps
        if max_imag > 100 * eps * max(1.0, float(np.max(np.abs(w)))):
            raise InputError(
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
