"""PDE-guided evolution of attention matrices in pseudo-time (PDE paper, App. E).

The PDE paper ("Continuous-Time Attention: PDE-Guided Mechanisms for Long-Sequence Transformers")
refines an attention matrix ``A(0) = softmax(Q K^T / sqrt(d))`` by ``N_t`` explicit steps of a PDE
in a pseudo-time ``t``:

* diffusion, eq. (23): ``A <- A + dt alpha lap(A)``;
* wave, eqs. (26)-(27) (symplectic Euler, velocity ``V(0) = 0``, which the paper leaves unstated):
  ``V <- V + dt c^2 lap(A)``, ``A <- A + dt V``;
* reaction-diffusion, eq. (30): ``A <- A + dt [alpha lap(A) + beta A (1 - A)]``;
* advection-diffusion (Table 5, no scheme printed): ``A <- A + dt [alpha lap(A) + beta grad(A)]``
  with the central first difference ``grad(a)_j = (a_(j+1) - a_(j-1)) / (2 ds)``.

The paper does not say along which index the discrete Laplacian acts, how the sequence ends are
treated, or what ``dt`` and ``ds`` are; here they are parameters:

* ``axis="key"`` applies the second difference along each row (``A <- A + dt alpha A L^T``, the
  default), ``"query"`` along each column (``L A``), ``"both"`` the sum (5-point stencil);
* ``boundary`` is one of :data:`BOUNDARIES` (see :func:`laplacian_matrix`);
* the step numbers are ``r = alpha dt / ds^2`` (diffusion) and the Courant number ``c dt / ds``
  (wave); :func:`stability_limit` gives the largest stable value of each, computed from the
  eigenvalues of :func:`laplacian_matrix` (not from the paper's eqs. (24) and (28)).

Three input forms: a dense square array (any array-API namespace; stencil updates, ``O(T^2)`` per
step; on NumPy one read of ``A`` and one write per step through ``scipy.ndimage.correlate1d`` and
two reused buffers, elsewhere whole-array updates that stay on the inputs' device with no host
synchronisation per step), a ``scipy.sparse`` matrix (banded surrogates; fill-in widens a band by 2
per step) and a :class:`FactoredAttention` ``phi(Q) phi(K)^T`` (kernel attention; the key-axis
operator acts on ``phi(K)``, the query-axis operator on ``phi(Q)``, and no ``T x T`` matrix is formed).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from spectral.floor.backend import array_namespace
from spectral.floor.memory import check_dense_memory
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["FactoredAttention", "PDEEvolution", "evolve_attention", "laplacian_matrix", "stability_limit"]

#: Boundary treatments of the second difference along the sequence (see :func:`laplacian_matrix`).
BOUNDARIES = ("periodic", "neumann", "reflect", "dirichlet", "fixed")
#: The four PDEs of the paper (Sec. 3.2, App. E, Table 5).
PDES = ("diffusion", "wave", "reaction-diffusion", "advection-diffusion")
#: Which index of ``A[i, j]`` (query i, key j) the operator acts along.
AXES = ("key", "query", "both")


# ------------------------------------------------------------------------------------------------
# the matrix of the second difference
# ------------------------------------------------------------------------------------------------
def laplacian_matrix(T: int, *, boundary: str, ds: float = 1.0, sparse: bool = False):
    """The second difference ``(a_(j-1) - 2 a_j + a_(j+1)) / ds^2`` along one axis as a ``T x T`` matrix.

    The discrete Laplacian ``nabla_s^2`` of the PDE paper (eqs. 18, 22, 23), with the end rows set
    by ``boundary``:

    ``"periodic"``
        tokens on a ring: ``a_(-1) = a_(T-1)``, ``a_T = a_0`` (circulant).
    ``"neumann"``
        cell-centred zero flux: end rows ``[-1, 1] / ds^2`` and ``[1, -1] / ds^2``. Symmetric, rows
        and columns sum to zero (conservative: ``1^T L = 0`` and ``L 1 = 0``).
    ``"reflect"``
        ghost point reflection ``a_(-1) = a_1``: end rows ``[-2, 2] / ds^2``. Rows sum to zero but
        columns do not (column sums ``[-1, 1, 0, ..., 0, 1, -1] / ds^2``).
    ``"dirichlet"``
        zero outside the sequence: end rows ``[-2, 1] / ds^2`` (mass leaks out).
    ``"fixed"``
        end tokens copied unchanged, as the paper's public code does (its refinement layers
        concatenate ``x[:1]``, the updated interior and ``x[-1:]``): end rows are zero. In
        :func:`evolve_attention` no term of any PDE moves them (the reaction and advection terms
        and the wave's velocity included); on both axes the whole frame (first and last row and
        column) is held.

    Parameters
    ----------
    T : int
        Sequence length, at least 3.
    boundary : {"periodic", "neumann", "reflect", "dirichlet", "fixed"}
        End-row treatment (above).
    ds : float
        Token spacing, > 0.
    sparse : bool
        Return a ``scipy.sparse.csr_array`` instead of a dense ``numpy.ndarray``.

    Returns
    -------
    numpy.ndarray or scipy.sparse.csr_array
        The ``T x T`` float64 matrix ``L`` (host memory).

    Examples
    --------
    >>> laplacian_matrix(4, boundary="neumann")
    array([[-1.,  1.,  0.,  0.],
           [ 1., -2.,  1.,  0.],
           [ 0.,  1., -2.,  1.],
           [ 0.,  0.,  1., -1.]])
    """
    T = check_int("T", T, low=3)
    boundary = check_option("boundary", boundary, BOUNDARIES)
    ds = check_real("ds", ds, low=0.0, low_open=True)
    if not isinstance(sparse, (bool, np.bool_)):
        raise InputError(f"sparse must be True or False, got {sparse!r}")
    if not sparse:  # the dense matrix is the peak (tracemalloc: 1.00-1.01 T^2 float64 at T = 1000, 3000)
        check_dense_memory(T, what="dense Laplacian", alternative="use sparse=True (3 T stored entries)")
    import scipy.sparse as sp

    h2 = 1.0 / (ds * ds)
    main = np.full(T, -2.0 * h2)
    upper = np.full(T - 1, h2)  # L[j, j + 1]
    lower = np.full(T - 1, h2)  # L[j + 1, j]
    rows, cols, vals = [], [], []
    if boundary == "periodic":
        rows, cols, vals = [0, T - 1], [T - 1, 0], [h2, h2]
    elif boundary == "neumann":
        main[0] = main[-1] = -h2
    elif boundary == "reflect":
        upper[0] = 2.0 * h2
        lower[-1] = 2.0 * h2
    elif boundary == "fixed":
        main[0] = main[-1] = 0.0
        upper[0] = 0.0
        lower[-1] = 0.0
    mat = sp.diags_array([lower, main, upper], offsets=[-1, 0, 1], shape=(T, T), format="csr")
    if rows:
        mat = mat + sp.csr_array((vals, (rows, cols)), shape=(T, T))
    mat = sp.csr_array(mat)
    mat.eliminate_zeros()
    return mat if sparse else mat.toarray()


def _first_difference_matrix(T: int, boundary: str, ds: float):
    """Central first difference ``(a_(j+1) - a_(j-1)) / (2 ds)`` with the ghost values of ``boundary``.

    For ``"neumann"`` the ghost is ``a_(-1) = -a_0`` so that the advective face flux is zero and the
    column sums vanish (conservative, like the cell-centred Laplacian).
    """
    import scipy.sparse as sp

    h = 1.0 / (2.0 * ds)
    main = np.zeros(T)
    upper = np.full(T - 1, h)
    lower = np.full(T - 1, -h)
    extra = []
    if boundary == "periodic":
        extra = [(0, T - 1, -h), (T - 1, 0, h)]
    elif boundary == "neumann":
        main[0] = h
        main[-1] = -h
    elif boundary == "reflect":
        upper[0] = 0.0
        lower[-1] = 0.0
    elif boundary == "fixed":
        upper[0] = 0.0
        lower[-1] = 0.0
    mat = sp.diags_array([lower, main, upper], offsets=[-1, 0, 1], shape=(T, T), format="csr")
    if extra:
        r, c, v = zip(*extra)
        mat = mat + sp.csr_array((v, (r, c)), shape=(T, T))
    mat = sp.csr_array(mat)
    mat.eliminate_zeros()
    return mat


# ------------------------------------------------------------------------------------------------
# stability limits from the eigenvalues of the Laplacian matrix
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=512)
def _laplacian_extremes(T: int, boundary: str, ds: float) -> tuple[float, float]:
    """(most negative, largest) eigenvalue of ``laplacian_matrix(T, boundary, ds)``.

    Periodic: the matrix is circulant, so its eigenvalues are the FFT of its first column. The other
    boundaries give a real tridiagonal matrix whose off-diagonal products are >= 0; it is similar to
    the symmetric tridiagonal matrix with off-diagonal ``sqrt(L[j, j+1] L[j+1, j])`` (a zero product
    decouples the matrix into blocks with the same eigenvalues), solved by bisection.
    """
    from scipy.linalg import eigvalsh_tridiagonal

    mat = laplacian_matrix(T, boundary=boundary, ds=ds, sparse=True)
    if boundary == "periodic":
        ev = np.fft.fft(mat[:, [0]].toarray().ravel())
        scale = float(np.max(np.abs(ev)))
        if float(np.max(np.abs(ev.imag))) > 1e-12 * scale:  # pragma: no cover - a symmetric circulant
            raise RuntimeError("periodic Laplacian has complex eigenvalues: not symmetric")
        return float(ev.real.min()), float(ev.real.max())
    d = mat.diagonal()
    up, lo = mat.diagonal(1), mat.diagonal(-1)
    if mat.nnz != np.count_nonzero(d) + np.count_nonzero(up) + np.count_nonzero(lo) or np.any(up * lo < 0):
        raise RuntimeError(f"{boundary} Laplacian is not tridiagonal with non-negative off-diagonal products")
    e = np.sqrt(up * lo)
    lo_ev = eigvalsh_tridiagonal(d, e, select="i", select_range=(0, 0))[0]
    hi_ev = eigvalsh_tridiagonal(d, e, select="i", select_range=(T - 1, T - 1))[0]
    return float(lo_ev), float(hi_ev)


def stability_limit(pde: str, *, T: int, boundary: str, axis: str = "key", ds: float = 1.0) -> float:
    """Largest stable step number of the explicit scheme: ``r = alpha dt / ds^2`` or ``c dt / ds``.

    Computed from the extreme eigenvalue ``-mu_max`` of :func:`laplacian_matrix` (``mu_max`` in
    units of ``1/ds^2``), not from the paper's CFL formulas (eqs. 24 and 28):

    * diffusion, eq. (23): the one-step map ``I + dt alpha L`` has eigenvalues ``1 - r ds^2 mu``,
      so its spectral radius is <= 1 iff ``r <= 2 / (ds^2 mu_max)`` (one axis) and
      ``r <= 1 / (ds^2 mu_max)`` for ``axis="both"`` (eigenvalues ``mu_i + mu_j``). Periodic with
      even ``T``: 1/2 and 1/4.
    * wave, eqs. (26)-(27): per mode the map ``(A, V) -> (A', V')`` is
      ``[[1 - x, dt], [-c^2 mu dt, 1]]`` with determinant 1 and ``x = c^2 dt^2 mu``; its eigenvalues
      lie on the unit circle iff ``x <= 4``, i.e. ``c dt / ds <= 2 / (ds sqrt(mu_max))`` (one axis;
      ``mu_max -> 2 mu_max`` for both axes). At equality the eigenvalue -1 is defective (linear
      growth), so the scheme is stable only strictly below the returned value.
    * reaction-diffusion and advection-diffusion: the limit on ``r`` of their diffusion part. The
      logistic term grows like ``exp(beta t)`` by design; central advection also needs
      ``(beta dt / ds)^2 <= 2 r`` (checked by :func:`evolve_attention`).

    Parameters
    ----------
    pde : {"diffusion", "wave", "reaction-diffusion", "advection-diffusion"}
        The PDE.
    T : int
        Sequence length, at least 3.
    boundary : {"periodic", "neumann", "reflect", "dirichlet", "fixed"}
        Boundary treatment (see :func:`laplacian_matrix`).
    axis : {"key", "query", "both"}
        One axis or the 5-point sum over both.
    ds : float
        Token spacing, > 0.

    Returns
    -------
    float
        The limit on ``r`` (diffusive PDEs) or on the Courant number ``c dt / ds`` (wave).

    Examples
    --------
    >>> round(stability_limit("diffusion", T=64, boundary="periodic"), 12)
    0.5
    >>> round(stability_limit("diffusion", T=8, boundary="neumann"), 4)
    0.5198
    """
    pde = check_option("pde", pde, PDES)
    T = check_int("T", T, low=3)
    boundary = check_option("boundary", boundary, BOUNDARIES)
    axis = check_option("axis", axis, AXES)
    ds = check_real("ds", ds, low=0.0, low_open=True)
    lo, hi = _laplacian_extremes(T, boundary, ds)
    if hi > 1e-10 / (ds * ds):  # pragma: no cover - every boundary here is negative semi-definite
        raise RuntimeError(f"{boundary} Laplacian has a positive eigenvalue {hi}")
    mu = -lo * ds * ds * (2.0 if axis == "both" else 1.0)  # dimensionless mu_max
    if pde == "wave":
        return 2.0 / math.sqrt(mu)
    return 2.0 / mu


# ------------------------------------------------------------------------------------------------
# input forms and the result
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FactoredAttention:
    """Kernel attention ``A = query @ key.T`` kept as its two ``T x m`` factors (Performer style).

    ``query`` holds ``phi(Q)`` (rows may be pre-divided by the row sums to make ``A``
    row-stochastic), ``key`` holds ``phi(K)``. The ``T x T`` matrix is never formed by
    :func:`evolve_attention`; :meth:`dense` forms it on request (tests, small ``T``).
    """

    query: Any
    key: Any

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.query.shape[0]), int(self.key.shape[0]))

    def row_sums(self):
        """``A 1 = query (key^T 1)`` in ``O(T m)``."""
        xp = array_namespace(self.query, self.key)
        return self.query @ xp.sum(self.key, axis=0)

    def dense(self):
        """The ``T x T`` matrix ``query @ key.T``."""
        xp = array_namespace(self.query, self.key)
        return self.query @ xp.matrix_transpose(self.key)

    def __repr__(self) -> str:
        return f"FactoredAttention(T={self.shape[0]}, m={int(self.query.shape[1])})"


@dataclasses.dataclass(frozen=True)
class PDEEvolution:
    """Result of :func:`evolve_attention`.

    Attributes
    ----------
    attention : array, scipy.sparse array or FactoredAttention
        ``A(N_t)`` in the form of the input.
    velocity : same form as ``attention``, or None
        ``V(N_t)`` for the wave (``None`` for the first-order PDEs).
    pde, axis, boundary : str
        What was evolved and how.
    steps : int
        ``N_t``.
    dt, alpha, c, beta, ds : float
        The parameters of the scheme.
    r : float
        Mesh ratio ``alpha dt / ds^2``.
    courant : float
        ``c dt / ds``.
    limit : float
        :func:`stability_limit` of the step number that decides (``r``, or ``c dt / ds`` for the wave).
    stable : bool
        Whether the one-step map has spectral radius <= 1 (for advection-diffusion also
        ``(beta dt / ds)^2 <= 2 r``; for reaction-diffusion the diffusion part only).
    form : str
        ``"dense"``, ``"banded"`` or ``"factored"``.
    causal_remask, renormalize : bool
        Whether future entries were zeroed and rows rescaled to sum 1 after every step.
    """

    attention: Any
    velocity: Any
    pde: str
    axis: str
    boundary: str
    steps: int
    dt: float
    alpha: float
    c: float
    beta: float
    ds: float
    r: float
    courant: float
    limit: float
    stable: bool
    form: str
    causal_remask: bool
    renormalize: bool

    def __repr__(self) -> str:
        number = f"courant={self.courant:.4g}" if self.pde == "wave" else f"r={self.r:.4g}"
        return (f"PDEEvolution(pde={self.pde!r}, form={self.form!r}, T={self.attention.shape[0]}, "
                f"steps={self.steps}, {number}, limit={self.limit:.4g}, stable={self.stable})")


# ------------------------------------------------------------------------------------------------
# the dense stencil: array-API (any namespace) and the NumPy fast path
# ------------------------------------------------------------------------------------------------
def _index(axis: int, part) -> tuple:
    return (slice(None), part) if axis == 1 else (part, slice(None))


def _stencil(a, axis: int, keep: float, sym: float, anti: float, boundary: str):
    """``keep a_j + sym (a_(j-1) - 2 a_j + a_(j+1)) + anti (a_(j+1) - a_(j-1))`` along ``axis``.

    Ghost values at the two ends follow ``boundary`` (as in :func:`laplacian_matrix` and the
    central first difference); ``"fixed"`` leaves the end tokens at ``keep a``. One pass per
    neighbour, all updates in place on the new array.
    """
    n = a.shape[axis]
    cm, cp = sym - anti, sym + anti  # coefficients of a_(j-1) and a_(j+1)
    out = (keep - 2.0 * sym) * a
    head, tail = _index(axis, slice(1, None)), _index(axis, slice(None, n - 1))
    if cm != 0.0:
        out[head] += cm * a[tail]
    if cp != 0.0:
        out[tail] += cp * a[head]
    first, last = _index(axis, slice(0, 1)), _index(axis, slice(n - 1, n))
    if boundary == "periodic":
        out[first] += cm * a[last]
        out[last] += cp * a[first]
    elif boundary == "neumann":  # diffusive ghost a_0, advective ghost -a_0: zero face flux
        out[first] += cp * a[first]
        out[last] += cm * a[last]
    elif boundary == "reflect":  # ghost a_(-1) = a_1, a_T = a_(T-2)
        out[first] += cm * a[_index(axis, slice(1, 2))]
        out[last] += cp * a[_index(axis, slice(n - 2, n - 1))]
    elif boundary == "fixed":
        out[first] = keep * a[first]
        out[last] = keep * a[last]
    return out


def _apply_dense(a, axes, keep, sym, anti, boundary):
    out = _stencil(a, axes[0], keep, sym, anti, boundary)
    for ax in axes[1:]:
        out = out + _stencil(a, ax, 0.0, sym, anti, boundary)
    return out


def _end_slices(n: int, axes) -> list:
    """The index tuples of the end tokens (first and last row or column) of every axis in ``axes``."""
    return [_index(ax, slice(j, j + 1)) for ax in axes for j in (0, n - 1)]


def _evolve_dense(a, xp, pde, steps, dt, beta, axes, boundary, sym, anti, causal_remask, renormalize, v0):
    """Any array-API namespace: whole-array updates, no host transfer and no host synchronisation.

    ``"fixed"``: after every step the end tokens of ``A`` are copied from the previous step and the
    wave's velocity increment is zero there, so no term moves them.
    """
    ends = _end_slices(a.shape[0], axes) if boundary == "fixed" else ()
    v = (xp.zeros_like(a) if v0 is None else v0) if pde == "wave" else None
    for _ in range(steps):
        if pde == "wave":
            inc = _apply_dense(a, axes, 0.0, sym, 0.0, boundary)
            for sl in ends:
                inc[sl] = 0.0
            v = v + inc
            if causal_remask:
                v = xp.tril(v)
            new = a + dt * v
        else:
            new = _apply_dense(a, axes, 1.0, sym, anti, boundary)
            if pde == "reaction-diffusion":
                new = new + (dt * beta) * (a * (1.0 - a))
        for sl in ends:
            new[sl] = a[sl]
        a = new
        if causal_remask:
            a = xp.tril(a)
        if renormalize:
            a = a / xp.sum(a, axis=1, keepdims=True)
    return a, v


#: ``scipy.ndimage`` mode of each boundary's ghost values for the diffusive part (Neumann's advective
#: ghost ``-a_0`` and the fixed ends are corrected afterwards).
_NDIMAGE_MODES = {"periodic": "wrap", "neumann": "nearest", "reflect": "mirror", "dirichlet": "constant",
                  "fixed": "constant"}
#: Bytes of ``A`` per row block of the fast path: a block, its neighbours and a scratch block stay in a
#: 2 MiB L2 cache, so every step reads ``A`` and writes the new array once from main memory.
_BLOCK_BYTES = 1 << 18


def _evolve_dense_numpy(a, pde, steps, dt, beta, axes, boundary, sym, anti, causal_remask, renormalize, v0,
                        check_finite):
    """The NumPy fast path: one read of ``A`` and one write of the new array per step.

    The key-axis three-point stencil (its centre weight also holding the query-axis centre, ``keep``
    and the linear part of the reaction) is one ``scipy.ndimage.correlate1d`` pass with the boundary's
    ghost mode; the query-axis neighbours, the rest of the reaction, the fixed ends, the causal mask
    and the row normalisation are applied to the same row block while it is in cache. Two ``T x T``
    buffers are reused (three for the wave), so no array is allocated per step. ``check_finite``:
    ``A(0)`` is checked block by block during the first step (the separate check was a sixth of a step).
    """
    from scipy.ndimage import correlate1d

    T = a.shape[0]
    dtype = a.dtype
    wave = pde == "wave"
    key, query = 1 in axes, 0 in axes
    react = dt * beta if pde == "reaction-diffusion" else 0.0
    if wave:
        anti = 0.0
    cm, cp = sym - anti, sym + anti
    centre = (0.0 if wave else 1.0) - 2.0 * sym * len(axes) + react
    mode = _NDIMAGE_MODES[boundary]
    fixed = boundary == "fixed"
    extra = query or react != 0.0 or wave or causal_remask or renormalize
    block = max(1, min(T, _BLOCK_BYTES // (T * dtype.itemsize)))
    scratch = np.empty((block, T), dtype=dtype) if (query or react != 0.0) else None
    inc = np.empty((block, T), dtype=dtype) if wave else None
    v = None
    if wave:
        v = np.zeros((T, T), dtype=dtype) if v0 is None else np.array(v0, dtype=dtype, order="C", copy=True)
    buffers = [None, None]

    def increment(cur, lo, hi, out):
        """``out = centre a + neighbours (+ reaction)`` on rows ``lo:hi`` of ``cur``."""
        blk = cur[lo:hi]
        if key:
            correlate1d(blk, [cm, centre, cp], axis=1, output=out, mode=mode, cval=0.0)
            if boundary == "neumann" and anti != 0.0:  # advective ghost -a_0 instead of a_0
                out[:, 0] += (cp - cm) * blk[:, 0]
                out[:, T - 1] += (cm - cp) * blk[:, T - 1]
        else:
            np.multiply(blk, centre, out=out)
        if query:
            _add_row_neighbours(cur, lo, hi, out, cm, cp, boundary, scratch)
        if react != 0.0:
            tmp = scratch[:hi - lo]
            np.multiply(blk, blk, out=tmp)
            tmp *= react
            out -= tmp

    for step in range(steps):
        nxt = buffers[step % 2]
        if nxt is None:
            nxt = buffers[step % 2] = np.empty((T, T), dtype=dtype)
        rows = block if (extra or (check_finite and step == 0)) else T  # one correlate1d call: no blocks
        for lo in range(0, T, rows):
            hi = min(T, lo + rows)
            blk, out = a[lo:hi], nxt[lo:hi]
            if wave:
                dv = inc[:hi - lo]
                increment(a, lo, hi, dv)
                if fixed:
                    _copy_ends(dv, None, lo, hi, T, key, query, zero=True)
                vb = v[lo:hi]
                vb += dv
                if causal_remask:
                    _zero_future(vb, lo)
                np.multiply(vb, dt, out=out)
                out += blk
            else:
                increment(a, lo, hi, out)
            if fixed:
                _copy_ends(out, blk, lo, hi, T, key, query)
            if causal_remask:
                _zero_future(out, lo)
            if renormalize:
                out /= np.sum(out, axis=1, keepdims=True)
            if check_finite and step == 0 and not np.isfinite(blk).all():  # the block is in cache
                raise InputError("A0 must be finite (it holds nan or inf)")
        a = nxt
    return a, v


def _add_row_neighbours(cur, lo, hi, out, cm, cp, boundary, scratch):
    """``out += cm a_(i-1) + cp a_(i+1)`` for the rows ``i`` in ``lo:hi`` (query axis), ghosts of ``boundary``."""
    T = cur.shape[0]
    s = max(lo, 1)
    if cm != 0.0 and hi > s:
        tmp = scratch[:hi - s]
        np.multiply(cur[s - 1:hi - 1], cm, out=tmp)
        out[s - lo:] += tmp
    e = min(hi, T - 1)
    if cp != 0.0 and e > lo:
        tmp = scratch[:e - lo]
        np.multiply(cur[lo + 1:e + 1], cp, out=tmp)
        out[:e - lo] += tmp
    if lo == 0:
        if boundary == "periodic":
            out[0] += cm * cur[T - 1]
        elif boundary == "neumann":
            out[0] += cp * cur[0]
        elif boundary == "reflect":
            out[0] += cm * cur[1]
    if hi == T:
        if boundary == "periodic":
            out[hi - 1 - lo] += cp * cur[0]
        elif boundary == "neumann":
            out[hi - 1 - lo] += cm * cur[T - 1]
        elif boundary == "reflect":
            out[hi - 1 - lo] += cp * cur[T - 2]


def _copy_ends(out, blk, lo, hi, T, key, query, zero=False):
    """Fixed ends on rows ``lo:hi``: the end columns (key axis) and end rows (query axis) copied from ``blk``
    (or set to zero: the wave's velocity increment)."""
    if key:
        out[:, 0] = 0.0 if zero else blk[:, 0]
        out[:, T - 1] = 0.0 if zero else blk[:, T - 1]
    if query:
        if lo == 0:
            out[0] = 0.0 if zero else blk[0]
        if hi == T:
            out[hi - 1 - lo] = 0.0 if zero else blk[hi - 1 - lo]


def _zero_future(out, lo):
    """Zero the entries ``j > i`` of the rows ``i = lo, lo + 1, ...`` held in ``out``."""
    for i in range(out.shape[0]):
        out[i, lo + i + 1:] = 0.0


# ------------------------------------------------------------------------------------------------
# the sparse (banded) path
# ------------------------------------------------------------------------------------------------
def _operator(T, boundary, sym, anti):
    """Sparse ``sym (second difference) + anti (a_(j+1) - a_(j-1))``, unit spacing, ghosts of ``boundary``."""
    import scipy.sparse as sp

    op = sp.csr_array((T, T))
    if sym != 0.0:
        op = op + sym * laplacian_matrix(T, boundary=boundary, ds=1.0, sparse=True)
    if anti != 0.0:
        op = op + (2.0 * anti) * _first_difference_matrix(T, boundary, 1.0)
    return sp.csr_array(op)


@functools.lru_cache(maxsize=32)
def _sparse_step(T, boundary, sym, anti, keep):
    """Cached :class:`_SparseStep` (read-only matrices: scipy.sparse products never modify them)."""
    return _SparseStep(T, boundary, sym, anti, keep)


class _SparseStep:
    """The operator ``op`` and the step matrix ``keep I + op`` (and transposes) in CSR, built once."""

    def __init__(self, T, boundary, sym, anti, keep):
        import scipy.sparse as sp

        self.op = _operator(T, boundary, sym, anti)
        self.op_t = sp.csr_array(self.op.T)
        self.step = sp.csr_array(keep * sp.eye_array(T, format="csr") + self.op) if keep != 0.0 else self.op
        self.step_t = sp.csr_array(self.step.T)

    def apply(self, a, axes):
        """``keep a + op(a)`` along the axes: one sparse product per axis (the step matrix on the first)."""
        first, rest = axes[0], axes[1:]
        out = a @ self.step_t if first == 1 else self.step @ a
        for ax in rest:
            out = out + (a @ self.op_t if ax == 1 else self.op @ a)
        return out


# ------------------------------------------------------------------------------------------------
# the evolution
# ------------------------------------------------------------------------------------------------
def _validate_dense(A0, check_finite=True):
    if not hasattr(A0, "shape") or not hasattr(A0, "dtype"):
        try:
            A0 = np.asarray(A0, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"A0 must be a square 2-D array, got {type(A0).__name__}") from None
    xp = array_namespace(A0)
    shape = tuple(A0.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"A0 must be a square 2-D array (T, T), got shape {shape}")
    if xp.isdtype(A0.dtype, ("bool", "integral")):
        A0 = xp.astype(A0, xp.float64)
    elif not xp.isdtype(A0.dtype, "real floating"):
        raise InputError(f"A0 must have a real dtype, got {A0.dtype}")
    if check_finite and not bool(xp.all(xp.isfinite(A0))):  # one host synchronisation
        raise InputError("A0 must be finite (it holds nan or inf)")
    return xp, A0


def _validate_sparse(A0):
    import scipy.sparse as sp

    shape = tuple(A0.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"A0 must be a square 2-D array (T, T), got shape {shape}")
    a = A0 if isinstance(A0, sp.csr_array) else sp.csr_array(A0)  # no copy for CSR arrays
    if a.dtype != np.float64:
        a = a.astype(np.float64)
    if not np.all(np.isfinite(a.data)):
        raise InputError("A0 must be finite (it holds nan or inf)")
    return a


def _validate_factored(A0):
    q, k = A0.query, A0.key
    xp = array_namespace(q, k)
    if len(q.shape) != 2 or tuple(q.shape) != tuple(k.shape):
        raise InputError(f"A0 factors must both have shape (T, m), got {tuple(q.shape)} and {tuple(k.shape)}")
    for name, f in (("query", q), ("key", k)):
        if not xp.isdtype(f.dtype, "real floating"):
            raise InputError(f"A0.{name} must have a real floating dtype, got {f.dtype}")
        if not bool(xp.all(xp.isfinite(f))):
            raise InputError(f"A0.{name} must be finite (it holds nan or inf)")
    return xp


def _validate_velocity(v, a0, form):
    """``V(0)`` in the same form and shape as ``A(0)``."""
    import scipy.sparse as sp

    if form == "factored":
        if not isinstance(v, FactoredAttention):
            raise InputError("velocity must be a FactoredAttention like A0")
        _validate_factored(v)
        if tuple(v.key.shape) != tuple(a0.key.shape):
            raise InputError(f"velocity factors must have shape {tuple(a0.key.shape)}, got {tuple(v.key.shape)}")
        return v
    if form == "banded":
        if not sp.issparse(v):
            raise InputError("velocity must be a scipy.sparse matrix like A0")
        v = _validate_sparse(v)
    else:
        _, v = _validate_dense(v)
    if tuple(v.shape) != tuple(a0.shape):
        raise InputError(f"velocity must have the shape of A0 {tuple(a0.shape)}, got {tuple(v.shape)}")
    return v


def evolve_attention(A0, *, pde: str = "diffusion", steps: int, dt: float = 1.0, alpha: float = 0.1,
                     c: float = 0.15, beta: float = 0.0, axis: str = "key", boundary: str = "neumann",
                     ds: float = 1.0, causal_remask: bool = False, renormalize: bool = False,
                     allow_unstable: bool = False, velocity=None) -> PDEEvolution:
    """Evolve an attention matrix by ``steps`` explicit PDE steps (PDE paper eqs. 23, 26-27, 30).

    Parameters
    ----------
    A0 : array of shape (T, T), scipy.sparse matrix, or FactoredAttention
        ``A(0)``: dense (any array-API namespace; the result stays in it), sparse (banded
        surrogates; the result is a ``scipy.sparse.csr_array``) or factored ``phi(Q) phi(K)^T``.
    pde : {"diffusion", "wave", "reaction-diffusion", "advection-diffusion"}
        The PDE (module docstring). ``beta`` is the reaction rate or the advection speed.
    steps : int
        Number of steps ``N_t`` >= 0.
    dt : float
        Pseudo-time step, >= 0.
    alpha : float
        Diffusion coefficient, >= 0 (unused by the wave).
    c : float
        Wave speed, >= 0 (wave only).
    beta : float
        Reaction rate (``R(A) = beta A (1 - A)``) or advection speed, any real.
    axis : {"key", "query", "both"}
        ``"key"``: ``A <- A + dt alpha A L^T`` (each row diffuses over its keys); ``"query"``:
        ``L A``; ``"both"``: the sum.
    boundary : {"periodic", "neumann", "reflect", "dirichlet", "fixed"}
        End treatment of the stencil (see :func:`laplacian_matrix`).
    ds : float
        Token spacing, > 0.
    causal_remask : bool
        Zero the future entries ``A[i, j], j > i`` (and of the wave velocity) after every step.
        Not available for factored input.
    renormalize : bool
        Divide every row by its sum after every step (after the re-mask). Rows must keep a
        non-zero sum; for factored input the query factor is rescaled.
    allow_unstable : bool
        Run a step beyond :func:`stability_limit` instead of raising (blow-up demonstrations).
    velocity : same form as ``A0``, optional
        Wave only: the velocity ``V(0)``; ``None`` (default) starts from rest, ``V(0) = 0`` (the
        paper leaves it unstated). Pass a previous result's ``.velocity`` (with its ``.attention`` as
        ``A0``) to continue an evolution.

    Returns
    -------
    PDEEvolution
        ``.attention`` is ``A(N_t)``; ``.velocity`` the wave velocity; the step numbers, the limit
        and whether the step map is stable.

    Raises
    ------
    spectral.floor.validation.InputError
        (a ``ValueError``) for bad input, naming the parameter and the allowed values, and for an
        unstable step (giving the step number and its limit) unless ``allow_unstable``.

    Notes
    -----
    The dense path applies the three-point stencil (``O(T^2)`` per step, no matrix product): on NumPy
    by row blocks through ``scipy.ndimage.correlate1d`` into two reused buffers (``A(0)`` is checked for
    nan and inf block by block during the first step), in other namespaces (CuPy, array-api-strict)
    with whole-array slices, no host transfer and one host synchronisation (the finiteness check) in
    all. ``boundary="fixed"`` holds the end tokens under every term (the reaction, the advection and
    the wave's velocity too); ``causal_remask`` and ``renormalize`` still act on them after the step.
    The sparse path multiplies by the sparse operator matrix; the factored path updates
    ``phi(K)`` (key axis) or ``phi(Q)`` (query axis) in ``O(T m)`` per step. The reaction term is
    entrywise and non-linear, so it has no factored form; ``axis="both"`` would double the rank of
    the factors every step and is refused for factored input too.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.full((8, 8), 1 / 8)
    >>> res = evolve_attention(A, steps=4, dt=1.0, alpha=0.25)
    >>> bool(np.allclose(res.attention, A)), res.stable
    (True, True)
    """
    pde = check_option("pde", pde, PDES)
    axis = check_option("axis", axis, AXES)
    boundary = check_option("boundary", boundary, BOUNDARIES)
    steps = check_int("steps", steps, low=0)
    dt = check_real("dt", dt, low=0.0)
    alpha = check_real("alpha", alpha, low=0.0)
    c = check_real("c", c, low=0.0)
    beta = check_real("beta", beta)
    ds = check_real("ds", ds, low=0.0, low_open=True)
    for name, flag in (("causal_remask", causal_remask), ("renormalize", renormalize),
                       ("allow_unstable", allow_unstable)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InputError(f"{name} must be True or False, got {flag!r}")

    import scipy.sparse as sp

    if isinstance(A0, FactoredAttention):
        form = "factored"
        xp = _validate_factored(A0)
        if pde == "reaction-diffusion":
            raise InputError("pde must be 'diffusion', 'wave' or 'advection-diffusion' for factored A0 "
                             "(the reaction term is entrywise), got 'reaction-diffusion'")
        if axis == "both":
            raise InputError("axis must be 'key' or 'query' for factored A0, got 'both'")
        if causal_remask:
            raise InputError("causal_remask must be False for factored A0 (a causal mask is not low rank)")
    elif sp.issparse(A0):
        form = "banded"
        A0 = _validate_sparse(A0)
    else:
        form = "dense"
        # the NumPy fast path checks A(0) block by block during its first step
        xp, A0 = _validate_dense(A0, check_finite=not (steps > 0 and isinstance(A0, np.ndarray)))
    T = int(A0.shape[0])
    if T < 3:
        raise InputError(f"A0 must have T >= 3 tokens, got T = {T}")
    if velocity is not None:
        if pde != "wave":
            raise InputError(f"velocity is only used by pde='wave', got pde={pde!r}")
        velocity = _validate_velocity(velocity, A0, form)

    r = alpha * dt / (ds * ds)
    courant = c * dt / ds
    limit = stability_limit(pde, T=T, boundary=boundary, axis=axis, ds=ds)
    if pde == "wave":
        stable = courant <= limit * (1 + 1e-12)
        number = f"Courant number c dt / ds = {courant:.6g}"
    else:
        stable = r <= limit * (1 + 1e-12)
        number = f"r = alpha dt / ds^2 = {r:.6g}"
        if pde == "advection-diffusion" and (beta * dt / ds) ** 2 > 2.0 * r * (1 + 1e-12):
            stable = False
            number += f" with (beta dt / ds)^2 = {(beta * dt / ds) ** 2:.6g} > 2 r"
    if steps > 0 and not stable and not allow_unstable:
        raise InputError(f"unstable step: {number} exceeds the stability limit {limit:.6g} of {pde} "
                         f"({axis} axis, {boundary} boundary, T = {T}); lower dt or pass allow_unstable=True")

    # stencil coefficients per axis: keep a + sym (second difference) + anti (central difference)
    if pde == "wave":
        sym, anti = c * c * dt / (ds * ds), 0.0  # V increment per step
    else:
        sym = alpha * dt / (ds * ds)
        anti = beta * dt / (2.0 * ds) if pde == "advection-diffusion" else 0.0
    axes = {"key": (1,), "query": (0,), "both": (1, 0)}[axis]

    if form == "factored":
        attention, velocity = _evolve_factored(A0, xp, pde, steps, dt, axis, boundary, sym, anti, renormalize,
                                               velocity)
    elif form == "banded":
        attention, velocity = _evolve_sparse(A0, pde, steps, dt, beta, axes, boundary, sym, anti,
                                             causal_remask, renormalize, velocity)
    elif xp is np and steps > 0:
        attention, velocity = _evolve_dense_numpy(A0, pde, steps, dt, beta, axes, boundary, sym, anti,
                                                  causal_remask, renormalize, velocity, check_finite=True)
    else:
        attention, velocity = _evolve_dense(A0, xp, pde, steps, dt, beta, axes, boundary, sym, anti,
                                            causal_remask, renormalize, velocity)
    return PDEEvolution(attention=attention, velocity=velocity, pde=pde, axis=axis, boundary=boundary,
                        steps=steps, dt=dt, alpha=alpha, c=c, beta=beta, ds=ds, r=r, courant=courant,
                        limit=limit, stable=bool(stable), form=form, causal_remask=bool(causal_remask),
                        renormalize=bool(renormalize))


def _evolve_sparse(a, pde, steps, dt, beta, axes, boundary, sym, anti, causal_remask, renormalize, v0):
    import scipy.sparse as sp

    T = a.shape[0]
    step = _sparse_step(T, boundary, sym, anti, 0.0 if pde == "wave" else 1.0)
    v = (sp.csr_array((T, T)) if v0 is None else v0) if pde == "wave" else None
    if boundary == "fixed":  # interior projector D = diag(0, 1, ..., 1, 0): the ends are held
        inner = np.ones(T)
        inner[[0, -1]] = 0.0
        inner = sp.diags_array(inner, format="csr")

        def hold(x):
            for ax in axes:
                x = x @ inner if ax == 1 else inner @ x
            return x
    else:
        hold = None
    for _ in range(steps):
        if pde == "wave":
            inc = step.apply(a, axes)
            v = v + (hold(inc) if hold else inc)
            if causal_remask:
                v = sp.tril(v, format="csr")
            new = a + dt * v
        else:
            new = step.apply(a, axes)
            if pde == "reaction-diffusion":
                new = new + (dt * beta) * (a - a.multiply(a))
        a = a + hold(new - a) if hold else new
        if causal_remask:
            a = sp.tril(a, format="csr")
        if renormalize:
            sums = np.asarray(a.sum(axis=1)).ravel()
            a = sp.diags_array(1.0 / sums, format="csr") @ a
    a = sp.csr_array(a)
    return a, (sp.csr_array(v) if v is not None else None)


def _evolve_factored(f, xp, pde, steps, dt, axis, boundary, sym, anti, renormalize, v0):
    q, k = f.query, f.key
    moving = k if axis == "key" else q
    if pde == "wave" and v0 is not None:
        # V = q w^T (key axis) or w k^T (query axis): the moving factor of the velocity
        fixed, vfixed = (q, v0.query) if axis == "key" else (k, v0.key)
        if vfixed is not fixed and not bool(xp.all(vfixed == fixed)):
            raise InputError("velocity must share the fixed factor of A0 (pass a previous result's velocity)")
    w = ((xp.zeros_like(moving) if v0 is None else (v0.key if axis == "key" else v0.query))
         if pde == "wave" else None)
    ends = _end_slices(moving.shape[0], (0,)) if boundary == "fixed" else ()
    for _ in range(steps):
        if pde == "wave":
            w = w + _stencil(moving, 0, 0.0, sym, 0.0, boundary)  # zero increment at fixed ends
            new = moving + dt * w
            for sl in ends:  # a velocity given at the ends does not move them
                new[sl] = moving[sl]
            moving = new
        else:
            moving = _stencil(moving, 0, 1.0, sym, anti, boundary)
        if renormalize:
            qq, kk = (q, moving) if axis == "key" else (moving, k)
            sums = qq @ xp.sum(kk, axis=0)
            qq = qq / xp.reshape(sums, (-1, 1))
            q, moving = (qq, moving) if axis == "key" else (q, qq)
    if axis == "key":
        att = FactoredAttention(q, moving)
        vel = FactoredAttention(q, w) if w is not None else None
    else:
        att = FactoredAttention(moving, k)
        vel = FactoredAttention(w, k) if w is not None else None
    return att, vel
