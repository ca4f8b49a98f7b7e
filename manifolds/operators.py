"""Exact reference operators that checks compare discrete attention with.

* :func:`drift_diffusion`: the Coifman-Lafon / DRIFT limit
  ``(1/2) (Delta f + 2 (1 - a) <grad log p, grad f>)`` (DRIFT paper, drift-diffusion limit),
  from the closed-form gradients and Laplacians of :mod:`manifolds.functions`
  and :mod:`manifolds.densities`.
* :func:`fourier_multiplier`: a Fourier multiplier ``m(k)`` on S^1 applied to the
  samples of a smooth function on the equispaced grid, by FFT, and evaluated on
  the grid or at any angles (the fractional operators of the FNA limit).
* :func:`theorem2_operator`: ``[L(f rho) - f L(rho)] / rho`` (FNA Theorem 2 with a
  density, eqs. 18 and 27); the caller applies the sign and ``1/M0``.
* :func:`attention_increment`: ``T f - f`` for the continuum attention operator
  ``T f = K(f rho) / K(rho)`` of a kernel with multiplier ``eta(k)`` (the exact
  finite-scale operator that ``(A f - f)`` of attention on points from ``rho``
  approximates).

All three FFT operators are exact up to rounding for trigonometric polynomials
of degree below ``n / 2`` and accurate to rounding for smooth (analytic)
functions once their Fourier coefficients at ``n / 2`` are below ``eps``.
"""

from __future__ import annotations

import numpy as np

from spectral.floor.backend import array_namespace, from_numpy
from spectral.floor.validation import InputError, check_real

