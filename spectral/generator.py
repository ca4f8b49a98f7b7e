"""Generator eigenvalues ``lambda = -log(eta) / t`` of a Markov spectrum, with the invalid ones reported.

One attention step is read as ``A = exp(-t L)`` for a generator ``L``; the eigenvalues of ``L`` are
``-log(eta) / t``, defined only for ``eta > 0`` (a kernel that is not positive definite, e.g. the
geodesic Gaussian on the circle, has ``eta <= 0``, ledger FNA-7).

References
----------
"Fractional neural attention" (FNA), Theorem 2 and Fig. 2a.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spectral.floor.backend import array_namespace, to_numpy
from spectral.floor.display import leading_values, result_repr
from spectral.floor.validation import InputError, check_real

__all__ = ["GeneratorEigenvalues", "generator_eigenvalues"]


@dataclass(frozen=True, repr=False)
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
        e.g. the geodesic Gaussian on the circle, ledger FNA-7).
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

    def __repr__(self) -> str:
        return result_repr(self, k=int(self.values.shape[0]), t=f"{self.t:.6g}", values=leading_values(self.values),
                           n_nonpositive=self.n_nonpositive, min_eta=f"{self.min_eta:.6g}")


def generator_eigenvalues(eta, t, *, allow_nonpositive=False):
    """Generator eigenvalues ``lambda = -log(eta) / t`` of a Markov spectrum.

    Parameters
    ----------
    eta : array of shape (k,)
        Real eigenvalues of ``A`` (e.g. ``markov_spectrum(C).eigenvalues``).
    t : float > 0
        Time step of the kernel: ``scale**alpha`` for FNA (:func:`spectral.fna_time`),
        ``eps / 2`` for the heat kernel (:func:`spectral.heat_time`).
    allow_nonpositive : bool
        ``False`` (default): any ``eta <= 0`` raises :class:`~spectral.floor.validation.InputError`
        with their count.
        ``True``: they are reported in ``valid`` / ``n_nonpositive`` and their
        ``values`` are NaN.

    Returns
    -------
    GeneratorEigenvalues

    Raises
    ------
    spectral.floor.validation.InputError
        ``t`` not a finite number > 0; ``eta`` not 1-D real finite; ``eta <= 0``
        present and ``allow_nonpositive=False``.

    Notes
    -----
    .. math:: A = e^{-t L} \\Rightarrow \\lambda_k = -\\log(\\eta_k) / t.

    References
    ----------
    FNA Theorem 2 and Fig. 2a.

    Examples
    --------
    >>> import numpy as np
    >>> generator_eigenvalues(np.exp(-np.array([0.5, 1.0, 4.0])), 2.0).values
    array([0.25, 0.5 , 2.  ])
    """
    t = check_real("t", t, low=0.0, low_open=True)
    xp = array_namespace(eta)
    shape = tuple(getattr(eta, "shape", ()))
    if len(shape) != 1:
        raise InputError(f"eta must be a 1-D array of eigenvalues, got shape {shape}")
    if eta.dtype not in (xp.float32, xp.float64):
        raise InputError(f"eta must be real floating (a symmetric-path spectrum), got {eta.dtype}")
    if not bool(xp.all(xp.isfinite(eta))):
        raise InputError("eta must be finite; it contains NaN or inf")
    valid = eta > 0
    n_bad = int(to_numpy(~valid).sum())
    min_eta = float(xp.min(eta)) if shape[0] else float("nan")
    if n_bad and not allow_nonpositive:
        raise InputError(
            f"eta has {n_bad} non-positive eigenvalue(s) (min {min_eta:.3g}); -log(eta)/t is undefined there "
            "(kernel not positive definite?); pass allow_nonpositive=True to get them masked"
        )
    safe = xp.where(valid, eta, xp.ones_like(eta))
    values = xp.where(valid, -xp.log(safe) / t, xp.full_like(eta, float("nan")))
    return GeneratorEigenvalues(values=values, valid=valid, n_nonpositive=n_bad, min_eta=min_eta, t=t)
