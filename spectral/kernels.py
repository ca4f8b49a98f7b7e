"""Score builders: the matrices ``C`` whose row normalisation is an attention matrix.

Every builder returns an ``(n, m)`` array with ``C[i, j]`` the score of query
``i`` for key ``j`` (DESIGN.md section 2); the attention matrix is
``A = N_R(C) = D^-1 C``.  Builders take distances or points, infer the array
namespace from them (:func:`spectral.backend.array_namespace`) and keep the
input's floating dtype, so CuPy inputs stay on the GPU.

* :func:`fna_kernel` / :func:`fna_profile`: fractional neural attention,
  ``Phi_alpha(d / kappa)`` (FNA eqs. 9, 10, 13; the sphere variant A.1 / eq. 39
  is the same function of geodesic distances), with :func:`fna_time`,
  :func:`paper_kappa` and :func:`matched_half_width_kappa` (DESIGN.md 3.1, 3.4).
* :func:`heat_kernel`: ``exp(-d^2 / (2 eps))`` (DRIFT convention) and
  :func:`heat_time` (DESIGN.md 3.3).
* :func:`dot_product_scores`: ``exp(q.k / temperature)``, row max subtracted.
* :func:`metric_kernel` with :class:`ResidualMLP` (DRIFT section 4.1).
* :func:`neural_scores` with :class:`ScoreMLP` (NEURAL eqs. 3-4).
* :class:`KernelOperator` (matrix-free ``C @ v``) and :func:`pairwise` (dense,
  memory-guarded) for kernels given as functions of a distance block.

Underflow is flushed to exact zero: subnormal entries made a 500 x 500
``eigvalsh`` 100x slower (DESIGN.md 3.1, performance notes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .backend import array_namespace, from_numpy
from .memory import check_dense_memory, dense_bytes

__all__ = [
    "fna_profile",
    "fna_kernel",
    "fna_time",
    "paper_kappa",
    "matched_half_width_kappa",
    "heat_kernel",
    "heat_kernel_sparse",
    "heat_time",
    "SparseScores",
    "dot_product_scores",
    "ResidualMLP",
    "metric_kernel",
    "ScoreMLP",
    "neural_scores",
    "KernelOperator",
    "pairwise",
    "ACTIVATIONS",
]

ACTIVATIONS = ("tanh", "relu", "gelu", "identity", "square", "exp")
_KAPPA_VARIANTS = ("text", "sphere")
_NEURAL_FORMS = ("factored", "concat")
# Working-memory budget of one block (matrix-free operator, factored neural scores).
_DEFAULT_BLOCK_BYTES = 64 << 20
# NumPy operator blocks: four (b, m) temporaries of ~1 MiB each stay in a 2 MiB L2 cache; measured
# 15-18 ns/entry for an FNA matvec at 1 MiB blocks vs 49 ns/entry at 16 MiB blocks (n = 20000, loaded host).
_HOST_BLOCK_BYTES = 4 << 20


# --------------------------------------------------------------------------- validation


def _number(value, name: str, *, low: float, strict: bool = True, allowed: str | None = None) -> float:
    """A finite real number ``> low`` (``>= low`` if not strict), else ValueError naming ``name``."""
    rng_text = allowed or (f"> {low:g}" if strict else f">= {low:g}")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a finite real number {rng_text}, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (value <= low if strict else value < low):
        raise ValueError(f"{name} must be a finite real number {rng_text}, got {value!r}")
    return value


def _check_alpha(alpha) -> float:
    return _number(alpha, "alpha", low=0.0, allowed="> 0 (0 < alpha < 2: power law, alpha >= 2: local)")


def _check_dim(dim) -> float:
    return _number(dim, "dim", low=1.0, strict=False, allowed=">= 1 (intrinsic dimension of the point set)")


def _check_option(value, name: str, valid: tuple) -> str:
    if value not in valid:
        raise ValueError(f"{name} must be one of {valid}, got {value!r}")
    return value


def _is_real_float(xp, dtype) -> bool:
    try:
        return bool(xp.isdtype(dtype, "real floating"))
    except AttributeError:  # namespaces without isdtype (older CuPy): dtypes are numpy dtypes
        return np.dtype(dtype).kind == "f"


def _is_integral(xp, dtype) -> bool:
    try:
        return bool(xp.isdtype(dtype, ("integral", "bool")))
    except AttributeError:
        return np.dtype(dtype).kind in "iub"


def _float_array(x, name: str, *, ndim: int | None = None):
    """``(xp, array)`` with a real floating dtype (integers promoted to float64), finite entries."""
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        x = np.asarray(x)
    xp = array_namespace(x)
    if not _is_real_float(xp, x.dtype):
        if _is_integral(xp, x.dtype):
            x = xp.astype(x, xp.float64)
        else:
            raise ValueError(f"{name} must be a real array (float or integer dtype), got dtype {x.dtype}")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array, got shape {tuple(x.shape)}")
    if not bool(xp.all(xp.isfinite(x))):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return xp, x


def _distance_array(dist, name: str = "dist"):
    xp, d = _float_array(dist, name)
    if d.size and bool(xp.any(d < 0)):
        raise ValueError(f"{name} must be >= 0 (distances); got a minimum of {float(xp.min(d))!r}")
    return xp, d


def _mT(xp, a):
    """Matrix transpose (``xp.matrix_transpose`` where the namespace has it, else ``.T``)."""
    f = getattr(xp, "matrix_transpose", None)
    return f(a) if f is not None else a.T


def _tiny(xp, dtype) -> float:
    return float(xp.finfo(dtype).smallest_normal)


def _flush_subnormal(xp, out):
    """Set entries below the smallest normal number to exact 0 (only pays when some are)."""
    if out.size == 0:
        return out
    tiny = _tiny(xp, out.dtype)
    if float(xp.min(out)) >= tiny:  # one read pass, no allocation
        return out
    if xp is np:
        out[out < tiny] = 0.0
        return out
    return xp.where(out < tiny, xp.zeros_like(out), out)


# --------------------------------------------------------------------------- FNA


def _profile_owned(xp, z, alpha: float, dim: float):
    """Phi_alpha(z) for a float array ``z >= 0`` this function may overwrite."""
    if alpha < 2.0:
        beta = dim + alpha
        # (1+z)^-beta as exp(-beta log1p z): 6x faster than pow in numpy (5.5 vs 32 ns/entry
        # measured at 4000^2), relative difference to pow <= 1.3e-15.
        if xp is np:
            np.log1p(z, out=z)
            z *= -beta
            np.exp(z, out=z)
            out = z
        else:
            out = xp.exp(-beta * xp.log1p(z))
    else:
        p = alpha / (alpha - 1.0)
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
    return _flush_subnormal(xp, out)


def fna_profile(z, *, alpha, dim):
    r"""The FNA score profile :math:`\Phi_\alpha(z)` (FNA eqs. 9 and 10).

    Parameters
    ----------
    z : array of shape (...)
        Scaled distances ``d / kappa``, finite and ``>= 0``.
    alpha : float
        Fractional order, ``> 0``.  ``0 < alpha < 2``: multiscale power law;
        ``alpha >= 2``: local (light-tailed) profile.
    dim : float
        Intrinsic dimension ``d_M`` of the point set (``>= 1``; 1 on S^1, 2 on
        S^2).  Only the power law depends on it.

    Returns
    -------
    array of shape (...)
        Same namespace and floating dtype as ``z`` (integers give float64).

    Notes
    -----
    .. math::

        \Phi_\alpha(z) = (1 + z)^{-(d_M + \alpha)} \quad (0 < \alpha < 2), \qquad
        \Phi_\alpha(z) = \exp\bigl(-z^{\alpha/(\alpha-1)}\bigr) \quad (\alpha \ge 2),

    so ``Phi_2(z) = exp(-z^2)``.  ``d_M`` must be the intrinsic dimension: with
    the ambient one the tail is too light (DESIGN.md 3.1, CLAIMS FNA-10).
    Values below the smallest normal float are flushed to exact 0.

    References
    ----------
    Fractional neural attention (``papers/fractional-neural-attention.txt``), eqs. (9), (10).

    Examples
    --------
    >>> import numpy as np
    >>> from spectral.kernels import fna_profile
    >>> fna_profile(np.array([0.0, 1.0]), alpha=1.0, dim=1)
    array([1.  , 0.25])
    """
    alpha = _check_alpha(alpha)
    dim = _check_dim(dim)
    xp, z = _distance_array(z, "z")
    if xp is np:  # the numpy path works in place on its argument
        z = np.array(z, copy=True)
    return _profile_owned(xp, z, alpha, dim)


def fna_kernel(dist, *, alpha, scale, dim):
    r"""FNA scores :math:`C_{ij} = \Phi_\alpha(d_{ij} / \kappa)` (FNA eqs. 9, 10, 13; A.1 eq. 39).

    Parameters
    ----------
    dist : array of shape (n, m)
        Distances between queries and keys, finite and ``>= 0``: Euclidean
        ``|W_Q x_i - W_K x_j|`` for eq. 13, geodesic for the sphere variant (A.1).
    alpha : float
        Fractional order ``> 0`` (see :func:`fna_profile`).
    scale : float
        The paper's ``kappa``, ``> 0``.  Generator time ``t = scale**alpha`` (:func:`fna_time`).
    dim : float
        Intrinsic dimension ``d_M >= 1`` of the point set.

    Returns
    -------
    array of shape (n, m)
        Scores in ``(0, 1]`` (exact 0 after underflow), dtype of ``dist``.

    Examples
    --------
    >>> import numpy as np
    >>> from spectral.kernels import fna_kernel
    >>> fna_kernel(np.array([[0.0, 2.0]]), alpha=2.0, scale=2.0, dim=1)
    array([[1.        , 0.36787944]])
    """
    alpha = _check_alpha(alpha)
    scale = _number(scale, "scale", low=0.0)
    dim = _check_dim(dim)
    xp, d = _distance_array(dist)
    z = d / scale  # a new array: the profile may overwrite it
    return _profile_owned(xp, z, alpha, dim)


def fna_time(scale, alpha) -> float:
    """Generator time ``t = scale**alpha`` of one FNA step (DESIGN.md 3.1).

    With ``lambda = -log(eta) / t`` the eigenvalues of ``A = N_R(C)`` approach
    those of the (fractional) generator as ``scale -> 0``; the paper writes
    ``kappa = sqrt(eps)``, ``t = eps**(alpha/2)`` (FNA Methods, Fig. 2a).
    """
    alpha = _check_alpha(alpha)
    scale = _number(scale, "scale", low=0.0)
    return scale**alpha


def paper_kappa(d, alpha, *, variant="text") -> float:
    r"""The FNA paper's bandwidth ``kappa`` (DESIGN.md 3.4).

    Parameters
    ----------
    d : float
        ``variant="text"``: head dimension ``d_H``; ``variant="sphere"``: the
        intrinsic dimension ``d_M`` of the sphere.  ``>= 1``.
    alpha : float
        ``> 0``; ``alpha < 2`` uses the multiscale convention, ``alpha >= 2`` the
        local one (the paper states it for ``alpha = 2``).
    variant : {"text", "sphere"}
        Methods "Text classification" or Appendix A.1.

    Returns
    -------
    float
        text: ``sqrt(d) / (2**(1/d) - 1)`` (alpha < 2), ``sqrt(d)`` (alpha >= 2);
        sphere: ``pi / (pi**(1/d) - 1)`` (alpha < 2), ``1`` (alpha >= 2).

    Notes
    -----
    The text convention makes ``Phi_alpha(sqrt(d) / kappa) = 2**(-(d+alpha)/d)``:
    the score only halves at distance ``sqrt(d)``, so rows are nearly uniform
    (CLAIMS FNA-16).
    """
    d = _number(d, "d", low=1.0, strict=False, allowed=">= 1 (head or manifold dimension)")
    alpha = _check_alpha(alpha)
    _check_option(variant, "variant", _KAPPA_VARIANTS)
    if variant == "text":
        return math.sqrt(d) / (2.0 ** (1.0 / d) - 1.0) if alpha < 2.0 else math.sqrt(d)
    return math.pi / (math.pi ** (1.0 / d) - 1.0) if alpha < 2.0 else 1.0


def _half_width(alpha: float, d: float) -> float:
    """z with Phi_alpha(z) = 1/2."""
    if alpha < 2.0:
        return 2.0 ** (1.0 / (d + alpha)) - 1.0
    return math.log(2.0) ** ((alpha - 1.0) / alpha)


def matched_half_width_kappa(kappa1, d, alpha1) -> float:
    r"""Gaussian (alpha = 2) bandwidth with the same half-maximum width as ``Phi_alpha1`` (DESIGN.md 3.4 iii).

    ``Phi_alpha1(r / kappa1) = 1/2`` at ``r = kappa1 (2**(1/(d+alpha1)) - 1)`` for
    ``alpha1 < 2``; ``exp(-(r/kappa2)^2) = 1/2`` at ``r = kappa2 sqrt(ln 2)``, so

    .. math:: \kappa_2 = \kappa_1 \, (2^{1/(d+\alpha_1)} - 1) / \sqrt{\ln 2}.

    For ``alpha1 >= 2`` the local profile's half width ``(ln 2)^((alpha1-1)/alpha1)``
    replaces ``2**(1/(d+alpha1)) - 1`` (so ``alpha1 = 2`` returns ``kappa1``).
    """
    kappa1 = _number(kappa1, "kappa1", low=0.0)
    d = _number(d, "d", low=1.0, strict=False, allowed=">= 1 (head or manifold dimension)")
    alpha1 = _number(alpha1, "alpha1", low=0.0)
    return kappa1 * _half_width(alpha1, d) / math.sqrt(math.log(2.0))


# --------------------------------------------------------------------------- heat kernel


def heat_kernel(dist, *, eps):
    r"""Heat-kernel scores :math:`W_{ij} = \exp(-d_{ij}^2 / (2\varepsilon))` (DRIFT convention, DESIGN.md 3.3).

    Parameters
    ----------
    dist : array of shape (n, m)
        Distances, finite and ``>= 0`` (ambient distance in the DRIFT setting).
    eps : float
        Bandwidth ``> 0`` (variance of the Gaussian).

    Returns
    -------
    array of shape (n, m)
        Same namespace and dtype as ``dist``; underflow flushed to exact 0.

    Notes
    -----
    ``(1/eps)(D^-1 W - I) f -> (1/2)(Delta f + 2 <grad log p, grad f>)``, so one
    attention step is an Euler step of length ``eps/2`` (:func:`heat_time`) for
    ``dH/dt = Delta H + 2 <grad log p, grad H>`` (DRIFT Theorem 3).  DRIFT's own
    ``S_eps`` convention ``exp(-f / (2 eps))`` with ``f = -x.y`` on the unit
    sphere corresponds to ``exp(-|x-y|^2 / (4 eps))`` (CLAIMS DRIFT-1).

    Examples
    --------
    >>> import numpy as np
    >>> from spectral.kernels import heat_kernel
    >>> heat_kernel(np.array([[0.0, 1.0]]), eps=0.5)
    array([[1.        , 0.36787944]])
    """
    eps = _number(eps, "eps", low=0.0)
    xp, d = _distance_array(dist)
    if xp is np:
        w = np.multiply(d, d)
        w *= -1.0 / (2.0 * eps)
        np.exp(w, out=w)
    else:
        w = xp.exp(-(d * d) / (2.0 * eps))
    return _flush_subnormal(xp, w)


class SparseScores:
    """A sparse score matrix (host, SciPy CSR) with the operator interface of :class:`KernelOperator`.

    ``shape``, ``dtype``, ``symmetric``, ``matvec`` / ``@``, ``rmatvec``,
    ``row_sums`` and ``to_dense`` make it a valid matrix-free input of
    :func:`spectral.markov_spectrum` (``method="matrix-free"``); ``matrix`` is the
    :class:`scipy.sparse.csr_array` itself.  Lives on the host (NumPy).
    """

    def __init__(self, matrix, *, symmetric):
        import scipy.sparse as sp

        if not sp.issparse(matrix) or matrix.ndim != 2:
            raise ValueError(f"matrix must be a 2-d scipy.sparse array, got {type(matrix).__name__}")
        self.matrix = sp.csr_array(matrix)
        if not np.all(np.isfinite(self.matrix.data)) or (self.matrix.nnz and self.matrix.data.min() < 0):
            raise ValueError("matrix entries must be finite and >= 0 (scores)")
        self.shape = tuple(self.matrix.shape)
        self.dtype = self.matrix.dtype
        self.symmetric = bool(symmetric)

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.matrix.nnz)

    def matvec(self, v):
        """``C @ v`` for ``v`` of shape (m,) or (m, k)."""
        return self.matrix @ np.asarray(v)

    def __matmul__(self, v):
        return self.matvec(v)

    def rmatvec(self, v):
        """``C^T @ v`` for ``v`` of shape (n,) or (n, k)."""
        return self.matrix.T @ np.asarray(v)

    def row_sums(self):
        """Degrees ``D_ii = sum_j C_ij``."""
        return np.asarray(self.matrix.sum(axis=1)).reshape(-1)

    def to_dense(self, max_bytes=None):
        """The dense matrix, after the memory guard."""
        check_dense_memory(self.shape[0], self.shape[1], dtype=self.dtype, max_bytes=max_bytes)
        return self.matrix.toarray()

    def __repr__(self) -> str:
        return f"SparseScores(shape={self.shape}, nnz={self.nnz}, symmetric={self.symmetric})"


def heat_kernel_sparse(x, *, eps, cutoff=6.0, y=None) -> SparseScores:
    r"""Heat-kernel scores :math:`\exp(-|x_i - y_j|^2 / (2\varepsilon))` kept where ``|x_i - y_j| <= cutoff sqrt(eps)``.

    Parameters
    ----------
    x : array of shape (n, d)
        Query points (Euclidean).  Crosses the host boundary
        (:func:`spectral.backend.to_numpy`): the neighbour search is SciPy's ``cKDTree``.
    eps : float
        Bandwidth ``> 0`` (as :func:`heat_kernel`).
    cutoff : float
        Radius in units of ``sqrt(eps)`` (``> 0``).  Dropped entries are below
        ``exp(-cutoff^2 / 2)`` (1.5e-8 for the default 6; DESIGN.md 3.3).
    y : array of shape (m, d), optional
        Key points; default ``x`` (then the result is symmetric, diagonal included).

    Returns
    -------
    SparseScores
        CSR scores with every pair within the cutoff stored, zero distances included.
    """
    eps = _number(eps, "eps", low=0.0)
    cutoff = _number(cutoff, "cutoff", low=0.0, allowed="> 0 (radius in units of sqrt(eps))")
    from scipy.spatial import cKDTree
    import scipy.sparse as sp

    from .backend import to_numpy

    _, xa = _float_array(x, "x", ndim=2)
    xh = np.asarray(to_numpy(xa), dtype=np.float64)
    if y is None:
        yh = xh
    else:
        _, ya = _float_array(y, "y", ndim=2)
        yh = np.asarray(to_numpy(ya), dtype=np.float64)
        if yh.shape[1] != xh.shape[1]:
            raise ValueError(f"y must have shape (m, {xh.shape[1]}) like x, got {yh.shape}")
    tx = cKDTree(xh)
    ty = tx if y is None else cKDTree(yh)
    # coo output keeps explicit zero distances (the diagonal, duplicate points)
    pairs = tx.sparse_distance_matrix(ty, cutoff * math.sqrt(eps), output_type="coo_matrix")
    w = pairs.data * pairs.data
    w *= -1.0 / (2.0 * eps)
    np.exp(w, out=w)
    w[w < np.finfo(np.float64).smallest_normal] = 0.0
    mat = sp.csr_array((w, (pairs.row, pairs.col)), shape=(xh.shape[0], yh.shape[0]))
    return SparseScores(mat, symmetric=y is None)


def heat_time(eps) -> float:
    """Generator time of one heat-kernel attention step: ``eps / 2`` (DESIGN.md 3.3)."""
    return _number(eps, "eps", low=0.0) / 2.0


# --------------------------------------------------------------------------- dot product


def _project(xp, x, w, name: str):
    """Rows ``W x_i``: ``x @ W^T`` for ``W`` of shape (d_out, d)."""
    if w is None:
        return x
    w = _as_namespace(xp, w, name, like=x)
    if w.ndim != 2 or w.shape[1] != x.shape[1]:
        raise ValueError(f"{name} must have shape (d_out, {x.shape[1]}), got {tuple(w.shape)}")
    return x @ _mT(xp, w)


def _as_namespace(xp, a, name: str, *, like):
    """``a`` (array or array-like) as a finite float array of the namespace and dtype of ``like``."""
    if not hasattr(a, "shape"):
        a = np.asarray(a, dtype=float)
    if isinstance(a, np.ndarray) and xp is not np:
        a = from_numpy(a, like=like)
    xa, a = _float_array(a, name)
    if xa is not xp and getattr(xa, "__name__", None) != getattr(xp, "__name__", None):
        raise ValueError(f"{name} must be an array of the same library as the points")
    if a.dtype != like.dtype:
        a = xp.astype(a, like.dtype)
    return a


def dot_product_scores(x, *, y=None, w_q=None, w_k=None, temperature=None):
    r"""Dot-product attention scores :math:`C_{ij} = \exp(q_i \cdot k_j / T - \max_l q_i \cdot k_l / T)`.

    Parameters
    ----------
    x : array of shape (n, d)
        Query tokens (rows).
    y : array of shape (m, d), optional
        Key tokens; default ``x`` (self-attention).
    w_q, w_k : array of shape (d_h, d), optional
        Projections, ``q_i = W_Q x_i``, ``k_j = W_K y_j``; default identity.
    temperature : float, optional
        ``T > 0``; default ``sqrt(d_h)`` with ``d_h`` the projected dimension
        (Vaswani et al.).

    Returns
    -------
    array of shape (n, m)
        Scores in ``(0, 1]`` with a 1 in every row.

    Notes
    -----
    Scores are defined up to a positive factor per row: subtracting the row
    maximum multiplies row ``i`` by ``exp(-max_l q_i.k_l / T)``, which the row
    normalisation ``A = N_R(C)`` removes, so ``N_R(C) = softmax(Q K^T / T)``
    exactly, without overflow.  ``C`` itself is therefore *not* the symmetric
    ``exp(Q K^T / T)`` even when ``Q = K``; use the row-normalised matrix (or
    multiply back by ``exp(rowmax)``) for anything that needs that symmetry.
    Underflow is flushed to exact 0.
    """
    xp, x = _float_array(x, "x", ndim=2)
    y = x if y is None else _as_namespace(xp, y, "y", like=x)
    if y.ndim != 2 or y.shape[1] != x.shape[1]:
        raise ValueError(f"y must have shape (m, {x.shape[1]}) like x, got {tuple(y.shape)}")
    q = _project(xp, x, w_q, "w_q")
    k = _project(xp, y, w_k, "w_k")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"w_q and w_k must project to the same dimension, got {q.shape[1]} and {k.shape[1]}")
    if temperature is None:
        temperature = math.sqrt(q.shape[1])
    temperature = _number(temperature, "temperature", low=0.0)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below as ValueError
        s = q @ _mT(xp, k)
        s = s / temperature
        s = s - xp.max(s, axis=1, keepdims=True)
    if not bool(xp.all(xp.isfinite(s))):
        raise ValueError("scores q.k / temperature must be finite; got NaN or inf (temperature too small?)")
    return _flush_subnormal(xp, xp.exp(s))


# --------------------------------------------------------------------------- metric attention


def _activation(name: str):
    """Element-wise activation in the array namespace ``xp``: returns ``f(xp, z)``."""
    _check_option(name, "activation", ACTIVATIONS)
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


_LIPSCHITZ = {"tanh": 1.0, "relu": 1.0, "identity": 1.0, "gelu": 1.1289}  # gelu: max |f'| (tanh form)


def _generator(rng):
    return np.random.default_rng(rng)


class ResidualMLP:
    r"""Residual one-hidden-layer feature map :math:`g(x) = x + W_2\,\sigma(W_1 x + b_1)` (DRIFT section 4.1).

    Parameters
    ----------
    dim : int
        Input and output dimension (``>= 1``).
    width : int
        Hidden width (``>= 1``).
    rng : numpy.random.Generator or int, optional
        Source of the random weights (``numpy.random.default_rng(rng)``).
    activation : {"tanh", "relu", "gelu", "identity", "square", "exp"}
        Hidden non-linearity ``sigma``.
    gain : float
        Scale of ``W_2`` (``> 0``).  Weights: ``W_1 ~ N(0, 1/dim)``,
        ``b_1 ~ N(0, 1)``, ``W_2 ~ gain N(0, 1/width)``.

    Notes
    -----
    ``d(x, y) = |g(x) - g(y)|`` is a pseudo-metric, and a metric when ``g`` is
    injective, which holds if ``Lip(W_2 sigma(W_1 . + b_1)) < 1``
    (:meth:`residual_lipschitz_bound`; CLAIMS DRIFT-14).  Weights are stored as
    NumPy arrays and moved to the namespace of the input on each call.
    """

    def __init__(self, dim, width, *, rng=None, activation="tanh", gain=1.0):
        self.dim = int(_number(dim, "dim", low=1.0, strict=False, allowed=">= 1 (integer)"))
        self.width = int(_number(width, "width", low=1.0, strict=False, allowed=">= 1 (integer)"))
        self.activation = _check_option(activation, "activation", ACTIVATIONS)
        gain = _number(gain, "gain", low=0.0)
        g = _generator(rng)
        self.w1 = g.standard_normal((self.width, self.dim)) / math.sqrt(self.dim)
        self.b1 = g.standard_normal(self.width)
        self.w2 = gain * g.standard_normal((self.dim, self.width)) / math.sqrt(self.width)

    def __call__(self, x):
        """Apply ``g`` to the rows of ``x`` (shape ``(n, dim)``); same namespace and dtype."""
        xp, x = _float_array(x, "x", ndim=2)
        if x.shape[1] != self.dim:
            raise ValueError(f"x must have shape (n, {self.dim}), got {tuple(x.shape)}")
        w1 = _as_namespace(xp, self.w1, "w1", like=x)
        b1 = _as_namespace(xp, self.b1, "b1", like=x)
        w2 = _as_namespace(xp, self.w2, "w2", like=x)
        h = _activation(self.activation)(xp, x @ _mT(xp, w1) + b1)
        return x + h @ _mT(xp, w2)

    def residual_lipschitz_bound(self) -> float:
        """Upper bound ``|W_2|_2 Lip(sigma) |W_1|_2`` on the Lipschitz constant of ``g(x) - x``.

        ``inf`` for activations without a global bound ("square", "exp").
        """
        lip = _LIPSCHITZ.get(self.activation, math.inf)
        return float(np.linalg.norm(self.w2, 2) * lip * np.linalg.norm(self.w1, 2))


def _sq_distances(xp, a, b):
    """``|a_i - b_j|^2`` via the Gram expansion after centring (clamped at 0)."""
    mean = xp.mean(a, axis=0, keepdims=True)
    a = a - mean
    b = b - mean
    aa = xp.sum(a * a, axis=1)
    bb = xp.sum(b * b, axis=1)
    g = a @ _mT(xp, b)
    d2 = xp.reshape(aa, (-1, 1)) + xp.reshape(bb, (1, -1)) - 2.0 * g
    return xp.where(d2 > 0, d2, xp.zeros_like(d2))


def metric_kernel(x, feature_map, *, eps, y=None):
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
        i.e. ``eps = 1/2``; the DESIGN convention keeps ``2 eps``.
    y : array of shape (m, d), optional
        Key tokens; default ``x``.

    Returns
    -------
    array of shape (n, m)
        The heat kernel of the pulled-back distances ``|g(x) - g(y)|``.
    """
    eps = _number(eps, "eps", low=0.0)
    if not callable(feature_map):
        raise ValueError(f"feature_map must be callable (n, d) -> (n, d'), got {type(feature_map).__name__}")
    xp, x = _float_array(x, "x", ndim=2)
    y = x if y is None else _as_namespace(xp, y, "y", like=x)
    gx = feature_map(x)
    gy = gx if y is x else feature_map(y)
    _, gx = _float_array(gx, "feature_map(x)", ndim=2)
    _, gy = _float_array(gy, "feature_map(y)", ndim=2)
    d2 = _sq_distances(xp, gx, gy)
    return _flush_subnormal(xp, xp.exp(-d2 / (2.0 * eps)))


