"""Spectra of attention (Markov) matrices ``A = D^-1 C``: the solver dispatcher and its paths.

:func:`markov_spectrum` is the one entry point. Symmetric scores (``Q = K``, FNA Assumptions 1
and 2) are solved through the symmetric conjugate ``D^-1/2 C D^-1/2`` (FNA eq. 33): real
eigenvalues, orthonormal ``v``, right eigenvectors ``psi = D^-1/2 v`` and left ones
``phi = D^1/2 v`` (eq. 35). Non-symmetric scores (``Q != K``, dot-product attention) give complex
eigenvalues ordered by modulus. Paths: dense (LAPACK), Lanczos (ARPACK on the stored conjugate),
matrix-free (symmetric: the block Krylov-Schur solver of :mod:`spectral.block` on block products
with ``C``, also for operators such as :class:`spectral.KernelOperator`, where one block product is
one sweep over the kernel; stored sparse scores (:class:`spectral.SparseScores`), whose products are
cheap: ARPACK ``eigsh`` on their conjugate; non-symmetric: ARPACK ``eigs``) and circulant (one FFT,
:mod:`spectral.circulant`). The matrix-free solver is chosen by what the operator is, never by a
timing at run time. Before solving,
the components of the kernel graph are counted and, after solving, the eigenvalues near 1
(:mod:`spectral.components`); dense requests pass the memory guard (:mod:`spectral.floor.memory`) first.
Every path returns a :class:`spectral.Spectrum` built in :mod:`spectral.spectrum`.

Host boundary: the array API has no general eigensolver. On NumPy and array-API namespaces the
non-symmetric eigensolvers (``numpy.linalg.eig``, ARPACK ``eigs``) run on a host copy; on CuPy the dense
one is ``cupy.linalg.eig`` on the device (refused, with the reason, where CuPy lacks it) and ARPACK
``eigs`` (host-only) multiplies by ``A`` on the device, so only vectors cross. Symmetric dense solves use
:func:`spectral.floor.backend.eigh` on the input's namespace (CuPy stays on the GPU), Lanczos uses ``cupyx`` on
CuPy arrays (started from the same ``rng`` draw as ARPACK on the host), and the block solver works in the
input's namespace, its small projected eigenproblems included. Component counting (:mod:`spectral.components`) needs no pass when every score is positive.

References
----------
"Fractional neural attention" (FNA), eqs. (19)-(20), (33)-(35).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys

import numpy as np

from spectral.floor import backend
from spectral.floor.backend import array_namespace, dtype_name, from_numpy, to_numpy
from spectral.circulant import check_circulant, circulant_spectrum
from spectral.components import (
    count_components,
    near_one_count,
    near_one_tolerance,
    operator_components,
    report_components,
    sparse_components,
)
from spectral.block import DEFAULT_EIG_TOL, basis_size, block_eigsh, block_size, block_workspace_bytes
from spectral.floor.memory import (
    available_memory_bytes,
    check_dense_memory,
    check_memory,
    dense_bytes,
    first_that_fits,
    memory_device,
    memory_limit,
)
from spectral.operators import SparseScores
from spectral.scores import checked_row_sums, scan_scores, symmetry_tolerance
from spectral.spectrum import Spectrum, column_norms, general_spectrum, symmetric_residual, symmetric_spectrum
from spectral.floor.validation import (ConvergenceError, InputError, UnavailableError, as_generator, check_int,
                                       check_option, check_real)

__all__ = ["BLOCK_MAX_PRODUCTS", "FLOAT32_FROM_N", "markov_spectrum"]

METHODS = ("auto", "dense", "lanczos", "matrix-free", "circulant")
#: ``method="auto"`` uses the dense solver up to this n (and whenever all eigenvalues are asked
#: for); above it ARPACK on the stored conjugate.  Measured (1 BLAS thread, FNA kernel on random
#: circle points, k = 10): n = 1000 dense 0.20 s / Lanczos 0.17 s; n = 2000 dense 1.64 s /
#: Lanczos 0.38 s.  Dense ``eigh`` is O(n^3) (~65 s at n = 5000 under load).
DENSE_MAX_N = 1000
#: From this n the Lanczos path stores the conjugate in float32 (ARPACK on the stored matrix needs
#: 3 GiB in float64 at n = 20000).
FLOAT32_FROM_N = 10_000
#: Default residual target of the block solver on float32 tiles (their rounding floor is ~1e-6 relative:
#: measured 1.4e-6 for FNA tiles on S^1, n = 10^4).
FLOAT32_BLOCK_TOL = 1e-5
#: Smallest ARPACK basis (``ncv``) on stored sparse scores (scipy's default is ``max(2k + 1, 20)``): the
#: heat kernel on random S^2 points, n = 8000, k = 10 (the 10th eigenvalue inside the near-multiple
#: l = 3 cluster) needs 676 products with 21 vectors and 360 with 40; the swiss roll 878 and 816.
SPARSE_ARPACK_NCV = 40
#: Largest number of block products per phase of the matrix-free (block Krylov) path; the FNA spectra
#: of the benchmarks and checks need 10-25.
BLOCK_MAX_PRODUCTS = 300


def _check_k(k, n: int, *, method: str):
    """``k`` in ``[1, n]`` (``[1, n-2]`` for the partial solvers: ARPACK needs ``k < n - 1``), or None."""
    if k is None:
        return None
    if method not in ("lanczos", "matrix-free"):
        return check_int("k", k, low=1, high=n)
    k = check_int("k", k, low=1)
    if k > n - 2:
        why = "ARPACK needs k < n-1" if method == "lanczos" else "a partial spectrum"
        raise InputError(f"k must be an integer in [1, n-2] = [1, {n - 2}] for method={method!r} "
                         f"({why}), got {k}; use method='dense' for all eigenvalues")
    return k


def _is_operator(C) -> bool:
    return hasattr(C, "matvec") and hasattr(C, "row_sums") and not hasattr(C, "__array_namespace__")


def _is_scipy_sparse(C) -> bool:
    """A ``scipy.sparse`` array or matrix (SciPy looked up in ``sys.modules``, never imported here)."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(C)


