"""Score matrices that are not dense arrays: matrix-free (:class:`KernelOperator`), sparse
(:class:`SparseScores`), and the memory-guarded dense builder :func:`pairwise`.

An operator has ``shape``, ``dtype``, ``symmetric``, ``matvec`` / ``@``, ``rmatvec``, ``row_sums``
and ``to_dense``: the interface :func:`spectral.markov_spectrum` accepts for its matrix-free path.
:class:`KernelOperator` recomputes blocks of rows in every product (memory ``O(block_rows m)``, any
array namespace, e.g. CuPy); :class:`SparseScores` wraps a SciPy CSR matrix on the host.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from spectral import distributed
from spectral.floor.arrays import as_float_array, like_array, matrix_transpose, numpy_dtype
from spectral.floor.backend import array_namespace, dtype_name, is_cupy_array, namespace_name, to_numpy
from spectral.floor.memory import check_dense_memory, device_memory_bytes, memory_device
from spectral.parts import Part, ProductLayout
from spectral.tiles import PROFILES, Workspace, distance_geometry, plan_or_reason, warn_generic
from spectral.floor.validation import InputError, check_int, check_option

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
        """``C @ v`` for ``v`` of shape (m,) or (m, k) (NumPy: the matrix lives on the host)."""
        return self.matrix @ _host_vector(v)

    def __matmul__(self, v):
        return self.matvec(v)

    def rmatvec(self, v):
        """``C^T @ v`` for ``v`` of shape (n,) or (n, k) (NumPy: the matrix lives on the host)."""
        return self.matrix.T @ _host_vector(v)

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


def _host_vector(v):
    """``v`` as a NumPy array, or a clear refusal of a device array (the CSR matrix is SciPy's, on the host)."""
    if isinstance(v, np.ndarray) or not hasattr(v, "__array_namespace__") and not is_cupy_array(v):
        return np.asarray(v)
    raise InputError(f"SparseScores holds a SciPy CSR matrix on the host and multiplies NumPy vectors only, got "
                     f"{type(v).__module__}.{type(v).__name__}; copy the vector to the host "
                     "(spectral.floor.backend.to_numpy(v)), or use KernelOperator(x, kernel=..., distance=...) for "
                     "products on the device")


class KernelOperator:
    r"""Matrix-free score matrix: ``C @ X`` computed tile by tile without storing ``C``.

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
        Key points; default ``x`` (then ``C`` is symmetric and products use each tile twice).
    block_rows : int, optional
        Rows per block of the non-symmetric products; default from a working-set budget of about
        four ``(b, m)`` temporaries (distances, scores, the kernel's intermediates): 4 MiB for
        NumPy (cache-sized blocks, 3x faster than 64 MiB ones here), 64 MiB for other backends
        (GPUs want large blocks).
    dtype : dtype, optional
        Dtype of the points, distances and scores (e.g. ``float32`` to halve the
        traffic); default the dtype of ``x``.
    zero_diagonal : bool
        Leave out the self scores ``C_ii`` (keys = queries only): the matrix is ``C - diag(C)``.
        On i.i.d. points the self score is an atom that biases every eigenvalue.
    tile : int, optional
        Edge of the square tiles of the symmetric products; default from the same budget
        (about four ``tile x tile`` temporaries).
    fused : bool
        Evaluate tiles through a :class:`spectral.tiles.TilePlan` when the kernel declares its profile
        (:mod:`spectral.profiles`: ``functools.partial(fna_kernel, ...)`` or ``partial(heat_kernel, ...)`` in any
        form, an object with ``tile_profile()`` such as :class:`spectral.ProfileKernel`) and the distance its
        geometry (``Circle``/``Sphere``/``Euclidean`` distances): per-point data once, distance and score in
        one pass, no per-tile input checks; on CuPy one CUDA kernel per block product (:attr:`plan` and
        :attr:`tiles` say which). ``False``: always ``kernel(distance(xa, xb))``. A kernel without a profile
        on a fusable distance takes the generic path with a :class:`spectral.tiles.GenericTilesWarning`
        (once per process and reason).
    engine : {"auto", "numba", "numpy"}
        Host engine of the fused tiles (:func:`spectral.tiles.host_engine`): ``auto`` compiles them with
        Numba where it is installed (the ``fast`` extra; 2-4x faster per entry here, a few ulps from the NumPy
        tiles), else NumPy; ``numpy`` is the reference (bitwise the generic tiles in float64).
    parts : int, optional
        The block plan of the products (:meth:`layout`): the rows are split into ``parts`` independent parts,
        each evaluated alone and combined in a fixed order, so a product gives the same bits in one process
        and on a Dask cluster of any size. Default: 1 in one process (the products as they always were); on
        a cluster, the cluster's default (:class:`spectral.distributed.Workers`, else one part per worker
        thread, fixed at the first product).
    client : dask.distributed.Client or spectral.distributed.Workers, optional
        Run the products' parts on this Dask cluster (:mod:`spectral.distributed`): the points are scattered
        to the workers once, each part is one task, the results are gathered in a fixed order. Default: the
        cluster of an enclosing ``with spectral.distributed.use_client(client):``, else this process.

    Notes
    -----
    ``distance`` may be any pairwise block function: metric attention is
    ``distance=lambda a, b: d(g(a), g(b))`` with ``kernel=partial(heat_kernel, eps=...)``,
    and any positive score of a pairwise statistic fits the same pattern.

    Each product recomputes the scores, trading time for memory: the resident set is
    ``O(tile^2 + n k)``. With keys = queries (``y`` omitted) :meth:`matmat` computes only the tiles
    on and above the diagonal and uses each twice (``C_IJ X_J`` and ``C_IJ^T X_I``): half the kernel
    evaluations, and ``C`` is exactly symmetric (its upper triangle defines it). A block product
    ``C @ X`` with ``X`` of ``k`` columns evaluates the kernel once for all ``k`` columns, which is
    what the block eigensolver of :func:`spectral.markov_spectrum` relies on; ``tile_dtype``
    evaluates the tiles in another precision (e.g. float32) and accumulates in the dtype of ``X``.
    The same code runs on CuPy arrays.  ``.shape``, ``.dtype``, ``matvec``, ``rmatvec`` and ``@``
    follow :class:`scipy.sparse.linalg.LinearOperator` (:meth:`aslinearoperator` wraps it for SciPy
    solvers on NumPy inputs).  ``symmetric`` is True when ``y`` is omitted (``C(x, x)`` of a symmetric
    distance); :func:`spectral.markov_spectrum` reads it to choose the symmetric-conjugate path.
    """

    def __init__(self, x, *, kernel, distance, y=None, block_rows=None, dtype=None, zero_diagonal=False, tile=None,
                 fused=True, engine="auto", parts=None, client=None):
        if not callable(kernel):
            raise InputError(f"kernel must be callable (distance block -> score block), got {type(kernel).__name__}")
        if not callable(distance):
            raise InputError(f"distance must be callable (xa, xb) -> distance block, got {type(distance).__name__}")
        if not isinstance(zero_diagonal, bool):
            raise InputError(f"zero_diagonal must be True or False, got {zero_diagonal!r}")
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
            if zero_diagonal:
                raise InputError("zero_diagonal needs keys = queries (leave y out)")
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
        self.zero_diagonal = zero_diagonal
        self.kernel = kernel
        self.distance = distance
        n, m = x.shape[0], y.shape[0]
        self.shape = (n, m)
        self.dtype = x.dtype
        itemsize = numpy_dtype(x.dtype).itemsize
        budget = HOST_BLOCK_BYTES if xp is np else _device_block_bytes(x)
        if block_rows is None:
            block_rows = max(1, budget // (4 * m * itemsize))
        else:
            block_rows = check_int("block_rows", block_rows, low=1)
        self.block_rows = min(block_rows, max(n, 1))
        if tile is None:
            tile = max(64, math.isqrt(budget // (4 * itemsize)))
        else:
            tile = check_int("tile", tile, low=1)
        self.tile = min(tile, max(n, 1))
        self._cast = {dtype_name(x.dtype): x}
        #: smallest off-diagonal score, recorded by :meth:`row_sums` (None before, or when unknown)
        self.min_score = None
        if not isinstance(fused, bool):
            raise InputError(f"fused must be True or False, got {fused!r}")
        #: the fused tile plan (:class:`spectral.tiles.TilePlan`), or None: tiles are kernel(distance(xa, xb))
        self.plan = None
        why = "fused=False"
        if fused:
            self.plan, why = plan_or_reason(kernel, distance, engine=engine)
            if self.plan is not None and not _plan_fits(self.plan, int(x.shape[1])):
                self.plan, why = None, f"points of {int(x.shape[1])} coordinates do not fit the {self.plan.geometry} tiles"
            elif self.plan is None and distance_geometry(distance) is not None:
                warn_generic(why)  # a fusable distance: the kernel alone keeps the operator off the fused path
        #: one line: which tiles the products evaluate (fused, and how; or generic, and why)
        self.tiles = (self.plan.describe(namespace_name(xp)) if self.plan is not None
                      else f"generic tiles kernel(distance(xa, xb)): {why}")
        self._prepared = None
        self._columns = None
        self.parts = None if parts is None else check_int("parts", parts, low=1)
        self.client = client
        #: device hooks of :meth:`spectral.tiles.TilePlan.device_product` (module, compiler): a stand-in device
        #: (tests; set by :func:`spectral.distributed.device_operator`); None: CuPy
        self._device_hooks = None
        #: the products on a Dask cluster (:class:`spectral.distributed.RemoteProducts`: parts, workers,
        #: traffic), made at the first product on one; None while the products run in this process
        self.distribution = None

    # ------------------------------------------------------------------------------ blocks

    def _score(self, xa, xb, rows: int, cols: int):
        c = self.kernel(self.distance(xa, xb))
        if tuple(c.shape) != (rows, cols):
            raise InputError(f"kernel(distance(xa, xb)) must return a ({rows}, {cols}) block, got shape "
                             f"{tuple(c.shape)}")
        return c

    def _without_diagonal(self, c, start: int):
        """Zero the entries ``C_ii`` of a row block starting at row ``start`` (``zero_diagonal``)."""
        xp = self._xp
        rows = c.shape[0]
        if xp is np:
            c[np.arange(rows), start + np.arange(rows)] = 0.0
            return c
        cols = xp.arange(c.shape[1])[None, :]
        mask = cols == (start + xp.arange(rows))[:, None]
        return xp.where(mask, xp.zeros_like(c), c)

    def _blocks(self):
        yield from self._blocks_in(self.dtype)

    def _prepare(self):
        """Prepared points of the plan (rows, columns), made once."""
        if self._prepared is None:
            pa = self.plan.prepare(self.x)
            self._prepared = (pa, pa if self.y is self.x else self.plan.prepare(self.y))
        return self._prepared

    def _compiled_columns(self):
        """The column points as the compiled tiles read them (``(D, m)`` contiguous), made once."""
        if self._columns is None:
            self._columns = self.plan.columns(self._prepare()[1])
        return self._columns

    def _workspace(self):
        """Reused tile buffers of the fused NumPy tiles (None on other namespaces)."""
        if self._xp is not np:
            return None
        if getattr(self, "_work", None) is None:
            self._work = Workspace(self.tile)
        return self._work

    def _on_device(self) -> bool:
        """True when the products run as the plan's one CUDA kernel (CuPy points, a fused compiled profile)."""
        return self.plan is not None and self.plan.kind in PROFILES and (
            is_cupy_array(self.x) or self._device_hooks is not None)

    def _device_product(self, pa, pb, X, **kwargs):
        """:meth:`spectral.tiles.TilePlan.device_product` on this operator's device (CuPy, or the stand-in);
        its device memory checked only when more columns than before are asked (a driver call: once per
        operator and width, not in every product of a solver's loop)."""
        if self._device_hooks is not None:
            kwargs["_module"], kwargs["_compile"] = self._device_hooks
        k = int(X.shape[1])
        checked = getattr(self, "_device_checked", 0)
        out = self.plan.device_product(pa, pb, X, check_memory=k > checked, **kwargs)
        self._device_checked = max(k, checked)
        return out

    def _compiled(self) -> bool:
        """True when the host tiles run the plan's compiled (Numba) loop."""
        return self.plan is not None and self.plan.compiled and self._xp is np

    def _points(self, dtype):
        """The points cast to ``dtype`` (cached; the original for its own dtype)."""
        name = dtype_name(dtype)
        if name not in self._cast:
            self._cast[name] = _cast(self.x, getattr(self._xp, name), self._xp)
        return self._cast[name]

    def _tiles(self, dtype, keep_diagonal=False, rows=None, work=None):
        """Upper-triangular tiles ``(i0, i1, j0, j1, C[i0:i1, j0:j1])`` of the symmetric matrix.

        ``rows``: the first rows of the tile rows to go through (default all, in order); ``work``: the
        :class:`spectral.tiles.Workspace` of the tiles (default the operator's own; a part run beside others
        in one process brings its own). With a fused plan on NumPy each tile is a view of the workspace,
        overwritten by the next one: the callers use every tile before asking for the next.
        """
        n, t = self.shape[0], self.tile
        compiled = self._compiled()
        if self.plan is not None:
            pa, _ = self._prepare()
            work = self._workspace() if work is None else work
            if compiled:
                pt, buf = self._compiled_columns(), work.get("d", np.float64)
                scratch = work.get("scratch", np.float64, (3, t))
        else:
            pts = self._points(dtype)
        for i0 in (range(0, n, t) if rows is None else rows):
            i1 = min(n, i0 + t)
            if self.plan is None:
                xi = pts[i0:i1, ...]
            for j0 in range(i0, n, t):
                j1 = min(n, j0 + t)
                if compiled:
                    c = self.plan.compiled_tile(buf, pa, pt, (i0, i1), (j0, j1), dtype, scratch)
                elif self.plan is not None:
                    c = self.plan.tile(pa[i0:i1, ...], pa[j0:j1, ...], dtype, work)
                else:
                    c = self._score(xi, pts[j0:j1, ...], i1 - i0, j1 - j0)
                if self.zero_diagonal and j0 == i0 and not keep_diagonal:
                    c = self._without_diagonal(c, 0)
                yield i0, i1, j0, j1, c

    def _vector(self, v, length: int, name: str):
        v = like_array(v, name, like=self.x)
        if v.ndim not in (1, 2) or v.shape[0] != length:
            raise InputError(f"{name} must have shape ({length},) or ({length}, k), got {tuple(v.shape)}")
        return v

    # ---------------------------------------------------------------------------- products

    def matmat(self, X, *, tile_dtype=None, check_finite=True):
        """``C @ X`` for ``X`` of shape (m,) or (m, k): the kernel is evaluated once for all k columns.

        Parameters
        ----------
        X : array of shape (m,) or (m, k)
            Real floating, in the namespace of the points; the result has its dtype (float32 points
            and a float64 ``X`` accumulate in float64).
        tile_dtype : {None, "float32", "float64"}
            Precision of the distances and scores (default the operator's dtype); the products are
            accumulated in the dtype of ``X``.
        check_finite : bool
            Refuse a NaN or inf in ``X`` (default). A pass over ``X`` and, on a GPU, a host synchronisation
            per product: the toolkit's eigensolvers, whose vectors are finite by construction (they check
            each product's result), pass ``False``. The device memory of a fused CUDA product is checked
            once per operator and number of columns (not per product).
        """
        xp = self._xp
        X = _as_block(X, self.shape[1], "X", like=self.x, finite=check_finite)
        tdt = self.dtype if tile_dtype is None else getattr(xp, check_option("tile_dtype", tile_dtype,
                                                                             ("float32", "float64")))
        vector = X.ndim == 1
        X2 = xp.reshape(X, (-1, 1)) if vector else X
        remote = self._distributed()
        if remote is not None:  # the parts on a Dask cluster (spectral.distributed)
            out = remote.matmat(X2, dtype_name(tdt))
        elif (self.parts or 1) > 1:
            plan = self.layout()
            out = plan.combine([self.part_matmat(part, X2, tile_dtype=dtype_name(tdt)) for part in plan.parts], xp)
        elif self._on_device():
            pa, pb = self._prepare()
            out = self._device_product(pa, pb, X2, tile_dtype=dtype_name(tdt), zero_diagonal=self.zero_diagonal)
            out = _cast(out, X2.dtype, xp)
        elif self.symmetric:
            out = self._symmetric_product(X2, tdt)
        else:
            acc = X2.dtype
            parts = []
            for start, stop, c in self._blocks_in(tdt):
                parts.append(_cast(c, acc, xp) @ X2)
            out = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
        return xp.reshape(out, (-1,)) if vector else out

    def _blocks_in(self, dtype, first=0, last=None, keep_diagonal=False):
        """Row blocks ``(start, stop, C[start:stop, :])`` with tiles in ``dtype``, of the rows ``[first, last)``
        (``first`` a multiple of ``block_rows``; default every row)."""
        n, m = self.shape
        last = n if last is None else last
        compiled = self._compiled()
        if self.plan is not None:
            pa, pb = self._prepare()
            if compiled:
                pt, scratch = self._compiled_columns(), np.empty((3, m))
        elif dtype_name(dtype) == dtype_name(self.dtype):
            pts_x, pts_y = self.x, self.y
        else:
            pts_x = self._points(dtype)
            pts_y = pts_x if self.y is self.x else _cast(self.y, dtype, self._xp)
        for start in range(first, last, self.block_rows):
            stop = min(last, start + self.block_rows)
            if compiled:
                c = self.plan.compiled_tile(np.empty((stop - start, m)), pa, pt, (start, stop), (0, m), dtype, scratch)
                if dtype_name(dtype) != "float64":
                    c = c.astype(dtype)
            elif self.plan is not None:
                c = self.plan.tile(pa[start:stop, ...], pb, dtype)
            else:
                c = self._score(pts_x[start:stop, ...], pts_y, stop - start, self.shape[1])
            if self.zero_diagonal and not keep_diagonal:
                c = self._without_diagonal(c, start)
            yield start, stop, c

    def _symmetric_product(self, X, tile_dtype, rows=None, work=None):
        """``C @ X`` from the tiles on and above the diagonal, each used for ``C_IJ X_J`` and ``C_IJ^T X_I``.

        ``rows``: only the tile rows starting there (the others' contributions are left out: a partial sum of
        a :class:`Part`); ``work``: the workspace of the tiles (see :meth:`_tiles`).
        """
        xp = self._xp
        n, k = X.shape
        acc = X.dtype
        if xp is np:
            out = np.zeros((n, k), dtype=acc)
            if self.plan is not None and work is None:
                work = self._workspace()
            part = np.empty((self.tile, k), dtype=acc)
            for i0, i1, j0, j1, c in self._tiles(tile_dtype, rows=rows, work=work):
                if c.dtype != acc:  # float32 tiles: cast into a reused buffer (float64 accumulation)
                    c = _cast(c, acc, xp) if work is None else _cast_into(c, work.get("acc", acc))
                p = part[: i1 - i0]
                np.matmul(c, X[j0:j1], out=p)
                out[i0:i1] += p
                if j0 != i0:
                    q = part[: j1 - j0]
                    np.matmul(c.T, X[i0:i1], out=q)
                    out[j0:j1] += q
            return out
        starts = list(range(0, n, self.tile))
        parts = {s: None for s in starts}
        for i0, i1, j0, j1, c in self._tiles(tile_dtype, rows=rows):
            c = _cast(c, acc, xp)
            p = c @ X[j0:j1, ...]
            parts[i0] = p if parts[i0] is None else parts[i0] + p
            if j0 != i0:
                q = matrix_transpose(c) @ X[i0:i1, ...]
                parts[j0] = q if parts[j0] is None else parts[j0] + q
        if rows is not None:  # tile rows no tile of this part reached: zeros
            for s in starts:
                if parts[s] is None:
                    parts[s] = xp.zeros((min(n, s + self.tile) - s, k), dtype=acc)
        return parts[starts[0]] if len(starts) == 1 else xp.concat([parts[s] for s in starts], axis=0)

    # ------------------------------------------------------------------------------- parts

    def layout(self, parts=None, *, device=None) -> ProductLayout:
        """The block plan of the products in ``parts`` parts (default :attr:`parts`, else 1).

        Three layouts, by where the tiles run (``device``: True for a CUDA device, default where this
        operator's products run):

        * host, keys = queries: the tile rows of the symmetric products, dealt to the parts back and forth
          (part ``p`` takes tile rows ``p``, ``2P - 1 - p``, ``2P + p``, ...: near-equal numbers of tiles);
          each part's product is an ``(n, k)`` partial sum and the parts are added in a fixed binary tree
          (:func:`tree_sum`), so every kernel entry is still evaluated once;
        * host, other keys: consecutive runs of row blocks, stacked;
        * CUDA device: consecutive row ranges, one kernel launch each, stacked.

        The number of parts is capped by the tile rows, row blocks or rows there are. The same layout gives
        the same bits in one process (:attr:`parts`) and on a cluster (:mod:`spectral.distributed`), whatever
        the number of workers and whichever worker runs which part.
        """
        count = (self.parts or 1) if parts is None else check_int("parts", parts, low=1)
        device = self._on_device() if device is None else bool(device)
        n = self.shape[0]
        if device:
            count = max(1, min(count, n))
            bounds = [(p * n // count, (p + 1) * n // count) for p in range(count)]
            return ProductLayout("stack", tuple(Part(p, rows=b) for p, b in enumerate(bounds)), device=True)
        if self.symmetric:
            starts = list(range(0, n, self.tile))
            count = max(1, min(count, len(starts)))
            dealt = [[] for _ in range(count)]
            for i, start in enumerate(starts):
                turn, pos = divmod(i, count)
                dealt[pos if turn % 2 == 0 else count - 1 - pos].append(start)
            return ProductLayout("sum", tuple(Part(p, tile_rows=tuple(rows)) for p, rows in enumerate(dealt)))
        blocks = -(-n // self.block_rows)
        count = max(1, min(count, blocks))
        edges = [min(n, (p * blocks // count) * self.block_rows) for p in range(count + 1)]
        return ProductLayout("stack", tuple(Part(p, rows=(edges[p], edges[p + 1])) for p in range(count)))

    def part_matmat(self, part: Part, X, *, tile_dtype=None):
        """One part's share of ``C @ X`` (``X`` of shape (m, k)): its rows of ``C @ X`` (a row part), or the
        ``(n, k)`` partial sum of its tile rows' tiles (a tile part); see :meth:`layout`."""
        xp = self._xp
        X = _as_block(X, self.shape[1], "X", like=self.x)
        tdt = self.dtype if tile_dtype is None else getattr(xp, check_option("tile_dtype", tile_dtype,
                                                                             ("float32", "float64")))
        X2 = xp.reshape(X, (-1, 1)) if X.ndim == 1 else X
        if part.tile_rows is not None:
            if not self.symmetric:
                raise InputError("a tile part needs keys = queries (a symmetric operator); use layout()")
            return self._symmetric_product(X2, tdt, rows=part.tile_rows,
                                           work=Workspace(self.tile) if xp is np and self.plan is not None else None)
        r0, r1 = part.rows
        if self._on_device():
            pa, pb, X3 = self._device_slices(r0, X2)
            out = self._device_product(pa[r0:r1, ...], pb, X3, tile_dtype=dtype_name(tdt),
                                       zero_diagonal=self.zero_diagonal)
            return _cast(out, X2.dtype, xp)
        blocks = [_cast(c, X2.dtype, xp) @ X2 for _, _, c in self._blocks_in(tdt, r0, r1)]
        return blocks[0] if len(blocks) == 1 else xp.concat(blocks, axis=0)

    def part_row_sums(self, part: Part):
        """One part's share of :meth:`row_sums`: ``(sums, smallest score)``; the sums are its rows' (a row part)
        or an ``(n,)`` partial sum (a tile part); the smallest score is None where the part saw none."""
        xp = self._xp
        low = None
        if part.tile_rows is not None:
            n = self.shape[0]
            parts = {}
            work = Workspace(self.tile) if xp is np and self.plan is not None else None
            for i0, i1, j0, j1, c in self._tiles(self.dtype, keep_diagonal=True, rows=part.tile_rows, work=work):
                if i1 - i0 > 1 or j0 != i0:
                    m = float(xp.min(c))
                    low = m if low is None else min(low, m)
                if self.zero_diagonal and j0 == i0:
                    c = self._without_diagonal(c, 0)
                p = xp.sum(c, axis=1)
                parts[i0] = p if i0 not in parts else parts[i0] + p
                if j0 != i0:
                    q = xp.sum(c, axis=0)
                    parts[j0] = q if j0 not in parts else parts[j0] + q
            starts = range(0, n, self.tile)
            pieces = [parts[s] if s in parts else xp.zeros(min(n, s + self.tile) - s, dtype=self.dtype) for s in starts]
            return (pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=0)), low
        r0, r1 = part.rows
        if self._on_device():
            pa, pb, _ = self._device_slices(r0, None)
            ones = xp.ones((self.shape[1], 1), dtype=xp.float64)
            sums, mins = self._device_product(pa[r0:r1, ...], pb, ones, tile_dtype=dtype_name(self.dtype),
                                              zero_diagonal=self.zero_diagonal, row_min=True)
            return _cast(sums[:, 0], self.dtype, xp), (float(xp.min(mins)) if r1 > r0 else None)
        pieces = []
        for start, _, c in self._blocks_in(self.dtype, r0, r1, keep_diagonal=True):
            m = float(xp.min(c))
            low = m if low is None else min(low, m)
            if self.zero_diagonal:
                c = self._without_diagonal(c, start)
            pieces.append(xp.sum(c, axis=1))
        return (pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=0)), low

    def _device_slices(self, r0: int, X):
        """Prepared points (and ``X``) for the device product of the rows from ``r0``: with ``zero_diagonal`` the
        columns are rotated by ``r0`` (column ``j`` of the launch is column ``(j + r0) mod m``), so that the
        kernel's ``i == j`` (local row, launch column) is the diagonal; rows from 0 take them as they are."""
        pa, pb = self._prepare()
        if not (self.zero_diagonal and r0):
            return pa, pb, X
        xp = self._xp
        rolled = self.__dict__.setdefault("_rolled", {})
        if r0 not in rolled:
            rolled[r0] = xp.roll(pb, -r0, axis=0)
        return pa, rolled[r0], (None if X is None else xp.roll(X, -r0, axis=0))

    def on(self, xp, *, stand_in=None) -> KernelOperator:
        """The same operator with its points in the namespace ``xp`` (``numpy``: the host copy a cluster
        scatters; CuPy on a GPU worker: the worker's device), with the same block plan (tile, row blocks,
        parts), tile engine and kernel.

        ``stand_in``: ``(module, compiler)`` of a stand-in CUDA device (``xp`` NumPy; the tests run the CUDA
        kernel's source compiled for the host, see :meth:`spectral.tiles.TilePlan.device_product`).
        """
        def move(a):
            if xp is np:
                return to_numpy(a)
            return xp.asarray(to_numpy(a))

        x = move(self.x)
        copy = KernelOperator(x, kernel=self.kernel, distance=self.distance,
                              y=None if self.symmetric else move(self.y), block_rows=self.block_rows,
                              zero_diagonal=self.zero_diagonal, tile=self.tile, fused=self.plan is not None,
                              engine=self.plan.engine if self.plan is not None else "auto", parts=self.parts)
        if stand_in is not None:
            if copy.plan is None or copy.plan.kind not in PROFILES or copy._xp is not np:
                raise InputError("a stand-in device needs NumPy points and a fused compiled profile")
            copy._device_hooks = tuple(stand_in)
            copy.tiles = copy.plan.describe("cupy") + " (a stand-in device)"
        return copy

    def _distributed(self):
        """The operator's products on a Dask cluster (its ``client``, else an enclosing ``use_client``), or None."""
        if self.client is None:
            workers = distributed.current()  # None: no cluster was entered
            if workers is None or self.shape[0] < workers.min_rows:
                return None
        return distributed.remote_products(self)

    def matvec(self, v):
        """``C @ v`` for ``v`` of shape (m,) or (m, k) (tiles in the operator's dtype)."""
        v = self._vector(v, self.shape[1], "v")
        return self.matmat(v)

    def rmatvec(self, v):
        """``C^T @ v`` for ``v`` of shape (n,) or (n, k), block by block."""
        v = self._vector(v, self.shape[0], "v")
        if self.symmetric:
            return self.matmat(v)
        if self._on_device():  # C(x, y)^T = C(y, x): the distances are symmetric in their arguments
            pa, pb = self._prepare()
            v2 = self._xp.reshape(v, (-1, 1)) if v.ndim == 1 else v
            out = _cast(self._device_product(pb, pa, v2, tile_dtype=dtype_name(self.dtype)), v.dtype, self._xp)
            return self._xp.reshape(out, (-1,)) if v.ndim == 1 else out
        out = None
        for start, stop, c in self._blocks():
            part = matrix_transpose(c) @ v[start:stop, ...]
            out = part if out is None else out + part
        return out

    def __matmul__(self, v):
        return self.matvec(v)

    def row_sums(self):
        """Degrees ``D_ii = sum_j C_ij`` (one pass, no stored matrix; half the tiles when symmetric).

        The same pass records :attr:`min_score`, the smallest score off the diagonal: when it is
        positive the graph ``C > 0`` is complete, hence connected, and :func:`spectral.markov_spectrum`
        needs no search for its components.
        """
        xp = self._xp
        low = None
        remote = self._distributed()
        if remote is not None or (self.parts or 1) > 1:  # the parts, on a Dask cluster or here
            if remote is not None:
                sums, low = remote.row_sums()
            else:
                plan = self.layout()
                sums, low = plan.combine_row_sums([self.part_row_sums(part) for part in plan.parts], xp)
            self.min_score = None if (self.zero_diagonal and not self.symmetric) else low
            return sums
        if self._on_device():  # one kernel: the sums against a column of ones, and each row's smallest score
            pa, pb = self._prepare()
            ones = xp.ones((self.shape[1], 1), dtype=xp.float64)
            sums, mins = self._device_product(pa, pb, ones, tile_dtype=dtype_name(self.dtype),
                                              zero_diagonal=self.zero_diagonal, row_min=True)
            low = float(xp.min(mins)) if self.shape[0] else None
            self.min_score = low
            return _cast(sums[:, 0], self.dtype, xp)
        if self.symmetric:
            n, t = self.shape[0], self.tile
            parts = {s: None for s in range(0, n, t)}
            for i0, i1, j0, j1, c in self._tiles(self.dtype, keep_diagonal=True):
                if i1 - i0 > 1 or j0 != i0:  # a 1 x 1 diagonal tile holds no off-diagonal score
                    m = float(xp.min(c))
                    low = m if low is None else min(low, m)
                if self.zero_diagonal and j0 == i0:
                    c = self._without_diagonal(c, 0)
                p = xp.sum(c, axis=1)
                parts[i0] = p if parts[i0] is None else parts[i0] + p
                if j0 != i0:
                    q = xp.sum(c, axis=0)
                    parts[j0] = q if parts[j0] is None else parts[j0] + q
            keys = sorted(parts)
            self.min_score = low
            return parts[keys[0]] if len(keys) == 1 else xp.concat([parts[s] for s in keys], axis=0)
        parts = []
        for _, _, c in self._blocks():
            m = float(xp.min(c))
            low = m if low is None else min(low, m)
            parts.append(xp.sum(c, axis=1))
        self.min_score = None if self.zero_diagonal else low
        return parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)

    def to_dense(self, max_bytes=None):
        """The dense ``(n, m)`` matrix, after the memory guard (:func:`spectral.floor.memory.check_dense_memory`).

        Built from row blocks; for keys = queries it equals the products' (upper-triangle) matrix up to
        the rounding asymmetry of ``distance`` (a few ulps).
        """
        n, m = self.shape
        check_dense_memory(n, m, dtype=self.dtype, max_bytes=max_bytes, what="dense copy of the kernel operator",
                           alternative="use the operator's products (matvec, @) or markov_spectrum(operator, k)",
                           device=memory_device(self.x))
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
        extra = ", zero_diagonal=True" if self.zero_diagonal else ""
        if self.plan is not None:
            how = " (CUDA)" if self._on_device() else f" ({self.plan.engine})" if self._xp is np else ""
            extra += f", fused={self.plan.geometry}/{self.plan.kind}{how}"
        return (f"KernelOperator(shape={self.shape}, dtype={self.dtype}, block_rows={self.block_rows}, "
                f"tile={self.tile}{extra})")


def _device_block_bytes(x) -> int:
    """Working-memory budget of one block off the host: 1/16 of the free device memory for CuPy, clamped to
    [64 MiB, 1 GiB] (large tiles: each tile of the generic path costs several kernel launches and Python
    calls, so a GPU wants few of them); :data:`DEFAULT_BLOCK_BYTES` for other namespaces."""
    if not is_cupy_array(x):
        return DEFAULT_BLOCK_BYTES

    try:
        with x.device:  # the free memory of the points' device (bare cupy: spectral.floor.memory knows that name)
            free = device_memory_bytes(sys.modules["cupy"])
    except Exception:  # noqa: BLE001 - the driver did not answer: the fixed budget
        return DEFAULT_BLOCK_BYTES
    return int(min(max(free // 16, DEFAULT_BLOCK_BYTES), 1 << 30))


def _plan_fits(plan, dims: int) -> bool:
    """The plan's geometry accepts points of ``dims`` coordinates (circle: 2; sphere: >= 2; chordal: any)."""
    if plan.geometry == "circle":
        return dims == 2
    if plan.geometry == "sphere":
        return dims >= 2
    return dims >= 1


def _cast_into(c, buf):
    """``c`` cast into the top-left corner of the buffer ``buf`` (NumPy), returned as that view."""
    view = buf[: c.shape[0], : c.shape[1]]
    np.copyto(view, c, casting="same_kind")
    return view


def _cast(c, dtype, xp):
    """``c`` in ``dtype`` (no copy when it already is; ``.astype`` where the namespace lacks ``astype``)."""
    if c.dtype == dtype:
        return c
    return xp.astype(c, dtype) if hasattr(xp, "astype") else c.astype(dtype)


def _as_block(X, length: int, name: str, *, like, finite: bool = True):
    """``X`` as a real array of shape (length,) or (length, k) in the namespace of ``like``, finite unless
    ``finite=False``, keeping a floating dtype of its own (float64 accumulation with float32 points)."""
    xp = array_namespace(like)
    X = like_array(X, name, like=like, keep_dtype=True, finite=finite)
    if X.ndim not in (1, 2) or X.shape[0] != length:
        raise InputError(f"{name} must have shape ({length},) or ({length}, k), got {tuple(X.shape)}")
    if numpy_dtype(X.dtype).itemsize < numpy_dtype(like.dtype).itemsize:
        X = xp.astype(X, like.dtype)
    return X


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
    spectral.floor.memory.DenseMemoryError
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
                       alternative="use KernelOperator(x, kernel=..., distance=...) for matrix-free products",
                       device=memory_device(x))
    return kernel(distance(x, yy))
