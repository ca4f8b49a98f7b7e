"""Self-attention as an interacting particle system: tokens moved by attention, on the sphere or in R^d.

Geshkovski, Letrouit, Polyanskiy & Rigollet, "A mathematical perspective on Transformers" (arXiv
2312.10794, v5, section 2; cited below as GLPR) move ``n`` tokens ``x_i`` on the unit sphere
``S^(d-1)`` by

* (SA) ``dx_i/dt = P_perp(x_i) ( sum_j e^(beta <x_i, x_j>) x_j / Z_i )``,
  ``Z_i = sum_k e^(beta <x_i, x_k>)`` (the softmax normaliser, ``normalisation="softmax"``);
* (USA) the same with ``1/n`` in place of ``1/Z_i`` (``normalisation="uniform"``),

where ``P_perp(x) v = v - <x, v> x`` projects onto the tangent space at ``x`` (layer normalisation in
continuous time). With a value matrix ``V`` (``value``) the average is of ``V x_j``, and with a
query-key matrix ``B = Q^T K`` (``query_key``) the scores are ``beta <x_i, B x_j>``.
``geometry="euclidean"`` drops the projection: ``dx_i/dt = sum_j P_ij V x_j`` in ``R^d``, the
dynamics of Geshkovski, Letrouit, Polyanskiy & Rigollet, "The emergence of clusters in self-attention
dynamics" (NeurIPS 2023, arXiv 2305.05465, eq. (1.1)), whose tokens grow like ``e^(t V)``.

The integrators are projection methods (Hairer, Lubich & Wanner, *Geometric Numerical Integration*,
2nd ed., section IV.4): an explicit Runge-Kutta step of the ambient ODE ``dx/dt = F(x)`` with
``F(x)_i = A_i - <x_i, A_i> x_i`` (``A_i`` the attention average), whose flow leaves the unit sphere
invariant (``d|x|^2/dt = 2 <x, A> (1 - |x|^2)``), followed by ``x_i <- x_i / |x_i|``. The step leaves
the sphere by ``O(h^(p+1))``, so the projection keeps the order ``p`` of the Runge-Kutta method:

* ``"euler"``: explicit Euler, order 1 (the residual layer ``x <- normalise(x + h attention(x))``);
* ``"rk4"``: the classical Runge-Kutta method, order 4;
* ``"dopri5"``: Dormand-Prince 5(4), order 5; adaptive (embedded error estimate, steps clipped to the
  requested times) unless ``dt`` fixes the step.

Variants (Castin, Ablin, Carrillo & Peyre, "A unified perspective on the dynamics of deep
transformers", arXiv 2501.18322): ``normalisation="sinkhorn"`` makes the attention matrix doubly
stochastic (Sinkhorn scaling of ``e^score``; Sander et al., Sinkformers), ``"sigmoid"`` weighs by
``sigmoid(score) / n``; ``kernel="l2"`` scores ``-beta |Q x_i - K x_j|^2`` (L2 attention) from ``query``
and ``key``; a leading head axis on ``query_key`` / ``query``, ``key`` and ``value`` sums the heads
(multi-head attention, an output projection folded into each head's value); ``causal=True`` lets
token ``i`` attend to tokens ``j <= i`` only (masked attention).

The orders are checked by :mod:`verify.sa_equiangular` against the closed equiangular ODE
(:mod:`manifolds.references.attention_flow`). Batches: ``X0`` of shape ``(..., n, d)`` moves every
configuration of the leading axes at once (one step size for the batch). Arrays keep the namespace
and device of ``X0`` (NumPy, CuPy, any array-API library); the scores ``(..., n, n)`` are computed
``block_rows`` query rows at a time, and a request whose estimated peak would not fit is refused
before anything is allocated.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from spectral.floor.arrays import as_float_array, like_array, numpy_dtype
from spectral.floor.backend import array_namespace, to_numpy
from spectral.bistochastic import SinkhornConvergenceWarning, sinkhorn_normalize
from spectral.floor.memory import check_memory, memory_device
from spectral.floor.pairwise_memory import SMALL_REQUEST_BYTES
from spectral.floor.validation import ConvergenceError, InputError, check_int, check_option, check_real

__all__ = ["AttentionFlow", "TokenClusters", "attention_flow", "attention_velocity", "attention_energy",
           "cluster_tokens", "METHODS", "NORMALISATIONS", "GEOMETRIES", "ORDERS", "KERNELS"]

#: ``"softmax"``: (SA), the row normaliser ``Z_i``; ``"uniform"``: (USA), ``1/n``; ``"sinkhorn"``: the doubly
#: stochastic scaling of ``e^score`` (rows and columns sum to 1); ``"sigmoid"``: ``sigmoid(score) / n``.
NORMALISATIONS = ("softmax", "uniform", "sinkhorn", "sigmoid")
#: ``"dot"``: scores ``beta <Q x_i, K x_j>`` (``beta <x_i, B x_j>`` with ``B = Q^T K``); ``"l2"``:
#: ``-beta |Q x_i - K x_j|^2``.
KERNELS = ("dot", "l2")
#: ``"sphere"``: projected onto the tangent space (GLPR); ``"euclidean"``: in R^d (the clustering paper).
GEOMETRIES = ("sphere", "euclidean")
#: The integrators (module docstring) and their orders.
METHODS = ("dopri5", "rk4", "euler")
ORDERS = {"euler": 1, "rk4": 4, "dopri5": 5}

#: Largest |score| of the uniform normaliser: e^709 is the largest power of e in float64.
_MAX_UNIFORM_SCORE = 700.0
#: Rows of X0 on the sphere must have unit norm to this tolerance (then they are normalised exactly).
_UNIT_NORM_TOL = 1e-6

# Dormand-Prince 5(4) (Dormand & Prince 1980; Hairer, Norsett & Wanner, Solving ODEs I, Table II.5.2)
_DP_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_DP_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_DP_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
#: b (order 5) minus b-hat (order 4): the embedded error estimate
_DP_E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)


@dataclasses.dataclass(frozen=True)
class AttentionFlow:
    """Token trajectories of :func:`attention_flow`.

    Attributes
    ----------
    times : numpy.ndarray of shape (m,)
        The requested times (host).
    tokens : array of shape (m, ..., n, d)
        ``tokens[k]`` is the configuration at ``times[k]``, in the namespace and device of ``X0``.
    beta : float
        Inverse temperature.
    normalisation, geometry, method : str
        What was integrated and how (see :func:`attention_flow`).
    dt : float or None
        The fixed step bound, or None for an adaptive ``"dopri5"`` run.
    rtol, atol : float
        Tolerances of an adaptive run.
    steps, rejected, evaluations : int
        Accepted steps, rejected steps (adaptive only) and evaluations of the vector field.
    sinkhorn_sweeps : int
        Sinkhorn sweeps over all evaluations (``normalisation="sinkhorn"``; 0 otherwise).
    """

    times: np.ndarray
    tokens: Any
    beta: float
    normalisation: str
    geometry: str
    method: str
    dt: float | None
    rtol: float
    atol: float
    steps: int
    rejected: int
    evaluations: int
    sinkhorn_sweeps: int = 0

    @property
    def final(self):
        """The configuration at the last requested time."""
        return self.tokens[-1, ...]

    def __repr__(self) -> str:
        shape = tuple(int(s) for s in self.tokens.shape[1:])
        return (f"AttentionFlow(shape={shape}, times={self.times.size}, beta={self.beta:g}, "
                f"normalisation={self.normalisation!r}, geometry={self.geometry!r}, method={self.method!r}, "
                f"steps={self.steps})")


@dataclasses.dataclass(frozen=True)
class TokenClusters:
    """Clusters of :func:`cluster_tokens`: the connected components of ``|x_i - x_j| <= tol``.

    Attributes
    ----------
    counts : numpy.ndarray of int
        Number of clusters of each configuration (shape of the leading axes of ``X``; 0-d for one).
    labels : numpy.ndarray of int, shape (..., n)
        Cluster of each token, numbered 0, 1, ... within its configuration in order of first token.
    tol : float
        The distance below which two tokens are linked.
    """

    counts: np.ndarray
    labels: np.ndarray
    tol: float


# ------------------------------------------------------------------------------------------------
# inputs
# ------------------------------------------------------------------------------------------------
def _tokens(X, name: str = "X"):
    xp, X = as_float_array(X, name)
    if X.ndim < 2:
        raise InputError(f"{name} must have shape (..., n, d) with n tokens of dimension d, got shape "
                         f"{tuple(X.shape)}")
    if X.shape[-2] < 1 or X.shape[-1] < 1:
        raise InputError(f"{name} must hold at least one token of dimension >= 1, got shape {tuple(X.shape)}")
    return xp, X


def _matrix(a, name: str, X, *, rows: bool = False):
    """A matrix parameter as ``(heads, r, d)`` in the namespace of ``X`` (None stays None).

    ``a`` is ``(r, d)`` (one head) or ``(H, r, d)`` (``H`` heads); ``r = d`` unless ``rows`` (query and key
    matrices may map to any dimension ``r``).
    """
    if a is None:
        return None
    d = int(X.shape[-1])
    a = like_array(a, name, like=X)
    shape = tuple(int(s) for s in a.shape)
    what = f"(r, {d}) matrix or an (H, r, {d}) stack of heads" if rows else f"({d}, {d}) matrix or an (H, {d}, {d}) stack"
    if a.ndim not in (2, 3) or shape[-1] != d or (not rows and shape[-2] != d) or shape[-2] < 1 or (
            a.ndim == 3 and shape[0] < 1):
        raise InputError(f"{name} must be a {what} (d = the token dimension), got shape {shape}")
    if a.ndim == 2:
        a = a[None, ...]
    return a


def _heads(query_key, query, key, value, kernel, X):
    """Per head ``(query, key, value)`` matrices (None: the identity) and the number of heads."""
    if query_key is not None and (query is not None or key is not None):
        raise InputError("pass either query_key= (B = Q^T K) or query= and key=, not both")
    if (query is None) != (key is None):
        raise InputError("pass both query= and key= (or neither; query_key= gives B = Q^T K directly)")
    if kernel == "l2" and query_key is not None:
        raise InputError("kernel='l2' scores -beta |Q x_i - K x_j|^2 from query= and key= (B = Q^T K does not "
                         "determine it); pass query= and key=")
    B = _matrix(query_key, "query_key", X)
    Q = _matrix(query, "query", X, rows=True)
    K = _matrix(key, "key", X, rows=True)
    V = _matrix(value, "value", X)
    if Q is not None and int(Q.shape[-2]) != int(K.shape[-2]):
        raise InputError(f"query and key must map to the same dimension r, got query {tuple(Q.shape)[-2:]} and key "
                         f"{tuple(K.shape)[-2:]}")
    counts = {name: int(a.shape[0]) for name, a in (("query_key", B), ("query", Q), ("key", K), ("value", V))
              if a is not None and int(a.shape[0]) != 1}
    if len(set(counts.values())) > 1:
        raise InputError("the head axes must agree (or have length 1): got "
                         + ", ".join(f"{k} {v}" for k, v in counts.items()))
    H = next(iter(counts.values()), 1)

    def pick(a, h):
        return None if a is None else a[h if int(a.shape[0]) > 1 else 0, ...]

    heads = []
    for h in range(H):
        if B is not None:  # scores x_i . (B x_j): the query is the identity, the key B
            heads.append((None, pick(B, h), pick(V, h)))
        else:
            heads.append((pick(Q, h), pick(K, h), pick(V, h)))
    return heads


def _mT(a):
    """Transpose of the last two axes (batched)."""
    if isinstance(a, np.ndarray):
        return a.swapaxes(-1, -2)  # the fast path: a view, no namespace lookup (small problems call this often)
    xp = array_namespace(a)
    f = getattr(xp, "matrix_transpose", None)
    if f is not None:
        return f(a)
    return xp.swapaxes(a, -1, -2)  # pragma: no cover - namespaces without matrix_transpose (older CuPy)


def _row_dot(a, b):
    """``<a_i, b_i>`` over the last axis, kept as a column."""
    xp = array_namespace(a, b)
    return xp.sum(a * b, axis=-1, keepdims=True)


def _row_norms(x):
    xp = array_namespace(x)
    return xp.sqrt(xp.sum(x * x, axis=-1, keepdims=True))


def _on_sphere(xp, X, name: str):
    dev = float(xp.max(xp.abs(_row_norms(X) - 1.0)))
    if not dev <= _UNIT_NORM_TOL:
        raise InputError(f"{name} must hold unit vectors (tokens on the sphere S^(d-1)); the largest | |x_i| - 1 | "
                         f"is {dev:.3g} > {_UNIT_NORM_TOL:g}: pass X / norm(X, axis=-1) or geometry='euclidean'")
    return X / _row_norms(X)


def _times(times) -> np.ndarray:
    if isinstance(times, (str, bytes)):
        raise InputError(f"times must be a 1-d sequence of increasing times >= 0, got {times!r}")
    try:
        t = np.asarray(to_numpy(times) if hasattr(times, "shape") else times, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"times must be a 1-d sequence of increasing times >= 0, got {times!r}") from None
    t = np.atleast_1d(t)
    if t.ndim != 1 or t.size == 0:
        raise InputError(f"times must be a 1-d sequence of increasing times >= 0, got shape {t.shape}")
    if not np.all(np.isfinite(t)) or t[0] < 0 or np.any(np.diff(t) <= 0):
        raise InputError(f"times must be finite, >= 0 and strictly increasing, got {t.tolist()[:6]}"
                         f"{' ...' if t.size > 6 else ''}")
    return t


# ------------------------------------------------------------------------------------------------
# the vector field
# ------------------------------------------------------------------------------------------------
class _Field:
    """``F(X)`` of (SA)/(USA) and their variants with the parameters bound; counts its evaluations."""

    def __init__(self, xp, beta, normalisation, geometry, heads, block_rows, kernel="dot", causal=False,
                 sinkhorn_tol=1e-11, sinkhorn_max_iter=10_000):
        self.xp = xp
        self.beta = beta
        self.normalisation = normalisation
        self.geometry = geometry
        self.heads = heads
        self.block_rows = block_rows
        self.kernel = kernel
        self.causal = causal
        self.sinkhorn_tol = sinkhorn_tol
        self.sinkhorn_max_iter = sinkhorn_max_iter
        self.evaluations = 0
        self.sinkhorn_sweeps = 0
        self._warm = {}  # head -> the last column scaling (a warm start for the next evaluation's Sinkhorn)
        # on the sphere |beta <x_i, B x_j>| <= |beta| |B|_2: checked once (_field_for); otherwise per evaluation
        self.check_overflow = normalisation == "uniform" and (geometry == "euclidean" or kernel == "l2" or any(
            q is not None for q, _, _ in heads))

    def _scores(self, Qx, Kx, qq, kq, start):
        """``(..., b, n)`` scores of the query rows ``start .. start + b`` (masked entries -inf when causal)."""
        xp = self.xp
        S = Qx @ _mT(Kx)  # <Q x_i, K x_j>
        if self.kernel == "l2":  # -|Q x_i - K x_j|^2 = 2 <Q x_i, K x_j> - |Q x_i|^2 - |K x_j|^2
            S = 2.0 * S - xp.expand_dims(qq, axis=-1) - xp.expand_dims(kq, axis=-2)
        S = self.beta * S
        if self.causal:
            b, n = int(S.shape[-2]), int(S.shape[-1])
            later = xp.reshape(xp.arange(n), (1, n)) > xp.reshape(xp.arange(start, start + b), (b, 1))
            S = xp.where(later, xp.asarray(-math.inf, dtype=S.dtype), S)
        return S

    def _visible(self, start, b, n, like):
        """``(b, 1)`` number of tokens row ``i`` attends to: ``i + 1`` when causal, else ``n``."""
        xp = self.xp
        if not self.causal:
            return float(n)
        return xp.asarray(xp.reshape(xp.arange(start + 1, start + b + 1), (b, 1)), dtype=like.dtype)

    def _rows(self, Qx, Kx, qq, kq, Vx, start):
        xp = self.xp
        S = self._scores(Qx, Kx, qq, kq, start)
        b, n = int(S.shape[-2]), int(S.shape[-1])
        if self.normalisation == "softmax":
            S = S - xp.max(S, axis=-1, keepdims=True)
            E = xp.exp(S)
            del S
            W = E / xp.sum(E, axis=-1, keepdims=True)
        elif self.normalisation == "sigmoid":
            W = 1.0 / (1.0 + xp.exp(-S))  # exp(-(-inf)) = inf: a masked entry weighs 0
            W = W / self._visible(start, b, n, W)
        else:
            finite = S if not self.causal else xp.where(xp.isinf(S), xp.zeros_like(S), S)
            if self.check_overflow and float(xp.max(xp.abs(finite))) > _MAX_UNIFORM_SCORE:
                raise (InputError if self.evaluations <= 1 else ConvergenceError)(
                    f"beta |score| exceeds {_MAX_UNIFORM_SCORE:g}"
                    + ("" if self.evaluations <= 1 else " along the flow (the tokens of R^d grow)")
                    + ": e^score overflows float64 with normalisation='uniform' (use a smaller beta or "
                      "normalisation='softmax')")
            W = xp.exp(S) / self._visible(start, b, n, S)
        return W @ Vx

    def _sinkhorn(self, Qx, Kx, qq, kq, Vx, head):
        """The doubly stochastic ``diag(r) E diag(c)`` of ``E = e^score`` (rows shifted by their maxima) times ``Vx``.

        :func:`spectral.sinkhorn_normalize` (alternating, batched over the configurations), warm-started from
        this head's column scaling of the previous evaluation; where a column of ``E`` underflows, on the
        scores themselves (log domain).
        """
        xp = self.xp
        S = self._scores(Qx, Kx, qq, kq, 0)
        S = S - xp.max(S, axis=-1, keepdims=True)  # a row scaling: absorbed by r
        E = xp.exp(S)
        del S
        shape = tuple(E.shape[:-2]) + (int(E.shape[-1]),)
        warm = self._warm.get(head)
        if warm is not None and tuple(warm.shape) != shape:
            warm = None
        columns = xp.sum(E, axis=-2)
        finfo = xp.finfo(E.dtype)
        if not bool(xp.all(columns > finfo.smallest_normal / finfo.eps)):
            if not bool(xp.all(xp.isfinite(columns))):
                raise ConvergenceError("normalisation='sinkhorn': the scores are not finite (the tokens left the "
                                       "floating-point range)")
            # a column of e^score underflows (scores spread over about 700 or more within every row): scale the
            # scores themselves, in the log domain
            E = self._scores(Qx, Kx, qq, kq, 0)
            log_domain = True
        else:
            log_domain = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SinkhornConvergenceWarning)  # raised below as an error instead
            res = sinkhorn_normalize(E, method="alternating", log_domain=log_domain, tol=self.sinkhorn_tol,
                                     max_iter=self.sinkhorn_max_iter, check_every=5, start=warm, check_input=False)
        self.sinkhorn_sweeps += res.iterations
        if not res.converged:
            raise ConvergenceError(f"normalisation='sinkhorn': row sums off by {res.residuals[-1]:.3g} > "
                                   f"sinkhorn_tol = {self.sinkhorn_tol:g} after {res.iterations} sweeps")
        c = res.col_scaling
        scale = float(xp.max(c))  # keep the scalings O(1): (r, c) -> (r s, c / s) changes nothing
        self._warm[head] = c / scale if math.isfinite(scale) else None
        return res.matrix @ Vx

    def __call__(self, X):
        self.evaluations += 1
        xp = self.xp
        n = int(X.shape[-2])
        b = n if self.block_rows is None else min(self.block_rows, n)
        A = None
        for h, (qm, km, vm) in enumerate(self.heads):
            Qx = X if qm is None else X @ _mT(qm)  # rows Q x_i
            Kx = X if km is None else X @ _mT(km)  # rows K x_j (B x_j in the query_key form)
            Vx = X if vm is None else X @ _mT(vm)  # rows V x_j
            qq = xp.sum(Qx * Qx, axis=-1) if self.kernel == "l2" else None
            kq = xp.sum(Kx * Kx, axis=-1) if self.kernel == "l2" else None
            if self.normalisation == "sinkhorn":
                Ah = self._sinkhorn(Qx, Kx, qq, kq, Vx, h)
            elif b >= n:
                Ah = self._rows(Qx, Kx, qq, kq, Vx, 0)
            else:
                concat = getattr(xp, "concat", None) or xp.concatenate
                Ah = concat([self._rows(Qx[..., s:min(s + b, n), :], Kx,
                                        None if qq is None else qq[..., s:min(s + b, n)], kq, Vx, s)
                             for s in range(0, n, b)], axis=-2)
            A = Ah if A is None else A + Ah
        if self.geometry == "sphere":
            A = A - _row_dot(X, A) * X
        return A


def _peak_bytes(batch: int, n: int, d: int, rows: int, itemsize: int, stages: int, outputs: int) -> int:
    """Estimated peak of a flow: the outputs, the Runge-Kutta stages and one block of scores.

    The scores hold three ``(batch, rows, n)`` arrays at once (scores, exponentials, weights); the
    stages ``stages + 4`` token arrays (the state, a trial state, the error, a temporary).
    """
    tokens = batch * n * d * itemsize
    return outputs * tokens + (stages + 4) * tokens + 3 * batch * rows * n * itemsize + 3 * tokens


def _field_for(X, beta, normalisation, geometry, value, query_key, block_rows, max_bytes, *, stages, outputs,
               what, query=None, key=None, kernel="dot", causal=False, sinkhorn_tol=1e-11):
    xp = array_namespace(X)
    beta = check_real("beta", beta)
    normalisation = check_option("normalisation", normalisation, NORMALISATIONS)
    geometry = check_option("geometry", geometry, GEOMETRIES)
    kernel = check_option("kernel", kernel, KERNELS)
    if not isinstance(causal, (bool, np.bool_)):
        raise InputError(f"causal must be True or False, got {causal!r}")
    causal = bool(causal)
    sinkhorn_tol = check_real("sinkhorn_tol", sinkhorn_tol, low=1e-15, high=1e-2)
    if normalisation == "sinkhorn" and causal:
        raise InputError("causal=True with normalisation='sinkhorn': a lower-triangular doubly stochastic matrix is "
                         "the identity (no attention); use normalisation='softmax' for masked attention")
    heads = _heads(query_key, query, key, value, kernel, X)
    n, d = int(X.shape[-2]), int(X.shape[-1])
    batch = int(math.prod(int(s) for s in X.shape[:-2]))
    if block_rows is not None:
        block_rows = check_int("block_rows", block_rows, low=1)
        if normalisation == "sinkhorn" and block_rows < n:
            raise InputError(f"block_rows = {block_rows} < n = {n} with normalisation='sinkhorn': Sinkhorn scaling "
                             "needs the whole (n, n) matrix (leave block_rows unset)")
    rows = n if block_rows is None else min(block_rows, n)
    if normalisation == "uniform" and geometry == "sphere" and kernel == "dot" and query is None:
        norm_b = 1.0 if query_key is None else max(float(np.linalg.norm(to_numpy(k), 2)) for _, k, _ in heads)
        if abs(beta) * norm_b > _MAX_UNIFORM_SCORE:
            raise InputError(f"beta |B|_2 = {abs(beta) * norm_b:.4g} exceeds {_MAX_UNIFORM_SCORE:g}: e^score overflows "
                             "float64 with normalisation='uniform' (use a smaller beta or normalisation='softmax')")
    itemsize = numpy_dtype(X.dtype).itemsize
    needed = _peak_bytes(batch, n, d, rows, itemsize, stages, outputs)
    if max_bytes is not None or needed > SMALL_REQUEST_BYTES:  # small requests skip the /proc reads (as pairwise)
        check_memory(needed, what=f"{what} of {batch} configuration(s) of n = {n} tokens in d = {d} "
                                  f"({outputs} output time(s), scores {rows} rows at a time)",
                     alternative="pass block_rows=k to compute the scores k query rows at a time, or ask for fewer "
                                 "times or a smaller batch",
                     max_bytes=max_bytes, device=memory_device(X))
    return _Field(xp, beta, normalisation, geometry, heads, block_rows, kernel=kernel, causal=causal,
                  sinkhorn_tol=sinkhorn_tol)
def attention_velocity(X, *, beta, normalisation="softmax", value=None, query_key=None, geometry="sphere",
                       block_rows=None, max_bytes=None, query=None, key=None, kernel="dot", causal=False,
                       sinkhorn_tol=1e-11):
    r"""The velocity of every token under self-attention dynamics (GLPR section 2, (SA)/(USA)) and its variants.

    .. math:: \dot x_i = P^\perp_{x_i}\Big(\sum_h \sum_j P^{(h)}_{ij} V_h x_j\Big), \qquad
              P^{(h)}_{ij} = \frac{e^{s^{(h)}_{ij}}}{Z_i} \text{ (softmax)}, \quad
              s^{(h)}_{ij} = \beta \langle Q_h x_i, K_h x_j\rangle = \beta \langle x_i, B_h x_j\rangle
              \text{ or } -\beta |Q_h x_i - K_h x_j|^2 \text{ (L2)}.

    Parameters
    ----------
    X : array of shape (..., n, d)
        Tokens (unit vectors for ``geometry="sphere"``); leading axes are a batch.
    beta : float
        Inverse temperature (any real; ``beta < 0`` repels).
    normalisation : {"softmax", "uniform", "sinkhorn", "sigmoid"}
        ``P_ij = e^(s_ij) / Z_i`` with ``Z_i = sum_k e^(s_ik)`` (SA) or ``Z_i = n`` (USA); ``"sinkhorn"``:
        ``P = diag(r) e^S diag(c)`` with every row and column summing to 1 (Sinkhorn scaling to
        ``sinkhorn_tol``); ``"sigmoid"``: ``P_ij = sigmoid(s_ij) / n``. With ``causal``, ``n`` is the number
        ``i + 1`` of tokens row ``i`` sees.
    value, query_key : array of shape (d, d) or (H, d, d), optional
        ``V`` and ``B = Q^T K``; default the identity. A leading axis of length ``H`` gives one matrix per
        head; the heads' velocities are summed (multi-head attention with each head's output projection
        ``W_h^T`` folded into its value ``W_h^T V_h``).
    query, key : array of shape (r, d) or (H, r, d), optional
        ``Q`` and ``K`` (both or neither; not with ``query_key``): scores ``beta <Q x_i, K x_j>`` or, with
        ``kernel="l2"``, ``-beta |Q x_i - K x_j|^2``. Default the identity.
    kernel : {"dot", "l2"}
        Dot-product or L2 scores (``"l2"`` needs ``query`` and ``key``, or neither: ``-beta |x_i - x_j|^2``).
    causal : bool
        Token ``i`` attends to tokens ``j <= i`` only (masked attention; not with ``"sinkhorn"``).
    sinkhorn_tol : float
        Largest deviation of a row sum from 1 at which Sinkhorn scaling stops (columns are exact).
    geometry : {"sphere", "euclidean"}
        Project onto the tangent space at ``x_i`` (GLPR), or not (the clustering paper, eq. (1.1)).
    block_rows : int, optional
        Compute the ``(n, n)`` scores this many query rows at a time (default: all at once).
    max_bytes : int or float, optional
        Limit on the estimated peak memory; default the memory available now.

    Returns
    -------
    array of shape (..., n, d)
        The velocities, in the namespace of ``X``.

    Raises
    ------
    spectral.floor.validation.InputError
        Bad shapes, tokens off the sphere, a uniform normaliser whose ``e^score`` would overflow.
    spectral.floor.validation.ConvergenceError
        Sinkhorn scaling that does not reach ``sinkhorn_tol`` in 10000 sweeps.
    spectral.floor.memory.DenseMemoryError
        Before the scores are allocated, when the estimate exceeds the limit.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> V = attention_velocity(X, beta=0.0)          # each token moves toward the other, along the tangent
    >>> [float(V[0, 1]), float(V[1, 0])], float(np.max(np.abs(np.sum(V * X, axis=1))))
    ([0.5, 0.5], 0.0)
    """
    xp, X = _tokens(X)
    geometry_ = check_option("geometry", geometry, GEOMETRIES)
    if geometry_ == "sphere":
        X = _on_sphere(xp, X, "X")
    field = _field_for(X, beta, normalisation, geometry, value, query_key, block_rows, max_bytes, stages=0,
                       outputs=1, what="the attention velocity", query=query, key=key, kernel=kernel, causal=causal,
                       sinkhorn_tol=sinkhorn_tol)
    return field(X)


def attention_energy(X, *, beta):
    r"""The interaction energy :math:`E_\beta = \frac{1}{2n^2}\sum_{i,j} (e^{\beta\langle x_i,x_j\rangle} - 1)/\beta`.

    (USA) is its gradient ascent on :math:`(S^{d-1})^n` (GLPR section 3.3: ``dx_i/dt = n grad_i E``) and
    (SA) a gradient ascent for a metric weighted by ``Z_i / n`` (section 3.4), so it does not decrease
    along either. ``beta = 0`` gives the limit :math:`\frac{1}{2n^2}\sum_{i,j}\langle x_i, x_j\rangle`.
    (GLPR write ``e^(beta <x_i, x_j>) / (2 beta n^2)``; the constant ``-1/beta`` makes ``beta -> 0``
    continuous and changes no gradient.)

    Parameters
    ----------
    X : array of shape (..., n, d)
        Tokens; leading axes are a batch.
    beta : float
        Inverse temperature.

    Returns
    -------
    array of shape (...)
        The energy of each configuration, in the namespace of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> float(attention_energy(np.array([[1.0, 0.0], [1.0, 0.0]]), beta=0.0))   # a single cluster: 1/2
    0.5
    """
    xp, X = _tokens(X)
    beta = check_real("beta", beta)
    n = int(X.shape[-2])
    batch = int(math.prod(int(s) for s in X.shape[:-2]))
    check_memory(2 * batch * n * n * numpy_dtype(X.dtype).itemsize, what=f"the Gram matrices ({batch} x {n} x {n})",
                 alternative="compute the energy of fewer configurations at a time", device=memory_device(X))
    G = X @ _mT(X)
    if beta == 0.0:
        S = G
    elif abs(beta) < 1e-8:  # (e^(b g) - 1)/b = g + b g^2 / 2 + ...: no cancellation
        S = G + 0.5 * beta * G * G
    else:
        S = xp.expm1(beta * G) / beta
    return xp.sum(xp.sum(S, axis=-1), axis=-1) / (2.0 * n * n)


# ------------------------------------------------------------------------------------------------
# integrators
# ------------------------------------------------------------------------------------------------
def _project(xp, X, geometry):
    return X / _row_norms(X) if geometry == "sphere" else X


def _combine(y, h, coefs, ks):
    out = y
    for c, k in zip(coefs, ks):
        if c != 0.0:
            out = out + (h * c) * k
    return out


def _step_euler(f, y, h):
    return y + h * f(y)


def _step_rk4(f, y, h):
    k1 = f(y)
    k2 = f(y + (0.5 * h) * k1)
    k3 = f(y + (0.5 * h) * k2)
    k4 = f(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def _step_dopri(f, y, h, k1=None):
    """One Dormand-Prince step: (y5, error estimate, f(y5)) (FSAL: the last stage is f at the new point)."""
    ks = [f(y) if k1 is None else k1]
    for i in range(1, 7):
        ks.append(f(_combine(y, h, _DP_A[i], ks)))
    y5 = _combine(y, h, _DP_B, ks)
    err = _combine(0.0 * y, h, _DP_E, ks)
    return y5, err, ks[6]


def _fixed(f, y, t0, t1, dt, method, geometry, xp):
    m = max(1, int(math.ceil((t1 - t0) / dt - 1e-12)))
    h = (t1 - t0) / m
    for _ in range(m):
        if method == "euler":
            y = _step_euler(f, y, h)
        elif method == "rk4":
            y = _step_rk4(f, y, h)
        else:
            y = _step_dopri(f, y, h)[0]
        y = _project(xp, y, geometry)
    if not bool(xp.all(xp.isfinite(y))):
        raise ConvergenceError(f"attention_flow: the tokens are not finite at t = {t1:.6g} with fixed steps h = "
                               f"{h:.3g} ({method}): the step is beyond the method's stability limit (use a smaller "
                               "dt, or method='dopri5' without dt)")
    return y, m


def _error_norm(xp, err, y, y_new, rtol, atol):
    scale = atol + rtol * xp.maximum(xp.abs(y), xp.abs(y_new))
    return float(xp.max(xp.abs(err) / scale))


def _adaptive(f, y, times, rtol, atol, geometry, xp, max_steps, out):
    """Dormand-Prince 5(4) with the standard controller (Hairer, Norsett & Wanner, II.4), steps ending on ``times``."""
    t = 0.0 if times[0] > 0 else float(times[0])
    k1 = f(y)
    scale = atol + rtol * xp.abs(y)
    d0 = float(xp.max(xp.abs(y) / scale))
    d1 = float(xp.max(xp.abs(k1) / scale))
    span = float(times[-1] - t)
    h = 0.01 * d0 / d1 if d1 > 1e-300 and d0 > 1e-300 else 1e-6
    h = min(max(h, 1e-12), span if span > 0 else 1.0)
    steps = rejected = 0
    for target in (float(v) for v in times):  # Python floats: array-API namespaces refuse numpy scalars
        while t < target:
            if steps + rejected >= max_steps:
                raise ConvergenceError(f"attention_flow: {max_steps} steps reached at t = {t:.6g} before "
                                       f"t = {target:.6g} (rtol = {rtol:g}): raise max_steps or rtol")
            last = t + h >= target * (1 - 1e-13)
            hh = target - t if last else h
            y_new, err, k_new = _step_dopri(f, y, hh, k1)
            e = _error_norm(xp, err, y, y_new, rtol, atol)
            if not math.isfinite(e):  # an overflowing trial step: reject it and shrink the step
                rejected += 1
                h = 0.2 * hh
            elif e <= 1.0:
                t = target if last else t + hh
                y_new = _project(xp, y_new, geometry)
                # FSAL: f(y5) is the next first stage; after a projection the point moved by O(h^6), so the
                # stage is recomputed at the projected point (exact order; one evaluation per step)
                k1 = f(y_new) if geometry == "sphere" else k_new
                y = y_new
                steps += 1
                factor = 5.0 if e == 0.0 else min(5.0, max(0.2, 0.9 * e ** (-0.2)))
                h = hh * factor if not last or factor < 1.0 else max(h, hh * factor)
            else:
                rejected += 1
                h = hh * max(0.2, 0.9 * e ** (-0.2))
            if h < 1e-14 * max(1.0, abs(t)):
                raise ConvergenceError(f"attention_flow: the step size fell to {h:.3g} at t = {t:.6g}: the "
                                       f"dynamics is too stiff for rtol = {rtol:g}; use a fixed dt")
        out.append(y)
    return steps, rejected


def attention_flow(X0, *, beta, times, normalisation="softmax", value=None, query_key=None, geometry="sphere",
                   method="dopri5", dt=None, rtol=1e-8, atol=1e-10, max_steps=1_000_000, block_rows=None,
                   max_bytes=None, query=None, key=None, kernel="dot", causal=False,
                   sinkhorn_tol=1e-11) -> AttentionFlow:
    r"""Token trajectories of the self-attention dynamics (SA)/(USA) at the requested times.

    Integrates :func:`attention_velocity` from ``X0`` at ``t = 0`` with a projection Runge-Kutta
    method (module docstring): an explicit step of the ambient ODE, then every token divided by its
    norm, which keeps the method's order on the sphere.

    Parameters
    ----------
    X0 : array of shape (..., n, d)
        Initial tokens (unit vectors for ``geometry="sphere"``; leading axes are a batch of independent
        configurations integrated together).
    beta : float
        Inverse temperature.
    times : sequence of float
        Strictly increasing times ``>= 0`` at which the tokens are returned (``0`` returns ``X0``).
    normalisation : {"softmax", "uniform", "sinkhorn", "sigmoid"}
        (SA) or (USA) (GLPR section 2), doubly stochastic (Sinkhorn) or sigmoid weights
        (:func:`attention_velocity`).
    value, query_key : array of shape (d, d) or (H, d, d), optional
        Value matrix ``V`` and ``B = Q^T K`` (scores ``beta <x_i, B x_j>``); default the identity. A leading
        head axis sums ``H`` heads.
    query, key, kernel, causal, sinkhorn_tol
        L2 scores, separate query and key matrices, masking and the Sinkhorn tolerance, as in
        :func:`attention_velocity`.
    geometry : {"sphere", "euclidean"}
        On the unit sphere (GLPR) or in ``R^d`` without projection (the clustering paper, eq. (1.1)).
    method : {"dopri5", "rk4", "euler"}
        Dormand-Prince 5(4) (order 5), classical Runge-Kutta (order 4) or explicit Euler (order 1).
    dt : float, optional
        Largest step: each interval between requested times is cut into equal steps of at most ``dt``.
        Required for ``"rk4"`` and ``"euler"``; for ``"dopri5"`` it fixes the step (no adaptivity). Near a
        cluster the tokens contract at rate 1 (SA) or ``e^beta`` (USA): a fixed step beyond the method's
        stability limit (about ``2.8 / rate`` for ``"rk4"``) gives wrong tokens that the projection keeps
        finite on the sphere (in ``R^d`` they overflow and raise ConvergenceError).
    rtol, atol : float
        Tolerances of the adaptive ``"dopri5"`` (error per step, mixed absolute/relative, max norm).
    max_steps : int
        Steps (accepted and rejected) after which an adaptive run stops with ConvergenceError.
    block_rows : int, optional
        Compute the scores this many query rows at a time (peak ``3 batch block_rows n`` floats).
    max_bytes : int or float, optional
        Limit on the estimated peak memory (outputs, stages, scores); default the memory available now.

    Returns
    -------
    AttentionFlow
        ``tokens[k]`` at ``times[k]``, with the step counts.

    Raises
    ------
    spectral.floor.validation.InputError
        Bad input (naming the parameter); tokens off the sphere.
    spectral.floor.validation.ConvergenceError
        An adaptive run that exceeds ``max_steps`` or whose step underflows.
    spectral.floor.memory.DenseMemoryError
        Before anything is allocated, when the estimated peak exceeds the limit.

    Examples
    --------
    Three tokens at mutual inner product 0 on S^3 follow the equiangular ODE of GLPR Theorem 6.8:

    >>> import numpy as np
    >>> X0 = np.eye(4)[1:]                       # pairwise orthogonal, d = 4
    >>> flow = attention_flow(X0, beta=1.0, times=[0.0, 1.0], rtol=1e-10, atol=1e-12)
    >>> G = flow.final @ flow.final.T
    >>> round(float(G[0, 1]), 6) == round(float(G[1, 2]), 6)   # still equiangular
    True
    """
    xp, X = _tokens(X0, "X0")
    t = _times(times)
    geometry_ = check_option("geometry", geometry, GEOMETRIES)
    method = check_option("method", method, METHODS)
    if dt is None:
        if method != "dopri5":
            raise InputError(f"dt is required for method={method!r} (a fixed-step method); pass dt > 0, or use "
                             "method='dopri5' for adaptive steps")
    else:
        dt = check_real("dt", dt, low=0.0, low_open=True)
    rtol = check_real("rtol", rtol, low=1e-14, high=1.0, high_open=True)
    atol = check_real("atol", atol, low=0.0, low_open=True)
    max_steps = check_int("max_steps", max_steps, low=1)
    if geometry_ == "sphere":
        X = _on_sphere(xp, X, "X0")
    stages = {"euler": 1, "rk4": 4, "dopri5": 7}[method]
    f = _field_for(X, beta, normalisation, geometry, value, query_key, block_rows, max_bytes, stages=stages,
                   outputs=int(t.size), what="the attention flow", query=query, key=key, kernel=kernel, causal=causal,
                   sinkhorn_tol=sinkhorn_tol)
    out = []
    y = X
    steps = rejected = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # overflow is detected and reported
        steps, rejected = _integrate(f, y, t, dt, method, geometry_, xp, rtol, atol, max_steps, out)
    tokens = xp.stack(out, axis=0)
    return AttentionFlow(times=t, tokens=tokens, beta=f.beta, normalisation=f.normalisation, geometry=geometry_,
                         method=method, dt=dt, rtol=rtol, atol=atol, steps=steps, rejected=rejected,
                         evaluations=f.evaluations, sinkhorn_sweeps=f.sinkhorn_sweeps)


def _integrate(f, y, t, dt, method, geometry_, xp, rtol, atol, max_steps, out):
    steps = rejected = 0
    if dt is not None:
        now = 0.0
        for target in t:
            if target > now:
                y, m = _fixed(f, y, now, float(target), dt, method, geometry_, xp)
                steps += m
                now = float(target)
            out.append(y)
    else:
        if t[0] == 0.0:
            out.append(y)
            rest = t[1:]
        else:
            rest = t
        if rest.size:
            steps, rejected = _adaptive(f, y, rest, rtol, atol, geometry_, xp, max_steps, out)
    return steps, rejected


# ------------------------------------------------------------------------------------------------
# clusters
# ------------------------------------------------------------------------------------------------
def cluster_tokens(X, *, tol=1e-2, max_bytes=None) -> TokenClusters:
    """Clusters of tokens: the connected components of the graph ``|x_i - x_j| <= tol`` (single linkage).

    Parameters
    ----------
    X : array of shape (..., n, d)
        Tokens; leading axes are a batch of configurations, each clustered on its own.
    tol : float
        Linking distance (Euclidean; for unit vectors the chord ``sqrt(2 - 2 <x_i, x_j>)``).
    max_bytes : int or float, optional
        Limit on the estimated peak (the ``(batch, n, n)`` distances and links).

    Returns
    -------
    TokenClusters
        Counts and labels on the host.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 1e-4], [0.0, 1.0]])
    >>> int(cluster_tokens(X, tol=1e-2).counts)
    2
    """
    from scipy.sparse import coo_array
    from scipy.sparse.csgraph import connected_components

    xp, X = _tokens(X)
    tol = check_real("tol", tol, low=0.0, low_open=True)
    shape = tuple(int(s) for s in X.shape[:-2])
    n, d = int(X.shape[-2]), int(X.shape[-1])
    batch = int(math.prod(shape))
    itemsize = numpy_dtype(X.dtype).itemsize
    check_memory(batch * n * n * (3 * itemsize + 1) + 8 * batch * n * 4,
                 what=f"the distances of {batch} configuration(s) of n = {n} tokens",
                 alternative="cluster fewer configurations at a time", max_bytes=max_bytes, device=memory_device(X))
    Xb = xp.reshape(X, (batch, n, d))
    sq = xp.sum(Xb * Xb, axis=-1)
    D2 = xp.expand_dims(sq, axis=-1) + xp.expand_dims(sq, axis=-2) - 2.0 * (Xb @ _mT(Xb))
    links = to_numpy(D2 <= tol * tol)
    b, i, j = np.nonzero(links)
    graph = coo_array((np.ones(b.size, dtype=np.int8), (b * n + i, b * n + j)), shape=(batch * n, batch * n))
    _, comp = connected_components(graph, directed=False)
    comp = comp.reshape(batch, n)
    labels = np.empty((batch, n), dtype=np.int64)
    counts = np.empty(batch, dtype=np.int64)
    for k in range(batch):
        _, first, inverse = np.unique(comp[k], return_index=True, return_inverse=True)
        order = np.argsort(np.argsort(first))  # number clusters by their first token
        labels[k] = order[inverse]
        counts[k] = first.size
    return TokenClusters(counts=counts.reshape(shape), labels=labels.reshape(shape + (n,)), tol=tol)
