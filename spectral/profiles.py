"""Kernels that describe themselves: the score as a function of the distance, for fused tiles.

:class:`spectral.KernelOperator` evaluates ``kernel(distance(xa, xb))`` tile by tile. When the kernel declares
its :class:`TileProfile` and the distance its geometry (``tile_distance``, see :mod:`spectral.tiles`), the
operator computes distance and score in one pass (NumPy, Numba or one CUDA kernel) instead of calling the two
functions per tile. This module is the kernels' half of that protocol; it imports no kernel and no tile code.

The protocol (:func:`kernel_profile`), for any callable ``kernel``:

* ``kernel.tile_profile()`` -- an object (or a class instance such as :class:`ProfileKernel`) that knows its
  own parameters returns its :class:`TileProfile`;
* ``functools.partial(f, *args, **keywords)`` (nested partials flatten into one) -- when ``f`` declares a
  describer (:func:`declares_profile`, as :func:`spectral.fna_kernel` and :func:`spectral.heat_kernel` do),
  the describer is called with the partial's bound arguments, in any form the signature of ``f`` accepts
  (keywords or positionally after the distance); it validates them as ``f`` would;
* anything else (a lambda, a closure, a function without a describer) has no profile: the operator takes
  the generic path ``kernel(distance(xa, xb))`` and records why (:attr:`spectral.KernelOperator.tiles`).

Profiles (``d`` the distance, ``z = d / scale``):

========== ============================================== ===========================================
kind        score                                           ``constant``
========== ============================================== ===========================================
``power``   ``exp(-beta log(1 + z))`` (FNA, alpha < 2)      ``beta = dim + alpha``
``local``   ``exp(-z^p)`` (FNA, alpha >= 2)                 ``p = alpha / (alpha - 1)``
``heat``    ``exp(-d^2 / (2 eps))`` (DRIFT; no scale)        ``eps``
``custom``  ``function(z)``: any array function             unused
========== ============================================== ===========================================

:meth:`TileProfile.scores` is the reference evaluation (NumPy in place, or any array-API namespace); the
kernels :func:`spectral.fna_kernel` and :func:`spectral.heat_kernel` compute their scores with it, so a fused
NumPy tile and the kernel are the same operations. Scores below the smallest normal float are flushed to 0.

References
----------
"Fractional neural attention" (FNA), eqs. (9), (10), (13); "Attention as drift-diffusion" (DRIFT), Theorem 3.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable

import numpy as np

from spectral.floor.arrays import flush_subnormal
from spectral.floor.backend import array_namespace, dtype_name
from spectral.floor.validation import InputError, check_real

__all__ = ["KINDS", "ProfileKernel", "TileProfile", "declares_profile", "kernel_profile"]

#: Profile kinds a fused tile can evaluate; ``custom`` calls the profile's function on ``z = d / scale``.
KINDS = ("power", "local", "heat", "custom")


@dataclasses.dataclass(frozen=True)
class TileProfile:
    """The score of a distance ``d``: ``kind``, ``scale`` and ``constant`` (module table), or a function.

    Build one with :meth:`power`, :meth:`local`, :meth:`heat` or :meth:`custom` (they validate).

    Attributes
    ----------
    kind : {"power", "local", "heat", "custom"}
    scale : float
        Divides the distance (``z = d / scale``); 1 for ``heat``.
    constant : float
        ``beta`` (power), ``p`` (local), ``eps`` (heat); 0 for ``custom``.
    function : callable or None
        ``custom`` only: ``Phi(z)`` of an array of scaled distances (float64, any shape, in the namespace of
        the points), returning an array of the same shape.
    name : str
        What the profile is, for records (``"fna(alpha=1.2, scale=0.05, dim=1)"``).
    """

    kind: str
    scale: float
    constant: float
    function: Callable | None = None
    name: str = ""

    # ---------------------------------------------------------------------------------- builders

    @classmethod
    def power(cls, beta, scale, *, name: str = "") -> TileProfile:
        """``exp(-beta log(1 + d / scale))`` = ``(1 + d / scale)^-beta``, ``beta > 0``, ``scale > 0``."""
        beta = check_real("beta", beta, low=0.0, low_open=True)
        scale = check_real("scale", scale, low=0.0, low_open=True)
        return cls("power", scale, beta, None, name or f"power(beta={beta:g}, scale={scale:g})")

    @classmethod
    def local(cls, p, scale, *, name: str = "") -> TileProfile:
        """``exp(-(d / scale)^p)``, ``p > 0``, ``scale > 0``."""
        p = check_real("p", p, low=0.0, low_open=True)
        scale = check_real("scale", scale, low=0.0, low_open=True)
        return cls("local", scale, p, None, name or f"local(p={p:g}, scale={scale:g})")

    @classmethod
    def heat(cls, eps, *, name: str = "") -> TileProfile:
        """``exp(-d^2 / (2 eps))``, ``eps > 0``."""
        eps = check_real("eps", eps, low=0.0, low_open=True)
        return cls("heat", 1.0, eps, None, name or f"heat(eps={eps:g})")

    @classmethod
    def custom(cls, function, scale=1.0, *, name: str = "") -> TileProfile:
        """``function(d / scale)``: a profile the fused tiles call on each tile of scaled distances."""
        if not callable(function):
            raise InputError(f"function must be callable (scaled distances -> scores), got {type(function).__name__}")
        scale = check_real("scale", scale, low=0.0, low_open=True)
        label = name or f"custom({getattr(function, '__qualname__', type(function).__name__)}, scale={scale:g})"
        return cls("custom", scale, 0.0, function, label)

    # -------------------------------------------------------------------------------- evaluation

    def scores(self, d, dtype=None):
        """Scores of the distances ``d`` (NumPy: ``d`` is overwritten and returned), in ``dtype``.

        ``dtype`` (default ``d``'s): the distances are rounded once to it and the profile computed in it;
        a ``custom`` function gets float64 scaled distances and its result is cast to ``dtype``.
        """
        xp = array_namespace(d)
        target = dtype_name(d.dtype) if dtype is None else dtype_name(dtype)
        if self.kind == "custom":
            z = d / self.scale if xp is not np else np.divide(d, self.scale, out=d)
            out = self.function(z)
            if not hasattr(out, "shape") or tuple(out.shape) != tuple(z.shape):
                raise InputError(f"the profile {self.name} must return an array of the shape of its input "
                                 f"{tuple(z.shape)}, got {getattr(out, 'shape', type(out).__name__)}")
            if dtype_name(out.dtype) != target:
                out = xp.astype(out, getattr(xp, target))
            return flush_subnormal(out)
        if target != dtype_name(d.dtype):
            d = xp.astype(d, getattr(xp, target))  # distances rounded once to the tile precision
        if self.kind == "heat":
            if xp is np:  # heat_kernel's operations, in place
                np.multiply(d, d, out=d)
                d *= -1.0 / (2.0 * self.constant)
                np.exp(d, out=d)
                return flush_subnormal(d)
            return flush_subnormal(xp.exp(-(d * d) / (2.0 * self.constant)))
        z = np.divide(d, self.scale, out=d) if xp is np else d / self.scale
        return self.scaled(z)

    def scaled(self, z):
        """``Phi(z)`` of scaled distances ``z = d / scale`` this call may overwrite (power and local kinds)."""
        xp = array_namespace(z)
        if self.kind == "power":
            # (1+z)^-beta as exp(-beta log(1 + z)). log of the rounded 1 + z is off by at most eps/2 absolute,
            # which moves the score by beta eps/2 relative: as accurate as log1p here (the log is multiplied by
            # -beta and exponentiated; log1p's relative accuracy near 0 buys nothing), and log1p is a scalar
            # libm call on AVX2 CPUs (26 ns per entry against 7.6 for log, NumPy 2.4).
            if xp is np:
                z += 1.0
                np.log(z, out=z)
                z *= -self.constant
                np.exp(z, out=z)
                out = z
            else:
                out = xp.exp(-self.constant * xp.log(1.0 + z))
        elif self.kind == "local":
            p = self.constant
            if xp is np:
                if p == 2.0:
                    np.multiply(z, z, out=z)
                else:
                    np.power(z, p, out=z)
                np.negative(z, out=z)
                np.exp(z, out=z)
                out = z
            else:
                w = z * z if p == 2.0 else xp.pow(z, p)
                out = xp.exp(-w)
        else:
            raise ValueError(f"scaled() is for the power and local profiles, not {self.kind!r}")
        return flush_subnormal(out)


def declares_profile(describe: Callable):
    """Decorator: the kernel function ``f`` declares ``describe`` as its tile profile.

    ``describe(*args, **keywords)`` takes the arguments of ``f`` after the distance and returns the
    :class:`TileProfile` of ``functools.partial(f, *args, **keywords)``; it validates them as ``f`` does.
    """
    if not callable(describe):
        raise TypeError("declares_profile needs a callable describer")

    def mark(f):
        f.tile_profile = describe
        return f

    return mark


@dataclasses.dataclass(frozen=True)
class ProfileKernel:
    """A kernel ``d -> function(d / scale)`` that declares its profile (e.g. a user's ``Phi`` in ``weyl --kernel``).

    Calling it evaluates ``function(d / scale)`` (a new array); :meth:`tile_profile` is the ``custom``
    :class:`TileProfile`, so :class:`spectral.KernelOperator` fuses its tiles.
    """

    function: Callable
    scale: float = 1.0
    name: str = ""

    def __post_init__(self):
        if not callable(self.function):
            raise InputError(f"function must be callable, got {type(self.function).__name__}")
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, low_open=True))

    def __call__(self, d):
        return self.function(d / self.scale)

    def tile_profile(self) -> TileProfile:
        """The ``custom`` profile ``function(d / scale)``."""
        return TileProfile.custom(self.function, self.scale, name=self.name)


def kernel_profile(kernel) -> tuple[TileProfile | None, str]:
    """``(profile, why)``: the :class:`TileProfile` ``kernel`` declares, or ``None`` and the reason it has none.

    Follows the protocol of the module docstring. Parameters the describer refuses raise (a kernel with a bad
    parameter is bad input, not a kernel without a profile).
    """
    method = getattr(kernel, "tile_profile", None)
    if callable(method) and not isinstance(kernel, functools.partial) and _takes_no_arguments(method):
        profile = method()
        return _checked(profile, kernel)
    if isinstance(kernel, functools.partial):
        describe = getattr(kernel.func, "tile_profile", None)
        name = getattr(kernel.func, "__qualname__", type(kernel.func).__name__)
        if not callable(describe):
            return None, f"functools.partial of {name}, which declares no tile profile"
        try:
            inspect.signature(describe).bind(*kernel.args, **kernel.keywords)
        except TypeError as exc:
            return None, f"functools.partial of {name} binds arguments its tile profile does not take ({exc})"
        return _checked(describe(*kernel.args, **kernel.keywords), kernel)
    name = getattr(kernel, "__qualname__", type(kernel).__name__)
    return None, (f"the kernel {name} declares no tile profile (a lambda or closure hides the kernel it calls: "
                  "pass functools.partial(fna_kernel, ...), or a kernel with a tile_profile() method)")


def _takes_no_arguments(method) -> bool:
    try:
        inspect.signature(method).bind()
    except (TypeError, ValueError):
        return False
    return True


def _checked(profile, kernel):
    if profile is None:
        return None, f"{kernel!r} declares no tile profile for these parameters"
    if not isinstance(profile, TileProfile) or profile.kind not in KINDS:
        raise InputError(f"tile_profile() of {kernel!r} must return a spectral.TileProfile, got {profile!r}")
    return profile, ""