def _from_scipy_sparse(C, *, k, method, symmetric, max_memory):
    """``(C, method, symmetric)`` for a scipy.sparse ``C``: a dense copy, or :class:`SparseScores`.

    Dense copy (after the memory guard) for ``method="dense"``/``"circulant"`` and for ``"auto"`` with
    ``k=None``; otherwise the stored matrix, symmetric when ``max|C - C^T| <= 4 sqrt(eps) max|C|`` (the
    dense rule, :func:`spectral.scores.symmetry_tolerance`), and ``"lanczos"`` becomes ``"matrix-free"``
    (ARPACK on the stored matrix is what Lanczos means there).
    """
    shape = tuple(C.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"C must be a square (n, n) matrix, got shape {shape}")
    if method in ("dense", "circulant") or (method == "auto" and k is None):
        dtype = C.dtype if C.dtype in (np.float32, np.float64) else np.float64
        return SparseScores(C.astype(dtype), symmetric=False).to_dense(max_bytes=max_memory), method, symmetric
    stored = SparseScores(C.astype(np.float64) if C.dtype not in (np.float32, np.float64) else C, symmetric=False)
    M = stored.matrix
    top = float(np.max(np.abs(M.data))) if M.nnz else 0.0
    diff = (M - M.T).tocsr()
    defect = (float(np.max(np.abs(diff.data))) if diff.nnz else 0.0) / top if top > 0 else 0.0
    is_sym = defect <= symmetry_tolerance(M.dtype)
    if symmetric and not is_sym:
        raise InputError(f"symmetric=True needs a symmetric sparse C (max|C - C^T| / max|C| = {defect:.3g}); "
                         "use symmetric=None or False")
    stored.symmetric = is_sym if symmetric is None else bool(symmetric)
    return stored, ("matrix-free" if method == "lanczos" else method), stored.symmetric


def _astype(x, dtype, xp, copy=False):
    if hasattr(xp, "astype"):
        return xp.astype(x, dtype, copy=copy)
    return x.astype(dtype, copy=copy)


def _v0(n: int, rng) -> np.ndarray:
    """ARPACK start vector (host), drawn from ``rng``."""
    return as_generator(rng).standard_normal(n)


def _arpack(solve, *, what: str, k: int, tol: float):
    """Run an ARPACK call; turn its non-convergence into a ConvergenceError that says what to try."""
    from scipy.sparse.linalg import ArpackNoConvergence

    try:
        return solve()
    except ArpackNoConvergence as exc:
        raise ConvergenceError(
            f"ARPACK ({what}) did not converge to the {k} leading eigenpairs at tol={tol:g} "
            f"({len(exc.eigenvalues)} converged); try method='dense' (n <= a few thousand), a larger tol, "
            "or a smaller k"
        ) from exc


def _with_near_one(spec: Spectrum, *, ncomp, exact, strict, solver_tol, complete) -> Spectrum:
    """Count the computed eigenvalues near 1 and report a numerical disconnection (structural: reported before)."""
    tol = near_one_tolerance(spec.storage_dtype, solver_tol=solver_tol, eigenvalues=spec.eigenvalues)
    near = near_one_count(spec.eigenvalues, tol)
    if (ncomp or 1) <= 1:
        report_components(ncomp, exact, strict, near_one=near, tol=tol, eigenvalues=spec.eigenvalues,
                          complete=complete, stacklevel=4)
    return dataclasses.replace(spec, near_one=near)


