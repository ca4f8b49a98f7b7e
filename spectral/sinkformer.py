"""Sinkformer layers on the sphere: tokens moved by Sinkhorn- or SoftMax-normalised attention.

Sander, Ablin, Blondel & Peyre, "Sinkformers: Transformers with doubly stochastic attention" (AISTATS
2022, arXiv 2110.11773) normalise the attention scores with Sinkhorn's algorithm instead of the row-wise
SoftMax, and show that in the many-token limit, with the attention and the depth rescaled, the layers
operate a heat diffusion. Here ``n`` unit tokens ``x_i`` in ``R^d`` (points of ``S^(d-1)``) go through
``layers`` residual layers with scores ``<x_i, x_j> / eps``, value matrix ``value * I`` and a
layer normalisation (projection onto the sphere):

    ``y_i = x_i + (step / eps) value P_perp(x_i) sum_j A_ij x_j``,  ``x_i <- y_i / |y_i|``,

where ``P_perp(x) v = v - <x, v> x`` and ``A`` is the doubly stochastic Sinkhorn normalisation of
``exp(<x_i, x_j> / eps)`` (:func:`spectral.sinkhorn_normalize`, symmetric scaling) or its row-wise
SoftMax. ``step = eps`` is one layer per unit ``eps`` of time, the Transformer layer itself
(``y = x + value P_perp(A x)``); ``value = -1`` spreads the tokens (diffusion), ``value = +1``
gathers them. On the unit sphere ``<x_i, x_j> / eps = -|x_i - x_j|^2 / (2 eps) + 1 / eps``, so the
attention is that of the Gaussian kernel ``exp(-|x_i - x_j|^2 / (2 eps))`` for both normalisations
(the constant cancels in either); for points off a sphere only the Sinkhorn normalisation absorbs the
norms ``exp(|x|^2 / (2 eps))`` of the dot-product kernel.

Since ``sum_j A_ij x_j - x_i = eps L(id) + O(eps^2)`` with ``L`` the generator of the normalised
kernel, the tokens' velocity tends to ``value c grad log p`` on the sphere (``c = 1/2`` for Sinkhorn,
``1`` for SoftMax, ``p`` the tokens' density), and with ``value = -1`` their density follows the heat
equation ``d p / dt = c Delta p`` (checked by :mod:`verify.sk_heat`).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np

from spectral.floor.arrays import as_float_array, numpy_dtype
from spectral.bistochastic import SinkhornConvergenceWarning, sinkhorn_normalize
from spectral.floor.memory import check_memory, memory_device
from spectral.floor.validation import ConvergenceError, InputError, check_int, check_option, check_real

__all__ = ["NORMALISATIONS", "SinkformerFlow", "sinkformer_flow"]

#: ``"sinkhorn"``: doubly stochastic (symmetric Sinkhorn scaling); ``"softmax"``: row-stochastic.
NORMALISATIONS = ("sinkhorn", "softmax")
#: Largest ``| |x_i| - 1 |`` accepted for tokens on the sphere.
UNIT_NORM_TOL = 1e-8


@dataclasses.dataclass(frozen=True, repr=False)
class SinkformerFlow:
    """Token trajectories of :func:`sinkformer_flow`.

    Attributes
    ----------
    tokens : array of shape (m, n, d)
        ``tokens[k]`` is the configuration after ``layers[k]`` layers, in the namespace of ``X0``.
    layers : numpy.ndarray of shape (m,)
        The recorded layer counts (0 is the start).
    times : numpy.ndarray of shape (m,)
        ``layers * step``: the times of the recorded configurations.
    eps, step, value : float
        Score scale, time per layer and value multiplier.
    normalisation : str
        ``"sinkhorn"`` or ``"softmax"``.
    sinkhorn_iterations : numpy.ndarray of shape (layers,)
        Scaling updates of :func:`spectral.sinkhorn_normalize` in each layer (zeros for SoftMax).
    """

    tokens: Any
    layers: np.ndarray
    times: np.ndarray
    eps: float
    step: float
    value: float
    normalisation: str
    sinkhorn_iterations: np.ndarray

    @property
    def final(self):
        """The configuration after the last layer."""
        return self.tokens[-1, ...]

    def __repr__(self) -> str:
        n, d = (int(s) for s in self.tokens.shape[1:])
        return (f"SinkformerFlow(n={n}, d={d}, layers={int(self.layers[-1])}, eps={self.eps:g}, step={self.step:g}, "
                f"normalisation={self.normalisation!r}, value={self.value:g})")


def _attention(X, eps, normalisation, tol, xp):
    """The normalised attention of the scores ``<x_i, x_j> / eps`` (kernel ``exp((<x_i, x_j> - 1) / eps)``)."""
    gram = X @ xp.permute_dims(X, (1, 0))
    kernel = xp.exp(xp.minimum(gram - 1.0, xp.zeros_like(gram)) / eps)  # <= 1; the diagonal is 1
    if normalisation == "softmax":
        return kernel / xp.sum(kernel, axis=1)[:, None], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SinkhornConvergenceWarning)  # raised below as an error instead
        res = sinkhorn_normalize(kernel, tol=tol)
    if not res.converged:
        raise ConvergenceError(f"the Sinkhorn normalisation did not reach tol={tol:g} in 1000 updates (residual "
                               f"{res.residual:.3g}): raise tol")
    return res.matrix, res.iterations


def sinkformer_flow(X0, *, eps, layers, step=None, normalisation="sinkhorn", value=-1.0, record_every=1,
                    tol=1e-12, max_bytes=None) -> SinkformerFlow:
    """Move unit tokens through ``layers`` Sinkformer (or Transformer) layers with scores ``<x_i, x_j> / eps``.

    Parameters
    ----------
    X0 : array of shape (n, d)
        Unit tokens (points of ``S^(d-1)``, ``d >= 2``), any array-API namespace.
    eps : float > 0
        Score scale: scores ``<x_i, x_j> / eps``, the Gaussian kernel ``exp(-|x_i - x_j|^2 / (2 eps))``.
    layers : int >= 1
        Number of layers.
    step : float > 0, optional
        Time per layer (default ``eps``: the plain residual layer ``y = x + value P_perp(A x)``).
    normalisation : {"sinkhorn", "softmax"}
        Doubly stochastic attention (Sinkformer) or row-stochastic attention (Transformer).
    value : float
        Value matrix ``value * I``: ``-1`` spreads the tokens (heat diffusion), ``+1`` gathers them.
    record_every : int >= 1
        Keep the configuration every this many layers (and after the last one).
    tol : float in (0, 1)
        Row-sum tolerance of the Sinkhorn normalisation in each layer.
    max_bytes : int, optional
        Memory limit for the estimated peak (three ``n x n`` arrays); default: the memory available.

    Returns
    -------
    SinkformerFlow
        The recorded configurations, their layer counts and times, and the Sinkhorn iterations.

    Raises
    ------
    spectral.floor.validation.InputError
        ``X0`` not a finite ``(n, d)`` array of unit rows (``d >= 2``, ``n >= 2``), a bad ``eps``, ``layers``,
        ``step``, ``normalisation``, ``value``, ``record_every`` or ``tol``.
    spectral.floor.memory.DenseMemoryError
        When the ``n x n`` attention would not fit.

    Notes
    -----
    The velocity ``(value / eps) P_perp(x_i) sum_j A_ij x_j`` equals ``(value / eps) P_perp(x_i) (A x - x)_i``
    (rows of ``A`` sum to 1), which tends to ``value c grad log p(x_i)``: ``c = 1/2`` for the doubly stochastic
    ``A`` (whose generator is ``(1/2)(Delta + <grad log p, grad>)``) and ``c = 1`` for SoftMax
    (``(1/2) Delta + <grad log p, grad>``). With ``value = -1`` the continuity equation of the tokens' density is
    the heat equation ``d p / dt = c Delta p``.

    References
    ----------
    Sander, Ablin, Blondel & Peyre, AISTATS 2022 (arXiv 2110.11773), abstract and the heat-diffusion section; Agarwal,
    Harchaoui, Mulcahy & Pal, "Iterated Schrodinger bridge approximation to Wasserstein gradient flows"
    (arXiv 2406.10823).

    Examples
    --------
    >>> import numpy as np
    >>> t = np.linspace(0, 1, 40, endpoint=False)
    >>> X = np.stack([np.cos(t), np.sin(t)], axis=1)
    >>> flow = sinkformer_flow(X, eps=0.05, layers=4)
    >>> flow.tokens.shape, bool(np.allclose(np.linalg.norm(flow.final, axis=1), 1.0))
    ((5, 40, 2), True)
    """
    xp, X = as_float_array(X0, "X0", ndim=2)
    n, d = (int(s) for s in X.shape)
    if n < 2 or d < 2:
        raise InputError(f"X0 must hold n >= 2 tokens of dimension d >= 2, got shape {(n, d)}")
    norms = xp.sqrt(xp.sum(X * X, axis=1))
    dev = float(xp.max(xp.abs(norms - 1.0)))
    if not dev <= UNIT_NORM_TOL:
        raise InputError(f"X0 must hold unit vectors (tokens on the sphere S^(d-1)); the largest | |x_i| - 1 | is "
                         f"{dev:.3g} > {UNIT_NORM_TOL:g}: pass X0 / norm(X0, axis=1)")
    eps = check_real("eps", eps, low=0.0, low_open=True)
    layers = check_int("layers", layers, low=1)
    step = eps if step is None else check_real("step", step, low=0.0, low_open=True)
    normalisation = check_option("normalisation", normalisation, NORMALISATIONS)
    value = check_real("value", value)
    record_every = check_int("record_every", record_every, low=1)
    tol = check_real("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)
    itemsize = numpy_dtype(X.dtype).itemsize
    check_memory(3 * itemsize * n * n + 4 * itemsize * n * d * (layers // record_every + 2),
                 what=f"the attention of {n} tokens", alternative="use fewer tokens", max_bytes=max_bytes,
                 device=memory_device(X))
    X = X / norms[:, None]
    kept, recorded = [X], [0]
    iterations = np.zeros(layers, dtype=np.int64)
    for layer in range(1, layers + 1):
        A, iterations[layer - 1] = _attention(X, eps, normalisation, tol, xp)
        avg = A @ X
        tangent = avg - xp.sum(avg * X, axis=1)[:, None] * X
        Y = X + (step / eps) * value * tangent
        X = Y / xp.sqrt(xp.sum(Y * Y, axis=1))[:, None]
        if layer % record_every == 0 or layer == layers:
            kept.append(X)
            recorded.append(layer)
    layer_counts = np.asarray(recorded, dtype=np.int64)
    return SinkformerFlow(tokens=xp.stack(kept, axis=0), layers=layer_counts, times=layer_counts * step, eps=eps,
                          step=step, value=value, normalisation=normalisation, sinkhorn_iterations=iterations)
