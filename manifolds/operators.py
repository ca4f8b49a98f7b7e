"""Exact reference operators that later checks compare discrete attention with.

* :func:`drift_diffusion`: the Coifman-Lafon / DRIFT limit
  ``(1/2) (Delta f + 2 (1 - a) <grad log p, grad f>)`` (DRIFT paper; DESIGN.md 3.3),
  from the closed-form gradients and Laplacians of :mod:`manifolds.functions`
  and :mod:`manifolds.densities`.
* :func:`fourier_multiplier`: a Fourier multiplier on S^1 applied exactly (up
  to rounding) to samples of a trigonometric polynomial on the equispaced grid,
  by FFT (DESIGN.md 3.1: the fractional operators of the FNA limit).
* :func:`theorem2_operator`: ``[L(f rho) - f L(rho)] / rho`` (FNA Theorem 2 with a
  density, DESIGN.md 3.1); the caller applies the sign and ``1/M0``.
"""

from __future__ import annotations

import numpy as np

from spectral.backend import array_namespace, from_numpy

from ._validation import check_real

__all__ = ["drift_diffusion", "fourier_multiplier", "theorem2_operator"]


def drift_diffusion(f, density, x, *, a: float = 0.0):
    """Limit operator of the a-normalised diffusion kernel: ``(1/2)(Delta f + 2(1-a) <grad log p, grad f>)``.

    Parameters
    ----------
    f : ManifoldFunction
        Test function with exact ``gradient`` and ``laplacian``.
    density : Density
        Sampling density ``p`` w.r.t. Riemannian volume, on the same manifold as ``f``.
    x : array of shape (n, ambient_dim)
        Evaluation points (on the manifold).
    a : float
        Coifman-Lafon normalisation exponent, ``0 <= a <= 1`` (``a = 0``: plain
        row normalisation; ``a = 1``: density-free Laplace-Beltrami).

    Returns
    -------
    array of shape (n,)
        In the namespace of ``x``.

    Notes
    -----
    With ``W_ij = exp(-|x_i - x_j|^2 / (2 eps))`` and ``P^(a) = rownorm(D^-a W D^-a)``,
    ``(P^(a) f - f) / eps -> (1/2)(Delta f + 2 (1 - a) <grad log p, grad f>)``
    (Coifman & Lafon 2006; DRIFT paper, drift-diffusion limit; DESIGN.md 3.3).
    Both gradients are ambient vectors tangent to the manifold, so their
    Euclidean inner product is the Riemannian one.
    """
    a = check_real(a, "a", low=0.0, high=1.0)
    if f.manifold != density.manifold:
        raise ValueError(f"f and density must live on the same manifold, got {f.manifold!r} and {density.manifold!r}")
    xp = array_namespace(x) if hasattr(x, "shape") else np
    drift = xp.sum(density.grad_log_pdf(x) * f.gradient(x), axis=1)
    return 0.5 * f.laplacian(x) + (1.0 - a) * drift


def _symbol_values(symbol, n: int) -> np.ndarray:
    if not callable(symbol):
        raise ValueError(f"symbol must be a callable of the integer wavenumber k >= 0, got {symbol!r}")
    k = np.arange(n // 2 + 1)
    vals = np.asarray(symbol(k))
    if vals.ndim == 0:
        vals = np.full(k.shape, vals)
    if vals.shape != k.shape:
        raise ValueError(f"symbol(k) must return one value per wavenumber (shape {k.shape}), got shape {vals.shape}")
    if np.iscomplexobj(vals):
        raise ValueError("symbol must be real (an even real multiplier m(k) = m(-k))")
    vals = vals.astype(np.float64)
    if not np.all(np.isfinite(vals)):
        raise ValueError("symbol must be finite at every wavenumber k = 0..n//2")
    return vals


def fourier_multiplier(values, symbol):
    """Apply the Fourier multiplier ``m(k)`` to samples on the equispaced S^1 grid (by FFT).

    Parameters
    ----------
    values : array of shape (..., n)
        Samples ``g(2 pi j / n)``, ``j = 0..n-1`` (the order of ``Circle().grid(n)``),
        along the last axis.
    symbol : callable
        ``m(k)`` for an integer array ``k = 0, 1, ..., n // 2`` (NumPy), real and
        even in ``k``; a constant return value is broadcast.

    Returns
    -------
    array of shape (..., n)
        Samples of ``L g`` where ``L e^{i k theta} = m(k) e^{i k theta}``, in the namespace
        of ``values``.  Exact up to rounding for trigonometric polynomials of
        degree ``< n / 2``.

    Notes
    -----
    ``L g = irfft(m * rfft(g))``.  The symbol is evaluated on the host and moved
    to the device of ``values``.
    """
    if not hasattr(values, "shape"):
        values = np.asarray(values, dtype=np.float64)
    xp = array_namespace(values)
    if len(values.shape) < 1 or values.shape[-1] < 1:
        raise ValueError(f"values must have at least one sample along the last axis, got shape {tuple(values.shape)}")
    if not xp.isdtype(values.dtype, "real floating"):
        values = xp.astype(values, xp.float64)
    n = values.shape[-1]
    m = _symbol_values(symbol, n)
    mult = from_numpy(m, like=values)
    mult = xp.astype(mult, values.dtype)
    spec = xp.fft.rfft(values, axis=-1)
    return xp.fft.irfft(spec * mult, n=n, axis=-1)


def theorem2_operator(f_values, rho_values, symbol):
    """``[L(f rho) - f L(rho)] / rho`` on the equispaced S^1 grid, ``L`` the multiplier ``symbol``.

    Parameters
    ----------
    f_values, rho_values : arrays of shape (n,)
        Samples of ``f`` and of the density ``rho > 0`` on ``Circle().grid(n)``.
    symbol : callable
        Fourier multiplier of ``L`` (see :func:`fourier_multiplier`).

    Returns
    -------
    array of shape (n,)
        The FNA Theorem 2 operator with a density (DESIGN.md 3.1):
        ``(A f - f) / t -> -(1/M0) [L(f rho) - f L(rho)] / rho``; the sign and the
        constant ``1/M0`` are applied by the caller.
    """
    if not hasattr(f_values, "shape"):
        f_values = np.asarray(f_values, dtype=np.float64)
    if not hasattr(rho_values, "shape"):
        rho_values = np.asarray(rho_values, dtype=np.float64)
    xp = array_namespace(f_values, rho_values)
    if len(f_values.shape) != 1 or tuple(f_values.shape) != tuple(rho_values.shape):
        raise ValueError(
            f"f_values and rho_values must be 1-D arrays of equal length n, got shapes "
            f"{tuple(f_values.shape)} and {tuple(rho_values.shape)}"
        )
    if not bool(xp.all(rho_values > 0)):
        raise ValueError("rho_values must be > 0 at every grid point (a positive density)")
    lfr = fourier_multiplier(f_values * rho_values, symbol)
    lr = fourier_multiplier(rho_values, symbol)
    return (lfr - f_values * lr) / rho_values