def markov_spectrum(
    C,
    k=None,
    *,
    method="auto",
    vectors=False,
    grid=False,
    strict=False,
    symmetric=None,
    max_memory=None,
    tol=0.0,
    dtype=None,
    rng=None,
):
    """Leading eigenvalues (and eigenvectors) of the attention matrix ``A = D^-1 C``.

    Parameters
    ----------
    C : array of shape (n, n), scipy.sparse array/matrix, or operator
        Nonnegative finite scores (``C[i, j]``: query ``i``, key ``j``), a
        ``scipy.sparse`` array or matrix of them (csr, csc, coo, lil, ...; stored entries
        only, wrapped as :class:`spectral.SparseScores`, see Notes), or a
        matrix-free operator with ``shape``, ``dtype``, ``matvec(v)``,
        ``row_sums()`` (and ``rmatvec(v)``, ``symmetric`` optionally), e.g.
        :class:`spectral.KernelOperator` (treated as symmetric when its keys
        ``y`` are its queries ``x``: a kernel of a symmetric distance).
    k : int, optional
        Number of leading eigenpairs; ``None``: all ``n`` (dense or circulant only).
        ``1 <= k <= n-2`` for ``"lanczos"`` and ``"matrix-free"``. With ``k >= 2
        a numerically disconnected graph is detected (eigenvalues near 1, see ``strict``).
    method : {"auto", "dense", "lanczos", "matrix-free", "circulant"}
        ``"auto"``: circulant when ``grid=True``; operator input: matrix-free (the block solver
        for operators that recompute their scores, ARPACK for :class:`spectral.SparseScores`);
        otherwise dense when ``k is None`` or ``n <= DENSE_MAX_N`` and Lanczos
        (ARPACK on the stored conjugate, float32 from ``n = FLOAT32_FROM_N``) above;
        the first of these paths, in the order dense -> lanczos -> matrix-free, whose estimated
        memory fits (:func:`spectral.floor.memory.first_that_fits`, the rule of every ``"auto"`` of the
        toolkit); when none fits, the last is refused.  An explicit method is never changed.
    vectors : bool
        Return right/left eigenvectors (``psi``, ``phi``).
    grid : bool
        ``C`` comes from an equispaced circle grid (circulant): with ``"auto"``
        use the exact FFT path (the circulant structure is verified on sampled rows).
    strict : bool
        Raise :class:`~spectral.components.DisconnectedGraphError` instead of warning
        (:class:`~spectral.components.DisconnectedGraphWarning`) on a disconnected kernel graph:
        more than one component of ``C > 0`` (before solving), or more computed eigenvalues within
        :func:`~spectral.components.near_one_tolerance` of 1 than components (after solving).
    symmetric : bool, optional
        ``None``: detect (``max|C - C^T| <= 4 sqrt(eps) max|C|``).  ``True``: demand a real
        spectrum; a non-symmetric ``C`` is then solved on the general path and
        refused (``InputError``) if any ``|imag| > 100 eps``.  ``False``: general path.
    max_memory : float, optional
        Byte limit for dense work (default: memory available now); see ``method`` for what
        ``"auto"`` does when a path does not fit.
    tol : float >= 0
        ARPACK relative accuracy (0: machine precision of the storage dtype).  Symmetric
        matrix-free path (block solver): relative residual ``||S v - eta v|| <= tol |eta_1|`` of
        the conjugate ``S``; 0 means sqrt(eps64) = 1.5e-8 (eigenvalues then accurate to about
        residual^2 / gap, i.e. machine precision), or ``FLOAT32_BLOCK_TOL`` on float32 tiles.
        Without ``vectors``, 0 (float64) also stops as soon as the a posteriori bound on every
        eigenvalue's error (:func:`spectral.block.error_bound`: residual^2 / gap over the leading
        group of pairs) is at most ``spectral.block.DEFAULT_EIG_TOL`` = 1e-10 relative: the
        eigenvalues need far fewer block products than the residual target (the reported residual
        is then about 1e-7 to 1e-6; the solver string gives the bound).
        Stored sparse scores (:class:`spectral.SparseScores`) run ARPACK: ``tol`` is its relative
        accuracy, as for Lanczos.
    dtype : {None, "float32", "float64"}
        Storage dtype for the Lanczos / matrix-free paths (sparse scores: a cast copy of their
        stored entries); None: float32 from
        ``n = FLOAT32_FROM_N`` for Lanczos, else the input's dtype.  For a
        :class:`spectral.KernelOperator` with float64 points, None iterates on float32 tiles
        (float64 accumulation) and refines with float64 tiles; ``"float32"`` / ``"float64"``
        use one tile precision throughout.
    rng : numpy.random.Generator or int, optional
        Seeds ARPACK's start vector or the block solver's start block (results agree to
        round-off across seeds).

    Returns
    -------
    Spectrum

    Raises
    ------
    spectral.floor.validation.InputError
        Non-square ``C``, NaN/inf, negative entries, a zero row sum, bad ``k`` (range
        stated), unknown ``method`` or ``dtype``, a non-circulant ``C`` on the circulant
        path, ``symmetric=True`` with a complex spectrum.
    spectral.components.DisconnectedGraphError
        ``strict=True`` and a disconnected graph (structurally or numerically).
    spectral.floor.memory.DenseMemoryError
        An explicitly requested dense/Lanczos path would exceed the memory limit.
    spectral.floor.validation.ConvergenceError
        ARPACK or the block solver did not converge, or a solver returned NaN/inf (the message
        says what to try).

    Notes
    -----
    Symmetric ``C``: :math:`S = D^{-1/2} C D^{-1/2} = V \\Lambda V^T`, ``A`` has
    eigenvalues :math:`\\Lambda`, right eigenvectors :math:`\\psi = D^{-1/2} v` and
    left :math:`\\phi = D^{1/2} v` (FNA eqs. 33-35), so :math:`\\phi_i^T \\psi_j = \\delta_{ij}`.
    Host boundary: the non-symmetric paths run on the host (the array API has no
    general ``eig``) except on CuPy, where ``A`` stays on the device (``cupy.linalg.eig``, or
    ARPACK with device products); Lanczos runs ARPACK on NumPy and cupyx on CuPy arrays, and on a
    host copy of the stored conjugate for other namespaces; the symmetric matrix-free path
    stays in the input's namespace (block products, orthogonalisation, Ritz vectors).
    A ``scipy.sparse`` ``C`` is wrapped as :class:`spectral.SparseScores` (its symmetry detected
    with the same tolerance as a dense ``C``) and solved by ARPACK on the stored matrix
    (``"matrix-free"``; ``"lanczos"`` names the same path there); ``method="dense"`` or
    ``"circulant"``, and ``"auto"`` with ``k=None`` (every eigenvalue), densify it after the memory
    guard.
    Connectivity: the components of the graph ``C > 0`` are counted before solving
    (:func:`spectral.count_components`; sparse scores: from their stored entries, O(nnz);
    other operators: none when the smallest off-diagonal score
    recorded by ``row_sums`` (``min_score``) is positive, else a breadth-first search by
    indicator matvecs, at most ``OPERATOR_BFS_MATVECS`` of them) and reported as
    ``n_components``; after solving,
    the computed eigenvalues within the near-1 tolerance are counted as ``near_one``.

    References
    ----------
    FNA eqs. (19)-(20), (33)-(35).

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[2.0, 1.0, 0.5], [1.0, 2.0, 1.0], [0.5, 1.0, 2.0]])
    >>> spec = markov_spectrum(C)
    >>> round(float(spec.eigenvalues[0]), 12), spec.method, spec.n_components
    (1.0, 'dense', 1)
    """
    method = check_option("method", method, METHODS)
    if dtype is not None:
        dtype = check_option("dtype", dtype, ("float32", "float64"))
    tol = check_real("tol", tol, low=0.0)
    if max_memory is not None:
        max_memory = check_real("max_memory", max_memory, low=0.0, low_open=True)
    if symmetric is not None and not isinstance(symmetric, bool):
        raise InputError(f"symmetric must be True, False or None, got {symmetric!r}")
    if _is_scipy_sparse(C):
        C, method, symmetric = _from_scipy_sparse(C, k=k, method=method, symmetric=symmetric, max_memory=max_memory)
    if _is_operator(C):
        spec, ncomp, exact = _operator_spectrum(C, k, method=method, vectors=vectors, strict=strict,
                                                symmetric=symmetric, tol=tol, dtype=dtype, rng=rng,
                                                max_memory=max_memory)
        return _with_near_one(spec, ncomp=ncomp, exact=exact, strict=strict, solver_tol=tol, complete=False)
    circulant = method == "circulant" or (method == "auto" and grid)
    # one tiled pass: NaN/inf, negatives, min, max and (not for the circulant path, whose structure
    # check replaces it) the symmetry defect; the row sums below are the only other checking pass
    xp, stats = scan_scores(C, square=True, symmetry=not circulant)
    n = C.shape[0]
    if n < 2:
        raise InputError(f"C must be at least 2 x 2, got shape {tuple(C.shape)}")
    if circulant:
        _check_k(k, n, method="circulant")
        check_circulant(C)
        spec = circulant_spectrum(C[0, :], k, vectors=vectors, strict=strict)
        if vectors:
            d = spec.degrees  # constant degree: S v = C v / d
            residual = symmetric_residual(lambda V: (C @ V) / d[:, None], spec.conjugate_vectors,
                                          spec.eigenvalues, d)
            spec = dataclasses.replace(spec, residual=residual)
        return spec
    d = checked_row_sums(C, cmax=stats.cmax)
    is_sym = stats.defect <= symmetry_tolerance(C.dtype)
    use_sym = is_sym if symmetric is None else (symmetric and is_sym)
    want_real = bool(symmetric) or use_sym
    ncomp = count_components(C, symmetric=is_sym, cmin=stats.cmin)  # no pass over C when min(C) > 0
    report_components(ncomp, True, strict)

    input_dtype = dtype_name(C.dtype)
    if method == "auto":
        _check_k(k, n, method="dense")
        candidates = ["dense"] if (k is None or n <= DENSE_MAX_N or k > n - 2) else []
        if k is not None and k <= n - 2:
            candidates += ["lanczos", "matrix-free"]
        # the toolkit's one rule (spectral.floor.memory.first_that_fits): the first path, in order of preference,
        # whose estimate fits; when none does, the last one is refused with its own message
        device = memory_device(C)
        needs = {cand: _path_bytes(cand, n, input_dtype, use_sym, vectors, dtype) for cand in candidates}
        method = first_that_fits(needs, memory_limit(device, max_memory, limit_name="max_memory"))
        if method is None:
            method = candidates[-1]
            _memory_check(method, n, k, input_dtype, use_sym, vectors, dtype, max_memory, device)
    else:
        _memory_check(method, n, k, input_dtype, use_sym, vectors, dtype, max_memory, memory_device(C))
    k = _check_k(k, n, method=method)
    if method in ("lanczos", "matrix-free") and k is None:
        raise InputError(f"k must be given (an integer in [1, n-2] = [1, {n - 2}]) for method={method!r}")

    if use_sym:
        spec = _symmetric_paths(C, d, xp, k=k, method=method, vectors=vectors, ncomp=ncomp, tol=tol,
                                dtype=dtype, rng=rng, max_memory=max_memory)
    else:
        spec = _general_paths(C, d, xp, k=k, method=method, vectors=vectors, ncomp=ncomp, tol=tol,
                              want_real=want_real, rng=rng)
    return _with_near_one(spec, ncomp=ncomp, exact=True, strict=strict, solver_tol=tol,
                          complete=k is None or k == n)


