"""Spectral gap, stationary distribution and mixing-time bounds of an attention matrix.

FNA ("Fractional neural attention", "Mechanistic explanation", Fig. 5a) argues that a larger
spectral gap ``1 - lambda_2`` of the attention matrix means faster mixing of information between
tokens (ledger FNA-17). For dot-product attention or ``Q != K`` the spectrum is complex (ledger
FNA-7), so the gap is defined here for any row-stochastic ``A`` as ``1 - |eta_2|``, with
``eta_2`` the eigenvalue of second-largest modulus (one copy of the Perron eigenvalue 1 removed):
the absolute spectral gap of Levin, Peres & Wilmer.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from spectral import DisconnectedGraphWarning, markov_spectrum
from spectral.backend import from_numpy, to_numpy
from spectral.display import result_repr
from spectral.scores import check_row_stochastic
from spectral.validation import InputError, check_real

__all__ = ["SpectralGap", "spectral_gap", "stationary_distribution", "is_reversible"]


@dataclasses.dataclass(frozen=True, repr=False)
class SpectralGap:
    """Absolute spectral gap of a row-stochastic matrix and what follows from it.

    Attributes
    ----------
    gap : float
        ``1 - |eta_2|`` (0 for a disconnected or periodic chain).
    eta2 : complex
        The eigenvalue of second-largest modulus.
    relaxation_time : float
        ``1 / gap`` (``inf`` when the gap is 0).
    n_components : int
        Closed communicating classes (multiplicity of eigenvalue 1).
    reversible : bool
        Detailed balance ``pi_i A_ij = pi_j A_ji`` holds (relative tolerance ``4 sqrt(eps)``);
        true for ``A = D^-1 C`` with symmetric ``C`` (FNA Assumptions 1 + 2).
    mixing_time_lower, mixing_time_upper : float
        Bounds on the total-variation mixing time ``t_mix(epsilon)`` for reversible, irreducible
        chains (``nan`` otherwise): ``(t_rel - 1) log(1 / (2 epsilon)) <= t_mix(epsilon) <=
        t_rel log(1 / (epsilon pi_min))``.
    epsilon : float
        The total-variation threshold of the mixing-time bounds.
    stationary : array of shape (n,) or None
        The stationary distribution ``pi`` (None when it is not unique).
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

    def __repr__(self) -> str:
        return result_repr(self, gap=f"{self.gap:.6g}", eta2=f"{self.eta2:.6g}", n_components=self.n_components,
                           reversible=self.reversible, relaxation_time=f"{self.relaxation_time:.6g}",
                           mixing_time=f"[{self.mixing_time_lower:.4g}, {self.mixing_time_upper:.4g}]")


def stationary_distribution(A):
    """Stationary distribution ``pi`` (``pi^T A = pi^T``, ``sum pi = 1``) of an irreducible chain.

    Host function (NumPy LU solve of ``(A^T - I) pi = 0`` with one equation replaced by the
    normalisation); the result is returned in ``A``'s namespace.

    Raises
    ------
    spectral.validation.InputError
        ``A`` is not row-stochastic, or the chain has no unique stationary distribution (the
        linear system is singular, or ``pi`` has entries below ``-4 sqrt(eps)``).
    """
    check_row_stochastic(A)
    a = np.asarray(to_numpy(A), dtype=np.float64)
    n = a.shape[0]
    m = a.T - np.eye(n)
    m[-1, :] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    try:
        pi = np.linalg.solve(m, rhs)
    except np.linalg.LinAlgError as exc:
        raise InputError("A has no unique stationary distribution (reducible chain)") from exc
    tol = 4.0 * math.sqrt(np.finfo(float).eps)
    if not np.all(np.isfinite(pi)) or pi.min() < -tol:
        raise InputError("A has no unique stationary distribution (reducible chain)")
    pi = np.clip(pi, 0.0, None)
    return from_numpy(pi / pi.sum(), like=A)