# --------------------------------------------------------------------------- neural scores


class ScoreMLP:
    r"""Shared-weight MLP score function of NEURAL eqs. (3)-(4).

    Holds ``W_h = [W_1 | W_2]`` of shape ``(hidden, d_q + d_k)``, ``b_h`` (hidden,),
    ``w_a`` (hidden,) and the scalar ``b_a``; the score of a query ``q`` and a key
    ``k`` is :math:`w_a^\top \sigma(W_h [q; k] + b_h) + b_a`.

    Parameters
    ----------
    d_q, d_k : int
        Query and key dimensions (``>= 1``).
    hidden : int
        Hidden width ``h`` (``>= 1``).
    rng : numpy.random.Generator or int, optional
        Weights: ``W_h ~ N(0, 1/(d_q+d_k))``, ``b_h ~ N(0, 1)``,
        ``w_a ~ N(0, 1/hidden)``, ``b_a ~ N(0, 1)``.
    activation : {"tanh", "relu", "gelu", "identity", "square", "exp"}
        ``sigma`` ("gelu" is the tanh approximation).
    """

    def __init__(self, d_q, d_k, hidden, *, rng=None, activation="tanh"):
        self.d_q = int(_number(d_q, "d_q", low=1.0, strict=False, allowed=">= 1 (integer)"))
        self.d_k = int(_number(d_k, "d_k", low=1.0, strict=False, allowed=">= 1 (integer)"))
        self.hidden = int(_number(hidden, "hidden", low=1.0, strict=False, allowed=">= 1 (integer)"))
        self.activation = _check_option(activation, "activation", ACTIVATIONS)
        g = _generator(rng)
        self.W_h = g.standard_normal((self.hidden, self.d_q + self.d_k)) / math.sqrt(self.d_q + self.d_k)
        self.b_h = g.standard_normal(self.hidden)
        self.w_a = g.standard_normal(self.hidden) / math.sqrt(self.hidden)
        self.b_a = float(g.standard_normal())

    @property
    def W1(self) -> np.ndarray:
        """Query block ``W_h[:, :d_q]``."""
        return self.W_h[:, : self.d_q]

    @property
    def W2(self) -> np.ndarray:
        """Key block ``W_h[:, d_q:]``."""
        return self.W_h[:, self.d_q :]


