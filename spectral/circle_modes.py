r"""Fourier modes of tokens on the circle: ``c_k = (1/n) sum_j e^(i k theta_j)``.

Tokens on ``S^1`` are rows ``x_j = (cos theta_j, sin theta_j)`` (as :func:`spectral.attention_flow`
moves them with ``d = 2``). Their empirical measure has Fourier coefficients

.. math:: c_k = \frac{1}{n}\sum_{j=1}^n e^{i k \theta_j}, \qquad |c_k| \le 1,

``|c_k| = 1`` exactly when the tokens sit on ``k`` equally spaced points (any masses), and
``E |c_k|^2 = 1/n`` for i.i.d. uniform tokens. The coefficients are computed from the coordinates by
the Chebyshev recurrence ``e^(i (k+1) theta) = e^(i k theta) e^(i theta)`` in real arithmetic (no angles,
no complex dtype), so they stay in the namespace and on the device of ``X``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from spectral.floor.arrays import as_float_array
from spectral.floor.backend import array_namespace
from spectral.floor.validation import InputError

__all__ = ["CircleModes", "circle_modes"]

#: rows must be unit vectors of R^2 to this tolerance
_UNIT_NORM_TOL = 1e-6


@dataclasses.dataclass(frozen=True)
class CircleModes:
    """Fourier coefficients of :func:`circle_modes`: ``c_k = real + i imag`` for ``k`` in ``modes``.

    Attributes
    ----------
    modes : tuple of int
        The modes ``k`` (the last axis of ``real`` and ``imag``).
    real, imag : array of shape (..., K)
        ``Re c_k`` and ``Im c_k``, in the namespace and device of the tokens.
    """

    modes: tuple
    real: Any
    imag: Any

    @property
    def amplitude(self):
        """``|c_k|``."""
        xp = array_namespace(self.real)
        return xp.sqrt(self.real * self.real + self.imag * self.imag)

    @property
    def phase(self):
        """``arg c_k`` in ``(-pi, pi]``."""
        xp = array_namespace(self.real)
        return xp.atan2(self.imag, self.real)


def circle_modes(X, modes) -> CircleModes:
    """Empirical Fourier coefficients ``c_k`` of tokens on the unit circle.

    Parameters
    ----------
    X : array of shape (..., n, 2)
        Tokens ``(cos theta_j, sin theta_j)`` (unit rows); leading axes are a batch.
    modes : sequence of int
        Modes ``k >= 0`` (``c_0 = 1``).

    Returns
    -------
    CircleModes
        ``real`` and ``imag`` of shape ``(..., len(modes))``.

    Raises
    ------
    spectral.floor.validation.InputError
        ``X`` not of shape ``(..., n, 2)`` with unit rows, or a mode that is not an integer ``>= 0``.

    Examples
    --------
    >>> import numpy as np
    >>> theta = 2 * np.pi * np.arange(3) / 3              # three equally spaced tokens
    >>> m = circle_modes(np.stack([np.cos(theta), np.sin(theta)], axis=-1), [1, 2, 3])
    >>> [round(float(a), 12) for a in m.amplitude]
    [0.0, 0.0, 1.0]
    """
    xp, X = as_float_array(X, "X")
    if X.ndim < 2 or int(X.shape[-1]) != 2 or int(X.shape[-2]) < 1:
        raise InputError(f"X must have shape (..., n, 2): n tokens on the unit circle, got shape {tuple(X.shape)}")
    if isinstance(modes, (str, bytes)) or not hasattr(modes, "__iter__"):
        raise InputError(f"modes must be a sequence of integers >= 0, got {modes!r}")
    ks = []
    for m in modes:
        if isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer, float, np.floating)) \
                or not float(m) == float(m) or not math.isfinite(float(m)) or float(m) != int(m) or m < 0:
            raise InputError(f"modes must be integers >= 0, got {m!r}")
        ks.append(int(m))
    ks = tuple(ks)
    if not ks:
        raise InputError("modes must be a non-empty sequence of integers >= 0, got an empty one")
    x, y = X[..., 0], X[..., 1]
    dev = float(xp.max(xp.abs(x * x + y * y - 1.0)))
    if not dev <= _UNIT_NORM_TOL:
        raise InputError(f"X must hold unit vectors (tokens on the circle); the largest | |x_j|^2 - 1 | is {dev:.3g}")
    top = max(ks)
    re_k, im_k = xp.ones_like(x), xp.zeros_like(x)  # e^(i 0 theta)
    real, imag = {}, {}
    for k in range(top + 1):
        if k in ks:
            real[k], imag[k] = xp.mean(re_k, axis=-1), xp.mean(im_k, axis=-1)
        re_k, im_k = re_k * x - im_k * y, re_k * y + im_k * x
    return CircleModes(modes=ks, real=xp.stack([real[k] for k in ks], axis=-1),
                       imag=xp.stack([imag[k] for k in ks], axis=-1))