def is_reversible(A, pi=None) -> bool:
    """Detailed balance ``pi_i A_ij = pi_j A_ji`` within ``4 sqrt(eps)`` of ``max pi_i A_ij``."""
    check_row_stochastic(A)
    a = np.asarray(to_numpy(A), dtype=np.float64)
    p = np.asarray(to_numpy(stationary_distribution(A) if pi is None else pi), dtype=np.float64)
    flow = p[:, None] * a
    return bool(np.max(np.abs(flow - flow.T)) <= 4.0 * math.sqrt(np.finfo(float).eps) * np.max(flow))


def spectral_gap(A, *, epsilon: float = 0.25) -> SpectralGap:
    """Absolute spectral gap ``1 - |eta_2|`` of a row-stochastic matrix, with mixing-time bounds.

    Parameters
    ----------
    A : array of shape (n, n), n >= 2
        Row-stochastic attention matrix (real or complex spectrum).
    epsilon : float in (0, 1/2)
        Total-variation threshold of the mixing time ``t_mix(epsilon)`` (1/4 is the convention).

    Returns
    -------
    SpectralGap

    Raises
    ------
    spectral.validation.InputError
        ``A`` not square, not finite, negative, or not row-stochastic; ``epsilon`` outside (0, 1/2).

    Notes
    -----
    The eigenvalues come from :func:`spectral.markov_spectrum` (``A`` is its own row
    normalisation; its general path runs ``numpy.linalg.eig`` on the host, the symmetric path
    ``eigh``). The mixing-time bounds hold for reversible, irreducible, aperiodic chains,
    Levin, Peres & Wilmer, *Markov Chains and Mixing Times*, 2nd ed. (2017), Theorem 12.4
    (upper: :math:`t_{mix}(\\epsilon) \\le t_{rel} \\log(1/(\\epsilon \\pi_{min}))`) and
    Theorem 12.5 (lower: :math:`t_{mix}(\\epsilon) \\ge (t_{rel} - 1) \\log(1/(2\\epsilon))`), with
    :math:`t_{rel} = 1/\\gamma_*` and :math:`\\gamma_* = 1 - \\max_{j \\ge 2} |\\eta_j|`. For a
    non-reversible chain (dot-product attention, ``Q != K``) they are reported as ``nan``.

    References
    ----------
    FNA "Mechanistic explanation" and Fig. 5a; ledger FNA-7, FNA-17.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.5, 0.5], [0.25, 0.75]])     # eigenvalues 1 and 0.25
    >>> round(spectral_gap(A).gap, 12)
    0.75
    """
    check_row_stochastic(A)
    epsilon = check_real("epsilon", epsilon, low=0.0, high=0.5, low_open=True, high_open=True)
    n = A.shape[0]
    if n < 2:
        raise InputError(f"A must be at least 2 x 2 for a spectral gap, got shape {tuple(A.shape)}")
    with warnings.catch_warnings():
        # A disconnected attention graph is a legitimate input here: its gap is 0 (structurally) or
        # below round-off (numerically), and the result says so.
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        spec = markov_spectrum(A, method="dense")
    eta = np.asarray(to_numpy(spec.eigenvalues))
    eta2 = complex(eta[1])
    ncomp = int(spec.n_components) if spec.n_components is not None else 1
    gap = 0.0 if ncomp > 1 else max(0.0, 1.0 - abs(eta2))
    t_rel = math.inf if gap == 0.0 else 1.0 / gap
    lower = upper = math.nan
    pi = None
    reversible = False
    if ncomp == 1:
        try:
            pi = stationary_distribution(A)
        except InputError:
            pi = None
        if pi is not None:
            reversible = is_reversible(A, pi)
            pmin = float(np.min(to_numpy(pi)))
            if reversible and pmin > 0:
                lower = max(0.0, (t_rel - 1.0) * math.log(1.0 / (2.0 * epsilon)))
                upper = t_rel * math.log(1.0 / (epsilon * pmin))
    return SpectralGap(gap=float(gap), eta2=eta2, relaxation_time=t_rel, n_components=ncomp,
                       reversible=reversible, mixing_time_lower=lower, mixing_time_upper=upper,
                       epsilon=float(epsilon), stationary=pi)