def neural_scores(q, k, mlp, *, form="factored", max_bytes=None):
    r"""Neural attention scores :math:`s_{ij} = w_a^\top \sigma(W_h [q_i; k_j] + b_h) + b_a` (NEURAL eqs. 3-4).

    Parameters
    ----------
    q : array of shape (n, d_q)
        Queries.
    k : array of shape (m, d_k)
        Keys.
    mlp : ScoreMLP
        The shared weights.
    form : {"factored", "concat"}
        ``"factored"`` uses ``W_h [q; k] = W_1 q + W_2 k`` and never builds the
        ``(n, m, d_q + d_k)`` tensor (query blocks bound the ``(b, m, hidden)``
        working set to 64 MiB); ``"concat"`` materialises the concatenated
        tensor literally as the paper writes it (for checking; memory-guarded).
    max_bytes : int, optional
        Memory limit for the ``"concat"`` tensor (default: memory available now).

    Returns
    -------
    array of shape (n, m)
        Raw scores (logits); ``softmax_j(s_ij) = N_R(exp(s - rowmax))`` is the
        attention matrix, and ``b_a`` cancels in it.

    Notes
    -----
    The factored form is additive (Bahdanau) attention ``w_a . sigma(W_1 q + W_2 k + b_h) + b_a``
    (CLAIMS NEURAL-3).
    """
    _check_option(form, "form", _NEURAL_FORMS)
    if not isinstance(mlp, ScoreMLP):
        raise ValueError(f"mlp must be a ScoreMLP, got {type(mlp).__name__}")
    xp, q = _float_array(q, "q", ndim=2)
    k = _as_namespace(xp, k, "k", like=q)
    if q.shape[1] != mlp.d_q:
        raise ValueError(f"q must have shape (n, {mlp.d_q}) (mlp.d_q), got {tuple(q.shape)}")
    if k.ndim != 2 or k.shape[1] != mlp.d_k:
        raise ValueError(f"k must have shape (m, {mlp.d_k}) (mlp.d_k), got {tuple(k.shape)}")
    act = _activation(mlp.activation)
    b_h = _as_namespace(xp, mlp.b_h, "b_h", like=q)
    w_a = _as_namespace(xp, mlp.w_a, "w_a", like=q)
    n, m, h = q.shape[0], k.shape[0], mlp.hidden
    if form == "concat":
        check_dense_memory(n, m * (mlp.d_q + mlp.d_k), dtype=_np_dtype(q.dtype), copies=2,
                           max_bytes=max_bytes, what="concatenated [q; k] tensor")
        W_h = _as_namespace(xp, mlp.W_h, "W_h", like=q)
        qq = xp.broadcast_to(xp.reshape(q, (n, 1, mlp.d_q)), (n, m, mlp.d_q))
        kk = xp.broadcast_to(xp.reshape(k, (1, m, mlp.d_k)), (n, m, mlp.d_k))
        z = xp.concat([qq, kk], axis=2)  # (n, m, d_q + d_k): [q_i; k_j]
        pre = z @ _mT(xp, W_h) + b_h
        return act(xp, pre) @ w_a + mlp.b_a
    w1 = _as_namespace(xp, mlp.W1, "W1", like=q)
    w2 = _as_namespace(xp, mlp.W2, "W2", like=q)
    pq = q @ _mT(xp, w1)  # (n, h)
    pk = k @ _mT(xp, w2) + b_h  # (m, h)
    itemsize = dense_bytes(1, dtype=_np_dtype(q.dtype))
    block = max(1, _DEFAULT_BLOCK_BYTES // max(1, 2 * m * h * itemsize))
    pk3 = xp.reshape(pk, (1, m, h))
    rows = []
    for start in range(0, n, block):
        stop = min(n, start + block)
        pre = xp.reshape(pq[start:stop, :], (stop - start, 1, h)) + pk3
        rows.append(act(xp, pre) @ w_a + mlp.b_a)
    return rows[0] if len(rows) == 1 else xp.concat(rows, axis=0)


def _np_dtype(dtype) -> np.dtype:
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rsplit(".", 1)[-1])


