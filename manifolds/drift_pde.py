"""Exact solution of the drift-diffusion PDE of attention on S^1 (DRIFT Theorem 3).

Theorem 3 of the DRIFT paper: ``L`` heat-kernel attention layers at bandwidth ``eps`` approximate, to
first order in ``eps``, the solution at ``t = L eps / 2`` of

    dH/dt = At H = H'' + c (log p)' H',   c = 2,

on S^1 with sampling density ``p`` (the final PDE of the paper's Appendix-B proof prints ``c = 1``).
This module solves it for ``p ~ 1 + a cos theta`` independently of any attention code:

* :func:`drift_collocation_matrix`: the Fourier collocation matrix of ``At`` on ``m`` equispaced
  points (spectral differentiation by FFT of the identity);
* :func:`drift_pde_solution`: ``H(theta, t) = exp(t At) H_0`` through the eigen-decomposition of that
  matrix (exact in time), evaluated at any angles by trigonometric interpolation;
* :func:`drift_pde_initial`: the two initial conditions of the DRIFT-5 check (smooth, step).

The collocation matrix is exact for trigonometric polynomials of degree below ``m / 2``; ``At`` is
self-adjoint in ``L^2(p^2 d theta)`` for ``c = 2``, so its eigenvalues are real and ``int H p^2``
is conserved. Everything here is NumPy reference code on the host.
"""

from __future__ import annotations

import functools

import numpy as np

from spectral.floor.validation import check_int, check_option, check_real

__all__ = ["DRIFT_PDE_INITIALS", "drift_collocation_matrix", "drift_pde_initial", "drift_pde_solution"]

#: Initial conditions of :func:`drift_pde_solution` (see :func:`drift_pde_initial`).
DRIFT_PDE_INITIALS = ("smooth", "step")


