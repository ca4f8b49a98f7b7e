"""Metric attention: heat-kernel scores of distances pulled back by a feature map ``g``.

``C_ij = exp(-|g(x_i) - g(y_j)|^2 / (2 eps))`` (DRIFT section 4.1) with a residual feature map
``g(x) = x + W_2 sigma(W_1 x + b_1)`` (:class:`ResidualMLP`). The squared distances are computed
coordinate by coordinate (:func:`spectral.floor.distance.pairwise_sq_distance`: no cancellation for nearby
features).

References
----------
"Attention as drift-diffusion" (DRIFT), section 4.1 and Algorithm 1.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.activations import ACTIVATIONS, LIPSCHITZ, activation_function
from spectral.floor.arrays import as_float_array, flush_subnormal, like_array, matrix_transpose, numpy_dtype
from spectral.floor.distance import BLOCK_ELEMENTS, pairwise_sq_distance
from spectral.floor.pairwise_memory import check_pairwise_memory
from spectral.floor.validation import InputError, as_generator, check_int, check_option, check_real

__all__ = ["ResidualMLP", "metric_kernel"]


class ResidualMLP:
    r"""Residual one-hidden-layer feature map :math:`g(x) = x + W_2\,\sigma(W_1 x + b_1)` (DRIFT section 4.1).

    Parameters
    ----------
    dim : int
        Input and output dimension (``>= 1``).
    width : int
        Hidden width (``>= 1``).
    rng : numpy.random.Generator or int, optional
        Source of the random weights (an int seed >= 0, a Generator, or None for fresh entropy).
    activation : {"tanh", "relu", "gelu", "identity", "square", "exp"}
        Hidden non-linearity ``sigma``.
    gain : float
        Scale of ``W_2`` (``> 0``).  Weights: ``W_1 ~ N(0, 1/dim)``,
        ``b_1 ~ N(0, 1)``, ``W_2 ~ gain N(0, 1/width)``.

    Notes
    -----
    ``d(x, y) = |g(x) - g(y)|`` is a pseudo-metric, and a metric when ``g`` is
    injective, which holds if ``Lip(W_2 sigma(W_1 . + b_1)) < 1``
    (:meth:`residual_lipschitz_bound`; ledger DRIFT-14).  Weights are stored as
    NumPy arrays and moved to the namespace of the input on each call.
    """

    def __init__(self, dim, width, *, rng=None, activation="tanh", gain=1.0):
        self.dim = check_int("dim", dim, low=1)
        self.width = check_int("width", width, low=1)
        self.activation = check_option("activation", activation, ACTIVATIONS)
        gain = check_real("gain", gain, low=0.0, low_open=True)
        g = as_generator(rng)
        self.w1 = g.standard_normal((self.width, self.dim)) / math.sqrt(self.dim)
        self.b1 = g.standard_normal(self.width)
        self.w2 = gain * g.standard_normal((self.dim, self.width)) / math.sqrt(self.width)

    def __call__(self, x):
        """Apply ``g`` to the rows of ``x`` (shape ``(n, dim)``); same namespace and dtype."""
        xp, x = as_float_array(x, "x", ndim=2)
        if x.shape[1] != self.dim:
            raise InputError(f"x must have shape (n, {self.dim}), got {tuple(x.shape)}")
        w1 = like_array(self.w1, "w1", like=x)
        b1 = like_array(self.b1, "b1", like=x)
        w2 = like_array(self.w2, "w2", like=x)
        h = activation_function(self.activation)(xp, x @ matrix_transpose(w1) + b1)
        return x + h @ matrix_transpose(w2)

    def residual_lipschitz_bound(self) -> float:
        """Upper bound ``|W_2|_2 Lip(sigma) |W_1|_2`` on the Lipschitz constant of ``g(x) - x``.

        ``inf`` for activations without a global bound ("square", "exp").
        """
        lip = LIPSCHITZ.get(self.activation, math.inf)
        return float(np.linalg.norm(self.w2, 2) * lip * np.linalg.norm(self.w1, 2))


#: Peak bytes per ``(n, m)`` entry of :func:`metric_kernel`: ``copies`` arrays of the itemsize plus
#: ``mask_bytes`` of boolean masks (flushing subnormal scores); the features and three blocks of the
#: blocked squared distances come on top. Measured with tracemalloc at n x m = 1000 x 1500 and
#: 3000 x 2000 (float64, d = 16): NumPy computes the scores in place over the squared distances,
#: 1.0 x (n m 8) plus 4.7-5.3 MiB (a block of squared coordinate differences and the features; 3.0 x
#: before the in-place path); other namespaces (array_api_strict) hold the squared distances, their
#: negation and the quotient (3.01 x), and flushing subnormals with ``where`` holds the exponential, a
#: mask, a zero array and the result.
METRIC_KERNEL_PEAK = {"numpy": {"copies": 1, "mask_bytes": 1}, "other": {"copies": 3, "mask_bytes": 2}}


def metric_kernel(x, feature_map, *, eps, y=None, max_bytes=None):
    r"""Metric-attention scores :math:`\exp(-|g(x_i) - g(y_j)|^2 / (2\varepsilon))` (DRIFT section 4.1).

    Parameters
    ----------
    x : array of shape (n, d)
        Query tokens.
    feature_map : callable
        ``g``, mapping an ``(n, d)`` array to ``(n, d')`` in the same namespace
        (e.g. :class:`ResidualMLP`).
    eps : float
        Bandwidth ``> 0``.  DRIFT's Algorithm 1 uses ``exp(-|g(x)-g(y)|^2)``,
        i.e. ``eps = 1/2``; the toolkit's heat-kernel convention keeps ``2 eps``.
    y : array of shape (m, d), optional
        Key tokens; default ``x``.
    max_bytes : int or float, optional
        Limit on the memory the scores may take (the result, its temporaries and the features, in
        bytes); default the memory available now.

    Returns
    -------
    array of shape (n, m)
        The heat kernel of the pulled-back distances ``|g(x) - g(y)|``.

    Raises
    ------
    spectral.floor.memory.DenseMemoryError
        Before the ``(n, m)`` scores are allocated (the features ``g(x)``, ``g(y)`` are computed
        first), if their estimated peak exceeds the limit.

    Examples
    --------
    >>> import numpy as np
    >>> g = ResidualMLP(2, 8, rng=0, gain=0.1)
    >>> C = metric_kernel(np.array([[0.0, 0.0], [1.0, 0.0]]), g, eps=0.5)
    >>> C.shape, float(C[0, 0]), bool(np.allclose(C, C.T))
    ((2, 2), 1.0, True)
    """
    eps = check_real("eps", eps, low=0.0, low_open=True)
    if not callable(feature_map):
        raise InputError(f"feature_map must be callable (n, d) -> (n, d'), got {type(feature_map).__name__}")
    xp, x = as_float_array(x, "x", ndim=2)
    y = x if y is None else like_array(y, "y", like=x)
    gx = feature_map(x)
    gy = gx if y is x else feature_map(y)
    _, gx = as_float_array(gx, "feature_map(x)", ndim=2)
    _, gy = as_float_array(gy, "feature_map(y)", ndim=2)
    n, m, itemsize = int(gx.shape[0]), int(gy.shape[0]), numpy_dtype(gx.dtype).itemsize
    features = (n + m) * int(gx.shape[1]) * itemsize
    peak = METRIC_KERNEL_PEAK["numpy" if xp is np else "other"]
    check_pairwise_memory(n, m, bytes_per_pair=peak["copies"] * itemsize + peak["mask_bytes"],
                          extra_bytes=features + 3 * min(n * m, max(BLOCK_ELEMENTS, m)) * itemsize,
                          max_bytes=max_bytes, like=gx, what="dense metric-attention scores",
                          alternative="compute them in row blocks, metric_kernel(x[i:j], feature_map, eps=..., y=x), "
                          "or multiply without storing: KernelOperator(feature_map(x), kernel=..., distance=...)")
    d2 = pairwise_sq_distance(gx, gy)
    if xp is np:  # the same operations in place (bitwise equal): no (n, m) temporaries
        np.negative(d2, out=d2)
        np.divide(d2, 2.0 * eps, out=d2)
        return flush_subnormal(np.exp(d2, out=d2))
    d2 = -d2 / (2.0 * eps)
    return flush_subnormal(xp.exp(d2))  # the squared distances are released before the exponential