def _lanczos_dtype(n: int, dtype, input_dtype: str) -> str:
    if dtype is not None:
        return dtype
    return "float32" if n >= FLOAT32_FROM_N else input_dtype


def _dense_work(method, n, input_dtype, use_sym, vectors, dtype) -> tuple[int, str] | None:
    """``(copies, dtype)`` of the extra dense ``n x n`` arrays a path holds; ``None``: no ``n x n`` storage.

    dense symmetric: S, eigenvectors, LAPACK syevd workspace (~2 n^2), and S V for the
    residual: 5 copies.  dense general: A, complex V (2), workspace, inverse (2): 6
    (3 without vectors).  lanczos: one stored conjugate in the storage dtype.
    matrix-free: no n x n storage (its block basis is fitted to the memory when it runs,
    :func:`_basis_for_memory`).
    """
    if method == "dense":
        return (5 if use_sym else (6 if vectors else 3)), input_dtype
    if method == "lanczos":
        return 1, _lanczos_dtype(n, dtype, input_dtype)
    return None


def _path_bytes(method, n, input_dtype, use_sym, vectors, dtype) -> int:
    """Estimated bytes of a path's extra dense work (:func:`_dense_work`), as the memory guard counts them."""
    work = _dense_work(method, n, input_dtype, use_sym, vectors, dtype)
    return 0 if work is None else work[0] * dense_bytes(n, n, work[1])


