"""Diffusion maps as a scikit-learn estimator: :class:`DiffusionMaps` (fit, transform, pipelines, grid search).

The estimator is the front door for points; the result class behind it is
:class:`spectral.DiffusionMap` (from :func:`spectral.diffusion_map`), which works on score matrices of any
kind (dense, sparse, matrix-free) and holds the eigen-decomposition. :class:`DiffusionMaps` builds the scores
of its points with a kernel and a bandwidth, calls :func:`spectral.diffusion_map` on them and keeps the result
as ``diffusion_map_``; ``transform`` extends the coordinates to new points by the Nystrom extension of
:meth:`spectral.DiffusionMap.transform`. It follows scikit-learn's estimator contract (``get_params`` /
``set_params``, ``fit`` returns the estimator, fitted attributes end in ``_``, ``check_estimator`` passes),
so it goes into a ``Pipeline`` or a ``GridSearchCV``.

References
----------
Coifman & Lafon, "Diffusion maps", ACHA 21 (2006); "Geometric harmonics" (2006), the Nystrom extension;
"Fractional neural attention" (FNA), eqs. (9), (10), (19), (33)-(37).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from spectral.diffmaps import NORMALIZATIONS, diffusion_map
from spectral.floor.distance import pairwise_sq_distance
from spectral.fna import fna_kernel
from spectral.heat import heat_kernel
from spectral.scale import suggest_scale
from spectral.floor.validation import InputError, check_int, check_option, check_real

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - older scikit-learn: the estimator's own method
    def _validate_data(estimator, X, **kwargs):
        kwargs["force_all_finite"] = kwargs.pop("ensure_all_finite", True)
        return estimator._validate_data(X, **kwargs)

__all__ = ["DiffusionMaps"]

KERNELS = ("heat", "fna")


def _finite(X):
    """``X``, refused (an InputError, a ValueError) when it holds NaN or inf."""
    if not np.all(np.isfinite(X)):
        raise InputError("X must be finite: it holds NaN or inf (at row "
                         f"{int(np.flatnonzero(~np.all(np.isfinite(X), axis=1))[0])})")
    return X


class DiffusionMaps(TransformerMixin, BaseEstimator):
    """Diffusion maps of points (a scikit-learn transformer): fit on points, transform new points by Nystrom.

    The scores of the training points are ``exp(-|x_i - x_j|^2 / (2 eps))`` (``kernel="heat"``, ``eps`` the
    bandwidth) or the FNA profile ``Phi_alpha(|x_i - x_j| / s)`` (``kernel="fna"``, FNA eqs. 9-10, ``s`` the
    bandwidth); :func:`spectral.diffusion_map` gives the coordinates ``Psi_t`` (FNA eq. 19) of the density-
    normalised attention matrix ``A^(a)``. The result of the fit is :attr:`diffusion_map_`, a
    :class:`spectral.DiffusionMap` (eigenvalues, right and left eigenvectors, stationary law): this class is
    the estimator, that one the result.

    Parameters
    ----------
    n_components : int
        Number of diffusion coordinates, ``1 <= n_components <= n_samples - 1``.
    kernel : {"heat", "fna"}
        ``"heat"``: the Gaussian ``exp(-d^2 / (2 eps))`` (DRIFT convention); ``"fna"``: the fractional
        profile of order ``alpha`` (heavy-tailed for ``alpha < 2``).
    bandwidth : float > 0 or "auto"
        ``eps`` of the heat kernel, the scale ``s`` of the FNA profile. ``"auto"``: the centre of the
        flattest window of the kernel-sum log-log slope (:func:`spectral.suggest_scale`), chosen on the
        training points; the value used is :attr:`bandwidth_`.
    a : float in [0, 1]
        Density normalisation ``C^(a) = Q^-a C Q^-a`` (Coifman & Lafon's alpha; the toolkit writes ``a``
        because ``alpha`` is the FNA order): 0 the graph Laplacian, 1/2 Fokker-Planck, 1 Laplace-Beltrami
        (the sampling density drops out).
    t : float >= 0
        Diffusion time: coordinates ``lambda_j^t psi_j`` (``0``: the eigenvectors, Laplacian eigenmaps).
    alpha : float > 0
        Order of the FNA profile (``kernel="fna"`` only).
    dim : int >= 1, optional
        Intrinsic dimension ``d_M`` of the FNA profile (``kernel="fna"`` only); None: the dimension estimated
        by :func:`spectral.suggest_scale` on the training points, rounded (:attr:`dim_`).
    normalization : {"probability", "paper"}
        Eigenvector normalisation of :func:`spectral.diffusion_map` (``"probability"``: Euclidean distance of
        the coordinates is the diffusion distance).
    method : str
        Eigensolver of :func:`spectral.markov_spectrum` (``"auto"``, ``"dense"``, ...).
    random_state : int or None
        Seed of the iterative eigensolvers' start vector (the dense solver draws nothing).

    Attributes
    ----------
    diffusion_map_ : spectral.DiffusionMap
        The result on the training points (eigenvalues, ``psi``, ``phi``, ``stationary``, ``spectrum``).
    embedding_ : ndarray of shape (n_samples, n_components)
        The diffusion coordinates of the training points.
    eigenvalues_ : ndarray of shape (n_components,)
        ``lambda_1 >= ... >= lambda_m`` of ``A^(a)`` (``lambda_0 = 1`` left out).
    bandwidth_ : float
        The bandwidth used (``bandwidth``, or the one chosen by ``"auto"``).
    dim_ : int or None
        The FNA dimension used (None for the heat kernel).
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training points (the Nystrom extension needs them).
    n_features_in_ : int
        Number of features seen by ``fit``.

    Examples
    --------
    Points on a circle; two diffusion coordinates, then three new points placed by Nystrom:

    >>> import numpy as np
    >>> from spectral import DiffusionMaps
    >>> theta = 2 * np.pi * np.arange(200) / 200
    >>> X = np.c_[np.cos(theta), np.sin(theta)]
    >>> dm = DiffusionMaps(n_components=2, bandwidth=0.01, a=1.0).fit(X)
    >>> dm.embedding_.shape, dm.diffusion_map_.eigenvalues.shape
    ((200, 2), (3,))
    >>> new = dm.transform(X[:3])
    >>> bool(np.allclose(new, dm.embedding_[:3], atol=1e-10))
    True
    """

    def __init__(self, n_components=2, *, kernel="heat", bandwidth="auto", a=0.0, t=1.0, alpha=1.2, dim=None,
                 normalization="probability", method="auto", random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.a = a
        self.t = t
        self.alpha = alpha
        self.dim = dim
        self.normalization = normalization
        self.method = method
        self.random_state = random_state

    def fit(self, X, y=None):
        """Diffusion coordinates of the points ``X`` (shape ``(n_samples, n_features)``); returns the estimator."""
        X = _finite(_validate_data(self, X, dtype=np.float64, ensure_min_samples=2, ensure_all_finite=False))
        kernel = check_option("kernel", self.kernel, KERNELS)
        n_components = check_int("n_components", self.n_components, low=1, high=X.shape[0] - 1)
        check_option("normalization", self.normalization, NORMALIZATIONS)
        check_real("a", self.a, low=0.0, high=1.0)
        check_real("t", self.t, low=0.0)
        dist = np.sqrt(pairwise_sq_distance(X))
        bandwidth, dim = self._bandwidth_and_dim(kernel, dist)
        scores = self._scores(kernel, dist, bandwidth, dim)
        result = diffusion_map(scores, n_components=n_components, a=self.a, tau=self.t,
                               normalization=self.normalization, method=self.method, rng=self.random_state)
        self.diffusion_map_ = result
        self.embedding_ = np.asarray(result.coordinates)
        self.eigenvalues_ = np.asarray(result.eigenvalues[1:])
        self.bandwidth_ = bandwidth
        self.dim_ = dim
        self.X_fit_ = X
        return self

    def transform(self, X):
        """Diffusion coordinates of new points by the Nystrom extension (comparable with :attr:`embedding_`).

        Raises :class:`~spectral.floor.validation.InputError` (a ValueError) for a point with zero kernel weight on
        every training point (too far for the bandwidth).
        """
        check_is_fitted(self, "diffusion_map_")
        X = _finite(_validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False))
        dist = np.sqrt(pairwise_sq_distance(X, self.X_fit_))
        rows = self._scores(self.kernel, dist, self.bandwidth_, self.dim_)
        return np.asarray(self.diffusion_map_.transform(rows))

    def fit_transform(self, X, y=None, **fit_params):
        """Fit to ``X`` and return :attr:`embedding_` (the training coordinates, not their Nystrom extension)."""
        return self.fit(X, y).embedding_.copy()

    # -- the kernel --------------------------------------------------------------------------------------------
    def _bandwidth_and_dim(self, kernel: str, dist):
        auto = isinstance(self.bandwidth, str)
        if auto and self.bandwidth != "auto":
            raise InputError(f"bandwidth must be a number > 0 or 'auto', got {self.bandwidth!r}")
        dim = None
        if kernel == "fna":
            check_real("alpha", self.alpha, low=0.0, low_open=True)
            if self.dim is not None:
                dim = check_int("dim", self.dim, low=1)
        suggestion = None
        if auto or (kernel == "fna" and dim is None):
            suggestion = suggest_scale(dist, kernel="heat" if kernel == "heat" else "gaussian")
        if auto:
            bandwidth = float(suggestion.scale)
        else:
            bandwidth = check_real("bandwidth", self.bandwidth, low=0.0, low_open=True)
        if kernel == "fna" and dim is None:
            dim = max(1, int(round(float(suggestion.dimension))))
        return bandwidth, dim

    def _scores(self, kernel: str, dist, bandwidth: float, dim):
        if kernel == "heat":
            return heat_kernel(dist, eps=bandwidth)
        return fna_kernel(dist, alpha=self.alpha, scale=bandwidth, dim=dim)