# --------------------------------------------------------------------------- matrix-free


class KernelOperator:
    r"""Matrix-free score matrix: ``C @ v`` computed block by block without storing ``C``.

    Parameters
    ----------
    x : array of shape (n, D)
        Query points.
    kernel : callable
        Maps a distance block ``(b, m)`` to a score block, e.g.
        ``functools.partial(fna_kernel, alpha=1.2, scale=0.01, dim=1)``.
    distance : callable
        ``distance(xa, xb)`` -> distance block ``(len(xa), len(xb))``, e.g.
        ``manifolds.Circle().distance``.
    y : array of shape (m, D), optional
        Key points; default ``x``.
    block_rows : int, optional
        Rows per block; default from a working-set budget of about four ``(b, m)``
        temporaries (distances, scores, the kernel's intermediates): 4 MiB for
        NumPy (cache-sized blocks, 3x faster than 64 MiB ones here), 64 MiB for
        other backends (GPUs want large blocks).
    dtype : dtype, optional
        Dtype of the points, distances and scores (e.g. ``float32`` to halve the
        traffic); default the dtype of ``x``.

    Notes
    -----
    ``distance`` may be any pairwise block function: metric attention is
    ``distance=lambda a, b: d(g(a), g(b))`` with ``kernel=partial(heat_kernel, eps=...)``,
    and any positive score of a pairwise statistic fits the same pattern.

    Each product recomputes every distance and score (``n m`` kernel
    evaluations), trading time for memory: the resident set is ``O(block_rows m)``.
    The same code runs on CuPy arrays.  ``.shape``, ``.dtype``, ``matvec``,
    ``rmatvec`` and ``@`` follow :class:`scipy.sparse.linalg.LinearOperator`
    (:meth:`aslinearoperator` wraps it for SciPy solvers on NumPy inputs).
    ``symmetric`` is True when ``y`` is omitted (``C(x, x)`` of a symmetric
    distance); :func:`spectral.markov_spectrum` reads it to choose the
    symmetric-conjugate path.
    """

    def __init__(self, x, *, kernel, distance, y=None, block_rows=None, dtype=None):
        if not callable(kernel):
            raise ValueError(f"kernel must be callable (distance block -> score block), got {type(kernel).__name__}")
        if not callable(distance):
            raise ValueError(f"distance must be callable (xa, xb) -> distance block, got {type(distance).__name__}")
        xp, x = _float_array(x, "x")
        if x.ndim == 1:
            x = xp.reshape(x, (-1, 1))
        if x.ndim != 2:
            raise ValueError(f"x must be a 1-d or 2-d array of points, got shape {tuple(x.shape)}")
        if dtype is not None:
            x = xp.astype(x, dtype)
        if y is None:
            y = x
        else:
            y = _as_namespace(xp, y, "y", like=x)
            if y.ndim == 1:
                y = xp.reshape(y, (-1, 1))
            if y.ndim != 2 or y.shape[1] != x.shape[1]:
                raise ValueError(f"y must have shape (m, {x.shape[1]}) like x, got {tuple(y.shape)}")
        self._xp = xp
        self.x = x
        self.y = y
        # C(x, x) of a kernel of a (symmetric) distance is symmetric; read by markov_spectrum
        self.symmetric = y is x
        self.kernel = kernel
        self.distance = distance
        n, m = x.shape[0], y.shape[0]
        self.shape = (n, m)
        self.dtype = x.dtype
        itemsize = dense_bytes(1, dtype=_np_dtype(x.dtype))
        if block_rows is None:
            budget = _HOST_BLOCK_BYTES if xp is np else _DEFAULT_BLOCK_BYTES
            block_rows = max(1, budget // (4 * m * itemsize))
        else:
            block_rows = int(_number(block_rows, "block_rows", low=1.0, strict=False, allowed=">= 1 (integer)"))
        self.block_rows = min(block_rows, max(n, 1))

    def _blocks(self):
        n = self.shape[0]
        for start in range(0, n, self.block_rows):
            stop = min(n, start + self.block_rows)
            c = self.kernel(self.distance(self.x[start:stop, ...], self.y))
            if tuple(c.shape) != (stop - start, self.shape[1]):
                raise ValueError(
                    f"kernel(distance(xa, xb)) must return a ({stop - start}, {self.shape[1]}) block, "
                    f"got shape {tuple(c.shape)}"
                )
            yield start, stop, c

    def _vector(self, v, length: int, name: str):
        xp = self._xp
        v = _as_namespace(xp, v, name, like=self.x)
        if v.ndim not in (1, 2) or v.shape[0] != length:
            raise ValueError(f"{name} must have shape ({length},) or ({length}, k), got {tuple(v.shape)}")
        return v

    def matvec(self, v):
        """``C @ v`` for ``v`` of shape (m,) or (m, k), block by block."""
        v = self._vector(v, self.shape[1], "v")
        parts = [c @ v for _, _, c in self._blocks()]
        return parts[0] if len(parts) == 1 else self._xp.concat(parts, axis=0)

    def rmatvec(self, v):
        """``C^T @ v`` for ``v`` of shape (n,) or (n, k), block by block."""
        xp = self._xp
        v = self._vector(v, self.shape[0], "v")
        out = None
        for start, stop, c in self._blocks():
            part = _mT(xp, c) @ v[start:stop, ...]
            out = part if out is None else out + part
        return out

    def __matmul__(self, v):
        return self.matvec(v)

    def row_sums(self):
        """Degrees ``D_ii = sum_j C_ij`` (one pass, no stored matrix)."""
        xp = self._xp
        parts = [xp.sum(c, axis=1) for _, _, c in self._blocks()]
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)

    def to_dense(self, max_bytes=None):
        """The dense ``(n, m)`` matrix, after the memory guard (:func:`spectral.memory.check_dense_memory`)."""
        n, m = self.shape
        check_dense_memory(n, m, dtype=_np_dtype(self.dtype), max_bytes=max_bytes)
        parts = [c for _, _, c in self._blocks()]
        return parts[0] if len(parts) == 1 else self._xp.concat(parts, axis=0)

    def aslinearoperator(self):
        """A :class:`scipy.sparse.linalg.LinearOperator` view (NumPy inputs only)."""
        if self._xp is not np:
            raise ValueError("aslinearoperator needs NumPy points; use matvec directly on other backends")
        from scipy.sparse.linalg import LinearOperator

        return LinearOperator(self.shape, matvec=self.matvec, rmatvec=self.rmatvec,
                              matmat=self.matvec, rmatmat=self.rmatvec, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"KernelOperator(shape={self.shape}, dtype={self.dtype}, block_rows={self.block_rows})"


def pairwise(x, y=None, *, kernel, distance, max_bytes=None):
    """Dense score matrix ``kernel(distance(x, y))``, refused up front if it would not fit.

    Parameters
    ----------
    x : array of shape (n, D)
    y : array of shape (m, D), optional
        Default ``x``.
    kernel, distance : callable
        As for :class:`KernelOperator`.
    max_bytes : int, optional
        Limit for the dense matrix; default the memory available now.  The
        estimate counts two ``(n, m)`` arrays (distances and scores).

    Raises
    ------
    spectral.memory.DenseMemoryError
        Before any allocation, with the estimate and the matrix-free alternative.
    """
    if not callable(kernel) or not callable(distance):
        raise ValueError("kernel and distance must be callables (see KernelOperator)")
    xp, x = _float_array(x, "x")
    if x.ndim == 1:
        x = xp.reshape(x, (-1, 1))
    yy = x if y is None else _as_namespace(xp, y, "y", like=x)
    if yy.ndim == 1:
        yy = xp.reshape(yy, (-1, 1))
    check_dense_memory(x.shape[0], yy.shape[0], dtype=_np_dtype(x.dtype), copies=2,
                       max_bytes=max_bytes, what="score matrix")
    return kernel(distance(x, yy))