__all__ = ["attention_increment", "drift_diffusion", "fourier_multiplier", "theorem2_operator"]


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
    (Coifman & Lafon 2006; DRIFT paper, drift-diffusion limit).
    Both gradients are ambient vectors tangent to the manifold, so their
    Euclidean inner product is the Riemannian one.
    """
    a = check_real("a", a, low=0.0, high=1.0)
    if f.manifold != density.manifold:
        raise InputError(f"f and density must live on the same manifold, got {f.manifold!r} and {density.manifold!r}")
    xp = array_namespace(x) if hasattr(x, "shape") else np
    drift = xp.sum(density.grad_log_pdf(x) * f.gradient(x), axis=1)
    return 0.5 * f.laplacian(x) + (1.0 - a) * drift


def _symbol_values(symbol, n: int) -> np.ndarray:
    if not callable(symbol):
        raise InputError(f"symbol must be a callable of the integer wavenumber k >= 0, got {symbol!r}")
    k = np.arange(n // 2 + 1)
    vals = np.asarray(symbol(k))
    if vals.ndim == 0:
        vals = np.full(k.shape, vals)
    if vals.shape != k.shape:
        raise InputError(f"symbol(k) must return one value per wavenumber (shape {k.shape}), got shape {vals.shape}")
    if np.iscomplexobj(vals):
        raise InputError("symbol must be real (an even real multiplier m(k) = m(-k))")
    vals = vals.astype(np.float64)
    if not np.all(np.isfinite(vals)):
        raise InputError("symbol must be finite at every wavenumber k = 0..n//2")
    return vals


def _samples(values, name: str):
    if not hasattr(values, "shape"):
        values = np.asarray(values, dtype=np.float64)
    xp = array_namespace(values)
    if len(values.shape) < 1 or values.shape[-1] < 1:
        raise InputError(f"{name} must have at least one sample along the last axis, got shape {tuple(values.shape)}")
    if not xp.isdtype(values.dtype, "real floating"):
        values = xp.astype(values, xp.float64)
    return xp, values


def _angles(at, like):
    """The evaluation angles as a 1-D real array in the namespace and dtype of ``like``."""
    if not hasattr(at, "shape"):
        at = np.asarray(at, dtype=np.float64)
    xp = array_namespace(like)
    if array_namespace(at) is not xp:
        at = from_numpy(np.asarray(at, dtype=np.float64), like=like)
    if len(at.shape) != 1:
        raise InputError(f"at must be a 1-D array of angles, got shape {tuple(at.shape)}")
    at = xp.astype(at, like.dtype)
    if not bool(xp.all(xp.isfinite(at))):
        raise InputError("at must hold finite angles (radians)")
    return at


def _identity(k):
    return np.ones(k.shape)


def _apply(values, symbol, at):
    """``L g`` on the grid (``at`` None) or at the angles ``at``, from samples ``values`` (..., n)."""
    xp = array_namespace(values)
    n = values.shape[-1]
    mult = xp.astype(from_numpy(_symbol_values(symbol, n), like=values), values.dtype)
    spec = xp.fft.rfft(values, axis=-1) * mult
    if at is None:
        return xp.fft.irfft(spec, n=n, axis=-1)
    # the real trigonometric series sum_k m(k) g_k e^{i k x}: weight 2 for the paired modes 0 < k < n/2,
    # 1 for k = 0 and for the Nyquist mode k = n/2 of an even n (its coefficient is real)
    k = np.arange(n // 2 + 1, dtype=np.float64)
    weight = np.where((k == 0) | ((n % 2 == 0) & (k == n // 2)), 1.0, 2.0) / n
    weight = xp.astype(from_numpy(weight, like=values), values.dtype)
    coef = spec * weight
    phase = at[:, None] * xp.astype(from_numpy(k, like=values), values.dtype)[None, :]
    re, im = xp.real(coef), xp.imag(coef)
    return (xp.cos(phase) @ re[..., None])[..., 0] - (xp.sin(phase) @ im[..., None])[..., 0]


def fourier_multiplier(values, symbol, *, at=None):
    """Apply the Fourier multiplier ``m(k)`` to samples on the equispaced S^1 grid (by FFT).

    Parameters
    ----------
    values : array of shape (..., n)
        Samples ``g(2 pi j / n)``, ``j = 0..n-1`` (the order of ``Circle().grid(n)``),
        along the last axis.
    symbol : callable
        ``m(k)`` for an integer array ``k = 0, 1, ..., n // 2`` (NumPy), real and
        even in ``k``; a constant return value is broadcast.
    at : array of shape (m,), optional
        Angles (radians) at which to evaluate ``L g``; default: the ``n`` grid angles.

    Returns
    -------
    array of shape (..., n) or (..., m)
        ``L g`` where ``L e^{i k theta} = m(k) e^{i k theta}``, in the namespace of
        ``values``: on the grid ``irfft(m * rfft(g))``; at other angles the
        trigonometric series of the same coefficients.  Exact up to rounding for
        trigonometric polynomials of degree ``< n / 2``.

    Notes
    -----
    The symbol is evaluated on the host and moved to the device of ``values``;
    ``symbol = 1`` with ``at`` is trigonometric interpolation.

    Examples
    --------
    >>> import numpy as np
    >>> x = 2 * np.pi * np.arange(16) / 16
    >>> lap = fourier_multiplier(np.cos(3 * x), lambda k: k**2.0)   # -d^2/dx^2
    >>> bool(np.allclose(lap, 9 * np.cos(3 * x)))
    True
    >>> float(np.round(fourier_multiplier(np.cos(3 * x), lambda k: k**2.0, at=[0.0])[0], 12))
    9.0
    """
    xp, values = _samples(values, "values")
    return _apply(values, symbol, None if at is None else _angles(at, values))


def _density_pair(f_values, rho_values):
    xp, f_values = _samples(f_values, "f_values")
    _, rho_values = _samples(rho_values, "rho_values")
    if array_namespace(f_values, rho_values) is not xp:  # pragma: no cover - array_namespace raises first
        raise InputError("f_values and rho_values must share an array namespace")
    if len(f_values.shape) != 1 or tuple(f_values.shape) != tuple(rho_values.shape):
        raise InputError(
            f"f_values and rho_values must be 1-D arrays of equal length n, got shapes "
            f"{tuple(f_values.shape)} and {tuple(rho_values.shape)}"
        )
    if not bool(xp.all(rho_values > 0)):
        raise InputError("rho_values must be > 0 at every grid point (a positive density)")
    return f_values, rho_values


def _commutator(f_values, rho_values, symbol, at):
    """``(L(f rho) - f L(rho), L(rho), rho)`` on the grid or at ``at`` (f, rho there by interpolation)."""
    f_values, rho_values = _density_pair(f_values, rho_values)
    at = None if at is None else _angles(at, f_values)
    lfr = _apply(f_values * rho_values, symbol, at)
    lr = _apply(rho_values, symbol, at)
    if at is None:
        f_at, rho_at = f_values, rho_values
    else:
        f_at, rho_at = _apply(f_values, _identity, at), _apply(rho_values, _identity, at)
    return lfr - f_at * lr, lr, rho_at


def theorem2_operator(f_values, rho_values, symbol, *, at=None):
    """``[L(f rho) - f L(rho)] / rho`` from samples on the equispaced S^1 grid, ``L`` the multiplier ``symbol``.

    Parameters
    ----------
    f_values, rho_values : arrays of shape (n,)
        Samples of ``f`` and of the density ``rho > 0`` on ``Circle().grid(n)``.
    symbol : callable
        Fourier multiplier of ``L`` (see :func:`fourier_multiplier`).
    at : array of shape (m,), optional
        Angles at which to evaluate; default the grid. ``f`` and ``rho`` outside
        the brackets are then their trigonometric interpolants.

    Returns
    -------
    array of shape (n,) or (m,)
        The FNA Theorem 2 operator with a density: ``(A f - f) / t -> -(1/M0)
        [L(f rho) - f L(rho)] / rho`` (eq. 27 with the constant of the 1-D
        profile); eq. (18) prints it without ``-1/M0``.  The caller applies the
        sign and the constant.  For uniform ``rho`` it is ``L f`` exactly when
        ``m(0) = 0``.
    """
    comm, _, rho_at = _commutator(f_values, rho_values, symbol, at)
    return comm / rho_at


def attention_increment(f_values, rho_values, symbol, *, at=None):
    """``T f - f`` for the continuum attention operator ``T f = K(f rho) / K(rho)`` on S^1 (by FFT).

    Parameters
    ----------
    f_values, rho_values : arrays of shape (n,)
        Samples of ``f`` and of the density ``rho > 0`` on ``Circle().grid(n)``.
    symbol : callable
        Multiplier ``eta(k)`` of the convolution ``K`` with the kernel (any
        normalisation: it cancels), e.g. ``1 - manifolds.kernel_spectra.circle_relaxation``.
    at : array of shape (m,), optional
        Angles at which to evaluate; default the grid.

    Returns
    -------
    array of shape (n,) or (m,)
        ``[K(f rho) - f K(rho)] / K(rho)``: the limit of ``(A f - f)`` for row-normalised
        attention ``A`` on ``n -> inf`` points drawn from ``rho`` at a fixed kernel
        scale (the exact finite-scale operator; divide by ``t`` for the generator).
    """
    comm, lr, _ = _commutator(f_values, rho_values, symbol, at)
    return comm / lr
