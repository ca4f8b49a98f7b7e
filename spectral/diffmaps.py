"""Diffusion maps of attention matrices: coordinates, out-of-sample extension, diffusion distances.

For symmetric scores ``C`` (``Q = K``) the attention matrix ``A = D^-1 C`` is diagonalised through
its symmetric conjugate (FNA eqs. 33-35): with ``D^-1/2 C D^-1/2 = V Lambda V^T``, the right
eigenvectors ``psi_j`` and the left eigenvectors ``phi_j`` are bi-orthonormal and
``A^tau = sum_j lambda_j^tau psi_j phi_j^T`` (eq. 20). The diffusion map
``Psi_tau = (lambda_1^tau psi_1, ..., lambda_m^tau psi_m)`` (eq. 19) embeds the points so that
Euclidean distance equals the diffusion distance of eq. (36) (eq. 37) -- in the
stationary-probability normalisation. With the paper's literal normalisation (eq. 35, unit ``v_j``)
the two sides of eq. (37) differ by the constant factor ``sqrt(sum_ij C_ij)`` (ledger FNA-9).

Density normalisation (Coifman & Lafon): ``diffusion_map(C, a=...)`` first forms
``C^(a) = Q^-a C Q^-a`` with the degrees ``Q = C 1``, which is symmetric again, and maps
``A^(a) = D_a^-1 C^(a)`` the same way (``a = 0``: the graph Laplacian; ``1/2``: Fokker-Planck;
``1``: Laplace-Beltrami). The exponent is written ``a`` as everywhere in the toolkit
(:func:`spectral.anisotropic_normalize`, :func:`spectral.heat_markov`): ``alpha`` is the order of the
fractional kernels here.

Scores may be dense arrays (any array namespace), stored sparse scores
(:class:`spectral.SparseScores`, e.g. :func:`spectral.knn_kernel` or :func:`spectral.heat_kernel_sparse`;
host only, ARPACK on the stored matrix: the path for ``n = 1e5`` points), or a matrix-free operator
(:class:`spectral.KernelOperator`, ``a = 0``). :meth:`DiffusionMap.transform` extends the
coordinates to new points (Nystrom).

References
----------
"Fractional neural attention" (FNA), eqs. (19), (20), (33)-(37). Coifman & Lafon, "Diffusion maps",
Appl. Comput. Harmon. Anal. 21 (2006); Coifman & Lafon, "Geometric harmonics: a novel tool for
multiscale out-of-sample extension of empirical functions", ACHA 21 (2006) (the Nystrom extension).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectral.floor.backend import array_namespace, from_numpy, to_numpy
from spectral.floor.display import array_summary, leading_values, result_repr
from spectral.eigen import markov_spectrum
from spectral.floor.memory import check_dense_memory, memory_device
from spectral.operators import SparseScores
from spectral.scores import check_row_stochastic, checked_row_sums, scan_scores, symmetry_tolerance
from spectral.spectrum import Spectrum
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["DiffusionMap", "diffusion_distance", "diffusion_map"]

NORMALIZATIONS = ("probability", "paper")

#: Sign rule of the eigenvectors: entries within this relative distance of a column's largest
#: ``|entry|`` count as tied, and the first of them (lowest index) is made positive. Exact ties are
#: common (a cosine mode on a symmetric grid has ``+max`` and ``-max``); round-off of an eigensolver
#: (1e-15 dense, up to ~1e-8 / gap on the iterative paths) then decides plain ``argmax``, and two
#: solvers of one matrix would disagree in sign.
SIGN_TIE = 1e-6

#: Elements of one block of kernel rows in :meth:`DiffusionMap.transform` with ``kernel=`` (8 MiB of float64).
TRANSFORM_BLOCK_ELEMENTS = 1 << 20


def _is_operator(C) -> bool:
    return hasattr(C, "matvec") and hasattr(C, "row_sums") and not hasattr(C, "__array_namespace__")


def _is_scipy_sparse(C) -> bool:
    return type(C).__module__.startswith("scipy.sparse")


@dataclass(frozen=True, repr=False)
class DiffusionMap:
    """Diffusion-map coordinates and the eigen-decomposition behind them: the result of :func:`diffusion_map`.

    The result class, for score matrices of any kind; the scikit-learn estimator that fits points with a
    kernel and a bandwidth is :class:`spectral.DiffusionMaps`, whose ``diffusion_map_`` is one of these.

    Attributes
    ----------
    coordinates : array of shape (n, m)
        ``Psi_tau(x_i) = (lambda_1^tau psi_1(x_i), ..., lambda_m^tau psi_m(x_i))`` (FNA eq. 19).
    eigenvalues : array of shape (m + 1,)
        ``lambda_0 = 1 >= lambda_1 >= ... >= lambda_m`` (descending) of ``A^(a)``.
    psi : array of shape (n, m + 1)
        Right eigenvectors of ``A^(a)`` (``psi_0`` constant), each with its first largest-|entry|
        positive (:data:`SIGN_TIE`).
    phi : array of shape (n, m + 1)
        Left eigenvectors, ``phi^T psi = I`` (bi-orthonormal, eq. 35 / Methods).
    stationary : array of shape (n,)
        ``phi_0``: the stationary probability ``pi = D_a / sum D_a`` ("probability") or the
        paper's ``D_a^1/2 v_0 = D_a / sqrt(sum D_a)`` ("paper").
    tau : float
        Diffusion time (``>= 0``; ``0``: the eigenvectors themselves).
    normalization : str
        ``"probability"`` (``psi_k^T diag(pi) psi_l = delta_kl``, ``psi_0 = 1``) or
        ``"paper"`` (eq. 35 literally: ``psi = D^-1/2 v``, ``phi = D^1/2 v``, unit ``v``).
    degrees : array of shape (n,)
        Row sums ``D_a`` of ``C^(a)`` (of ``C`` when ``a = 0``).
    spectrum : Spectrum
        The Markov spectrum of ``A^(a)`` (method, residual, components; its vectors keep the
        solver's sign convention on ``v``).
    a : float
        The density-normalisation exponent.
    kernel_degrees : array of shape (n,) or None
        Row sums ``Q = C 1`` of the scores before the density normalisation (the ``q^-a`` weights of
        :meth:`transform`); equal to ``degrees`` when ``a = 0``.
    """

    coordinates: Any
    eigenvalues: Any
    psi: Any
    phi: Any
    stationary: Any
    tau: float
    normalization: str
    degrees: Any
    spectrum: Spectrum
    a: float = 0.0
    kernel_degrees: Any = None

    def __repr__(self) -> str:
        return result_repr(
            self, n=int(self.coordinates.shape[0]), n_components=int(self.coordinates.shape[1]),
            a=f"{self.a:g}", tau=f"{self.tau:g}", normalization=repr(self.normalization),
            eigenvalues=leading_values(self.eigenvalues), method=repr(self.spectrum.method),
            coordinates=array_summary(self.coordinates),
        )

    def transition_matrix(self, tau=None):
        """``sum_j lambda_j^tau psi_j phi_j^T`` over the kept pairs (FNA eq. 20).

        With all ``n`` pairs (``n_components = n - 1``) this is ``(A^(a))^tau`` exactly; with
        fewer it is the rank-``m+1`` truncation (``tau = 0``: the spectral projector).  Builds a
        dense ``(n, n)`` array.
        """
        tau = self.tau if tau is None else _check_tau(tau, self.eigenvalues)
        xp = array_namespace(self.psi)
        n = self.psi.shape[0]
        check_dense_memory(n, dtype=self.psi.dtype, copies=2, what="reconstructed A^tau",
                           alternative="work with the coordinates (or psi, phi) instead of the dense matrix",
                           device=memory_device(self.psi))
        lam = _power(self.eigenvalues, tau, xp)
        return (self.psi * lam[None, :]) @ self.phi.T

    def transform(self, scores=None, *, points=None, x=None, kernel=None, distance=None, tau=None,
                  block_rows=None):
        """Diffusion coordinates of new points by the Nystrom extension of the eigenvectors.

        Give either the kernel rows of the new points against the training points (``scores``), or
        the new ``points`` with the training points ``x`` and the ``kernel`` and ``distance`` the
        training scores were built with (rows computed in blocks, never all at once).

        Parameters
        ----------
        scores : array of shape (q, n), SparseScores or scipy.sparse array, optional
            ``scores[r, i] = k(y_r, x_i)``: the same kernel as the training scores ``C``, new point
            ``y_r`` against training point ``x_i`` (before any density normalisation: the ``q^-a``
            weights are applied here). A dense array must be in the namespace of the map's arrays;
            sparse rows (e.g. ``knn_kernel(y, k=..., eps=..., y=x)`` or
            ``heat_kernel_sparse(y, eps=..., y=x)``) are host only: the result is then a NumPy array.
        points : array of shape (q, D), optional
            New points, with ``x``, ``kernel`` and ``distance``.
        x : array of shape (n, D), optional
            The training points, in the order of the rows of ``C``.
        kernel : callable, optional
            Distance block ``(b, n)`` -> score block, e.g.
            ``functools.partial(heat_kernel, eps=0.01)``.
        distance : callable, optional
            ``distance(points_block, x)`` -> distance block ``(b, n)``, e.g. ``Circle().distance``.
        tau : float >= 0, optional
            Diffusion time; default the map's ``tau``.
        block_rows : int, optional
            Rows per kernel block (``kernel`` path); default ``TRANSFORM_BLOCK_ELEMENTS // n``.

        Returns
        -------
        array of shape (q, m)
            ``Psi_tau(y_r)``, comparable with :attr:`coordinates`.

        Raises
        ------
        spectral.floor.validation.InputError
            Neither or both ways of giving the rows, rows of the wrong width, negative or non-finite
            scores, a new point with zero kernel weight on every training point (beyond a cutoff or
            outside every neighbourhood), ``tau < 1`` with an eigenvalue 0 (``|lambda_j| <= 100 eps``), a
            fractional ``tau`` with
            negative eigenvalues, no ``kernel_degrees`` with ``a > 0``.

        Notes
        -----
        The right eigenvectors satisfy :math:`\\lambda_j \\psi_j(x_m) = \\sum_i A^{(a)}_{mi}
        \\psi_j(x_i)`; the Nystrom extension (Coifman & Lafon 2006, "Geometric harmonics", eq. 4)
        takes the same identity at a new point ``y``, whose transition probabilities to the
        training points are those of the training rows:

        .. math::

            A^{(a)}(y, x_i) = \\frac{k(y, x_i)\\, q(x_i)^{-a}}{\\sum_l k(y, x_l)\\, q(x_l)^{-a}},
            \\qquad
            \\Psi_{\\tau, j}(y) = \\lambda_j^{\\tau - 1} \\sum_i A^{(a)}(y, x_i)\\, \\psi_j(x_i),

        (the factor ``q(y)^-a`` of ``C^(a)`` cancels in the row normalisation, so ``q(y)`` is never
        needed). At a training point with its own row of ``C`` this returns its coordinates to
        round-off (the eigen-residual). For ``tau >= 1`` nothing is divided; ``tau < 1`` divides by
        ``lambda_j^(1 - tau)``, which amplifies the error of small eigenvalues. Rows of a symmetrised
        kNN kernel (:func:`spectral.knn_kernel`) are not the directed rows of a new point: there the
        extension at a training point differs from its coordinates by the symmetrisation.
        (pydiffmap's ``nystroem_oos`` omits the ``1 / lambda_j``: its extension of a training point is
        ``lambda_j`` times its coordinate.)

        References
        ----------
        Coifman & Lafon, "Geometric harmonics" (2006); Bengio et al., "Out-of-sample extensions for
        LLE, Isomap, MDS, Eigenmaps, and spectral clustering", NIPS 16 (2004).
        """
        by_rows = scores is not None
        by_kernel = any(v is not None for v in (points, x, kernel, distance))
        if by_rows == by_kernel:
            raise InputError("give either scores (kernel rows of the new points against the training points) or "
                             "points with x, kernel and distance, not both or neither")
        tau = self.tau if tau is None else _check_tau(tau, self.eigenvalues[1:])
        xp = array_namespace(self.psi)
        n = int(self.psi.shape[0])
        lam = self.eigenvalues[1:]
        zero = 100.0 * float(xp.finfo(lam.dtype).eps)  # |lambda| <= 1: below this it is round-off of a 0
        if tau < 1 and bool(xp.any(xp.abs(lam) <= zero)):
            raise InputError(f"tau = {tau:g} < 1 divides by lambda_j^(1 - tau) and an eigenvalue is 0 up to round-off "
                             f"(|lambda_j| <= {zero:.2g}); use tau >= 1 or fewer n_components")
        lam_pow = _power(lam, tau - 1.0, xp)
        if self.a > 0.0 and self.kernel_degrees is None:
            raise InputError("a > 0 needs the kernel degrees Q = C 1 (kernel_degrees) for the q^-a weights")
        q = self.kernel_degrees if self.kernel_degrees is not None else self.degrees
        w = q ** (-self.a) if self.a > 0.0 else xp.ones_like(q)
        weighted = self.psi[:, 1:] * w[:, None]  # psi_j(x_i) q(x_i)^-a
        if by_rows:
            return self._extend(scores, w, weighted, lam_pow, n, start=0)
        if points is None or x is None or not callable(kernel) or not callable(distance):
            raise InputError("the kernel path needs points, x (training points) and callables kernel and distance")
        if int(getattr(x, "shape", (0,))[0]) != n:
            raise InputError(f"x must hold the {n} training points (rows of C), got shape {tuple(getattr(x, 'shape', ()))}")
        nq = int(points.shape[0])
        rows = (check_int("block_rows", block_rows, low=1) if block_rows is not None
                else max(1, TRANSFORM_BLOCK_ELEMENTS // max(n, 1)))
        parts = [self._extend(kernel(distance(points[r0:min(nq, r0 + rows)], x)), w, weighted, lam_pow, n, start=r0)
                 for r0 in range(0, nq, rows)]
        return parts[0] if len(parts) == 1 else array_namespace(parts[0]).concat(parts, axis=0)

    def _extend(self, R, w, weighted, lam_pow, n, *, start):
        """Extension of one block of kernel rows ``R`` (dense in the map's namespace, or host sparse)."""
        if isinstance(R, SparseScores) or _is_scipy_sparse(R):
            M = R.matrix if isinstance(R, SparseScores) else SparseScores(R, symmetric=False).matrix
            if M.shape[1] != n:
                raise InputError(f"scores must have {n} columns (the training points), got shape {tuple(M.shape)}")
            num = np.asarray(M @ np.asarray(to_numpy(weighted)))
            den = np.asarray(M @ np.asarray(to_numpy(w))).reshape(-1)
            out_lam = np.asarray(to_numpy(lam_pow))
            xp = np
        else:
            try:
                xp = array_namespace(R, self.psi)
            except TypeError as exc:
                raise InputError("scores must be an array of the library of the diffusion map's arrays "
                                 f"({exc})") from exc
            xp, _ = scan_scores(R, name="scores")
            if int(R.shape[1]) != n:
                raise InputError(f"scores must have {n} columns (the training points), got shape {tuple(R.shape)}")
            num = R @ weighted
            den = R @ w
            out_lam = lam_pow
        bad = den <= 0
        if bool(xp.any(bad)):
            first = int(np.flatnonzero(np.asarray(to_numpy(bad)))[0]) + start
            raise InputError(f"new point {first} has zero kernel weight on every training point (outside the kernel's "
                             "reach: beyond the cutoff or outside every neighbourhood); it cannot be extended")
        return num / den[:, None] * out_lam[None, :]


def _check_tau(tau, eigenvalues=None) -> float:
    tau = check_real("tau", tau, low=0.0)
    if eigenvalues is not None and not float(tau).is_integer():
        xp = array_namespace(eigenvalues)
        if bool(xp.any(eigenvalues < 0)):
            raise InputError(
                f"tau must be an integer when eigenvalues are negative (lambda^tau is not real), got tau={tau}"
            )
    return tau


def _power(lam, tau: float, xp):
    """``lam ** tau`` with the sign kept for integer ``tau`` (negative eigenvalues)."""
    if float(tau).is_integer():
        return lam ** int(tau)
    return lam**tau


def _signs(psi, xp):
    """``+-1`` per column: the first entry within :data:`SIGN_TIE` of the largest ``|entry|`` positive."""
    mag = xp.abs(psi)
    top = xp.max(mag, axis=0)
    near = mag >= (1.0 - SIGN_TIE) * top[None, :]
    k = psi.shape[1]
    idx = xp.argmax(xp.astype(near, xp.int8), axis=0)  # first True (argmax returns the first maximum)
    picks = xp.take(xp.reshape(psi, (-1,)), idx * k + xp.arange(k, dtype=idx.dtype))
    signs = xp.sign(picks)
    return xp.where(signs == 0, xp.ones_like(signs), signs)


def _sparse_symmetric(C, *, a: float):
    """``(SparseScores of C^(a), Q = C 1)`` for stored sparse scores; symmetry checked from the stored entries."""
    op = C if isinstance(C, SparseScores) else SparseScores(C, symmetric=True)
    M = op.matrix
    n = M.shape[0]
    if M.shape[0] != M.shape[1]:
        raise InputError(f"C must be square (n, n), got shape {tuple(M.shape)}")
    cmax = float(M.max()) if M.nnz else 0.0
    defect = float(abs(M - M.T).max()) / cmax if cmax > 0 else 0.0
    tol = symmetry_tolerance(M.dtype)
    if defect > tol:
        raise InputError(f"C must be symmetric (Q = K) for a diffusion map (real spectrum, FNA eq. 33): "
                         f"max|C - C^T| / max|C| = {defect:.3g} > 4 sqrt(eps) = {tol:.3g} (a directed kNN kernel: "
                         "use knn_kernel(..., symmetrize='max', 'mean' or 'product'))")
    q = op.row_sums()
    if not np.all(q > 0):
        raise InputError(f"C has a zero row sum (first at row {int(np.flatnonzero(~(q > 0))[0])}): an isolated point")
    if a > 0.0:
        import scipy.sparse as sp

        w = q ** (-a)
        rows = np.repeat(np.arange(n), np.diff(M.indptr))
        data = M.data * w[rows] * w[M.indices]
        M = sp.csr_array((data, M.indices.copy(), M.indptr.copy()), shape=M.shape)
    return SparseScores(M, symmetric=True), q


def diffusion_map(
    C,
    *,
    n_components,
    a=0.0,
    tau=1.0,
    normalization="probability",
    method="auto",
    strict=False,
    max_memory=None,
    tol=0.0,
    rng=None,
):
    """Diffusion-map coordinates ``Psi_tau`` of the attention matrix ``A^(a) = D_a^-1 C^(a)``.

    Parameters
    ----------
    C : array of shape (n, n), SparseScores, scipy.sparse array or operator
        Symmetric, nonnegative, finite scores (``Q = K``; FNA Assumptions 1 and 2). Stored sparse
        scores (:class:`spectral.SparseScores` from :func:`spectral.knn_kernel` or
        :func:`spectral.heat_kernel_sparse`, or a SciPy sparse array) take ARPACK on the stored matrix
        (host only, any ``a``; symmetry checked on the stored entries); a matrix-free operator
        (:class:`spectral.KernelOperator` with keys = queries) takes the block solver, ``a = 0`` only.
    n_components : int
        Number ``m`` of nontrivial coordinates, ``1 <= m <= n - 1`` (``n - 3`` for sparse scores and
        operators: the iterative solvers find at most ``n - 2`` pairs).
    a : float in [0, 1]
        Density normalisation (Coifman & Lafon's alpha): ``C^(a) = Q^-a C Q^-a`` with
        ``Q = C 1``. ``0``: plain attention ``D^-1 C`` (graph Laplacian); ``1/2``: Fokker-Planck;
        ``1``: Laplace-Beltrami (the sampling density drops out). See Notes for the limits.
    tau : float >= 0
        Diffusion time (an integer if ``A^(a)`` has negative eigenvalues). ``0``: the coordinates
        are the eigenvectors ``psi_1 .. psi_m`` themselves (the Laplacian-eigenmaps embedding).
    normalization : {"probability", "paper"}
        ``"probability"``: ``phi_0 = pi = D_a / sum D_a`` and ``psi_k^T diag(pi) psi_l = delta_kl``,
        the normalisation in which ``|Psi_tau(x_i) - Psi_tau(x_j)|`` is the diffusion
        distance (eqs. 36-37).  ``"paper"``: eq. (35) literally (unit ``v_j``).
    method, strict, max_memory, tol, rng
        Passed to :func:`spectral.markov_spectrum` (``k = n_components + 1``, ``vectors=True``).
        ``tol`` is the iterative solvers' relative accuracy (0: machine precision); on sparse scores
        of 1e5 points with clustered eigenvalues ``tol=1e-8`` halves ARPACK's time (measured 95 s
        against 186 s, residual 3.8e-9 against 6e-14; benchmarks/peers.py ``--large``).

    Returns
    -------
    DiffusionMap
        Eigenvector signs are deterministic: each ``psi_j`` has its first largest-|entry| (ties
        within :data:`SIGN_TIE`) positive, the rule of scikit-learn's ``_deterministic_vector_sign_flip``
        with ties made robust; ``phi_j`` flips with it.

    Raises
    ------
    spectral.floor.validation.InputError
        Bad or non-symmetric ``C``, ``n_components`` outside its range, bad ``a``, ``tau`` or
        ``normalization``, ``a > 0`` on a matrix-free operator.
    spectral.floor.memory.DenseMemoryError
        ``a > 0`` and no room for ``C^(a)``, or the eigensolver's dense work does not fit.

    Notes
    -----
    With :math:`D_a^{-1/2} C^{(a)} D_a^{-1/2} v_j = \\lambda_j v_j` and :math:`S = \\sum_i D_{a,i}`:

    .. math::

        \\text{probability: } \\psi_j = \\sqrt{S} D_a^{-1/2} v_j, \\quad
        \\phi_j = D_a^{1/2} v_j / \\sqrt{S}; \\qquad
        \\text{paper: } \\psi_j = D_a^{-1/2} v_j, \\quad \\phi_j = D_a^{1/2} v_j .

    In both, :math:`\\phi_i^T \\psi_j = \\delta_{ij}`.  Only the probability normalisation
    makes :math:`\\psi_0 = 1` and :math:`\\phi_0 = \\pi` a probability vector; with the paper's,
    the squared diffusion distance (weight :math:`1/\\phi_0`) equals
    :math:`\\sqrt{S}\\,\\lVert\\Psi_\\tau(x_i) - \\Psi_\\tau(x_j)\\rVert^2` (ledger FNA-9).

    Generator scaling, for the heat kernel ``C = exp(-|x_i - x_j|^2 / (2 eps))`` of points drawn
    from a density ``p`` on a manifold, as ``n -> infinity`` and then ``eps -> 0`` (Coifman & Lafon
    2006, written in this kernel convention; the test suite measures it on the circle, S^2 and the
    strips of pydiffmap's tests):

    .. math::

        \\frac{2 (1 - \\lambda_j)}{\\varepsilon} \\to \\mu_j, \\qquad
        -\\bigl(\\Delta + 2 (1 - a) \\nabla \\log p \\cdot \\nabla\\bigr) f_j = \\mu_j f_j,

    so ``2 (1 - lambda_j) / eps`` approximates the eigenvalues of ``-Delta`` (Laplace-Beltrami)
    at ``a = 1`` whatever ``p``, of ``-(Delta + grad log p . grad)`` (Fokker-Planck) at ``a = 1/2``
    and of ``-(Delta + 2 grad log p . grad)`` at ``a = 0``; the stationary law of ``A^(a)`` is
    proportional to ``p^(1 - 2a)``. With ``exp(-d^2 / eps)`` (other libraries' convention) the factor
    is 4 instead of 2 (pydiffmap's ``exp(-d^2 / (4 eps'))``: ``(lambda - 1) / eps'``).

    References
    ----------
    FNA eqs. (19), (20), (33)-(37); Coifman & Lafon (2006).

    Examples
    --------
    Ten points on a line, the heat kernel at ``eps = 0.5``, two coordinates:

    >>> import numpy as np
    >>> from spectral import diffusion_map, heat_kernel
    >>> x = np.linspace(0.0, 3.0, 10)
    >>> C = heat_kernel(np.abs(x[:, None] - x[None, :]), eps=0.5)
    >>> dm = diffusion_map(C, n_components=2, a=0.5)
    >>> dm.coordinates.shape, bool(np.allclose(dm.psi[:, 0], 1.0))
    ((10, 2), True)
    >>> round(float(dm.eigenvalues[0]), 12), bool(dm.eigenvalues[1] < 1.0)
    (1.0, True)

    The first coordinate orders the points along the line; its sign is fixed (largest entry positive,
    here the first point's, the tie with the last one broken by :data:`SIGN_TIE`):

    >>> np.argsort(dm.coordinates[:, 0]).tolist()
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]

    A new point between the third and fourth, by its kernel row (Nystrom):

    >>> y = np.array([0.8])
    >>> new = dm.transform(heat_kernel(np.abs(y[:, None] - x[None, :]), eps=0.5))
    >>> bool(dm.coordinates[3, 0] < new[0, 0] < dm.coordinates[2, 0])
    True
    """
    normalization = check_option("normalization", normalization, NORMALIZATIONS)
    a = check_real("a", a, low=0.0, high=1.0)
    stored = isinstance(C, SparseScores) or _is_scipy_sparse(C)
    if stored or _is_operator(C):
        shape = tuple(getattr(C, "shape", ()))
        if len(shape) != 2 or shape[0] != shape[1]:
            raise InputError(f"C must be square (n, n), got shape {shape}")
        n = int(shape[0])
        if n < 4:
            raise InputError(f"sparse or matrix-free C must be at least 4 x 4 (iterative solver), got shape {shape}")
        m = check_int("n_components", n_components, low=1, high=n - 3)
        _check_tau(tau)
        if stored:
            C, q = _sparse_symmetric(C, a=a)
        else:
            if a > 0.0:
                raise InputError("a > 0 needs stored scores (a dense array or SparseScores) for C^(a) = Q^-a C Q^-a; "
                                 "a matrix-free operator takes a = 0 only")
            if not getattr(C, "symmetric", False):
                raise InputError("C must be symmetric (Q = K) for a diffusion map: an operator with keys = queries")
            q = None
    else:
        xp, stats = scan_scores(C, square=True, symmetry=True)
        n = C.shape[0]
        if n < 2:
            raise InputError(f"C must be at least 2 x 2, got shape {tuple(C.shape)}")
        if stats.defect > symmetry_tolerance(C.dtype):
            raise InputError(
                f"C must be symmetric (Q = K) for a diffusion map (real spectrum, FNA eq. 33): "
                f"max|C - C^T| / max|C| = {stats.defect:.3g} > 4 sqrt(eps) = {symmetry_tolerance(C.dtype):.3g}"
            )
        m = check_int("n_components", n_components, low=1, high=n - 1)
        _check_tau(tau)
        q = None
        if a > 0.0:
            check_dense_memory(n, dtype=C.dtype, copies=1, max_bytes=max_memory, limit_name="max_memory",
                               what="density-normalised scores C^(a)",
                               alternative="use a=0 (no copy of C), sparse scores (knn_kernel, heat_kernel_sparse) "
                                           "or fewer points", device=memory_device(C))
            q = checked_row_sums(C, cmax=stats.cmax)
            w = q ** (-a)
            C = w[:, None] * C * w[None, :]
    spec = markov_spectrum(C, m + 1, method=method, vectors=True, strict=strict, max_memory=max_memory, tol=tol,
                           rng=rng)
    if not spec.symmetric:
        raise InputError("C must be symmetric (Q = K) for a diffusion map (real spectrum, FNA eq. 33)")
    lam = spec.eigenvalues
    tau = _check_tau(tau, lam[1:])
    v = spec.conjugate_vectors
    d = spec.degrees
    xp = array_namespace(v)
    if q is None:
        q = d  # a = 0: the degrees of C itself
    elif array_namespace(q) is not xp:
        q = from_numpy(np.asarray(to_numpy(q)), like=v)
    total = xp.sum(d)
    sq = xp.sqrt(d)
    if normalization == "probability":
        root = xp.sqrt(total)
        psi = v * (root / sq)[:, None]
        phi = v * (sq / root)[:, None]
        stationary = d / total
    else:
        psi = v / sq[:, None]
        phi = v * sq[:, None]
        stationary = d / xp.sqrt(total)
    signs = _signs(psi, xp)
    psi = psi * signs[None, :]
    phi = phi * signs[None, :]
    coords = psi[:, 1:] * _power(lam[1:], tau, xp)[None, :]
    return DiffusionMap(
        coordinates=coords,
        eigenvalues=lam,
        psi=psi,
        phi=phi,
        stationary=stationary,
        tau=tau,
        normalization=normalization,
        degrees=d,
        spectrum=spec,
        a=a,
        kernel_degrees=q,
    )


def _stationary_of(A, xp):
    """Stationary probability of a row-stochastic ``A``: ``pi A = pi``, ``sum pi = 1``.

    Solves ``(A^T - I) pi = 0`` with the last equation replaced by ``sum pi = 1``
    (unique for an irreducible chain); O(n^3).
    """
    n = A.shape[0]
    M = A.T - xp.eye(n, dtype=A.dtype)
    M = xp.concat([M[:-1, :], xp.ones((1, n), dtype=A.dtype)], axis=0)
    rhs = xp.concat([xp.zeros((n - 1,), dtype=A.dtype), xp.ones((1,), dtype=A.dtype)])
    msg = "A has no unique positive stationary distribution (reducible chain?); pass stationary= explicitly"
    try:
        pi = xp.linalg.solve(M, rhs)
    except (ValueError, ArithmeticError, RuntimeError) as exc:  # numpy LinAlgError is a ValueError
        raise InputError(f"{msg} ({exc})") from exc
    tol = 4 * math.sqrt(float(xp.finfo(A.dtype).eps))
    if not bool(xp.all(xp.isfinite(pi))) or float(xp.min(pi)) < -tol or float(
        xp.max(xp.abs(pi @ A - pi))
    ) > tol * float(xp.max(xp.abs(pi))):
        raise InputError(msg)
    return pi


def diffusion_distance(A, tau, *, stationary=None, squared=False):
    """All-pairs diffusion distances ``D_tau(x_i, x_j)`` from powers of ``A`` (FNA eq. 36).

    Parameters
    ----------
    A : array of shape (n, n)
        Row-stochastic attention matrix (row sums 1 within ``4 sqrt(eps)``), e.g.
        ``row_normalize(C)`` or ``anisotropic_normalize(C, a)``.
    tau : int >= 1
        Number of steps; ``p(tau, . | x_i)`` is row ``i`` of ``A^tau``.
    stationary : array of shape (n,), optional
        ``phi_0`` in the weight ``w = 1 / phi_0``.  Default: the stationary probability
        of ``A`` (solved from ``pi A = pi``, ``sum pi = 1``); pass
        ``DiffusionMap.stationary`` to use the paper's normalisation.
    squared : bool
        Return ``D_tau^2`` instead of ``D_tau``.

    Returns
    -------
    array of shape (n, n)
        Symmetric, zero diagonal.

    Raises
    ------
    spectral.floor.validation.InputError
        ``A`` not square, not finite, negative or not row-stochastic; ``tau`` not an
        integer ``>= 1``; ``stationary`` of the wrong shape or not positive; no unique
        stationary distribution when ``stationary`` is not given.

    Notes
    -----
    .. math:: D_\\tau^2(x_i, x_j) = \\sum_y (p(\\tau, y | x_i) - p(\\tau, y | x_j))^2 / \\phi_0(y).

    Computed from explicit differences in blocks of rows (no ``|a|^2 + |b|^2 - 2 a.b``
    cancellation, which loses all digits for nearby points at large ``tau``):
    O(n^3) operations; four dense ``(n, n)`` arrays plus a ``2^22``-element block,
    checked by the memory guard (:func:`spectral.floor.memory.check_dense_memory`) first.

    References
    ----------
    FNA eq. (36); Coifman & Lafon (2006).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.5, 0.5], [0.25, 0.75]])
    >>> D = diffusion_distance(A, 1)
    >>> bool(D[0, 1] > 0 and D[0, 0] == 0)
    True
    """
    tau = check_int("tau", tau, low=1)
    xp = check_row_stochastic(A)
    n = A.shape[0]
    # A^tau, the squaring base, the weighted rows W and the result (plus a 2^22-element block)
    check_dense_memory(n, dtype=A.dtype, copies=4, what="all-pairs diffusion distances",
                       alternative="use diffusion_map coordinates (Euclidean distance between them is the "
                                   "diffusion distance, truncated to n_components)", device=memory_device(A))
    if stationary is None:
        pi = _stationary_of(A, xp)
    else:
        pi = stationary
        if tuple(getattr(pi, "shape", ())) != (n,):
            raise InputError(f"stationary must have shape ({n},), got {tuple(getattr(pi, 'shape', ()))}")
        if not bool(xp.all(pi > 0)) or not bool(xp.all(xp.isfinite(pi))):
            raise InputError("stationary must be finite and positive (weight 1/phi_0)")
    P = _matrix_power(A, int(tau), xp)
    W = P / xp.sqrt(pi)[None, :]
    block = max(1, (1 << 22) // max(n * n, 1))
    rows = []
    Wb = xp.reshape(W, (1, n, n))
    for i0 in range(0, n, block):
        i1 = min(n, i0 + block)
        diff = xp.reshape(W[i0:i1, :], (i1 - i0, 1, n)) - Wb
        rows.append(xp.sum(diff * diff, axis=2))
    D2 = rows[0] if len(rows) == 1 else xp.concat(rows, axis=0)
    return D2 if squared else xp.sqrt(D2)


def _matrix_power(A, p: int, xp):
    """``A^p`` by binary exponentiation (``xp.matmul`` only)."""
    result = None
    base = A
    while p:
        if p & 1:
            result = base if result is None else result @ base
        p >>= 1
        if p:
            base = base @ base
    return result
