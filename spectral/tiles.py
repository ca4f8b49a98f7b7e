"""Fused tiles of :class:`spectral.KernelOperator`: distance and score in one pass, per-point data made once.

A kernel operator whose kernel declares a :class:`~spectral.profiles.TileProfile` (:mod:`spectral.profiles`)
and whose distance declares its geometry evaluates its tiles through a :class:`TilePlan` instead of calling
``kernel(distance(xa, xb))`` per tile (:func:`tile_plan`):

* the per-point work is done once (circle: the angles ``atan2(x_1, x_0)``; sphere: the normalised rows),
  and no tile re-validates its inputs or re-checks the memory (``distance`` and ``kernel`` each check their
  input and the free memory on every call, and on a GPU every such check is a host synchronisation);
* host, engine ``"numba"`` (the default where Numba is installed, :mod:`spectral.tiles_numba`): one compiled
  loop per tile row computes the distances and the scores, vectorised with the toolkit's own ``exp``,
  ``log`` and ``atan2`` (NumPy's are scalar libm calls on AVX2 CPUs); a few ulps from the NumPy tiles;
* host, engine ``"numpy"`` (the reference, and the default without Numba): the distance and the score are
  computed in place in reused buffers, with the same operations as ``distance`` and ``kernel`` (bitwise the
  same tiles in float64); float32 tiles take float64 distances rounded once;
* CuPy: one CUDA kernel (:func:`cuda_source`) computes a whole block product ``C @ X``: each thread owns
  a row, evaluates the distance and the score of every column in registers (float32 or float64 score
  arithmetic) and accumulates ``score * X[j, :]`` in float64; no tile is stored, nothing goes to the
  host, one launch per product of up to 32 columns (columns split over ``gridDim.y`` for small ``n``, and the
  partial sums added in chunk order by a second kernel, :func:`cuda_sum_source`); see "Reproducibility"
  below;
* a ``custom`` profile (a function, e.g. a user's ``Phi`` through ``weyl --kernel``): the fused distances of
  either engine's geometry code (NumPy in place on the host, array code on CuPy), then the function on each
  tile of scaled distances.

Recognised distances: methods of an object with ``tile_distance(name)`` (``manifolds.Circle().distance`` ->
``"circle"``, ``Sphere(d).distance`` -> ``"sphere"``, ``chordal_distance`` and ``Euclidean(d).distance`` ->
``"chordal"``). :mod:`spectral` imports nothing of :mod:`manifolds` and nothing of the kernels: both sides
describe themselves. Anything else keeps the generic path, and the operator records why
(:attr:`spectral.KernelOperator.tiles`; a kernel without a profile on a fusable distance also warns once,
:class:`GenericTilesWarning`).

Reproducibility on a CUDA device: the launch shape (:func:`launch_shape`: row blocks, column chunks) depends
on ``n`` and ``m`` only, never on the device (a fixed :data:`CUDA_TARGET_BLOCKS`), each thread adds its columns
in index order with ``fma``, and the partial sums of the chunks are added one after the other in chunk order:
a product is bitwise the same on every run, with the same order of operations on every device model. Its bits
can still differ between GPU architectures or CUDA versions, which compile the same source to different
machine code (where multiply-adds are contracted into FMAs, libdevice's ``exp``/``log``). The solvers around
the product use cuBLAS and cuSOLVER, whose documented guarantee is bitwise results per toolkit version on
GPUs "with the same architecture and the same number of SMs" (cuBLAS guide, "Results reproducibility"), one
stream. Claimed, then: a whole device solve is bitwise reproducible per device model (an H100 PCIe, 114 SMs,
and an H100 SXM, 132, can differ at round-off; one H200 always gives the same bits), and agrees with the host
to round-off, which is all the checks rely on.

References
----------
"Fractional neural attention" (FNA), eqs. (9), (10), (13), (39); DRIFT Theorem 3 (heat kernel).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import math
import os
import sys
import warnings

import numpy as np

from spectral.floor.backend import array_namespace, dtype_name, is_cupy_array
from spectral.floor.distance import sq_distance_tile
from spectral.floor.memory import check_memory as check
from spectral.profiles import TileProfile, kernel_profile
from spectral.floor.validation import InputError, check_option

__all__ = ["ENGINES", "GenericTilesWarning", "TilePlan", "Workspace", "cuda_source", "cuda_sum_source", "cuda_variants",
           "distance_geometry", "host_engine", "plan_or_reason", "tile_plan", "warn_generic"]

TWO_PI = 2.0 * math.pi
GEOMETRIES = ("circle", "sphere", "chordal")
#: Profile kinds with a compiled tile (Numba and CUDA); ``custom`` profiles call their function per tile.
PROFILES = ("power", "local", "heat")
#: Host engines of the fused tiles: ``auto`` is Numba where it is installed, else NumPy.
ENGINES = ("auto", "numpy", "numba")
#: Environment variable that sets the default host engine (``numpy`` turns the compiled tiles off).
ENGINE_VARIABLE = "ATTENTION_LIMITS_TILES"
#: Widths of the compiled CUDA product kernels: a block of k columns runs the smallest that holds it
#: (columns beyond the largest go in further launches); each width is one compilation, cached by CuPy.
CUDA_WIDTHS = (1, 4, 8, 16, 32)
#: Threads per CUDA block (one row each).
CUDA_THREADS = 128
#: Columns of one thread's share of a row (``gridDim.y`` splits the columns into chunks of at least this).
CUDA_MIN_CHUNK = 128
#: Blocks a product launch aims for when rows alone give fewer: 4 per multiprocessor of a 132-multiprocessor
#: device (H100 SXM, H200). A constant, not the device's count, so that the column chunks, and with them the
#: order of every sum, are the same on every device model (an H100 PCIe has 114 multiprocessors, an A100 108,
#: a B200 148: the launch is the same there, at most a partly filled last wave for small n).
CUDA_TARGET_BLOCKS = 4 * 132
#: Threads per block of the kernel that adds the partial sums of the column chunks.
CUDA_SUM_THREADS = 256


class GenericTilesWarning(UserWarning):
    """A kernel operator on a fusable distance evaluates ``kernel(distance(.))`` per tile: its kernel has no
    tile profile (warned once per process and reason; the operator's ``tiles`` says the same)."""


def host_engine(engine: str = "auto") -> str:
    """The host engine ``engine`` resolves to: ``"numba"`` or ``"numpy"``.

    ``"auto"``: :data:`ENGINE_VARIABLE` if set, else Numba when it is installed. ``"numba"`` without Numba is
    refused (the extra that brings it is named).
    """
    engine = check_option("engine", engine, ENGINES)
    if engine == "auto":
        engine = os.environ.get(ENGINE_VARIABLE, "auto").strip().lower() or "auto"
        if engine not in ENGINES:
            raise InputError(f"{ENGINE_VARIABLE} must be one of {', '.join(ENGINES)}, got {engine!r}")
        if engine == "auto":
            return "numba" if _numba_installed() else "numpy"
    if engine == "numba" and not _numba_installed():
        raise InputError("engine='numba' needs Numba: pip install 'attention-limits[fast]' (or numba), or use "
                         "engine='numpy'")
    return engine


@functools.cache
def _numba_installed() -> bool:
    """Numba imports here (an installed Numba that refuses this NumPy raises ImportError: NumPy then)."""
    if importlib.util.find_spec("numba") is None:
        return False
    try:
        return _compiled().available()
    except ImportError:
        return False


def _compiled():
    """:mod:`spectral.tiles_numba` (imported on first use: it imports Numba)."""
    return importlib.import_module("spectral.tiles_numba")


@dataclasses.dataclass(frozen=True)
class TilePlan:
    """How a kernel operator evaluates its tiles: the geometry of the distance and the kernel's profile.

    Attributes
    ----------
    geometry : {"circle", "sphere", "chordal"}
        Wrapped angle difference on S^1; ``2 atan2(|x - y|, |x + y|)`` of unit rows; ``|x - y|``.
    profile : spectral.profiles.TileProfile
        The score of a distance (power law, local, heat, or a custom function).
    engine : {"numba", "numpy"}
        Host engine of the tiles (CuPy points always use the CUDA kernel, or array code for ``custom``).
    """

    geometry: str
    profile: TileProfile
    engine: str = "numpy"

    @property
    def kind(self) -> str:
        """The profile's kind: power, local, heat or custom."""
        return self.profile.kind

    @property
    def compiled(self) -> bool:
        """True when the host tiles run the compiled loop (Numba and a power, local or heat profile)."""
        return self.engine == "numba" and self.kind in PROFILES

    def describe(self, namespace: str = "numpy") -> str:
        """One line: which tiles for points of ``namespace`` ("numpy", "cupy", other) (the record
        :attr:`spectral.KernelOperator.tiles` holds)."""
        if namespace != "numpy":
            how = ("one CUDA kernel per block product" if namespace == "cupy" and self.kind in PROFILES else
                   f"array code of {namespace}" + (", the profile's function per tile" if self.kind == "custom"
                                                    else ""))
        elif self.compiled:
            how = "Numba, distance and score in one loop"
        elif self.kind == "custom":
            how = "NumPy distances in place, the profile's function per tile"
        else:
            how = "NumPy, in place"
        return f"fused {self.geometry}/{self.kind} tiles of {self.profile.name} ({how})"

    # --------------------------------------------------------------------------- per-point data

    def prepare(self, x):
        """Per-point data of the points ``x`` (n, D): circle angles (n,), unit rows, or the rows, in float64."""
        xp = array_namespace(x)
        x = x if dtype_name(x.dtype) == "float64" else xp.astype(x, xp.float64)
        if self.geometry == "circle":
            return xp.atan2(x[:, 1], x[:, 0])
        if self.geometry == "sphere":  # (bare CuPy has no linalg.vector_norm)
            return x / xp.sqrt(xp.sum(x * x, axis=1, keepdims=True))
        return x

    @staticmethod
    def columns(p):
        """Prepared points as the compiled tiles read the columns: ``(D, n)`` contiguous float64 (NumPy)."""
        return np.ascontiguousarray(np.reshape(p, (p.shape[0], -1)).T)

    # ----------------------------------------------------------------------- host and array API

    def distances(self, pa, pb):
        """Float64 distances between prepared points (``(a, b)``), as the recognised distance computes them."""
        xp = array_namespace(pa, pb)
        if self.geometry == "circle":
            d = pa[:, None] - pb[None, :]
            if xp is np:
                np.abs(d, out=d)
                np.minimum(d, TWO_PI - d, out=d)
                return d
            d = xp.abs(d)
            return xp.minimum(d, TWO_PI - d)
        minus = sq_distance_tile(pa, pb, 1.0)
        if self.geometry == "chordal":
            return np.sqrt(minus, out=minus) if xp is np else xp.sqrt(minus)
        plus = sq_distance_tile(pa, pb, -1.0)
        return 2.0 * xp.atan2(xp.sqrt(minus), xp.sqrt(plus))

    def scores(self, d, dtype):
        """Scores of a float64 distance block ``d`` (overwritten on NumPy) in ``dtype`` (float32 or float64)."""
        return self.profile.scores(d, dtype)

    def tile(self, pa, pb, dtype, work=None):
        """Scores ``C[a, b]`` of two sets of prepared points, in ``dtype`` (the NumPy engine, or array code).

        ``work`` (NumPy only, a :class:`Workspace`): compute in its buffers and return a view of one of them,
        valid until the next call with the same workspace. A fresh 1 MiB temporary per tile costs more
        than the arithmetic on this machine (page faults of a new mapping: measured 30 ns per entry for
        the circle distance with two temporaries against 3.8 ns in reused buffers, 362^2 tiles).
        """
        if work is None or array_namespace(pa, pb) is not np:
            return self.scores(self.distances(pa, pb), dtype)
        a, b = int(pa.shape[0]), int(pb.shape[0])
        d = work.get("d", np.float64)[:a, :b]
        w = work.get("w", np.float64)[:a, :b]
        if self.geometry == "circle":  # Circle.angle_distance's operations, in the buffers
            np.subtract.outer(pa, pb, out=d)
            np.abs(d, out=d)
            np.subtract(TWO_PI, d, out=w)
            np.minimum(d, w, out=d)
        else:  # spectral.floor.distance.sq_distance_tile's operations, coordinate by coordinate
            t = work.get("t", np.float64)[:a, :b] if pa.shape[1] > 1 else None
            _sq_into(pa, pb, np.subtract.outer, d, t)
            if self.geometry == "chordal":
                np.sqrt(d, out=d)
            else:
                _sq_into(pa, pb, np.add.outer, w, t)
                np.sqrt(d, out=d)
                np.sqrt(w, out=w)
                np.arctan2(d, w, out=d)
                np.multiply(2.0, d, out=d)
        if dtype_name(dtype) != "float64" and self.kind != "custom":
            z = work.get("s", dtype)[:a, :b]
            np.copyto(z, d, casting="same_kind")
        else:
            z = d
        return self.scores(z, dtype)

    def compiled_tile(self, out, pa, pt, rows, cols, dtype, work):
        """Scores ``C[rows, cols]`` by the compiled loop, into the float64 buffer ``out`` (returns the view).

        ``pa`` (n, D) or the circle's (n,) angles, ``pt`` the column points from :meth:`columns`, ``rows`` and
        ``cols`` ``(start, stop)``; ``dtype`` the score arithmetic (float32 scores are stored as float64,
        ready for a float64 product); ``work`` a ``(3, >= cols)`` float64 scratch.
        """
        tn = _compiled()
        pa2 = pa if pa.ndim == 2 else pa[:, None]
        # beta (power), p (local), -1 / (2 eps) (heat)
        constant = -1.0 / (2.0 * self.profile.constant) if self.kind == "heat" else self.profile.constant
        tn.fill_tile(out, pa2, pt, rows[0], rows[1], cols[0], cols[1], tn.GEOMETRY_CODES[self.geometry],
                     tn.PROFILE_CODES[self.kind], dtype_name(dtype) == "float32", float(self.profile.scale),
                     float(constant), work)
        return out[: rows[1] - rows[0], : cols[1] - cols[0]]

    # ---------------------------------------------------------------------------------- CUDA

    def device_product(self, pa, pb, X, *, tile_dtype: str, zero_diagonal: bool = False, row_min: bool = False,
                       check_memory: bool = True, _module=None, _compile=None):
        """``C(a, b) @ X`` on a CUDA device in one kernel launch per 32 columns (float64 accumulation).

        Parameters
        ----------
        pa, pb : cupy.ndarray
            Prepared points (:meth:`prepare`) of the rows and the columns, float64.
        X : cupy.ndarray of shape (m, k)
            Columns to multiply, any floating dtype (used in float64).
        tile_dtype : {"float32", "float64"}
            Precision of the distance-to-score arithmetic (the distances themselves are float64).
        zero_diagonal : bool
            Leave out ``C_ii`` (keys = queries).
        row_min : bool
            Also return the smallest score of each row (the diagonal included, before it is zeroed).
        check_memory : bool
            Compare :meth:`device_bytes` with the device's free memory first (a driver call; the caller that
            repeats products of one size checks once, :class:`spectral.KernelOperator` per width).
        _module, _compile
            Tests only: an array module standing in for CuPy (NumPy) and a compiler of :func:`cuda_source`
            and :func:`cuda_sum_source` returning a launcher ``f(grid, block, args)`` (the source built for
            the host); default CuPy and ``cupy.RawKernel``.

        Returns
        -------
        cupy.ndarray of shape (n, k), float64 (and the row minima of shape (n,) with ``row_min``).

        Notes
        -----
        Nothing is synchronised with the host and no device attribute is read: the launches are queued on
        the current stream. Allocations: the result, the partial sums of the column chunks (``chunks * n *
        min(k, 32)`` floats, only when there are two chunks or more: ``n < 4 * 132 * 128``), a float64
        contiguous copy of ``X`` and of the points where they are not already; :meth:`device_bytes` is their
        estimate. With one chunk the product kernel writes the result in place; otherwise the partial sums are
        added in chunk order by one launch of :func:`cuda_sum_source` (see the module's "Reproducibility").
        """
        if self.kind not in PROFILES:
            raise ValueError(f"no CUDA product for a {self.kind!r} profile (its tiles run as array code)")
        cp = sys.modules["cupy"] if _module is None else _module
        n, m = int(pa.shape[0]), int(pb.shape[0])
        dims = 1 if self.geometry == "circle" else int(pa.shape[1])
        k = int(X.shape[1])
        with _device_of(pa):
            if check_memory and _module is None:  # the device's memory, before anything is allocated on it
                check(self.device_bytes(n, m, k, dims),
                      what=f"fused kernel product of an ({n}, {m}) operator with {k} columns",
                      alternative="multiply fewer columns at a time", device="gpu")
            pa, pb = cp.ascontiguousarray(pa), cp.ascontiguousarray(pb)
            X = cp.ascontiguousarray(X, dtype=cp.float64)
            rows, chunks, chunk = launch_shape(n, m)
            out = cp.empty((n, k), dtype=cp.float64)
            mins = cp.empty((chunks, n), dtype=cp.float64) if row_min else None
            part = cp.empty((chunks, n, min(k, CUDA_WIDTHS[-1])), dtype=cp.float64) if chunks > 1 else None
            summed = None
            for c0 in range(0, max(k, 1), CUDA_WIDTHS[-1]):
                c1 = min(k, c0 + CUDA_WIDTHS[-1])
                width = next(w for w in CUDA_WIDTHS if w >= c1 - c0)
                source = cuda_source(self.geometry, self.kind, width, tile_dtype, dims)
                kern = _cuda_kernel(self.geometry, self.kind, width, tile_dtype, dims) if _compile is None else \
                    _compile(source)
                keep_min = row_min and c0 == 0
                # one chunk: straight into the result's columns c0:c1; else the chunks' partial sums (chunks, n, c1 - c0)
                target, ldo, ocol = (out, k, c0) if part is None else (part, c1 - c0, 0)
                kern((rows, chunks), (CUDA_THREADS,),
                     (pa, pb, X, target, mins if keep_min else target, np.int32(n), np.int32(m), np.int32(c1 - c0),
                      np.int32(k), np.int32(c0), np.int32(ldo), np.int32(ocol), np.int32(chunk),
                      np.int32(1 if zero_diagonal else 0), np.int32(1 if keep_min else 0),
                      np.float64(self.profile.scale), np.float64(self._cuda_constant())))
                if part is not None:  # the chunks added in chunk order, into the result's columns c0:c1
                    if summed is None:
                        summed = _cuda_sum_kernel() if _compile is None else _compile(cuda_sum_source())
                    size = n * (c1 - c0)
                    summed((max(1, -(-size // CUDA_SUM_THREADS)),), (CUDA_SUM_THREADS,),
                           (part, out, np.int32(n), np.int32(c1 - c0), np.int32(chunks), np.int32(k), np.int32(c0)))
            if row_min:
                return out, cp.min(mins, axis=0)  # a minimum is exact in any order
            return out

    @staticmethod
    def device_bytes(n: int, m: int, k: int, dims: int = 1) -> int:
        """Device bytes :meth:`device_product` allocates for an (n, m) operator and k columns (float64): the
        result, the chunks' partial sums (two chunks or more), a float64 copy of ``X``, the points, the row minima."""
        _, chunks, _ = launch_shape(n, m)
        width = min(k, CUDA_WIDTHS[-1])
        partial = chunks * n * width if chunks > 1 else 0
        return 8 * (n * k + partial + m * k + (n + m) * dims + 2 * chunks * n)

    def _cuda_constant(self) -> float:
        """The profile's constant as the CUDA kernel takes it: -beta, p, or -1 / (2 eps)."""
        if self.kind == "power":
            return -self.profile.constant
        if self.kind == "heat":
            return -1.0 / (2.0 * self.profile.constant)
        return self.profile.constant


class Workspace:
    """Reused ``(tile, tile)`` buffers of the host fused tiles, one per name and dtype (and the ``(3, tile)``
    scratch of the compiled tiles)."""

    def __init__(self, tile: int):
        self.tile = int(tile)
        self._buffers = {}

    def get(self, name: str, dtype, shape=None):
        key = (name, dtype_name(dtype))
        buf = self._buffers.get(key)
        if buf is None:
            shape = (self.tile, self.tile) if shape is None else shape
            buf = self._buffers[key] = np.empty(shape, dtype=np.dtype(dtype_name(dtype)))
        return buf


def _sq_into(pa, pb, outer, acc, tmp):
    """``sum_k outer(pa[:, k], pb[:, k])^2`` into ``acc`` (the operations of ``sq_distance_tile``)."""
    outer(pa[:, 0], pb[:, 0], out=acc)
    acc *= acc
    for k in range(1, pa.shape[1]):
        outer(pa[:, k], pb[:, k], out=tmp)
        tmp *= tmp
        acc += tmp


def launch_shape(n: int, m: int) -> tuple[int, int, int]:
    """``(row blocks, column chunks, columns per chunk)`` of a product launch.

    One thread per row in blocks of :data:`CUDA_THREADS`; when that gives fewer than
    :data:`CUDA_TARGET_BLOCKS` blocks the columns are split into chunks (``gridDim.y``) of at least
    :data:`CUDA_MIN_CHUNK`. A function of ``n`` and ``m`` alone: the same launch, hence the same order of
    the sums, on every device.
    """
    rows = max(1, -(-n // CUDA_THREADS))
    chunks = max(1, min(-(-CUDA_TARGET_BLOCKS // rows), m // CUDA_MIN_CHUNK))
    chunk = max(1, -(-m // chunks))
    return rows, max(1, -(-m // chunk)), chunk


def _device_of(a):
    """``with`` context of the array's device (CuPy), or a no-op (the tests' NumPy stand-in)."""
    dev = getattr(a, "device", None)
    return dev if hasattr(dev, "__enter__") else contextlib.nullcontext()


@functools.cache
def _cuda_kernel(geometry: str, profile: str, width: int, tile_dtype: str, dims: int):
    """The compiled product kernel (``cupy.RawKernel``; CuPy also caches the binary on disk)."""
    cp = sys.modules["cupy"]
    return cp.RawKernel(cuda_source(geometry, profile, width, tile_dtype, dims), "kernel_operator_product")


@functools.cache
def _cuda_sum_kernel():
    """The compiled chunk-sum kernel (``cupy.RawKernel``)."""
    cp = sys.modules["cupy"]
    return cp.RawKernel(cuda_sum_source(), "kernel_operator_chunk_sum")


# ------------------------------------------------------------------------------------ CUDA source

_DISTANCE = {
    # circle: wrapped difference of float64 angles (Circle.distance's operations)
    "circle": """
        double d = fabs(ta - pb[j]);
        d = fmin(d, TWO_PI - d);""",
    # sphere: 2 atan2(|a - b|, |a + b|) of unit rows (Sphere.distance); chordal: |a - b|
    "sphere": """
        double sm = 0.0, sp = 0.0;
        #pragma unroll
        for (int c = 0; c < DIMS; ++c) {
            const double u = ra[c] - pb[(long long) j * DIMS + c];
            const double v = ra[c] + pb[(long long) j * DIMS + c];
            sm += u * u;
            sp += v * v;
        }
        double d = 2.0 * atan2(sqrt(sm), sqrt(sp));""",
    "chordal": """
        double sm = 0.0;
        #pragma unroll
        for (int c = 0; c < DIMS; ++c) {
            const double u = ra[c] - pb[(long long) j * DIMS + c];
            sm += u * u;
        }
        double d = sqrt(sm);""",
}

_SCORE = {
    # fna_kernel, alpha < 2: z = d / scale; exp(-beta log(1 + z)); constant = -beta
    "power": """
        real z = ((real) d) / sc;
        z = z + (real) 1;
        z = LOG(z);
        z = z * cst;
        real s = EXP(z);""",
    # fna_kernel, alpha >= 2: exp(-(d / scale)^p); constant = p
    "local": """
        real z = ((real) d) / sc;
        real w = (cst == (real) 2) ? z * z : POW(z, cst);
        real s = EXP(-w);""",
    # heat_kernel: exp(d^2 (-1 / (2 eps))); constant = -1 / (2 eps)
    "heat": """
        real z = (real) d;
        z = z * z;
        z = z * cst;
        real s = EXP(z);""",
}


def cuda_source(geometry: str, profile: str, width: int, tile_dtype: str, dims: int = 1) -> str:
    """CUDA C++ source of the fused product kernel ``part[chunk, i, :] = sum_j C_ij X[j, :]`` (one thread per row).

    Thread ``i`` of block ``(bx, by)`` owns row ``i = bx * blockDim.x + threadIdx.x`` and the columns
    ``[by * chunk, min(m, (by + 1) * chunk))``; it computes the float64 distance, the score in ``real``
    (``float`` or ``double``: ``tile_dtype``), flushes a subnormal score to 0 (as the kernels do), zeroes
    ``C_ii`` when asked, and accumulates ``score * X[j, xcol + c]`` for the ``k <= WIDTH`` columns in float64
    registers (``WIDTH`` and ``DIMS`` are compile-time constants: the accumulators and the row's coordinates
    stay in registers up to ``DIMS = 64`` at every width, NVRTC 12.9 and 13.5 for sm_90; from ``DIMS = 128``
    the coordinates spill to local memory: benchmarks/README.md, ``benchmarks/cuda_resources.py``). ``X`` is ``(m, ldx)`` row-major; the sums go to
    ``part[(by * n + i) * ldo + ocol + c]``: the chunk's partial sums, or the result's columns when there is
    one chunk.
    Plain C++ apart from ``__global__``, ``blockIdx``, ``blockDim`` and ``threadIdx`` (the tests compile it
    on the host with those defined, and with NVRTC where it is installed).
    """
    if geometry not in GEOMETRIES or profile not in PROFILES or tile_dtype not in ("float32", "float64"):
        raise ValueError(f"no CUDA product for {geometry!r}, {profile!r}, {tile_dtype!r}")
    single = tile_dtype == "float32"
    real = "float" if single else "double"
    fn = {"LOG": "logf", "EXP": "expf", "POW": "powf"} if single else {"LOG": "log", "EXP": "exp", "POW": "pow"}
    tiny = "1.17549435082228750797e-38f" if single else "2.2250738585072013830902e-308"
    score = _SCORE[profile]
    for key, name in fn.items():
        score = score.replace(key + "(", name + "(")
    point = ("const double ta = pa[i];" if geometry == "circle" else
             "double ra[DIMS];\n    #pragma unroll\n    for (int c = 0; c < DIMS; ++c) ra[c] = pa[(long long) i * DIMS + c];")
    return f"""// generated by spectral.tiles.cuda_source({geometry!r}, {profile!r}, {width}, {tile_dtype!r}, {dims})
#define WIDTH {width}
#define DIMS {dims}
#define TWO_PI 6.283185307179586
typedef {real} real;

extern "C" __global__ void kernel_operator_product(
    const double* __restrict__ pa, const double* __restrict__ pb, const double* __restrict__ X,
    double* __restrict__ part, double* __restrict__ mins,
    const int n, const int m, const int k, const int ldx, const int xcol, const int ldo, const int ocol,
    const int chunk, const int zero_diagonal, const int row_min, const double scale, const double constant)
{{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int j0 = blockIdx.y * chunk;
    const int j1 = (j0 + chunk < m) ? j0 + chunk : m;
    const real sc = (real) scale;
    const real cst = (real) constant;
    (void) sc;  // the heat kernel has no scale
    {point}
    double acc[WIDTH];
    #pragma unroll
    for (int c = 0; c < WIDTH; ++c) acc[c] = 0.0;
    double low = 1.7976931348623157e308;  // DBL_MAX: every score is below it
    for (int j = j0; j < j1; ++j) {{{_DISTANCE[geometry]}{score}
        if (s < {tiny}) s = (real) 0;
        double sd = (double) s;
        if (sd < low) low = sd;
        if (zero_diagonal && i == j) sd = 0.0;
        const double* xr = X + (long long) j * ldx + xcol;
        #pragma unroll
        for (int c = 0; c < WIDTH; ++c) {{
            if (c < k) acc[c] = fma(sd, xr[c], acc[c]);
        }}
    }}
    double* out = part + ((long long) blockIdx.y * n + i) * ldo + ocol;
    #pragma unroll
    for (int c = 0; c < WIDTH; ++c) {{
        if (c < k) out[c] = acc[c];
    }}
    if (row_min) mins[(long long) blockIdx.y * n + i] = low;
}}
"""


def cuda_sum_source() -> str:
    """CUDA C++ source of the kernel adding the chunks' partial sums: ``out[i, ocol + c] = sum_b part[b, i, c]``.

    ``part`` is ``(chunks, n, k)``; thread ``t`` owns entry ``(i, c) = divmod(t, k)`` and adds the chunks one
    after the other, ``((p_0 + p_1) + p_2) + ...`` (plain additions, which CUDA never reorders or contracts):
    the same bits on every run, whatever the grid. ``out`` is ``(n, ldo)`` row-major.
    """
    return """// generated by spectral.tiles.cuda_sum_source()
extern "C" __global__ void kernel_operator_chunk_sum(
    const double* __restrict__ part, double* __restrict__ out,
    const int n, const int k, const int chunks, const int ldo, const int ocol)
{
    const long long size = (long long) n * k;
    const long long t = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= size) return;
    double s = part[t];
    for (int b = 1; b < chunks; ++b) s += part[(long long) b * size + t];
    const long long i = t / k;
    out[i * ldo + ocol + (t - i * k)] = s;
}
"""


#: Numbers of coordinates :func:`cuda_variants` compiles by default: S^1 and S^2 (2, 3), S^16 (17: the largest
#: ``weyl --dim``), 64 (the most a row keeps in registers at width 32, NVRTC 12.9 and 13.5 for sm_90) and two
#: embedding sizes of attention (128, 768), where the row's coordinates spill (benchmarks/README.md).
CUDA_DIMS = (2, 3, 17, 64, 128, 768)


def cuda_variants(dims=CUDA_DIMS):
    """Every CUDA source this module generates, as ``(label, source)``: the chunk sum, then the product kernel of
    each geometry, profile, width and tile dtype, the circle with its one angle, the sphere and the chordal
    distance at each number of coordinates in ``dims`` (the chordal distance also at 1). ``custom`` profiles
    generate no CUDA (:func:`cuda_source` refuses them: their tiles run as array code)."""
    yield "chunk_sum", cuda_sum_source()
    for geometry in GEOMETRIES:
        counts = (1,) if geometry == "circle" else tuple(d for d in dims if d >= 2) + ((1,) if geometry == "chordal"
                                                                                      else ())
        for d in counts:
            for profile in PROFILES:
                for tile_dtype in ("float32", "float64"):
                    for width in CUDA_WIDTHS:
                        yield (f"{geometry}/{profile}/{tile_dtype}/w{width}/D{d}",
                               cuda_source(geometry, profile, width, tile_dtype, d))


# ---------------------------------------------------------------------------------- recognition


def tile_plan(kernel, distance, *, engine: str = "auto"):
    """The :class:`TilePlan` of ``kernel(distance(a, b))``, or ``None``; see :func:`plan_or_reason`."""
    return plan_or_reason(kernel, distance, engine=engine)[0]


def distance_geometry(distance) -> str | None:
    """The geometry a distance declares: ``owner.tile_distance(name)`` of a bound method, if it is one of
    :data:`GEOMETRIES`; else ``None``."""
    owner, name = getattr(distance, "__self__", None), getattr(distance, "__name__", None)
    describe = getattr(owner, "tile_distance", None)
    geometry = describe(name) if callable(describe) and isinstance(name, str) else None
    return geometry if geometry in GEOMETRIES else None


def plan_or_reason(kernel, distance, *, engine: str = "auto") -> tuple[TilePlan | None, str]:
    """``(plan, "")`` when the distance declares its geometry and the kernel its profile, else ``(None, why)``.

    ``distance``: a bound method whose object has ``tile_distance(name)`` (returning ``"circle"``,
    ``"sphere"`` or ``"chordal"``); ``kernel``: anything :func:`spectral.profiles.kernel_profile` reads (a
    ``functools.partial`` of :func:`spectral.fna_kernel` or :func:`spectral.heat_kernel` in any form, an
    object with ``tile_profile()``). Parameters are checked as the kernels check them (a bad one raises).
    ``engine``: the host engine (:func:`host_engine`).
    """
    geometry = distance_geometry(distance)
    if geometry is None:
        name = getattr(distance, "__qualname__", type(distance).__name__)
        return None, (f"the distance {name} declares no tile geometry (a method of an object with "
                      "tile_distance(name), e.g. manifolds.Sphere(2).distance)")
    profile, why = kernel_profile(kernel)
    if profile is None:
        return None, why
    return TilePlan(geometry, profile, host_engine(engine)), ""


def warn_generic(reason: str) -> None:
    """Warn once per process and reason that a fusable distance runs generic tiles (:class:`GenericTilesWarning`)."""
    if reason in _WARNED:
        return
    _WARNED.add(reason)
    warnings.warn(f"KernelOperator evaluates kernel(distance(xa, xb)) per tile (the generic path, 1.3-3x slower "
                  f"than the fused tiles): {reason}", GenericTilesWarning, stacklevel=3)


_WARNED: set[str] = set()


def on_cupy(x) -> bool:
    """True when ``x`` is a CuPy array (the fused CUDA product applies)."""
    return is_cupy_array(x)