def _memory_check(method, n, k, input_dtype, use_sym, vectors, dtype, max_memory, device="cpu") -> None:
    """Memory guard (:mod:`spectral.floor.memory`) for the extra dense n x n work of each path (:func:`_dense_work`)."""
    if method == "circulant":
        raise InputError("method='circulant' needs a circulant score matrix (grid=True) or circulant_spectrum")
    work = _dense_work(method, n, input_dtype, use_sym, vectors, dtype)
    if work is None:
        return
    copies, storage = work
    if method == "dense":
        lighter = ("use method='lanczos' or method='matrix-free' with k <= n-2 leading eigenpairs"
                   if k is not None and k <= n - 2 else
                   "ask for k <= n-2 leading eigenpairs with method='matrix-free' (no stored matrix)")
        check_dense_memory(n, dtype=storage, copies=copies, max_bytes=max_memory, limit_name="max_memory",
                           what="dense eigensolver workspace", alternative=lighter, device=device)
    else:
        check_dense_memory(n, dtype=storage, copies=copies, max_bytes=max_memory,
                           limit_name="max_memory", what="stored conjugate matrix for Lanczos",
                           alternative="use method='matrix-free' (no stored matrix) or dtype='float32'", device=device)


def _symmetric_paths(C, d, xp, *, k, method, vectors, ncomp, tol, dtype, rng, max_memory=None):
    n = C.shape[0]
    s = 1.0 / xp.sqrt(d)
    if method == "dense":
        S = C * s[:, None]  # (C_ij s_i) s_j: one n x n temporary instead of two
        S *= s[None, :]
        w, V = backend.eigh(S)
        return symmetric_spectrum(w, V, d, k=k, vectors=vectors, method="dense",
                                  solver=f"{backend.namespace_name(xp)}.linalg.eigh", apply_S=lambda X: S @ X,
                                  ncomp=ncomp, exact=True, storage=dtype_name(C.dtype))
    native = xp is np or backend.is_cupy_array(C)  # other namespaces: ARPACK on a host copy
    if method == "lanczos":
        sd = _lanczos_dtype(n, dtype, dtype_name(C.dtype))
        sd_x = getattr(xp, sd)
        s_sd = _astype(s, sd_x, xp)
        if xp is np:  # cast and first scaling in one pass (same float ops as cast, then multiply)
            S = np.multiply(C, s_sd[:, None], dtype=sd_x)
        else:
            S = _astype(C, sd_x, xp, copy=True)
            S *= s_sd[:, None]
        S *= s_sd[None, :]
        target = S if native else to_numpy(S)
        on_gpu = backend.is_cupy_array(C)
        # the same seeded start on both: ARPACK's, and cupyx's (backend.eigsh moves it to the device, in S's dtype)
        v0 = _v0(n, rng)
        w, V = _arpack(lambda: backend.eigsh(target, k, which="LA", v0=v0, tol=tol),
                       what="eigsh, method='lanczos'", k=k, tol=tol)
        w = w if on_gpu else from_numpy(np.asarray(w, dtype=np.float64), like=C)
        V = V if on_gpu else from_numpy(np.asarray(V), like=C)
        V = _astype(V, C.dtype, xp)
        w = _astype(w, C.dtype, xp)
        V = V / column_norms(V)[None, :]
        apply_S = lambda X: _astype(S @ _astype(X, sd_x, xp), C.dtype, xp)  # noqa: E731
        return symmetric_spectrum(w, V, d, k=k, vectors=vectors, method="lanczos",
                                  solver="cupyx.scipy.sparse.linalg.eigsh" if on_gpu else "scipy.sparse.linalg.eigsh",
                                  apply_S=apply_S, ncomp=ncomp, exact=True, storage=sd)

    # matrix-free over the stored C: S v = s * (C (s * v)), no second n x n array
    def apply_S(X):
        return s[:, None] * (C @ (s[:, None] * X))

    return _matrix_free_symmetric(apply_S, d, xp, like=C, n=n, k=k, vectors=vectors, ncomp=ncomp, exact=True,
                                  tol=tol, rng=rng, storage=dtype_name(C.dtype), max_memory=max_memory)


