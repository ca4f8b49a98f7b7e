"""Element-wise activations of the MLP score and feature maps, in any array namespace.

``activation_function(name)`` returns ``f(xp, z)``; ``"gelu"`` is the tanh approximation (the array API has
no ``erf``). :data:`LIPSCHITZ` gives the global Lipschitz constant where one exists (used to bound
the Lipschitz constant of a residual feature map).
"""

from __future__ import annotations

import math

from spectral.floor.validation import check_option

__all__ = []  # used by spectral.neural and spectral.metric; callers name activations by string

ACTIVATIONS = ("tanh", "relu", "gelu", "identity", "square", "exp")

#: Global Lipschitz constants (``max |f'|``); "square" and "exp" have none. gelu: the tanh form's maximum slope.
LIPSCHITZ = {"tanh": 1.0, "relu": 1.0, "identity": 1.0, "gelu": 1.1289}


def activation_function(name: str):
    """Element-wise activation ``f(xp, z)`` named ``name`` (one of :data:`ACTIVATIONS`).

    Examples
    --------
    >>> import numpy as np
    >>> activation_function("relu")(np, np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    check_option("activation", name, ACTIVATIONS)
    if name == "tanh":
        return lambda xp, z: xp.tanh(z)
    if name == "relu":
        return lambda xp, z: xp.where(z > 0, z, xp.zeros_like(z))
    if name == "gelu":
        # tanh approximation (Hendrycks & Gimpel; torch approximate="tanh"): the array API has no erf.
        c = math.sqrt(2.0 / math.pi)
        return lambda xp, z: 0.5 * z * (1.0 + xp.tanh(c * (z + 0.044715 * (z * z * z))))
    if name == "identity":
        return lambda xp, z: z
    if name == "square":
        return lambda xp, z: z * z
    return lambda xp, z: xp.exp(z)
