"""Score matrices that are not dense arrays: matrix-free (:class:`KernelOperator`), sparse
(:class:`SparseScores`), and the memory-guarded dense builder :func:`pairwise`.

An operator has ``shape``, ``dtype``, ``symmetric``, ``matvec`` / ``@``, ``rmatvec``, ``row_sums``
and ``to_dense``: the interface :func:`spectral.markov_spectrum` accepts for its matrix-free path.
:class:`KernelOperator` recomputes blocks of rows in every product (memory ``O(block_rows m)``, any
array namespace, e.g. CuPy); :class:`SparseScores` wraps a SciPy CSR matrix on the host.
"""

from __future__ import annotations

import numpy as np

from spectral.arrays import as_float_array, like_array, matrix_transpose, numpy_dtype
from spectral.memory import check_dense_memory
from spectral.validation import InputError, check_int

__all__ = ["KernelOperator", "SparseScores", "pairwise"]

# Working-memory budget of one block on non-NumPy backends (GPUs want large blocks).
DEFAULT_BLOCK_BYTES = 64 << 20
# NumPy operator blocks: four (b, m) temporaries of ~1 MiB each stay in a 2 MiB L2 cache; measured
# 15-18 ns/entry for an FNA matvec at 1 MiB blocks vs 49 ns/entry at 16 MiB blocks (n = 20000, loaded host).
HOST_BLOCK_BYTES = 4 << 20


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
            raise InputError(f"matrix must be a 2-d scipy.sparse array, got {type(matrix).__name__}")
        self.matrix = sp.csr_array(matrix)
        if not np.all(np.isfinite(self.matrix.data)) or (self.matrix.nnz and self.matrix.data.min() < 0):
            raise InputError("matrix entries must be finite and >= 0 (scores)")
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
        check_dense_memory(self.shape[0], self.shape[1], dtype=self.dtype, max_bytes=max_bytes,
                           what="dense copy of the sparse scores",
                           alternative="use the sparse matrix (.matrix) or the products (matvec, @) instead")
        return self.matrix.toarray()

    def __repr__(self) -> str:
        return f"SparseScores(shape={self.shape}, nnz={self.nnz}, symmetric={self.symmetric})"


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
            raise InputError(f"kernel must be callable (distance block -> score block), got {type(kernel).__name__}")
        if not callable(distance):
            raise InputError(f"distance must be callable (xa, xb) -> distance block, got {type(distance).__name__}")
        xp, x = as_float_array(x, "x")
        if x.ndim == 1:
            x = xp.reshape(x, (-1, 1))
        if x.ndim != 2:
            raise InputError(f"x must be a 1-d or 2-d array of points, got shape {tuple(x.shape)}")
        if dtype is not None:
            x = xp.astype(x, dtype)
        if y is None:
            y = x
        else:
            y = like_array(y, "y", like=x)
            if y.ndim == 1:
                y = xp.reshape(y, (-1, 1))
            if y.ndim != 2 or y.shape[1] != x.shape[1]:
                raise InputError(f"y must have shape (m, {x.shape[1]}) like x, got {tuple(y.shape)}")
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
        itemsize = numpy_dtype(x.dtype).itemsize
        if block_rows is None:
            budget = HOST_BLOCK_BYTES if xp is np else DEFAULT_BLOCK_BYTES
            block_rows = max(1, budget // (4 * m * itemsize))
        else:
            block_rows = check_int("block_rows", block_rows, low=1)
        self.block_rows = min(block_rows, max(n, 1))

    def _blocks(self):
        n = self.shape[0]
        for start in range(0, n, self.block_rows):
            stop = min(n, start + self.block_rows)
            c = self.kernel(self.distance(self.x[start:stop, ...], self.y))
            if tuple(c.shape) != (stop - start, self.shape[1]):
                raise InputError(
                    f"kernel(distance(xa, xb)) must return a ({stop - start}, {self.shape[1]}) block, "
                    f"got shape {tuple(c.shape)}"
                )
            yield start, stop, c

    def _vector(self, v, length: int, name: str):
        v = like_array(v, name, like=self.x)
        if v.ndim not in (1, 2) or v.shape[0] != length:
            raise InputError(f"{name} must have shape ({length},) or ({length}, k), got {tuple(v.shape)}")
        return v

    def matvec(self, v):
        """``C @ v`` for ``v`` of shape (m,) or (m, k), block by block."""
        v = self._vector(v, self.shape[1], "v")
        parts = [c @ v for _, _, c in self._blocks()]
        return parts[0] if len(parts) == 1 else self._xp.concat(parts, axis=0)

    def rmatvec(self, v):
        """``C^T @ v`` for ``v`` of shape (n,) or (n, k), block by block."""
        v = self._vector(v, self.shape[0], "v")
        out = None
        for start, stop, c in self._blocks():
            part = matrix_transpose(c) @ v[start:stop, ...]
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
        check_dense_memory(n, m, dtype=self.dtype, max_bytes=max_bytes, what="dense copy of the kernel operator",
                           alternative="use the operator's products (matvec, @) or markov_spectrum(operator, k)")
        parts = [c for _, _, c in self._blocks()]
        return parts[0] if len(parts) == 1 else self._xp.concat(parts, axis=0)

    def aslinearoperator(self):
        """A :class:`scipy.sparse.linalg.LinearOperator` view (NumPy inputs only)."""
        if self._xp is not np:
            raise InputError("aslinearoperator needs NumPy points; use matvec directly on other backends")
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
        raise InputError("kernel and distance must be callables (see KernelOperator)")
    xp, x = as_float_array(x, "x")
    if x.ndim == 1:
        x = xp.reshape(x, (-1, 1))
    yy = x if y is None else like_array(y, "y", like=x)
    if yy.ndim == 1:
        yy = xp.reshape(yy, (-1, 1))
    check_dense_memory(x.shape[0], yy.shape[0], dtype=x.dtype, copies=2, max_bytes=max_bytes,
                       what="dense score matrix (distances and scores)",
                       alternative="use KernelOperator(x, kernel=..., distance=...) for matrix-free products")
    return kernel(distance(x, yy))