def _matrix_free_symmetric(apply_S, d, xp, *, like, n, k, vectors, ncomp, exact, tol, rng, storage,
                           apply_fast=None, fast_storage=None, max_memory=None):
    """Block Krylov-Schur (:func:`spectral.block.block_eigsh`) on block products with ``S``.

    ``apply_fast`` (float32 kernel tiles of an operator) drives the iteration first; ``apply_S``
    then refines from its Ritz vectors. The residual is measured with the accurate images that the
    solver returns (no further product).
    """
    b = block_size(k, n)
    m = _basis_for_memory(n, k, b, max_memory, memory_device(like))
    # eigenvalues only, default accuracy: stop on the eigenvalue error bound (the vectors need the residual)
    eig_tol = DEFAULT_EIG_TOL if tol == 0 and not vectors else 0.0
    res = block_eigsh(apply_S, n, k, like=like, apply_fast=apply_fast, tol=tol, eig_tol=eig_tol, block=b,
                      max_basis=m, rng=rng, max_products=BLOCK_MAX_PRODUCTS)
    V, AV = res.vectors, res.images
    Vt = V.T if not hasattr(xp, "matrix_transpose") else xp.matrix_transpose(V)

    def images(X):  # S X for X in the span of the Ritz vectors, from the stored images
        return AV @ (Vt @ X)

    phases = (f"{res.fast_products} {fast_storage} + {res.products} {storage}" if res.fast_products
              else f"{res.products} {storage}")
    solver = f"spectral.block_eigsh (block Krylov-Schur, {phases} block products, width {b})"
    if eig_tol > 0:
        solver = solver[:-1] + f"; eigenvalue error bound {res.eigenvalue_bound:.1e})"
    return symmetric_spectrum(res.eigenvalues, V, d, k=k, vectors=vectors, method="matrix-free", solver=solver,
                              apply_S=images, ncomp=ncomp, exact=exact, storage=storage)


def _basis_for_memory(n: int, k: int, b: int, max_memory, device: str = "cpu") -> int:
    """Largest basis (columns) of the block solver within the memory limit, at most its default.

    The solver holds the basis and its images (``2 n m`` float64) plus four ``n x (k + b)`` blocks
    (:func:`spectral.block.block_workspace_bytes`); refused (:class:`DenseMemoryError`) when even
    ``m = k + 2 b`` does not fit.
    """
    default = basis_size(k, b, n)
    limit = available_memory_bytes(device) if max_memory is None else int(max_memory)
    fixed = block_workspace_bytes(n, k, block=b, max_basis=0)
    fits = (limit - fixed) // (2 * n * 8)
    low = min(n, k + 2 * b)
    if fits < low:
        check_memory(block_workspace_bytes(n, k, block=b, max_basis=low), max_bytes=limit if max_memory else None,
                     limit_name="max_memory", what=f"block eigensolver basis of {low} vectors of length {n}",
                     alternative="ask for fewer eigenpairs (a smaller k)", device=device)
    return int(min(default, fits))


def _general_paths(C, d, xp, *, k, method, vectors, ncomp, tol, want_real, rng):
    """Non-symmetric ``C``: eigenpairs of ``A = D^-1 C`` on the host (numpy eig / ARPACK eigs)."""
    if backend.is_cupy_array(C):
        return _general_on_device(C, d, xp, k=k, method=method, vectors=vectors, ncomp=ncomp, tol=tol,
                                  want_real=want_real, rng=rng)
    n = C.shape[0]
    Ch = to_numpy(C)
    dh = to_numpy(d)
    if method == "dense":
        A = Ch / dh[:, None]
        if vectors:
            w, Vr = np.linalg.eig(A)
        else:
            w, Vr = np.linalg.eigvals(A), None
            # the residual needs vectors; for eigenvalues only it is not measured
        return general_spectrum(w.astype(complex), Vr, apply_A=lambda X: A @ X, d=d, like=C, k=k,
                                vectors=vectors, method="dense", solver="numpy.linalg.eig", ncomp=ncomp,
                                exact=True, want_real=want_real, n=n)
    import scipy.sparse.linalg as sla

    if method == "lanczos":
        A = Ch / dh[:, None]
        target = A
        apply_A = lambda X: A @ X  # noqa: E731
    else:
        def apply_A(X):
            return (Ch @ X) / dh[:, None] if X.ndim == 2 else (Ch @ X) / dh
        target = sla.LinearOperator((n, n), matvec=apply_A, matmat=apply_A, dtype=Ch.dtype)
    w, Vr = _arpack(lambda: sla.eigs(target, k=k, which="LM", v0=_v0(n, rng), tol=tol),
                    what=f"eigs, method={method!r}", k=k, tol=tol)
    return general_spectrum(w, Vr, apply_A=apply_A, d=d, like=C, k=k, vectors=vectors,
                            method=method, solver="scipy.sparse.linalg.eigs", ncomp=ncomp, exact=True,
                            want_real=want_real, n=n)


