"""Fused tiles of KernelOperator (spectral.tiles, spectral.profiles, spectral.tiles_numba): the profile protocol,
bitwise agreement of the NumPy engine with the generic tiles, the compiled (Numba) engine against it, and the
CUDA product kernel's source run on the host (g++) and compiled by NVRTC where it is installed.

The CUDA path cannot run here (no GPU); its source is plain C++ apart from the launch built-ins, so the
same text is compiled on the host with ``blockIdx``/``blockDim``/``threadIdx`` defined and every thread of
the launch run in turn, through :meth:`TilePlan.device_product` itself (NumPy standing in for CuPy), and
compared with the NumPy tiles times X. ``test_cuda_sources_compile_with_nvrtc`` compiles a covering set for
sm_90 with the newest libnvrtc found (spectral.nvrtc: ``NVRTC_LIBRARY``, the ``nvidia-cuda-nvrtc`` wheel of
CUDA 13 or ``nvidia-cuda-nvrtc-cu12``, a CUDA toolkit), the slow tier every variant with every NVRTC found;
without one they skip and say what to install (``ATTENTION_LIMITS_REQUIRE_NVRTC=1``: they fail instead).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import importlib.util
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

from manifolds import Circle, Euclidean, Sphere
from spectral import KernelOperator, ProfileKernel, TileProfile, fna_kernel, heat_kernel, markov_spectrum
from spectral.floor.backend import to_numpy
from spectral.profiles import kernel_profile
from spectral.nvrtc import INSTALL_HINT, compile_source, find_libraries
from spectral.tiles import (
    GenericTilesWarning,
    cuda_source,
    cuda_sum_source,
    cuda_variants,
    launch_shape,
    tile_plan,
)

KERNELS = {
    "power": functools.partial(fna_kernel, alpha=1.2, scale=0.3, dim=1),
    "local": functools.partial(fna_kernel, alpha=3.0, scale=0.4, dim=2),
    "local2": functools.partial(fna_kernel, alpha=2.0, scale=0.4, dim=2),
    "heat": functools.partial(heat_kernel, eps=0.05),
}
DISTANCES = {"circle": (Circle().distance, 2), "sphere": (Sphere(2).distance, 3), "chordal": (Sphere(2).chordal_distance, 3)}
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="Numba is not installed (the fast extra)")


def _points(geometry, n, rng):
    return Circle().sample(n, rng=rng) if geometry == "circle" else Sphere(2).sample(n, rng=rng)


def _phi(z):
    """A user's profile: (1 + z)^-2.5 (the FNA power law of S^1 at alpha = 1.5), as plain NumPy."""
    return (1.0 + z) ** -2.5