def drift_collocation_matrix(m: int, amplitude: float, drift: float):
    """Fourier collocation matrix of ``H'' + drift (log p)' H'`` on S^1, ``p ~ 1 + amplitude cos theta``.

    Parameters
    ----------
    m : int
        Number of equispaced collocation points ``theta_j = 2 pi j / m``, ``m >= 2``.
    amplitude : float
        Density ``p ~ 1 + amplitude cos theta``, ``|amplitude| < 1``.
    drift : float
        Drift coefficient ``c`` (DRIFT Theorem 3: 2; the Appendix-B proof prints 1).

    Returns
    -------
    theta : ndarray of shape (m,)
    matrix : ndarray of shape (m, m)
        Spectral differentiation by FFT; the odd derivative of the Nyquist mode is set to zero
        (real, symmetric differentiation). Exact on trigonometric polynomials of degree ``< m / 2``.

    Examples
    --------
    >>> import numpy as np
    >>> theta, op = drift_collocation_matrix(16, 0.0, 2.0)   # uniform p: the second derivative
    >>> bool(np.allclose(op @ np.cos(3 * theta), -9 * np.cos(3 * theta)))
    True
    """
    m = check_int("m", m, low=2)
    amplitude = check_real("amplitude", amplitude, low=-1.0, high=1.0, low_open=True, high_open=True)
    drift = check_real("drift", drift)
    th = 2 * np.pi * np.arange(m) / m
    k = np.fft.fftfreq(m, d=1.0 / m)
    fhat = np.fft.fft(np.eye(m), axis=0)
    k1 = 1j * k
    k1[m // 2] = 0.0
    d1 = np.real(np.fft.ifft(k1[:, None] * fhat, axis=0))
    d2 = np.real(np.fft.ifft(-(k**2)[:, None] * fhat, axis=0))
    log_p_prime = -amplitude * np.sin(th) / (1.0 + amplitude * np.cos(th))
    return th, d2 + drift * log_p_prime[:, None] * d1


def drift_pde_initial(theta, initial: str = "smooth", *, modes: int | None = None):
    """Initial condition ``H_0(theta)`` of the DRIFT-5 check.

    Parameters
    ----------
    theta : array_like
        Angles (radians).
    initial : {"smooth", "step"}
        ``cos theta + 0.5 sin 2 theta + 0.3 cos 3 theta``, or the step ``1`` on ``|theta| < pi / 2``
        (``0`` elsewhere, ``theta`` in ``[-pi, pi]``).
    modes : int, optional
        Step only: its Fourier series ``1/2 + sum_{k <= modes} 2 sin(k pi / 2) / (k pi) cos k theta``
        instead of the step itself (what the collocation solver starts from).

    Returns
    -------
    ndarray
        ``H_0`` at ``theta``.
    """
    check_option("initial", initial, DRIFT_PDE_INITIALS)
    theta = np.asarray(theta)
    if initial == "smooth":
        return np.cos(theta) + 0.5 * np.sin(2 * theta) + 0.3 * np.cos(3 * theta)
    if modes is None:  # (a NaN or inf angle is NaN, not outside the step)
        return np.where(np.isfinite(theta), (np.abs(theta) < np.pi / 2).astype(float), np.nan)
    k = np.arange(1, check_int("modes", modes, low=1) + 1)
    return 0.5 + np.cos(np.outer(theta, k)) @ (2 * np.sin(k * np.pi / 2) / (k * np.pi))


def _trig_interpolate(values, theta):
    """Evaluate the trigonometric interpolant of equispaced ``values`` at ``theta``."""
    m = values.size
    c = np.fft.rfft(values) / m
    k = np.arange(c.size)
    w = np.full(c.size, 2.0)
    w[0] = 1.0
    if m % 2 == 0:
        w[-1] = 1.0
    return np.real(np.exp(1j * np.outer(theta, k)) @ (w * c))


@functools.lru_cache(maxsize=8)
def _eigen_decomposition(m, amplitude, drift):
    """Eigen-decomposition of the collocation matrix (cached: one O(m^3) solve per m, density and drift).

    ``At`` is self-adjoint in ``L^2(p^2)`` in the continuum, so its eigenvalues are real and the
    eigenvectors well conditioned; ``exp(t A) = V exp(t Lambda) V^-1`` then costs one product per t.
    """
    th, op = drift_collocation_matrix(m, amplitude, drift)
    lam, vec = np.linalg.eig(op)
    vinv = np.linalg.inv(vec)
    return th, lam, vec, vinv


def drift_pde_solution(theta, t, *, amplitude=0.5, drift=2.0, initial="smooth", m=512):
    """``H(theta, t)`` of ``dH/dt = H'' + drift (log p)' H'`` on S^1, ``p ~ 1 + amplitude cos theta``.

    Fourier collocation on ``m`` equispaced points (:func:`drift_collocation_matrix`), exact in time
    (``exp(t At)`` through the eigen-decomposition, computed once per ``m``, density and drift).

    Parameters
    ----------
    theta : array_like
        Angles at which the solution is evaluated (trigonometric interpolation).
    t : float
        Time, ``t >= 0``.
    amplitude : float
        Density ``p ~ 1 + amplitude cos theta``, ``|amplitude| < 1``.
    drift : float
        Drift coefficient (DRIFT Theorem 3: 2).
    initial : {"smooth", "step"}
        :func:`drift_pde_initial`; the step enters as its Fourier series to ``m/2 - 1`` modes.
    m : int
        Collocation points, ``m >= 8``. The stiffness grows like ``m^2``: at ``m = 512`` the round-off
        of ``exp(t At)`` is about 3e-12 (measured on the heat equation, ``amplitude = 0``).

    Returns
    -------
    ndarray of the shape of ``theta``

    Examples
    --------
    >>> import numpy as np
    >>> h = drift_pde_solution(np.array([0.0]), 0.1, amplitude=0.0)   # heat equation
    >>> want = np.exp(-0.1) + 0.3 * np.exp(-0.9)
    >>> bool(abs(h[0] - want) < 1e-10)
    True
    """
    check_option("initial", initial, DRIFT_PDE_INITIALS)
    m = check_int("m", m, low=8)
    t = check_real("t", t, low=0.0)
    th, lam, vec, vinv = _eigen_decomposition(m, float(amplitude), float(drift))
    h0 = drift_pde_initial(th, initial, modes=None if initial == "smooth" else m // 2 - 1)
    ht = np.real(vec @ (np.exp(t * lam) * (vinv @ h0)))
    theta = np.asarray(theta, dtype=float)
    return _trig_interpolate(ht, theta.ravel()).reshape(theta.shape)
