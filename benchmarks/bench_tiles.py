"""Benchmark: how close a fused kernel tile comes to this CPU's limit, and what a spectrum costs in products.

Run from the repository root, on one core and one BLAS thread (the per-entry costs are single-core figures)::

    OPENBLAS_NUM_THREADS=1 taskset -c 1 python benchmarks/bench_tiles.py                    # all sections
    OPENBLAS_NUM_THREADS=1 taskset -c 1 python benchmarks/bench_tiles.py --sections roofline,entry
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tiles.py --sections spectrum --sizes 6000,20000
    OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_tiles.py --sections large --large-n 100000

The AVX2 machine class on an AVX-512 CPU: ``OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4
AVX512_ICL AVX512_SPR" NUMBA_CPU_NAME=haswell`` (NumPy's dispatch, OpenBLAS's kernels and Numba's code
generation all as on an AVX2-only CPU).

Sections (every ratio is measured in one process, the runs interleaved, minimum over ``--repeats``):

1. ``roofline``: throughput of the elementary operations a tile needs (exp, log, log1p, sqrt, atan2, asin,
   a multiply, a fused multiply-add) on 2^17 float64 and float32 elements in cache, in NumPy, in numexpr (one
   thread) and in Numba (a loop over ``math.*``: scalar libm calls, llvmlite has no vector math library)
   where they are installed, and the toolkit's own vectorised polynomials (:mod:`spectral.tiles_numba`);
   plus one GEMM ``C @ X`` (X of 10 columns) per entry. The roofline of a tile is the sum, per evaluated
   pair, of the fastest measured implementation of each operation it needs (:data:`TILE_OPS`).
2. ``entry``: one block product ``C @ X`` (X of 10 columns, n = ``--entry-n``) of ``KernelOperator`` per
   geometry (S^1, S^2 and S^15 geodesic, S^2 chordal), profile (power law, local, heat) and tile dtype, for
   the compiled engine (Numba) and the NumPy engine; nanoseconds per n^2 entry (the symmetric product
   evaluates the n^2 / 2 pairs on and above the diagonal and uses each twice) and the ratio to the roofline
   of the same run (the roofline per entry: half the tile's roofline per pair plus the two GEMM passes).
3. ``spectrum``: the FNA top-k spectrum on S^2 (alpha 1.3, scale 0.05, random points) by the matrix-free
   path against the dense float64 path (the kernel built with NumPy alone, its conjugate stored, ARPACK
   ``eigsh``), each in its own child process (time and peak RSS): block products per phase and the time
   ratio, for k = 9, 10, 16 (k = 10 cuts the 7-fold degree-3 multiplet) at each of ``--sizes``.
4. ``large``: the matrix-free path alone at ``--large-n`` (time, peak RSS, products).

Targets (issue 30): S^2 float64 power-law entry <= 10 ns; every fused tile within 2x of its roofline;
matrix-free <= 1.5x dense at n = 6000 (k = 9, 10, 16) and <= 1.0x at n = 20000, eigenvalues within 1e-8.
A plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from manifolds import Circle, Sphere  # noqa: E402
from spectral import KernelOperator, fna_kernel, heat_kernel, markov_spectrum  # noqa: E402
from _common import sphere_points, vmhwm_mb, write_json  # noqa: E402 - benchmarks/ is on sys.path as a script

SEED = 20261130
ALPHA = 1.3
SCALE = 0.05
N_ELEMENTS = 1 << 17


def _load() -> float:
    return os.getloadavg()[0]


def simd_level() -> str:
    """NumPy's SIMD dispatch targets found on this CPU."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # pragma: no cover
        return "unknown"
    return " ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f)) or "baseline only"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


# ----------------------------------------------------------------------------- 4. large n (child process)


def large_child(n: int, k: int) -> dict:
    """The FNA top-k on n random S^2 points by the matrix-free path: time, peak RSS, block products."""
    rss0 = vmhwm_mb()
    x = sphere_points(n, np.random.default_rng([SEED, n]))
    kern = functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=2)
    op = KernelOperator(x, kernel=kern, distance=Sphere(2).distance)
    t0 = time.perf_counter()
    spec = markov_spectrum(op, k, method="matrix-free", rng=SEED)
    elapsed = time.perf_counter() - t0
    return dict(n=n, k=k, seconds=elapsed, peak_rss_mib=vmhwm_mb(), start_rss_mib=rss0, solver=spec.solver,
                tiles=op.tiles, residual=float(spec.residual), eigenvalues=[float(v) for v in spec.eigenvalues],
                load=_load())


def main(argv=None) -> int:
    sys.stdout.reconfigure(line_buffering=True)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sections", default="roofline,entry,spectrum")
    p.add_argument("--large-n", type=int, default=100_000)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--json", default=None)
    p.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        kind, rest = args.child[0], args.child[1:]
        if kind == "large":
            print(json.dumps(large_child(int(rest[0]), int(rest[1]))))
        return 0
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    print(f"{cpu_name()}, numpy {np.__version__}, NumPy SIMD {simd_level()}, load {_load():.1f}")
    results = []
    if "large" in sections:
        r = large_child(args.large_n, args.k)
        print(json.dumps(r))
        results.append(r)
    write_json(args.json, results, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