def _general_on_device(C, d, xp, *, k, method, vectors, ncomp, tol, want_real, rng):
    """Non-symmetric ``C`` on a CUDA device: ``A = D^-1 C`` is formed and kept there.

    dense: ``cupy.linalg.eig`` / ``eigvals`` (cuSOLVER ``geev``: CuPy >= 14 with CUDA >= 12.6), refused
    with :class:`~spectral.floor.validation.UnavailableError` where CuPy lacks it; the eigenvalues (and, with
    ``vectors``, the eigenvectors: the result itself) come to the host for ordering, phases and left vectors.
    lanczos / matrix-free: ARPACK ``eigs`` is a host-only SciPy routine (CuPy has no non-symmetric Krylov
    solver): it runs on the host with every product ``A X`` computed on the device; one vector (block) crosses
    each way per product, never ``A``.
    """
    cp = sys.modules["cupy"]
    n = C.shape[0]
    A = C / d[:, None]

    def apply_A(X):
        X = np.asarray(X)
        if np.iscomplexobj(X):
            return apply_A(X.real) + 1j * apply_A(X.imag)
        return to_numpy(A @ from_numpy(np.ascontiguousarray(X), like=C))

    if method == "dense":
        eig = getattr(cp.linalg, "eig" if vectors else "eigvals", None)
        if eig is None:
            raise UnavailableError(
                f"the non-symmetric dense spectrum on the GPU needs cupy.linalg.{'eig' if vectors else 'eigvals'} "
                f"(CuPy >= 14 with CUDA >= 12.6), which CuPy {getattr(cp, '__version__', '?')} lacks; copy the "
                "scores to the host (spectral.floor.backend.to_numpy(C)) or ask for k leading eigenvalues with "
                "method='lanczos'")
        if vectors:
            w, Vr = eig(A)
            w, Vr = to_numpy(w).astype(complex), to_numpy(Vr)
        else:
            w, Vr = to_numpy(eig(A)).astype(complex), None
        return general_spectrum(w, Vr, apply_A=apply_A, d=d, like=C, k=k, vectors=vectors, method="dense",
                                solver=f"cupy.linalg.{'eig' if vectors else 'eigvals'}", ncomp=ncomp, exact=True,
                                want_real=want_real, n=n)
    import scipy.sparse.linalg as sla

    target = sla.LinearOperator((n, n), matvec=apply_A, matmat=apply_A, dtype=np.float64)
    w, Vr = _arpack(lambda: sla.eigs(target, k=k, which="LM", v0=_v0(n, rng), tol=tol),
                    what=f"eigs, method={method!r}", k=k, tol=tol)
    return general_spectrum(w, Vr, apply_A=apply_A, d=d, like=C, k=k, vectors=vectors, method=method,
                            solver="scipy.sparse.linalg.eigs (host) on products with A on the GPU", ncomp=ncomp,
                            exact=True, want_real=want_real, n=n)


def _operator_spectrum(op, k, *, method, vectors, strict, symmetric, tol, dtype, rng, max_memory=None):
    """Matrix-free spectrum of an operator; returns ``(Spectrum, n_components, exact)``."""
    if method not in ("auto", "matrix-free"):
        raise InputError(f"method must be 'auto' or 'matrix-free' for an operator C (no stored matrix), "
                         f"got {method!r}")
    shape = tuple(op.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"C must be a square operator (n, n), got shape {shape}")
    n = shape[0]
    k = _check_k(k, n, method="matrix-free")
    if k is None:
        raise InputError(f"k must be given (an integer in [1, n-2] = [1, {n - 2}]) for an operator C")
    d = op.row_sums()
    xp = array_namespace(d)
    if not bool(xp.all(xp.isfinite(d))) or not bool(xp.all(d > 0)):
        bad = np.flatnonzero(~(to_numpy(d) > 0))
        raise InputError(f"C has a zero or non-finite row sum (first at row {int(bad[0]) if bad.size else '?'})")
    op_sym = getattr(op, "symmetric", None)
    if op_sym is None and getattr(op, "x", None) is not None and getattr(op, "y", None) is op.x:
        op_sym = True  # KernelOperator with keys = queries: a kernel of a (symmetric) distance
    if symmetric is None:
        if op_sym is None:
            raise InputError("symmetric must be given (True/False) for an operator C without a 'symmetric' "
                             "attribute and with keys different from queries")
        symmetric = bool(op_sym)
    low = getattr(op, "min_score", None)
    stored = isinstance(op, SparseScores)
    if low is not None and low > 0:
        ncomp, exact = 1, True  # every off-diagonal score is positive: the graph C > 0 is complete
    elif stored:
        ncomp, exact = sparse_components(op.matrix, symmetric=symmetric), True  # O(nnz), no matvec
    else:
        ncomp, exact = operator_components(op, n, d, symmetric=symmetric, strict=strict)
    report_components(ncomp, exact, strict)
    storage = dtype_name(getattr(op, "dtype", "float64"))
    if symmetric and stored:
        return _stored_sparse_symmetric(op, d, k=k, vectors=vectors, ncomp=ncomp, tol=tol, dtype=dtype,
                                        rng=rng), ncomp, exact
    if symmetric:
        s = 1.0 / xp.sqrt(d)
        tiles = _tile_precisions(op, storage, dtype)
        trusted = _trusted(op)

        def product(tile_dtype):
            def apply(X):
                if tile_dtype is None:
                    return s[:, None] * _op_matmat(op, s[:, None] * X, xp, **trusted)
                return s[:, None] * op.matmat(s[:, None] * X, tile_dtype=tile_dtype, **trusted)
            return apply

        fast, accurate = tiles
        spec = _matrix_free_symmetric(product(accurate), d, xp, like=d, n=n, k=k, vectors=vectors, ncomp=ncomp,
                                      exact=exact, tol=_block_tol(tol, accurate or storage), rng=rng,
                                      storage=accurate or storage,
                                      apply_fast=None if fast is None else product(fast), fast_storage=fast,
                                      max_memory=max_memory)
        return spec, ncomp, exact
    import scipy.sparse.linalg as sla

    dh = to_numpy(d)

    def apply_A(X):
        X2 = X.reshape(n, -1)
        out = to_numpy(_op_matmat(op, from_numpy(np.ascontiguousarray(X2.real), like=d), xp))
        if np.iscomplexobj(X2):
            out = out + 1j * to_numpy(_op_matmat(op, from_numpy(np.ascontiguousarray(X2.imag), like=d), xp))
        return (out / dh[:, None]).reshape(X.shape)

    target = sla.LinearOperator((n, n), matvec=apply_A, matmat=apply_A, dtype=np.float64)
    w, Vr = _arpack(lambda: sla.eigs(target, k=k, which="LM", v0=_v0(n, rng), tol=tol),
                    what="eigs on the operator", k=k, tol=tol)
    spec = general_spectrum(w, Vr, apply_A=apply_A, d=d, like=d, k=k, vectors=vectors, method="matrix-free",
                            solver="scipy.sparse.linalg.eigs(LinearOperator)", ncomp=ncomp, exact=exact,
                            want_real=False, n=n)
    return spec, ncomp, exact


