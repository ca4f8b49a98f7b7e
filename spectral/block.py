"""Block Krylov eigensolver for the leading eigenpairs of a symmetric operator given by block products.

:func:`block_eigsh` finds the ``k`` largest eigenvalues of a symmetric ``n x n`` operator ``S`` that is
only available through block products ``S @ X`` (``X`` of shape ``(n, b)``). One block product is one
sweep over the kernel, so the solver is built to need few of them: a thick-restart block Krylov
method (Krylov-Schur with full reorthogonalisation, Rayleigh-Ritz on the stored images ``S V``).
ARPACK, by contrast, applies ``S`` to one vector at a time (69 kernel sweeps for 10 eigenpairs of
an FNA kernel where this method needs 12 block products of 20 columns).

Mixed precision: a cheap product ``apply_fast`` (e.g. kernel tiles in float32, accumulated in
float64) drives the iteration until its residuals stop improving; the accurate product ``apply`` then
continues from the converged Ritz vectors. Because the Rayleigh quotient of a symmetric matrix is
quadratic in the eigenvector error, one accurate product turns Ritz vectors with residuals ~1e-7 into
eigenvalues accurate to ~1e-12. With ``eig_tol`` (eigenvalues only) the solver stops on that: on the bound
:func:`error_bound` (residual^2 / gap) rather than on the residual target, which the vectors need but the
eigenvalues do not (on an FNA kernel on S^2, n = 6000, top 9: 27 + 1 products instead of 26 + 8).

Every step works in the namespace of the vectors (NumPy, CuPy, any array-API library): products,
orthogonalisation, the small projected eigenproblems (``eigh`` of at most a few hundred rows, on the
device for CuPy) and Ritz vectors stay there. What crosses to the host per block product is a handful of
numbers the iteration branches on: the Ritz values, the residual norms of the top ``k`` pairs and the
rank of the new block.

References
----------
G. W. Stewart, "A Krylov-Schur algorithm for large eigenproblems", SIAM J. Matrix Anal. Appl. 23
(2001); Y. Zhou and Y. Saad, "Block Krylov-Schur method for large symmetric eigenvalue problems",
Numer. Algorithms 47 (2008); A. Stathopoulos and K. Wu, "A block orthogonalization procedure with
constant synchronization requirements", SIAM J. Sci. Comput. 23 (2002) (the SVQB step).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from spectral.floor import backend
from spectral.floor.backend import array_namespace, from_numpy, to_numpy
from spectral.floor.validation import ConvergenceError, InputError, as_generator, check_int, check_real

__all__ = ["BlockEigenResult", "block_eigsh", "block_size", "basis_size", "block_workspace_bytes"]

#: Residual target of the accurate phase when the caller gives tol = 0: sqrt(eps64) relative to the
#: largest Ritz value. Eigenvalues are then accurate to ~ residual^2 / gap (machine precision).
DEFAULT_TOL = math.sqrt(np.finfo(np.float64).eps)
#: The cheap phase stops at this relative residual (or when its residuals stop improving).
FAST_TOL = 1e-6
#: Default ``eig_tol`` of :func:`spectral.markov_spectrum` (eigenvalues only): the a posteriori bound
#: :func:`error_bound` on every returned Ritz value's error, relative to the largest. Measured errors are about
#: 100x below the bound (FNA on S^2, n = 6000, k = 9, 10, 16: 4e-13 to 6e-13 against the dense path).
DEFAULT_EIG_TOL = 1e-10


def block_size(k: int, n: int) -> int:
    """Default block width: ``k + 10`` up to 32, and at least ``k + 8`` beyond (guard vectors), at least 4, at
    most ``n // 4``.

    Measured on FNA kernels (random S^1 points, k = 10; Fibonacci S^2, k = 49): the number of block
    products falls slowly with the width (k = 49: 20 products at width 16, 13 at 32, 11 at 49) while
    the cost of one product grows with it once the GEMM outweighs the kernel evaluation. The guard of 8
    vectors past ``k`` keeps a cluster of nearly equal eigenvalues that ``k`` cuts inside the block: on the
    Fibonacci S^2 (n = 4000, scale 8 h), k = 30 inside the 11-fold degree-5 multiplet took 10 + 4 products at
    width 32 and 9 + 3 at width 40 (k = 10, inside the 7-fold multiplet, already has 10 guard vectors: 10 + 3).
    """
    width = k + 10 if k + 10 <= 32 else max(32, k + 8)
    return max(1, min(max(4, width), max(n // 4, 1)))


def basis_size(k: int, b: int, n: int) -> int:
    """Default largest basis before a thick restart: ``k + 8 b`` (at most ``n``)."""
    return min(n, k + 8 * b)


def block_workspace_bytes(n: int, k: int, *, block: int | None = None, max_basis: int | None = None,
                          itemsize: int = 8) -> int:
    """Bytes the solver holds at its peak: the basis and its images (``2 n m``) and four ``n x (k + b)``
    blocks (Ritz vectors, their images, the residual block and the next block), in ``itemsize`` floats.

    Defaults as :func:`block_eigsh` (``m = basis_size(k, b, n)``). The products' own working memory
    (kernel tiles) is the operator's and not counted here.
    """
    n = check_int("n", n, low=1)
    k = check_int("k", k, low=1)
    b = block_size(k, n) if block is None else check_int("block", block, low=1)
    m = basis_size(k, b, n) if max_basis is None else check_int("max_basis", max_basis, low=0)
    itemsize = check_int("itemsize", itemsize, low=1)
    return (2 * n * m + 4 * n * (k + b)) * itemsize


@dataclasses.dataclass(frozen=True, repr=False)
class BlockEigenResult:
    """Leading eigenpairs from :func:`block_eigsh`.

    Attributes
    ----------
    eigenvalues : array of shape (k,)
        Descending Ritz values.
    vectors : array of shape (n, k)
        Orthonormal Ritz vectors.
    images : array of shape (n, k)
        ``S @ vectors`` from the accurate product (the residual needs no further product).
    residual : float
        ``max_j ||S v_j - eta_j v_j||`` over the returned pairs (2-norm; ``||v_j|| = 1``).
    products : int
        Accurate block products.
    fast_products : int
        Cheap block products (0 without ``apply_fast``).
    columns : int
        Columns multiplied in total (sum of the block widths over all products).
    eigenvalue_bound : float
        :func:`error_bound` of the returned Ritz values from the accurate residuals (absolute; ``inf`` when
        ``eig_tol`` is 0 and it was not measured).
    """

    eigenvalues: object
    vectors: object
    images: object
    residual: float
    products: int
    fast_products: int
    columns: int
    eigenvalue_bound: float = math.inf

    def __repr__(self) -> str:
        return (f"BlockEigenResult(k={int(self.eigenvalues.shape[0])}, residual={self.residual:.3g}, "
                f"eigenvalue_bound={self.eigenvalue_bound:.3g}, products={self.products}, "
                f"fast_products={self.fast_products}, columns={self.columns})")


def _orthonormal_against(V, Z, xp):
    """Columns spanning ``Z`` minus its part in the orthonormal ``V``, orthonormalised (two passes).

    SVQB: the Gram matrix of the projected block is diagonalised on the host and directions whose
    norm fell below 1e-10 of the largest column of ``Z`` as given are dropped: what is left of them is
    rounding (rank deficiency near convergence, or an invariant subspace). Returns None when nothing is
    left.
    """
    if xp is not np:
        return _orthonormal_against_device(V, Z, xp)
    size = float(np.max(to_numpy(xp.sum(Z * Z, axis=0)))) if Z.shape[1] else 0.0
    if not size > 0.0:
        return None
    for _ in range(2):
        if V is not None:
            Z = Z - V @ (_t(V, xp) @ Z)
        G = to_numpy(_t(Z, xp) @ Z)
        G = (G + G.T) / 2
        lam, U = np.linalg.eigh(G)
        keep = lam > 1e-20 * size  # Gram eigenvalues are squared norms: 1e-10 in norm
        if not np.any(keep):
            return None
        U = U[:, keep] / np.sqrt(lam[keep])[None, :]
        Z = Z @ from_numpy(np.ascontiguousarray(U[:, ::-1]), like=Z)
        size = 1.0  # the second pass starts from orthonormal columns
    return Z


def _orthonormal_against_device(V, Z, xp):
    """:func:`_orthonormal_against` with the Gram eigenproblem in the namespace of ``Z`` (CuPy: on the device).

    The same steps: ``eigh`` is ascending, so the directions kept (``lam > 1e-20 size``) are the last
    ``r``; only ``size`` and ``r`` come to the host.
    """
    if not Z.shape[1]:
        return None
    size = float(xp.max(xp.sum(Z * Z, axis=0)))
    if not size > 0.0:
        return None
    for _ in range(2):
        if V is not None:
            Z = Z - V @ (_t(V, xp) @ Z)
        G = _t(Z, xp) @ Z
        G = (G + _t(G, xp)) / 2
        lam, U = backend.eigh(G)
        b = int(lam.shape[0])
        r = int(xp.sum(xp.astype(lam > 1e-20 * size, xp.int64)))
        if r == 0:
            return None
        U = U[:, b - r:] / xp.sqrt(lam[b - r:])[None, :]
        Z = Z @ xp.flip(U, axis=1)
        size = 1.0
    return Z


def _t(A, xp):
    f = getattr(xp, "matrix_transpose", None)
    return f(A) if f is not None else A.T


def _cols(U, stop: int, like):
    """The first ``stop`` Ritz vectors in the namespace of ``like`` (host ``U`` moved; device ``U`` sliced)."""
    if isinstance(U, np.ndarray):
        return from_numpy(U[:, :stop], like=like)
    return U[:, :stop]


def _residuals(V, AV, U, theta, k, xp):
    """Residual block ``R = AV u_j - theta_j V u_j`` of the top ``k`` Ritz pairs, its column norms, the
    Ritz vectors ``V u_j`` and their images ``AV u_j`` (explicit products, not Gram-matrix identities)."""
    Uk = _cols(U, k, V)
    Y = V @ Uk
    AY = AV @ Uk
    R = AY - Y * from_numpy(theta[:k], like=V)[None, :]
    return R, to_numpy(xp.sqrt(xp.sum(R * R, axis=0))), Y, AY


def error_bound(theta, res, k: int) -> float:
    """A posteriori bound on the error of the ``k`` leading Ritz values: ``min_g sum_{j<=g} r_j^2 / delta_g``.

    ``theta`` (descending) and ``res`` (residual norms ``||S y_j - theta_j y_j||`` of the first ``p`` pairs,
    host arrays). For a group of the ``g >= k`` leading Ritz pairs whose values lie ``delta_g`` above the
    rest of the spectrum, every Ritz value of the group is within ``||R_g||^2 / delta_g`` of an eigenvalue
    (the quadratic residual bound of a symmetric matrix; R. Mathias, "Quadratic residual bounds for the
    Hermitian eigenvalue problem", SIAM J. Matrix Anal. Appl. 19 (1998); ``||R_g||_2 <= ||R_g||_F``). The gap is
    estimated from the next Ritz pair, ``delta_g = theta_g - theta_{g+1} - r_{g+1}`` (an eigenvalue lies within
    ``r_{g+1}`` of ``theta_{g+1}``), over ``g = k .. p - 1``, which lets a group end after the multiplet that
    ``k`` cuts. Infinite when no group has a positive gap (fewer than ``k + 1`` pairs, or no gap).
    """
    res = np.asarray(res, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    p = min(int(res.size), int(theta.size))
    if p <= k:
        return math.inf
    frob = np.cumsum(res[:p] ** 2)
    g = np.arange(k, p)  # group = pairs 0 .. g - 1, next pair g
    gap = theta[g - 1] - theta[g] - res[g]
    ok = gap > 0
    if not np.any(ok):
        return math.inf
    return float(np.min(frob[g - 1][ok] / gap[ok]))


def _non_finite(product: int) -> InputError:
    return InputError(f"the block product apply(X) returned NaN or inf (product {product}): the operator must "
                      "be finite")


def _sym_eigh(H, xp):
    """Descending eigenpairs of the small symmetric ``H``: host Ritz values, vectors in ``H``'s namespace."""
    if xp is np:
        theta, U = np.linalg.eigh(H)
        return theta[::-1].copy(), np.ascontiguousarray(U[:, ::-1])
    theta, U = backend.eigh(H)
    return to_numpy(xp.flip(theta, axis=0)).astype(np.float64), xp.flip(U, axis=1)


def _grow(H, C, D, xp):
    """The projected matrix of the basis ``[V, Q]`` from that of ``V`` (``H``), ``C = V^T S Q`` and ``D = Q^T S Q``."""
    D = (D + _t(D, xp)) / 2  # exact symmetry of the projection (the images carry round-off)
    if H is None:
        return D
    top = xp.concat([H, C], axis=1)
    return xp.concat([top, xp.concat([_t(C, xp), D], axis=1)], axis=0)


def _phase(apply, Z, *, k, b, max_basis, tol, max_products, stall, xp, eig_tol=0.0, pairs=None):
    """Thick-restart block Krylov on ``apply`` from the start block ``Z``.

    Each step multiplies one block, adds it and its image to the basis and solves the projected
    problem (Rayleigh-Ritz); the next block is the part of the image new to the basis (block Krylov,
    the width of the start block ``Z``). When the basis would exceed ``max_basis`` it shrinks to the
    ``k + b`` leading Ritz vectors, whose images are ``AV U`` (no product); the next block was made
    orthogonal to the whole old basis before, so the Krylov-Schur relation survives the restart.
    The basis and its images live in two buffers allocated once; the projected matrix ``V^T S V`` grows by
    the new block's rows and columns (``V^T W``, ``Q^T W``) instead of being recomputed.
    Converged: the largest residual of the top ``k`` pairs is at most ``tol`` (relative to the largest Ritz
    value), or, with ``eig_tol > 0``, the bound :func:`error_bound` on their Ritz values' errors (from the
    residuals of the ``pairs`` leading pairs) is at most ``eig_tol`` (relative).
    Returns ``(theta, U, V, AV, history, products, columns)``; ``history`` holds the largest relative
    residual of the top ``k`` pairs after each product. With ``stall`` the phase also stops once that
    residual, already within 100x of ``tol``, has not halved over two products (the rounding floor of an
    inexact ``apply``).
    """
    n, width = int(Z.shape[0]), int(Z.shape[1])
    keep = k + b
    pairs = k if pairs is None else max(k, int(pairs))
    cap = min(max(max_basis, keep) + width, n + width)
    Vb = backend.empty_on(Z, (n, cap))
    AVb = backend.empty_on(Z, (n, cap))
    j = products = columns = 0
    H = theta = U = None
    history = []
    while True:
        V = Vb[:, :j] if j else None
        Q = _orthonormal_against(V, Z, xp)
        if Q is None:  # the Krylov space is exhausted (invariant subspace): the Ritz pairs are exact
            break
        q = int(Q.shape[1])
        if j + q > max_basis and j > keep:  # thick restart (Q is orthogonal to the old basis)
            Uk = _cols(U, keep, Z)
            Vb[:, :keep] = V @ Uk
            AVb[:, :keep] = AVb[:, :j] @ Uk
            H = _t(Uk, xp) @ (H @ Uk)
            H = (H + _t(H, xp)) / 2
            j = keep
            V = Vb[:, :j]
        W = apply(Q)
        # a NaN or inf product would collapse the Krylov space into a misleading ConvergenceError. On the host
        # W is checked here; elsewhere that check would be one more host synchronisation per product, so the
        # Ritz values and residuals (on the host anyway) carry it: a non-finite column of AV reaches all of them
        if xp is np and not bool(np.all(np.isfinite(W))):
            raise _non_finite(products + 1)
        products += 1
        columns += q
        H = _grow(H, None if V is None else _t(V, xp) @ W, _t(Q, xp) @ W, xp)
        Vb[:, j:j + q] = Q
        AVb[:, j:j + q] = W
        j += q
        try:
            theta, U = _sym_eigh(H, xp)
        except np.linalg.LinAlgError:  # a non-finite projected matrix may stop the device eigensolver
            if not bool(xp.all(xp.isfinite(W))):
                raise _non_finite(products) from None
            raise
        _, res, _, _ = _residuals(Vb[:, :j], AVb[:, :j], U, theta, min(pairs, theta.size), xp)
        if not (np.all(np.isfinite(res)) and np.all(np.isfinite(theta))):
            raise _non_finite(products)
        worst = float(np.max(res[:k]))
        scale = max(abs(float(theta[0])), np.finfo(np.float64).tiny)
        history.append(worst / scale)
        if theta.size >= k and worst <= tol * scale:
            break
        if eig_tol > 0 and theta.size > k and error_bound(theta, res, k) <= eig_tol * scale:
            break
        if stall and len(history) >= 3 and history[-1] <= 100 * tol and history[-1] > 0.5 * history[-3]:
            break
        if products >= max_products:
            break
        Z = W
    V, AV = (Vb[:, :j], AVb[:, :j]) if j else (None, None)
    return theta, U, V, AV, history, products, columns


def block_eigsh(apply: Callable, n: int, k: int, *, like, apply_fast: Callable | None = None, tol: float = 0.0,
                eig_tol: float = 0.0, block: int | None = None, max_basis: int | None = None,
                max_products: int = 300, rng=None) -> BlockEigenResult:
    """The ``k`` largest eigenpairs of a symmetric operator known through block products.

    Parameters
    ----------
    apply : callable
        ``apply(X) -> S @ X`` for ``X`` of shape ``(n, b)`` in the namespace of ``like``; the accurate
        product (its Ritz pairs and residuals are returned).
    n, k : int
        Size of ``S`` and number of eigenpairs (``1 <= k <= n``).
    like : array
        An array of the namespace and device to compute in (the start block is drawn on the host
        and moved there).
    apply_fast : callable, optional
        A cheaper, less accurate product (e.g. float32 kernel tiles); when given it drives the
        iteration until its relative residual is below ``FAST_TOL`` or stops improving, and ``apply``
        continues from its Ritz vectors.
    tol : float
        Relative residual target ``max_j ||S v_j - eta_j v_j|| <= tol * |eta_1|`` of the accurate
        phase; 0 means ``DEFAULT_TOL`` = sqrt(eps64) = 1.5e-8 (eigenvalue error ~ residual^2 / gap).
    eig_tol : float
        With ``eig_tol > 0`` the solver also stops when :func:`error_bound`, the quadratic residual bound on the
        errors of the ``k`` Ritz values, is at most ``eig_tol * |eta_1|`` (for eigenvalues only: their errors
        go with the residual squared, the vectors' with the residual, so the eigenvalues need far fewer
        products than the residual target). Residuals are then measured for ``max(block, k + 8)`` pairs, and
        the accurate phase starts from as many of the cheap phase's Ritz vectors (one accurate product
        typically settles it). 0 (default): the residual target alone.
    block : int, optional
        Block width (default :func:`block_size`).
    max_basis : int, optional
        Basis columns before a thick restart (default :func:`basis_size`); memory is about
        ``2 n max_basis`` floats (the basis and its images).
    max_products : int
        Largest number of accurate block products (the cheap phase has its own budget of the same size).
    rng : numpy.random.Generator or int, optional
        Start block (standard normal, drawn on the host).

    Returns
    -------
    BlockEigenResult

    Raises
    ------
    spectral.floor.validation.ConvergenceError
        The accurate phase did not reach ``tol`` within ``max_products`` products.
    spectral.floor.validation.InputError
        A block product returned NaN or inf.
    """
    if not callable(apply) or (apply_fast is not None and not callable(apply_fast)):
        raise InputError("apply (and apply_fast) must be callables X -> S @ X")
    n = check_int("n", n, low=1)
    k = check_int("k", k, low=1, high=n)
    tol = check_real("tol", tol, low=0.0)
    b = block_size(k, n) if block is None else check_int("block", block, low=1, high=n)
    m = basis_size(k, b, n) if max_basis is None else check_int("max_basis", max_basis, low=1)
    max_products = check_int("max_products", max_products, low=1)
    xp = array_namespace(like)
    m = max(m, min(n, k + 2 * b))
    target = DEFAULT_TOL if tol == 0 else float(tol)
    Z = from_numpy(as_generator(rng).standard_normal((n, b)), like=like)
    fast_products = columns = 0
    eig_tol = check_real("eig_tol", eig_tol, low=0.0)
    # with an eigenvalue target the residuals of max(b, k + 8) leading pairs are measured: the guard pairs give
    # the gap of error_bound, also past the end of a multiplet that k cuts
    pairs = min(n, max(b, k + 8)) if eig_tol > 0 else k
    if apply_fast is not None:
        # the cheap phase aims at half the eigenvalue target (the accurate images add the cheap operator's
        # own error, ~3e-8 in the residual for float32 tiles) and never below FAST_TOL / 10 in the residual
        fast_tol = max(target, FAST_TOL) if eig_tol == 0 else max(target, FAST_TOL / 10)
        theta, U, V, AV, _, fast_products, columns = _phase(
            apply_fast, Z, k=k, b=b, max_basis=m, tol=fast_tol, max_products=max_products,
            stall=True, xp=xp, eig_tol=eig_tol / 2, pairs=pairs)
        # the accurate phase starts from the leading Ritz vectors (k, or all the measured pairs with an
        # eigenvalue target: one accurate product then gives the bound): the new directions of their images are
        # exactly their residuals
        Z = V @ _cols(U, min(pairs, int(U.shape[1])), V)
    theta, U, V, AV, history, products, cols = _phase(apply, Z, k=k, b=b, max_basis=max(m, int(Z.shape[1]) + b),
                                                      tol=target, max_products=max_products, stall=False, xp=xp,
                                                      eig_tol=eig_tol, pairs=pairs)
    columns += cols
    if theta is None or theta.size < k:
        size = 0 if theta is None else theta.size
        raise ConvergenceError(f"block Krylov found an invariant subspace of dimension {size} < k = {k}; "
                               "ask for fewer eigenpairs (a smaller k)")
    _, res, Y, AY = _residuals(V, AV, U, theta, min(pairs, theta.size), xp)
    Y, AY = Y[:, :k], AY[:, :k]
    worst = float(np.max(res[:k]))
    scale = max(abs(float(theta[0])), np.finfo(np.float64).tiny)
    bound = error_bound(theta, res, k) if eig_tol > 0 else math.inf
    if worst > target * scale and not bound <= eig_tol * scale:
        limit = f" and eigenvalue error bound {bound / scale:.2g} > eig_tol {eig_tol:.2g}" if eig_tol > 0 else ""
        raise ConvergenceError(
            f"block Krylov did not converge to the {k} leading eigenpairs in {products} block products: "
            f"relative residual {worst / scale:.2g} > tol {target:.2g}{limit}; try a larger tol or a smaller k")
    return BlockEigenResult(eigenvalues=from_numpy(theta[:k].copy(), like=like), vectors=Y, images=AY,
                            residual=worst, products=products, fast_products=fast_products, columns=columns,
                            eigenvalue_bound=bound)
