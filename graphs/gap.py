"""Spectral gaps, stationary distribution and mixing-time bounds of an attention matrix.

FNA ("Fractional neural attention", "Mechanistic explanation", Fig. 5a) argues that a larger
spectral gap of the attention matrix means faster mixing of information between tokens (ledger
FNA-17). Two gaps of a row-stochastic ``A`` (eigenvalues ``1 = eta_1, eta_2, ..., eta_n``, one copy
of the Perron eigenvalue 1 removed) are computed, because they differ exactly when ``A`` has
eigenvalues near -1 (a nearly periodic, bipartite-like chain):

* the absolute gap ``1 - |eta_2|``, ``eta_2`` the eigenvalue of second-largest *modulus*: it governs
  the convergence of ``A^t`` (mixing of the discrete-time walk, the collapse ``A^L H``), and the
  mixing-time bounds (Levin, Peres & Wilmer, *Markov Chains and Mixing Times*, 2nd ed., 2017,
  section 12.2: ``gamma_* = 1 - lambda_*``);
* the one-sided gap ``1 - lambda_2``, ``lambda_2`` the eigenvalue of second-largest *real part*: for a
  reversible chain the Dirichlet-form (Poincare) gap of LPW section 12.2 (``gamma = 1 - lambda_2``,
  ``lambda_2`` the second-largest eigenvalue by value), which is the normalised-Laplacian algebraic
  connectivity of the graph and governs the continuous-time chain ``exp(t (A - I))``
  (LPW chapter 20) and the lazy walk ``(I + A) / 2`` (whose two gaps coincide and equal half of it).

For dot-product attention or ``Q != K`` the spectrum is complex (ledger FNA-7); both gaps are
defined for any row-stochastic ``A``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from graphs._inputs import input_kind, sparse_stochastic
from spectral import DisconnectedGraphWarning, components, markov_spectrum
from spectral.floor.backend import from_numpy, to_numpy
from spectral.floor.display import result_repr
from spectral.floor.memory import check_dense_memory
from spectral.scores import check_row_stochastic
from spectral.floor.validation import ConvergenceError, InputError, as_generator, check_option, check_real

__all__ = ["GAP_METHODS", "SpectralGap", "spectral_gap", "stationary_distribution", "is_reversible"]

GAP_METHODS = ("auto", "dense", "arpack")
#: ``method="auto"`` on a scipy.sparse input solves densely up to this n (every eigenvalue, exact) and
#: with ARPACK above; a dense input is always solved densely.
SPARSE_DENSE_MAX_N = 1000


@dataclasses.dataclass(frozen=True, repr=False)
class SpectralGap:
    """Spectral gaps of a row-stochastic matrix and what follows from them.

    Attributes
    ----------
    gap : float
        Absolute spectral gap ``1 - |eta_2|`` (``absolute_gap``; 0 for a disconnected or periodic
        chain): governs the mixing of the discrete-time walk ``A^t``.
    eta2 : complex
        The eigenvalue of second-largest modulus (one copy of the Perron eigenvalue 1 removed).
    relaxation_time : float
        ``t_rel = 1 / gap`` (``inf`` when the gap is 0), LPW section 12.2.
    n_components : int
        Closed communicating classes (multiplicity of eigenvalue 1).
    reversible : bool
        Detailed balance ``pi_i A_ij = pi_j A_ji`` holds (relative tolerance ``4 sqrt(eps)``);
        true for ``A = D^-1 C`` with symmetric ``C`` (FNA Assumptions 1 + 2).
    mixing_time_lower, mixing_time_upper : float
        Bounds on the total-variation mixing time ``t_mix(epsilon)`` for reversible, irreducible
        chains (``nan`` otherwise): ``(t_rel - 1) log(1 / (2 epsilon)) <= t_mix(epsilon) <=
        t_rel log(1 / (epsilon pi_min))`` (``inf`` for a periodic chain, which never mixes).
    epsilon : float
        The total-variation threshold of the mixing-time bounds.
    stationary : array of shape (n,) or None
        The stationary distribution ``pi`` (None when it is not unique).
    one_sided_gap : float
        ``1 - Re(lambda_2)`` (0 for a disconnected chain): for a reversible chain the Dirichlet-form
        gap ``1 - lambda_2`` (the normalised-Laplacian algebraic connectivity), which governs the
        continuous-time chain and equals twice the gap of the lazy walk ``(I + A) / 2``. At least
        ``gap`` for a real spectrum; the two are equal when no eigenvalue is below ``-lambda_2``.
    lambda2 : complex
        The eigenvalue of second-largest real part (one copy of 1 removed).
    method : str
        How the eigenvalues were computed: ``"dense"`` (all of them) or ``"arpack"``.
    """

    gap: float
    eta2: complex
    relaxation_time: float
    n_components: int
    reversible: bool
    mixing_time_lower: float
    mixing_time_upper: float
    epsilon: float
    stationary: Any
    one_sided_gap: float = math.nan
    lambda2: complex = complex(math.nan)
    method: str = "dense"

    @property
    def absolute_gap(self) -> float:
        """``1 - |eta_2|``, the same number as :attr:`gap`."""
        return self.gap

    def __repr__(self) -> str:
        return result_repr(self, gap=f"{self.gap:.6g}", eta2=f"{self.eta2:.6g}",
                           one_sided_gap=f"{self.one_sided_gap:.6g}", n_components=self.n_components,
                           reversible=self.reversible, relaxation_time=f"{self.relaxation_time:.6g}",
                           mixing_time=f"[{self.mixing_time_lower:.4g}, {self.mixing_time_upper:.4g}]")


def _stochastic(A, *, name: str = "A"):
    """``(kind, checked)``: a dense input validated in place, a sparse one as a canonical CSR."""
    kind = input_kind(A, name=name)
    if kind == "sparse":
        return kind, sparse_stochastic(A, name=name)
    check_row_stochastic(A, name=name)
    return kind, A


def stationary_distribution(A):
    """Stationary distribution ``pi`` (``pi^T A = pi^T``, ``sum pi = 1``) of an irreducible chain.

    Host function: an LU solve of ``(A^T - I) pi = 0`` with one equation replaced by the
    normalisation (NumPy for a dense ``A``, SuperLU for a scipy.sparse one); the result is returned
    in ``A``'s namespace (NumPy for a sparse ``A``).

    Parameters
    ----------
    A : array of shape (n, n) or scipy.sparse array/matrix
        Row-stochastic matrix (stored zeros of a sparse ``A`` are zero entries).

    Raises
    ------
    spectral.floor.validation.InputError
        ``A`` is not row-stochastic or not an accepted type, or the chain has no unique stationary
        distribution (the linear system is singular, or ``pi`` has entries below ``-4 sqrt(eps)``).
    """
    kind, a = _stochastic(A)
    pi = _stationary_host(a, kind)
    return pi if kind == "sparse" else from_numpy(pi, like=A)


def _stationary_host(a, kind: str) -> np.ndarray:
    n = a.shape[0]
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    if kind == "sparse":
        import scipy.sparse as sp
        from scipy.sparse.linalg import MatrixRankWarning, splu

        m = sp.lil_array(a.T - sp.eye_array(n, format="csr"))
        m[n - 1, :] = np.ones(n)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", MatrixRankWarning)
                pi = splu(sp.csc_array(m)).solve(rhs)
        except (RuntimeError, MatrixRankWarning) as exc:  # SuperLU: "Factor is exactly singular"
            raise InputError("A has no unique stationary distribution (reducible chain)") from exc
    else:
        m = np.asarray(to_numpy(a), dtype=np.float64).T - np.eye(n)
        m[-1, :] = 1.0
        try:
            pi = np.linalg.solve(m, rhs)
        except np.linalg.LinAlgError as exc:
            raise InputError("A has no unique stationary distribution (reducible chain)") from exc
    tol = 4.0 * math.sqrt(np.finfo(float).eps)
    if not np.all(np.isfinite(pi)) or pi.min() < -tol:
        raise InputError("A has no unique stationary distribution (reducible chain)")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def is_reversible(A, pi=None) -> bool:
    """Detailed balance ``pi_i A_ij = pi_j A_ji`` within ``4 sqrt(eps)`` of ``max pi_i A_ij``.

    Parameters
    ----------
    A : array of shape (n, n) or scipy.sparse array/matrix
        Row-stochastic matrix.
    pi : array of shape (n,), optional
        Its stationary distribution (computed when not given); finite (a NaN compared false, so
        the answer was ``False`` whatever ``A``).
    """
    kind, a = _stochastic(A)
    if pi is None:
        p = _stationary_host(a, kind)
    else:
        p = np.asarray(to_numpy(pi), dtype=np.float64).reshape(-1)
        if p.shape != (a.shape[0],) or not np.all(np.isfinite(p)):
            raise InputError(f"pi must be a finite array of shape ({a.shape[0]},), got shape {tuple(p.shape)}"
                             + ("" if np.all(np.isfinite(p)) else " with NaN or inf entries"))
    return _reversible_host(a, kind, p)


def _reversible_host(a, kind: str, p: np.ndarray) -> bool:
    tol = 4.0 * math.sqrt(np.finfo(float).eps)
    if kind == "sparse":
        import scipy.sparse as sp

        flow = sp.diags_array(p) @ a
        top = float(np.max(np.abs(flow.data))) if flow.nnz else 0.0
        diff = (flow - flow.T).tocsr()
        worst = float(np.max(np.abs(diff.data))) if diff.nnz else 0.0
        return worst <= tol * top
    h = np.asarray(to_numpy(a), dtype=np.float64)
    flow = p[:, None] * h
    return bool(np.max(np.abs(flow - flow.T)) <= tol * np.max(flow))


def _second(eta: np.ndarray) -> tuple[complex, complex]:
    """``(eta_2, lambda_2)``: second-largest by modulus and by real part, one copy of 1 removed.

    The removed copy is the eigenvalue closest to 1 (the computed Perron eigenvalue). Ties in
    modulus (a conjugate pair, or ``-r`` and ``r``) go to the larger real part, then the larger
    imaginary part, so the result does not depend on the solver's order.
    """
    eta = np.asarray(eta, dtype=complex).reshape(-1)
    rest = np.delete(eta, int(np.argmin(np.abs(eta - 1.0))))
    by_modulus = rest[np.lexsort((-rest.imag, -rest.real, -np.abs(rest)))[0]]
    by_real = rest[np.lexsort((-rest.imag, -rest.real))[0]]
    return complex(by_modulus), complex(by_real)


def spectral_gap(A, *, epsilon: float = 0.25, method: str = "auto", rng=None) -> SpectralGap:
    """Absolute and one-sided spectral gaps of a row-stochastic matrix, with mixing-time bounds.

    Parameters
    ----------
    A : array of shape (n, n), n >= 2, or scipy.sparse array/matrix
        Row-stochastic attention matrix (real or complex spectrum), any array namespace, or a
        scipy.sparse array or matrix (csr, csc, coo, lil, ...; stored zeros are zero entries).
    epsilon : float in (0, 1/2)
        Total-variation threshold of the mixing time ``t_mix(epsilon)`` (1/4 is the convention).
    method : {"auto", "dense", "arpack"}
        ``"dense"``: every eigenvalue (:func:`spectral.markov_spectrum`, LAPACK on the host for a
        non-symmetric ``A``, ``eigh`` for a symmetric one); a sparse ``A`` is densified after the
        memory guard. ``"arpack"`` (host, needs n >= 4): the extreme eigenvalues only, from ARPACK on
        the sparse matrix: for a reversible chain ``eigsh`` on the symmetrised
        ``Pi^1/2 A Pi^-1/2`` (the two largest algebraic eigenvalues and the smallest), otherwise
        ``eigs`` (the two of largest modulus and the two of largest real part). ``"auto"``:
        dense for a dense ``A`` and for a sparse ``A`` up to n = ``SPARSE_DENSE_MAX_N``, ARPACK above.
    rng : numpy.random.Generator or int, optional
        Seeds ARPACK's start vectors (default seed 0; results agree to round-off across seeds).
        Not used by the dense path.

    Returns
    -------
    SpectralGap
        ``gap`` (absolute, ``1 - |eta_2|``), ``one_sided_gap`` (``1 - Re lambda_2``), the
        eigenvalues they come from, relaxation time and mixing-time bounds.

    Raises
    ------
    spectral.floor.validation.InputError
        ``A`` not an accepted type, not square, not finite, negative, or not row-stochastic;
        ``epsilon`` outside (0, 1/2); unknown ``method``; ``"arpack"`` on n < 4.
    spectral.floor.memory.DenseMemoryError
        A sparse ``A`` on the dense path would not fit densified.
    spectral.floor.validation.ConvergenceError
        ARPACK did not converge (try ``method="dense"``).

    Notes
    -----
    Which gap: the absolute gap ``gamma_* = 1 - max_{j >= 2} |eta_j|`` decides how fast ``A^t``
    converges to ``1 pi^T`` (so the relaxation time and the mixing bounds use it); an eigenvalue
    near -1 (a nearly bipartite attention graph, e.g. a symmetrised Sinkhorn attention whose two
    token groups attend across) makes it small even when the one-sided gap is large, and the walk
    then oscillates instead of mixing. The one-sided gap ``gamma = 1 - lambda_2`` is the
    Dirichlet-form gap of a reversible chain, ``min_f E(f, f) / Var_pi(f)`` (LPW Remark 13.8), i.e.
    the algebraic connectivity of the normalised Laplacian ``I - D^-1/2 C D^-1/2``; it governs the
    continuous-time chain (LPW chapter 20) and the lazy walk ``(I + A) / 2``, whose eigenvalues
    ``(1 + eta) / 2`` are nonnegative, so both its gaps equal ``gamma / 2`` (LPW section 12.2:
    "for a lazy chain ``gamma_* = gamma``"). For a non-reversible chain ``1 - Re lambda_2`` is the
    decay rate of the continuous-time chain ``exp(t (A - I))``.
    The mixing-time bounds hold for reversible, irreducible chains, LPW Theorem 12.4 (upper:
    :math:`t_{mix}(\\epsilon) \\le t_{rel} \\log(1/(\\epsilon \\pi_{min}))`) and Theorem 12.5 (lower,
    aperiodic: :math:`t_{mix}(\\epsilon) \\ge (t_{rel} - 1) \\log(1/(2\\epsilon))`), with
    :math:`t_{rel} = 1/\\gamma_*`. For a non-reversible chain (dot-product attention, ``Q != K``) they
    are reported as ``nan``.

    References
    ----------
    FNA "Mechanistic explanation" and Fig. 5a; ledger FNA-7, FNA-17. Levin, Peres & Wilmer (2017),
    sections 12.2, 13.3 and chapter 20.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.5, 0.5], [0.25, 0.75]])     # eigenvalues 1 and 0.25
    >>> round(spectral_gap(A).gap, 12)
    0.75

    The walk on a 4-cycle has eigenvalues 1, 0, 0, -1: periodic, so it never mixes (absolute gap 0),
    while its one-sided gap (the normalised algebraic connectivity) is 1:

    >>> C = np.roll(np.eye(4), 1, axis=1) + np.roll(np.eye(4), -1, axis=1)
    >>> g = spectral_gap(C / 2)
    >>> abs(round(g.gap, 12)), round(g.one_sided_gap, 12), g.relaxation_time > 1e12
    (0.0, 1.0, True)
    """
    method = check_option("method", method, GAP_METHODS)
    epsilon = check_real("epsilon", epsilon, low=0.0, high=0.5, low_open=True, high_open=True)
    kind, a = _stochastic(A)
    n = a.shape[0]
    if n < 2:
        raise InputError(f"A must be at least 2 x 2 for a spectral gap, got shape {tuple(A.shape)}")
    if method == "auto":
        method = "arpack" if kind == "sparse" and n > SPARSE_DENSE_MAX_N else "dense"
    if method == "arpack" and n < 4:
        raise InputError(f"method='arpack' needs n >= 4 (ARPACK's k < n - 1), got n = {n}; use method='dense'")

    pi = None
    reversible = False
    if method == "dense":
        if kind == "sparse":
            check_dense_memory(n, dtype="float64", copies=4, what="dense spectral gap of the sparse A",
                               alternative="use method='arpack' (the extreme eigenvalues of the sparse matrix)")
            dense = a.toarray()
        else:
            dense = a
        with warnings.catch_warnings():
            # A disconnected attention graph is a legitimate input here: its gap is 0 (structurally) or
            # below round-off (numerically), and the result says so.
            warnings.simplefilter("ignore", DisconnectedGraphWarning)
            spec = markov_spectrum(dense, method="dense")
        eta2, lambda2 = _second(to_numpy(spec.eigenvalues))
        ncomp = int(spec.n_components) if spec.n_components is not None else 1
    else:
        g = a if kind == "sparse" else _host_csr(a)
        ncomp = components.sparse_components(g, symmetric=False)
        if ncomp == 1:
            pi, reversible = _pi_and_reversible(g, "sparse")
        eta2, lambda2 = _arpack_extremes(g, pi if reversible else None, as_generator(0 if rng is None else rng))
    gap = 0.0 if ncomp > 1 else _above_round_off(1.0 - abs(eta2))
    one_sided = 0.0 if ncomp > 1 else _above_round_off(1.0 - lambda2.real)
    t_rel = math.inf if gap == 0.0 else 1.0 / gap
    lower = upper = math.nan
    if ncomp == 1:
        if method == "dense":
            pi, reversible = _pi_and_reversible(a, kind)
        if pi is not None and reversible:
            pmin = float(np.min(pi))
            if pmin > 0:
                lower = max(0.0, (t_rel - 1.0) * math.log(1.0 / (2.0 * epsilon)))
                upper = t_rel * math.log(1.0 / (epsilon * pmin))
    stationary = None if pi is None else (pi if kind == "sparse" else from_numpy(pi, like=A))
    return SpectralGap(gap=float(gap), eta2=eta2, relaxation_time=t_rel, n_components=ncomp,
                       reversible=reversible, mixing_time_lower=lower, mixing_time_upper=upper,
                       epsilon=float(epsilon), stationary=stationary, one_sided_gap=float(one_sided),
                       lambda2=lambda2, method=method)


def _above_round_off(gap: float) -> float:
    """``gap``, or 0 when it is within round-off of 0 (``NEAR_ONE_EPS`` float64 eps, as eigenvalue 1 is counted).

    An eigenvalue within ``100 eps`` of modulus 1 is a copy of 1 or -1 to the eigensolvers' accuracy
    (:data:`spectral.components.NEAR_ONE_EPS`: measured errors <= 2e-15); a periodic chain then reports
    gap 0 and an infinite relaxation time from every solver, not ``1e16``.
    """
    return 0.0 if gap <= components.NEAR_ONE_EPS * np.finfo(np.float64).eps else float(gap)


def _pi_and_reversible(a, kind: str):
    """``(pi, reversible)`` of an irreducible chain, ``(None, False)`` when ``pi`` is not unique."""
    try:
        pi = _stationary_host(a, kind)
    except InputError:
        return None, False
    return pi, _reversible_host(a, kind, pi)


def _host_csr(a):
    import scipy.sparse as sp

    return sp.csr_array(np.asarray(to_numpy(a), dtype=np.float64))


def _arpack_extremes(g, pi, gen) -> tuple[complex, complex]:
    """``(eta_2, lambda_2)`` from ARPACK on the CSR transition matrix ``g`` (host).

    Reversible (``pi`` given): ``S = Pi^1/2 A Pi^-1/2`` is symmetric with the eigenvalues of ``A``;
    ``eigsh`` gives its two largest algebraic eigenvalues and its smallest, so
    ``lambda_2`` is the second largest and ``eta_2`` whichever of it and the smallest has the larger
    modulus. Otherwise ``eigs`` gives the two of largest modulus and the two of largest real part.
    """
    import scipy.sparse as sp
    from scipy.sparse.linalg import ArpackNoConvergence, eigs, eigsh

    n = g.shape[0]
    try:
        if pi is not None:
            s = np.sqrt(pi)
            S = sp.diags_array(s) @ g @ sp.diags_array(1.0 / s)
            S = ((S + S.T) * 0.5).tocsr()  # symmetric up to the detailed-balance round-off
            top = eigsh(S, k=2, which="LA", v0=gen.standard_normal(n), tol=0.0, return_eigenvectors=False)
            low = eigsh(S, k=1, which="SA", v0=gen.standard_normal(n), tol=0.0, return_eigenvectors=False)
            lam2 = float(np.sort(top)[0])
            lam_min = float(low[0])
            # the smallest eigenvalue is never closer to 1 than lambda_2; a tie in modulus goes to lambda_2
            eta2 = lam2 if abs(lam2) >= abs(lam_min) else lam_min
            return complex(eta2), complex(lam2)
        big = eigs(g, k=2, which="LM", v0=gen.standard_normal(n), tol=0.0, return_eigenvectors=False)
        right = eigs(g, k=2, which="LR", v0=gen.standard_normal(n), tol=0.0, return_eigenvectors=False)
    except ArpackNoConvergence as exc:
        raise ConvergenceError("ARPACK did not converge to the extreme eigenvalues of A (a spectrum clustered "
                               "at 1 or -1 converges slowly); use method='dense' (n <= a few thousand)") from exc
    return _second(big)[0], _second(right)[1]