def _stored_sparse_symmetric(op, d, *, k, vectors, ncomp, tol, dtype, rng) -> Spectrum:
    """ARPACK (``eigsh``) on the symmetric conjugate of stored sparse scores, one sparse product per vector.

    A product with a stored CSR matrix costs O(nnz) and needs no kernel evaluation, so ARPACK's many
    cheap single-vector products usually beat the block solver's few block products, which pay for
    orthogonalising a wide basis; the block solver wins where a product is expensive (kernel tiles
    recomputed, :class:`spectral.KernelOperator`). Measured with ``benchmarks/bench_spectral.py
    --sections solver-choice`` (heat kernel, k = 10, one BLAS thread, interleaved runs on a loaded
    machine; medians of 3 at n = 2000 and 8000, one run at 20000), time of this path over the block
    solver's at n = 2000, 8000, 20000: swiss roll 0.21, 0.31, 0.40 (the block solver needed 52, 130,
    300 block products); random S^2 points 0.53, 0.43, 0.47; Gaussian mixture 0.48, 0.77, 0.93
    (~400-2000 neighbours per point); eigenvalues agree to <= 2.3e-14. On the FNA kernel operator
    ARPACK took 120 kernel sweeps and 7.7x the block solver's time at n = 2000, 6.7x at 5000. On S^2 the
    10th eigenvalue lies in a near-multiple cluster that single-vector Lanczos resolves slowly with
    scipy's default basis of 21 vectors (hence :data:`SPARSE_ARPACK_NCV`). ``tol`` is ARPACK's
    relative accuracy (0: machine precision), as on the Lanczos path; ``v0`` is drawn from ``rng``.
    """
    import scipy.sparse.linalg as sla

    n = op.shape[0]
    M = op.matrix if dtype is None else op.matrix.astype(dtype)
    storage = dtype_name(M.dtype)
    s = (1.0 / np.sqrt(d)).astype(M.dtype)

    def apply_S(X):
        return s[:, None] * (M @ (s[:, None] * X)) if X.ndim == 2 else s * (M @ (s * X))

    target = sla.LinearOperator((n, n), matvec=apply_S, matmat=apply_S, dtype=M.dtype)
    ncv = min(n - 1, max(2 * k + 1, SPARSE_ARPACK_NCV))
    w, V = _arpack(lambda: sla.eigsh(target, k, which="LA", v0=_v0(n, rng).astype(M.dtype), tol=tol, ncv=ncv),
                   what="eigsh on the stored sparse scores", k=k, tol=tol)
    w = np.asarray(w, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    V = V / column_norms(V)[None, :]
    return symmetric_spectrum(w, V, d, k=k, vectors=vectors, method="matrix-free",
                              solver="scipy.sparse.linalg.eigsh (ARPACK on the stored sparse scores)",
                              apply_S=lambda X: np.asarray(apply_S(X), dtype=np.float64), ncomp=ncomp,
                              exact=True, storage=storage)


def _trusted(op) -> dict:
    """``{"check_finite": False}`` for an operator whose ``matmat`` takes it (:class:`spectral.KernelOperator`),
    else ``{}``: the block solver's vectors are finite by construction (it checks every product's result), so
    the per-product input check (a pass over X; on a GPU a host synchronisation) is left out of its loop."""
    try:
        takes = hasattr(op, "matmat") and "check_finite" in inspect.signature(op.matmat).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        takes = False
    return {"check_finite": False} if takes else {}


def _op_matmat(op, X, xp, **options):
    """Apply an operator to the columns of ``X`` (uses ``op.matmat`` when it exists; ``options`` go to it)."""
    if hasattr(op, "matmat"):
        return op.matmat(X, **options)
    try:
        out = op.matvec(X)  # KernelOperator.matvec accepts (n, k) blocks
        if tuple(out.shape) == tuple(X.shape):
            return out
    except (ValueError, TypeError):
        pass
    cols = [op.matvec(X[:, j]) for j in range(X.shape[1])]
    return xp.stack(cols, axis=1)


def _tile_precisions(op, storage: str, dtype):
    """(cheap, accurate) tile dtypes of an operator's block products; None: the operator's own products.

    Operators whose ``matmat`` takes ``tile_dtype`` (:class:`spectral.KernelOperator`) with float64
    points iterate on float32 tiles first and refine on float64 tiles (``dtype=None``); ``dtype``
    fixes one precision for both phases.
    """
    takes = hasattr(op, "matmat") and "tile_dtype" in inspect.signature(op.matmat).parameters
    if not takes:
        return None, None
    if dtype is not None:
        return None, dtype
    if storage == "float64":
        return "float32", "float64"
    return None, storage


def _block_tol(tol: float, storage: str) -> float:
    """Residual target of the block solver: ``tol``, or for 0 the default of the tile precision.

    float64: sqrt(eps64) = 1.5e-8 (:data:`spectral.block.DEFAULT_TOL`); float32 tiles have a rounding
    floor near 1e-6 (relative), so their default is :data:`FLOAT32_BLOCK_TOL`.
    """
    if tol > 0:
        return tol
    return FLOAT32_BLOCK_TOL if storage == "float32" else 0.0