class TestProfileProtocol:
    @pytest.mark.parametrize("geometry", sorted(DISTANCES))
    @pytest.mark.parametrize("kernel", sorted(KERNELS))
    def test_plans(self, geometry, kernel):
        plan = tile_plan(KERNELS[kernel], DISTANCES[geometry][0])
        assert plan.geometry == geometry
        assert plan.kind == {"local2": "local"}.get(kernel, kernel)

    def test_partials_in_any_form(self):
        # nested partials flatten; the describer reads the bound keywords wherever they were bound
        nested = functools.partial(functools.partial(fna_kernel, alpha=1.2), scale=0.3, dim=1)
        assert kernel_profile(nested)[0] == kernel_profile(KERNELS["power"])[0]
        assert kernel_profile(nested)[0].constant == 2.2 and kernel_profile(nested)[0].scale == 0.3
        assert kernel_profile(functools.partial(heat_kernel, eps=0.05, max_bytes=1e9))[0].kind == "heat"
        # a distance bound positionally is not a kernel of a distance: no profile, and the reason says so
        profile, why = kernel_profile(functools.partial(fna_kernel, np.ones(1), alpha=1.2, scale=0.1, dim=1))
        assert profile is None and "binds arguments" in why

    def test_objects_describe_themselves(self):
        user = ProfileKernel(_phi, 0.2)
        profile, _ = kernel_profile(user)
        assert profile.kind == "custom" and profile.scale == 0.2 and profile.function is _phi

        class Gaussian:  # any object with tile_profile()
            def __call__(self, d):
                return heat_kernel(d, eps=0.1)

            def tile_profile(self):
                return TileProfile.heat(0.1)

        assert tile_plan(Gaussian(), Sphere(2).distance).kind == "heat"

    def test_a_kernel_without_a_profile_says_so_once(self, rng):
        x = Circle().sample(20, rng=rng)
        hidden = lambda d: fna_kernel(d, alpha=1.2, scale=0.1, dim=1)  # noqa: E731 - the case of issue 30
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            ops = [KernelOperator(x, kernel=hidden, distance=Circle().distance) for _ in range(3)]
        assert [w.category for w in seen] == [GenericTilesWarning]  # once per reason and process
        assert all(op.plan is None and "declares no tile profile" in op.tiles for op in ops)
        # the same kernel described: fused, and the same products as the generic path
        fused = KernelOperator(x, kernel=ProfileKernel(functools.partial(fna_kernel, alpha=1.2, scale=1.0, dim=1), 0.1),
                               distance=Circle().distance, engine="numpy")
        X = rng.standard_normal((20, 2))
        np.testing.assert_allclose(fused.matmat(X), ops[0].matmat(X), rtol=1e-14)
        assert fused.plan.kind == "custom" and "fused circle/custom" in fused.tiles

    def test_an_opaque_distance_is_generic_without_a_warning(self, rng):
        x = rng.standard_normal((30, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            op = KernelOperator(x, kernel=KERNELS["heat"], distance=lambda a, b: Sphere(2).chordal_distance(a, b))
        assert op.plan is None and "declares no tile geometry" in op.tiles
        assert tile_plan(KERNELS["power"], lambda a, b: a) is None
        assert KernelOperator(x, kernel=KERNELS["heat"], distance=Euclidean(3).distance).plan.geometry == "chordal"

    def test_unrecognised_and_wrong_points(self, rng):
        circle = Circle()
        x = circle.sample(20, rng=rng)
        assert KernelOperator(x, kernel=KERNELS["power"], distance=circle.distance, fused=False).plan is None
        assert "fused=circle/power" in repr(KernelOperator(x, kernel=KERNELS["power"], distance=circle.distance))
        # points of the wrong dimension: no plan, and the distance itself refuses them as before
        op = KernelOperator(np.ones((5, 3)), kernel=KERNELS["power"], distance=circle.distance)
        assert op.plan is None and "do not fit" in op.tiles
        with pytest.raises(Exception, match=r"shape \(n, 2\)"):
            op.row_sums()

    def test_bad_parameters_refused(self):
        with pytest.raises(Exception, match="alpha"):
            tile_plan(functools.partial(fna_kernel, alpha=-1.0, scale=0.1, dim=1), Circle().distance)
        with pytest.raises(Exception, match="eps"):
            tile_plan(functools.partial(heat_kernel, eps=0.0), Circle().distance)
        with pytest.raises(Exception, match="fused"):
            KernelOperator(np.ones((3, 2)), kernel=KERNELS["power"], distance=Circle().distance, fused=1)
        with pytest.raises(Exception, match="engine"):
            KernelOperator(np.ones((3, 2)), kernel=KERNELS["power"], distance=Circle().distance, engine="fortran")
        with pytest.raises(Exception, match="TileProfile"):
            kernel_profile(type("Bad", (), {"tile_profile": lambda self: "power"})())
        with pytest.raises(Exception, match="callable"):
            ProfileKernel(3.0)


class TestHostTiles:
    @pytest.mark.parametrize("geometry", sorted(DISTANCES))
    @pytest.mark.parametrize("kernel", sorted(KERNELS))
    def test_numpy_engine_float64_tiles_are_the_generic_tiles(self, geometry, kernel, rng):
        # same operations in the same order as kernel(distance(xa, xb)): bitwise equal, products too
        dist, _ = DISTANCES[geometry]
        x = _points(geometry, 150, rng)
        fused = KernelOperator(x, kernel=KERNELS[kernel], distance=dist, tile=64, engine="numpy")
        plain = KernelOperator(x, kernel=KERNELS[kernel], distance=dist, tile=64, fused=False)
        assert fused.plan is not None and plain.plan is None and plain.tiles.endswith("fused=False")
        np.testing.assert_array_equal(fused.to_dense(), plain.to_dense())
        X = rng.standard_normal((150, 3))
        np.testing.assert_array_equal(fused.matmat(X), plain.matmat(X))
        np.testing.assert_array_equal(fused.row_sums(), plain.row_sums())
        assert fused.min_score == plain.min_score

    def test_custom_profile_tiles_are_the_generic_tiles(self, rng):
        x = Sphere(2).sample(120, rng=rng)
        user = ProfileKernel(_phi, 0.25)
        for engine in ("numpy", "auto"):
            fused = KernelOperator(x, kernel=user, distance=Sphere(2).distance, tile=50, engine=engine)
            plain = KernelOperator(x, kernel=user, distance=Sphere(2).distance, tile=50, fused=False)
            X = rng.standard_normal((120, 2))
            np.testing.assert_array_equal(fused.matmat(X), plain.matmat(X))
        assert "custom" in fused.tiles

    def test_float32_tiles_round_the_float64_distances(self, rng):
        x = Circle().sample(300, rng=rng)
        for engine in ("numpy", "auto"):
            fused = KernelOperator(x, kernel=KERNELS["power"], distance=Circle().distance, tile=100, zero_diagonal=True,
                                   engine=engine)
            X = rng.standard_normal((300, 4))
            exact = fused.matmat(X)
            cheap = fused.matmat(X, tile_dtype="float32")
            # float32 scores of float64 distances: a few float32 ulps per entry (measured 1.6e-7 relative)
            err = np.max(np.abs(cheap - exact)) / np.max(np.abs(exact))
            assert err < 2e-6, err
            assert err > 1e-9  # the float32 tiles were used (a float64 product agrees to 1e-15)

    def test_nonsymmetric_products(self, rng):
        x, y = Sphere(2).sample(90, rng=rng), Sphere(2).sample(70, rng=rng)
        kw = dict(kernel=KERNELS["heat"], distance=Sphere(2).distance, y=y, block_rows=32)
        fused, plain = KernelOperator(x, **kw, engine="numpy"), KernelOperator(x, **kw, fused=False)
        v, w = rng.standard_normal(70), rng.standard_normal(90)
        np.testing.assert_array_equal(fused.matvec(v), plain.matvec(v))
        np.testing.assert_array_equal(fused.rmatvec(w), plain.rmatvec(w))

    @pytest.mark.parametrize("kernel", ["power", "custom"])
    def test_strict_namespace(self, xp, rng, kernel):
        # the fused plan in another namespace: array code (CuPy: the CUDA kernel, or array code for a custom profile)
        x = Circle().sample(120, rng=rng)
        kern = KERNELS["power"] if kernel == "power" else ProfileKernel(_phi, 0.3)
        op = KernelOperator(xp.asarray(x), kernel=kern, distance=Circle().distance, tile=50, zero_diagonal=True)
        assert op.plan is not None and op.plan.kind == ("power" if kernel == "power" else "custom")
        ref = KernelOperator(x, kernel=kern, distance=Circle().distance, tile=50, zero_diagonal=True, engine="numpy")
        X = rng.standard_normal((120, 2))
        out = op.matmat(xp.asarray(X))
        assert type(out) is type(xp.asarray(X))
        # the same float64 operations through another namespace: round-off of exact algebra
        np.testing.assert_allclose(to_numpy(out), ref.matmat(X), rtol=4 * np.sqrt(np.finfo(float).eps))


#: Largest |compiled - NumPy| / (eps (1 + |log s|) s) over every entry s of a tile, float64 and float32 (eps of
#: the tile dtype): the score is exp(-E), so an error of a few ulps in E (its own rounding, the distance's) moves
#: it by |E| ulps relative. Measured on 200 x 200 tiles of every case below (S^2, S^15, S^1, chordal; power,
#: local p = 1.5 and 2, heat), seeds 0-2, AMD EPYC: <= 5.4 (float64) and <= 5.1 (float32) ulps per unit of
#: 1 + |log s| with AVX-512, 5.4 and 4.8 in the AVX2 class (NUMBA_CPU_NAME=haswell); a beta 1e-6 off is > 100
#: units (test_a_wrong_constant_fails_the_bound).
COMPILED_ULPS = 16.0


@needs_numba
class TestCompiledTiles:
    CASES = [("sphere", Sphere(2), "distance", functools.partial(fna_kernel, alpha=1.3, scale=0.05, dim=2)),
             ("sphere", Sphere(2), "distance", functools.partial(fna_kernel, alpha=3.0, scale=0.3, dim=2)),
             ("sphere", Sphere(2), "distance", functools.partial(fna_kernel, alpha=2.0, scale=0.3, dim=2)),
             ("sphere", Sphere(2), "distance", functools.partial(heat_kernel, eps=0.01)),
             ("sphere", Sphere(15), "distance", functools.partial(fna_kernel, alpha=1.3, scale=0.5, dim=15)),
             ("chordal", Sphere(2), "chordal_distance", functools.partial(fna_kernel, alpha=1.3, scale=0.05, dim=2)),
             ("chordal", Sphere(2), "chordal_distance", functools.partial(heat_kernel, eps=0.02)),
             ("circle", Circle(), "distance", functools.partial(fna_kernel, alpha=1.2, scale=0.01, dim=1)),
             ("circle", Circle(), "distance", functools.partial(fna_kernel, alpha=2.5, scale=0.1, dim=1)),
             ("circle", Circle(), "distance", functools.partial(heat_kernel, eps=0.001))]

    @staticmethod
    def _units(fast, ref, dtype):
        eps = np.finfo(dtype).eps
        big = ref > 0
        assert np.array_equal(fast == 0, ref == 0)  # the same entries flushed
        return float(np.max(np.abs(fast[big] - ref[big]) / (eps * (1.0 + np.abs(np.log(ref[big]))) * ref[big])))

    @pytest.mark.parametrize("case", range(len(CASES)))
    def test_compiled_tiles_against_the_numpy_tiles(self, case, rng):
        geometry, man, method, kern = self.CASES[case]
        x = man.sample(200, rng=rng)
        ops = {e: KernelOperator(x, kernel=kern, distance=getattr(man, method), engine=e, tile=128)
               for e in ("numba", "numpy")}
        assert ops["numba"].plan.compiled and not ops["numpy"].plan.compiled
        for dtype in ("float64", "float32"):
            fast = ops["numba"]._tiles(getattr(np, dtype))
            for (i0, i1, j0, j1, c), (_, _, _, _, r) in zip(fast, ops["numpy"]._tiles(getattr(np, dtype))):
                assert self._units(np.array(c), np.asarray(r, dtype=np.float64), dtype) <= COMPILED_ULPS
            X = rng.standard_normal((200, 3))
            a, b = ops["numba"].matmat(X, tile_dtype=dtype), ops["numpy"].matmat(X, tile_dtype=dtype)
            assert np.max(np.abs(a - b)) <= 50 * np.finfo(dtype).eps * np.max(np.abs(b))
        np.testing.assert_allclose(ops["numba"].to_dense(), ops["numpy"].to_dense(), rtol=1e-12, atol=0)

    def test_a_wrong_constant_fails_the_bound(self, rng):
        x = Sphere(2).sample(100, rng=rng)
        good = KernelOperator(x, kernel=self.CASES[0][3], distance=Sphere(2).distance, engine="numpy")
        plan = good.plan
        wrong = dataclasses.replace(plan, engine="numba",
                                    profile=dataclasses.replace(plan.profile, constant=plan.profile.constant * (1 + 1e-6)))
        pa = plan.prepare(x)
        out, work = np.empty((100, 100)), np.empty((3, 100))
        c = wrong.compiled_tile(out, pa, plan.columns(pa), (0, 100), (0, 100), np.float64, work)
        assert self._units(c, good.to_dense(), np.float64) > 100

    def test_spectrum_agrees_with_the_numpy_engine(self, rng):
        x = Sphere(2).sample(400, rng=rng)
        kern = functools.partial(fna_kernel, alpha=1.3, scale=0.2, dim=2)
        lam = {e: np.asarray(markov_spectrum(KernelOperator(x, kernel=kern, distance=Sphere(2).distance, engine=e),
                                             10, rng=0).eigenvalues) for e in ("numba", "numpy")}
        assert np.max(np.abs(lam["numba"] - lam["numpy"])) < 1e-13


# ------------------------------------------------------------------------------- CUDA source on the host

_HEADER = r"""
#include <cmath>
using std::fabs; using std::fmin; using std::log; using std::exp; using std::pow; using std::atan2;
using std::sqrt; using std::fma;  // logf, expf, powf: the C functions of <cmath>
struct launch_index { unsigned x, y, z; };
static launch_index blockIdx, blockDim, threadIdx;
#define __global__
#define __restrict__
"""
_FOOTER = r"""
extern "C" void launch(int gx, int gy, int bx, const double* pa, const double* pb, const double* X,
                       double* part, double* mins, int n, int m, int k, int ldx, int xcol, int ldo, int ocol,
                       int chunk, int zd, int rm, double scale, double constant) {
    blockDim.x = bx; blockDim.y = 1; blockDim.z = 1;
    for (int y = 0; y < gy; ++y) for (int x = 0; x < gx; ++x) for (int t = 0; t < bx; ++t) {
        blockIdx.x = x; blockIdx.y = y; threadIdx.x = t;
        kernel_operator_product(pa, pb, X, part, mins, n, m, k, ldx, xcol, ldo, ocol, chunk, zd, rm, scale, constant);
    }
}
"""
_SUM_FOOTER = r"""
extern "C" void launch(int gx, int gy, int bx, const double* part, double* out, int n, int k, int chunks, int ldo,
                       int ocol) {
    blockDim.x = bx; blockDim.y = 1; blockDim.z = 1;
    for (int y = 0; y < gy; ++y) for (int x = 0; x < gx; ++x) for (int t = 0; t < bx; ++t) {
        blockIdx.x = x; blockIdx.y = y; threadIdx.x = t;
        kernel_operator_chunk_sum(part, out, n, k, chunks, ldo, ocol);
    }
}
"""


def _host_compiler(tmp_path):
    """A compiler of cuda_source for the host, returning launchers with RawKernel's calling convention."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler to run the CUDA source on the host")
    built = {}

    def compile_source(source):
        product = "kernel_operator_product" in source
        n_arrays, n_ints, n_floats = (5, 10, 2) if product else (2, 5, 0)
        if source not in built:
            stem = tmp_path / f"k{len(built)}"
            stem.with_suffix(".cpp").write_text(_HEADER + source + (_FOOTER if product else _SUM_FOOTER))
            subprocess.run([cxx, "-O1", "-shared", "-fPIC", "-ffp-contract=off", str(stem.with_suffix(".cpp")),
                            "-o", str(stem.with_suffix(".so"))], check=True, capture_output=True)
            lib = ctypes.CDLL(str(stem.with_suffix(".so")))
            lib.launch.argtypes = ([ctypes.c_int] * 3 + [ctypes.c_void_p] * n_arrays + [ctypes.c_int] * n_ints
                                   + [ctypes.c_double] * n_floats)
            built[source] = lib

        lib = built[source]

        def launcher(grid, block, args):
            assert len(args) == n_arrays + n_ints + n_floats
            arrays, ints, floats = args[:n_arrays], args[n_arrays:n_arrays + n_ints], args[n_arrays + n_ints:]
            for a in arrays:
                assert a.dtype == np.float64 and a.flags.c_contiguous
            assert all(isinstance(v, np.int32) for v in ints) and all(isinstance(v, np.float64) for v in floats)
            grid = tuple(grid) + (1,) * (2 - len(grid))
            lib.launch(int(grid[0]), int(grid[1]), int(block[0]), *(a.ctypes.data for a in arrays),
                       *(int(v) for v in ints), *(float(v) for v in floats))

        return launcher

    return compile_source


#: (geometry, kernel, tile dtype, numbers of columns): k = 5 is one launch of width 8; k = 37 two launches (widths 32
#: and 8). Every case runs both; two of them run k = 37 in the slow tier (the width-32 source is one more compile,
#: about 0.14 s)
CASES = [("circle", "power", "float32", (5, 37)), ("sphere", "local", "float64", (5, 37)),
         ("chordal", "heat", "float32", (5,)), ("circle", "heat", "float64", (5,)),
         pytest.param("chordal", "heat", "float32", (37,), marks=pytest.mark.slow),
         pytest.param("circle", "heat", "float64", (37,), marks=pytest.mark.slow)]


@pytest.mark.parametrize("geometry, kernel, tile_dtype, columns", CASES)
def test_cuda_source_on_the_host(geometry, kernel, tile_dtype, columns, rng, tmp_path):
    # The CUDA kernel's own text, run thread by thread through device_product's launch code (NumPy in CuPy's
    # place), against the NumPy tiles times X. n = 300 rows: three blocks of 128 threads, the last partial;
    # two column chunks (launch_shape: 300 // 128 = 2 at most); k = 5 (width 8) and 37 (launches of 32 + 5).
    compile_source = _host_compiler(tmp_path)
    dist, _ = DISTANCES[geometry]
    plan = tile_plan(KERNELS[kernel], dist, engine="numpy")
    x = _points(geometry, 300, rng)
    pa = plan.prepare(x)
    assert launch_shape(300, 300)[1] == 2
    tile = plan.tile(pa, pa, tile_dtype).astype(np.float64)
    np.fill_diagonal(tile, 0.0)
    for k in columns:
        X = rng.standard_normal((300, k))
        out, mins = plan.device_product(pa, pa, X, tile_dtype=tile_dtype, zero_diagonal=True, row_min=True,
                                        _module=np, _compile=compile_source)
        # same scores up to libm vs NumPy's SIMD exp/log (an ulp or two of the tile dtype), summed in
        # another order: measured 2.5e-16 to 5.0e-16 (float64) and 5e-8 to 8e-8 (float32) relative to the
        # largest entry; the row minima (small scores, relative) 2e-16 to 7e-15 and 1.7e-7 to 9.9e-7
        rtol = 1e-13 if tile_dtype == "float64" else 5e-6
        ref = tile @ X
        assert np.max(np.abs(out - ref)) <= rtol * np.max(np.abs(ref)), (k, np.max(np.abs(out - ref)))
    full = plan.tile(pa, pa, tile_dtype).astype(np.float64)
    np.testing.assert_allclose(mins, full.min(axis=1), rtol=rtol)
    # a wrong kernel fails the same comparison: beta, p or eps 5 % off
    wrong = dataclasses.replace(plan, profile=dataclasses.replace(plan.profile, constant=plan.profile.constant * 1.05))
    bad = wrong.device_product(pa, pa, X, tile_dtype=tile_dtype, zero_diagonal=True, _module=np,
                               _compile=compile_source)
    assert np.max(np.abs(bad - ref)) > 100 * rtol * np.max(np.abs(ref))


def test_cuda_source_on_the_host_one_chunk_in_place(rng, tmp_path):
    # n = 150 < 2 * 128 columns: one chunk, so the product kernel writes the result's columns itself (ldo = k,
    # ocol = 32 for the second launch) and reads X's columns 32..36 in place (ldx = k, xcol = 32)
    compile_source = _host_compiler(tmp_path)
    plan = tile_plan(KERNELS["heat"], DISTANCES["circle"][0], engine="numpy")
    pa = plan.prepare(_points("circle", 150, rng))
    assert launch_shape(150, 150)[1] == 1
    X = rng.standard_normal((150, 37))
    out = plan.device_product(pa, pa, X, tile_dtype="float64", _module=np, _compile=compile_source)
    ref = plan.tile(pa, pa, "float64") @ X
    assert np.max(np.abs(out - ref)) <= 1e-13 * np.max(np.abs(ref))


def test_chunk_sums_are_added_in_chunk_order(rng, tmp_path):
    # ((p0 + p1) + p2): with p0 = 1e16, p1 = -1e16, p2 = 1 that is 1, where p0 + (p1 + p2) (another order, e.g. a
    # pairwise reduction) is 0; the result's other columns are left alone
    kern = _host_compiler(tmp_path)(cuda_sum_source())
    n, k, chunks = 3, 2, 3
    part = np.zeros((chunks, n, k))
    part[0], part[1], part[2] = 1e16, -1e16, 1.0
    out = np.full((n, 5), 7.0)
    kern((1,), (256,), (part, out, np.int32(n), np.int32(k), np.int32(chunks), np.int32(5), np.int32(2)))
    assert np.all(out[:, 2:4] == 1.0) and np.all(out[:, [0, 1, 4]] == 7.0)
    part = rng.standard_normal((5, 70, 4)) * 10.0 ** rng.integers(-8, 8, (5, 70, 4))
    out = np.empty((70, 4))
    kern((2,), (256,), (part, out, np.int32(70), np.int32(4), np.int32(5), np.int32(4), np.int32(0)))
    fold = part[0].copy()
    for b in range(1, 5):
        fold = fold + part[b]
    np.testing.assert_array_equal(out, fold)


def test_launch_shape():
    assert launch_shape(100_000, 100_000) == (782, 1, 100_000)  # enough rows: one chunk, no partial sums
    rows, chunks, chunk = launch_shape(2000, 2000)
    assert rows == 16 and chunks * chunk >= 2000 and (chunks - 1) * chunk < 2000 and chunks == 15
    assert launch_shape(1, 1) == (1, 1, 1)
    assert launch_shape(20_000, 20_000) == (157, 4, 5000)  # 628 blocks: 4 per multiprocessor of a 132-SM device
    assert launch_shape(4 * 132 * 128, 10**6)[1] == 1  # from n = 67584 rows alone fill the target


#: Set to 1 where NVRTC is expected (a CI job that installs it): then a missing libnvrtc fails instead of skipping.
REQUIRE_NVRTC = "ATTENTION_LIMITS_REQUIRE_NVRTC"


def _nvrtc_libraries():
    """Every libnvrtc found (spectral.nvrtc.find_libraries), or a skip that says what was not compiled and what
    to install (a failure under ATTENTION_LIMITS_REQUIRE_NVRTC=1)."""
    libraries = find_libraries()
    if not libraries:
        why = (f"no libnvrtc found ({INSTALL_HINT}): the generated CUDA sources of spectral.tiles were NOT "
               "compiled (only run on the host by g++)")
        if os.environ.get(REQUIRE_NVRTC) == "1":
            pytest.fail(why)
        pytest.skip(why)
    return libraries


def _compile_all(jobs, *, arch="sm_90"):
    """Compile ``(library, label, source)`` jobs (two at a time: NVRTC is thread-safe); ``[(job, report)]``."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda job: compile_source(job[2], job[0], arch=arch), jobs))
    return list(zip(jobs, reports))


def _problems(results):
    """Failures and warnings of compiled jobs, and local memory (stack or spills) where the row's coordinates
    and the accumulators must fit in registers (D <= 64, any width: measured with NVRTC 12.9 and 13.5)."""
    out = []
    for (lib, label, _), report in results:
        if not report.ok or report.warnings:
            out.append(f"{lib.name} {label}: {'failed' if not report.ok else 'warned'}:\n{report.log}")
            continue
        (k,) = report.kernels
        dims = int(label.rsplit("/D", 1)[1]) if "/D" in label else 0
        if dims <= 64 and (k.stack_frame or k.spill_stores or k.spill_loads):
            out.append(f"{lib.name} {label}: local memory at D = {dims}: {k}")
    return out


#: A covering set for the default tier (five compilations, about 1.5 s): each geometry, profile, tile dtype, the
#: smallest and largest width, D up to 17, and the chunk sum
COVERING = [("circle", "power", 32, "float32", 1), ("sphere", "local", 1, "float64", 3),
            ("chordal", "heat", 32, "float64", 17), ("sphere", "heat", 32, "float32", 17)]


def test_cuda_sources_compile_with_nvrtc():
    # the newest NVRTC found, for sm_90 (H100, H200) as CuPy compiles a RawKernel there: no error, no warning,
    # and everything in registers; every variant with every NVRTC: the slow test below
    (lib, *_) = _nvrtc_libraries()
    jobs = [(lib, "chunk_sum", cuda_sum_source())]
    jobs += [(lib, f"{g}/{p}/{dt}/w{w}/D{d}", cuda_source(g, p, w, dt, d)) for g, p, w, dt, d in COVERING]
    results = _compile_all(jobs)
    assert not _problems(results), "\n".join(_problems(results))
    assert {k.kernel for _, r in results for k in r.kernels} == {"kernel_operator_product", "kernel_operator_chunk_sum"}


@pytest.mark.slow
def test_every_cuda_variant_compiles_with_every_nvrtc():
    # every variant spectral.tiles generates (cuda_variants: 3 geometries x 3 profiles x 5 widths x 2 tile dtypes,
    # the chordal distance also at D = 1) at D = 1, 3, 17, 64 with every NVRTC found (12.9 and 13.5 here: 124 s
    # on 2 shared cores, 2 compilations at a time), and at D = 128 and 768, where the row's coordinates spill,
    # with the newest at widths 1 and 32 (a D = 768 source takes 2 s to compile: its DIMS loops are unrolled).
    # benchmarks/cuda_resources.py compiles all 421 with every NVRTC and prints the registers and spills
    # (benchmarks/README.md).
    libraries = _nvrtc_libraries()
    jobs = [(lib, label, src) for lib in libraries for label, src in cuda_variants((3, 17, 64))]
    jobs += [(libraries[0], label, src) for label, src in cuda_variants((128, 768))
             if label.endswith(("/D128", "/D768")) and label.split("/")[3] in ("w1", "w32")]
    results = _compile_all(jobs)
    assert not _problems(results), "\n".join(_problems(results))
    big = [r.kernels[0] for (_, label, _), r in results if label.endswith("/D768")]
    assert big and all(k.registers <= 255 for k in big)


def test_custom_profiles_generate_no_cuda():
    with pytest.raises(ValueError, match="no CUDA product"):
        cuda_source("circle", "custom", 8, "float64", 1)
    assert all("custom" not in label for label, _ in cuda_variants((3,)))
    labels = [label for label, _ in cuda_variants((3,))]
    assert len(labels) == len(set(labels)) == 1 + 30 * 4  # chunk sum; circle D1, sphere D3, chordal D3 and D1


def test_the_nvrtc_finder_refuses_an_explicit_bad_path(monkeypatch, tmp_path):
    bad = tmp_path / "libnvrtc.so.99"
    bad.write_text("not a library")
    monkeypatch.setenv("NVRTC_LIBRARY", str(bad))
    with pytest.raises(OSError, match="NVRTC_LIBRARY=.*not a loadable libnvrtc"):
        find_libraries()


def test_without_nvrtc_the_skip_says_what_was_not_compiled_and_what_to_install(monkeypatch):
    monkeypatch.setitem(globals(), "find_libraries", lambda: [])
    monkeypatch.delenv(REQUIRE_NVRTC, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"NOT compiled.*|pip install nvidia-cuda-nvrtc") as info:
        _nvrtc_libraries()
    assert "pip install nvidia-cuda-nvrtc" in str(info.value) and "NOT compiled" in str(info.value)
    monkeypatch.setenv(REQUIRE_NVRTC, "1")
    with pytest.raises(pytest.fail.Exception, match="NOT compiled"):
        _nvrtc_libraries()
