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


# ----------------------------------------------------------------------------- helpers


def best(fn, repeats: int, per: int) -> float:
    """Smallest time of ``repeats`` calls (after one warm-up), in nanoseconds per ``per`` elements."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) / per * 1e9


def interleaved(fns: dict, repeats: int, per: int, clock=time.perf_counter) -> dict:
    """Run each callable once (warm-up), then ``repeats`` rounds in turn; the smallest time of each, ns per ``per``.

    ``clock=time.process_time``: this process's CPU time (on a loaded machine a long call is preempted, and its
    wall time grows with the load; its CPU time does not, apart from the caches other jobs evict)."""
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return {name: min(ts) / per * 1e9 for name, ts in times.items()}


# ----------------------------------------------------------------------------- 1. roofline


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def op_costs(repeats: int) -> dict:
    """``{(op, dtype): {implementation: ns per element}}`` on 2^17 elements in cache, one thread."""
    rng = np.random.default_rng(SEED)
    n = N_ELEMENTS
    ne = _optional("numexpr")
    nb = _optional("numba")
    if ne is not None:
        ne.set_num_threads(1)
    out = {}
    for dt in (np.float64, np.float32):
        name = np.dtype(dt).name
        pos = rng.uniform(0.0, 30.0, n).astype(dt)  # exp(-pos): the scores' range
        wide = (1.0 + rng.uniform(0.0, 300.0, n)).astype(dt)  # log(1 + z)
        u = rng.uniform(0.0, 2.0, n).astype(dt)
        v = np.sqrt(4.0 - u * u).astype(dt)
        w = rng.uniform(0.0, 1.0, n).astype(dt)
        o = np.empty(n, dtype=dt)
        numpy_ops = {
            "exp": lambda: np.exp(np.negative(pos, out=o), out=o),
            "log": lambda: np.log(wide, out=o),
            "log1p": lambda: np.log1p(pos, out=o),
            "sqrt": lambda: np.sqrt(wide, out=o),
            "atan2": lambda: np.arctan2(u, v, out=o),
            "asin": lambda: np.arcsin(w, out=o),
            "mul": lambda: np.multiply(u, v, out=o),
        }
        for op, fn in numpy_ops.items():
            out.setdefault((op, name), {})["numpy"] = best(fn, repeats, n)
        if ne is not None:
            ne_ops = {"exp": "exp(-pos)", "log": "log(wide)", "log1p": "log1p(pos)", "sqrt": "sqrt(wide)",
                      "atan2": "arctan2(u, v)", "asin": "arcsin(w)", "mul": "u * v", "fma": "u * v + w"}
            env = dict(pos=pos, wide=wide, u=u, v=v, w=w)
            for op, expr in ne_ops.items():
                out.setdefault((op, name), {})["numexpr"] = best(
                    functools.partial(ne.evaluate, expr, local_dict=env, out=o), repeats, n)
        if nb is not None:
            for op, fn in _numba_libm_loops(nb).items():
                args = {"exp": (pos,), "log": (wide,), "log1p": (pos,), "sqrt": (wide,), "atan2": (u, v),
                        "asin": (w,), "mul": (u, v), "fma": (u, v, w)}[op]
                out.setdefault((op, name), {})["numba (libm)"] = best(functools.partial(fn, *args, o), repeats, n)
            tn = _compiled_module()
            if tn is not None:
                if dt is np.float64:
                    cases = {"exp": ("exp", pos, pos), "log": ("log", wide, wide), "atan2": ("atan2", u, v)}
                else:
                    cases = {"exp": ("expf", pos, pos), "log": ("logf", wide, wide)}
                for op, (code, a, b) in cases.items():
                    out.setdefault((op, name), {})["toolkit (Numba, vectorised)"] = best(
                        functools.partial(tn.elementwise, tn.ELEMENTWISE[code], a, b, o), repeats, n)
    return out


def _compiled_module():
    from spectral.tiles import host_engine

    if host_engine("auto") != "numba":
        return None
    import importlib

    return importlib.import_module("spectral.tiles_numba")


@functools.cache
def _numba_libm_loops(nb):
    """Numba loops over ``math.*`` (each a scalar libm call: llvmlite has no vector math library)."""
    jit = nb.njit(fastmath={"contract"}, error_model="numpy")

    @jit
    def exp_(a, o):
        for i in range(o.size):
            o[i] = math.exp(-a[i])

    @jit
    def log_(a, o):
        for i in range(o.size):
            o[i] = math.log(a[i])

    @jit
    def log1p_(a, o):
        for i in range(o.size):
            o[i] = math.log1p(a[i])

    @jit
    def sqrt_(a, o):
        for i in range(o.size):
            o[i] = math.sqrt(a[i])

    @jit
    def atan2_(a, b, o):
        for i in range(o.size):
            o[i] = math.atan2(a[i], b[i])

    @jit
    def asin_(a, o):
        for i in range(o.size):
            o[i] = math.asin(a[i])

    @jit
    def mul_(a, b, o):
        for i in range(o.size):
            o[i] = a[i] * b[i]

    @jit
    def fma_(a, b, c, o):
        for i in range(o.size):
            o[i] = a[i] * b[i] + c[i]

    return {"exp": exp_, "log": log_, "log1p": log1p_, "sqrt": sqrt_, "atan2": atan2_, "asin": asin_, "mul": mul_,
            "fma": fma_}


def gemm_cost(repeats: int, k: int = 10, tile: int = 362) -> float:
    """ns per tile entry of one GEMM ``C @ X`` (C a float64 tile, X of ``k`` columns): the product's own work."""
    rng = np.random.default_rng(SEED)
    c, x, o = rng.random((tile, tile)), rng.standard_normal((tile, k)), np.empty((tile, k))
    return best(lambda: np.matmul(c, x, out=o), repeats * 20, tile * tile)


#: Elementary operations of one evaluated pair, per geometry (``D`` coordinates) and profile: the roofline of a
#: tile is the sum of the fastest measured cost of each (``cheap``: an add, a multiply, a min, a compare, a
#: store: the measured multiply). The float32 profiles count float32 operations, the distances float64.
def tile_ops(geometry: str, profile: str, dims: int, local_square: bool) -> list[tuple[str, str]]:
    f64, ops = "float64", []
    if geometry == "circle":
        ops += [("mul", f64)] * 3  # subtract, abs, min
    elif geometry == "sphere":
        ops += [("fma", f64)] * (2 * dims) + [("mul", f64)] * (2 * dims)  # (a -+ b)^2 summed: sub, fma twice
        ops += [("sqrt", f64)] * 2 + [("atan2", f64), ("mul", f64)]
    else:
        ops += [("fma", f64)] * dims + [("mul", f64)] * dims + [("sqrt", f64)]
    return ops


def profile_ops(profile: str, dtype: str, local_square: bool) -> list[tuple[str, str]]:
    if profile == "power":
        return [("mul", dtype), ("mul", dtype), ("log", dtype), ("mul", dtype), ("exp", dtype), ("mul", dtype)]
    if profile == "local":
        pw = [("mul", dtype)] if local_square else [("log", dtype), ("mul", dtype), ("exp", dtype)]
        return [("mul", dtype)] + pw + [("exp", dtype), ("mul", dtype)]
    return [("mul", dtype), ("mul", dtype), ("exp", dtype), ("mul", dtype)]


def roofline_pair(costs: dict, ops) -> float:
    """Sum of the fastest measured implementation of each operation (ns per evaluated pair)."""
    total = 0.0
    for op, dtype in ops:
        if op == "fma" and (op, dtype) not in costs:
            op = "mul"
        total += min(costs[(op, dtype)].values())
    return total


def section_roofline(repeats: int):
    print("\n[1] roofline: ns per element, 2^17 elements in cache, one thread (min of repeats)")
    costs = op_costs(repeats)
    impls = sorted({i for v in costs.values() for i in v})
    print(f"  {'op':<7s} {'dtype':<8s} " + " ".join(f"{i:>28s}" for i in impls) + f" {'best':>8s}")
    rows = []
    for (op, dtype), v in sorted(costs.items()):
        line = " ".join(f"{v[i]:28.2f}" if i in v else f"{'-':>28s}" for i in impls)
        print(f"  {op:<7s} {dtype:<8s} {line} {min(v.values()):8.2f}")
        rows.append(dict(section="roofline", op=op, dtype=dtype, load=_load(), **{i: v[i] for i in v}))
    g = gemm_cost(repeats)
    print(f"  GEMM C @ X (X of 10 columns), per tile entry: {g:.2f} ns")
    rows.append(dict(section="roofline", op="gemm10", dtype="float64", ns=g, load=_load()))
    return costs, g, rows


# ----------------------------------------------------------------------------- 2. per-entry cost

ENTRY_CASES = [
    ("S^1", "circle", lambda: Circle(), "distance", "power"),
    ("S^1", "circle", lambda: Circle(), "distance", "local"),
    ("S^1", "circle", lambda: Circle(), "distance", "heat"),
    ("S^2", "sphere", lambda: Sphere(2), "distance", "power"),
    ("S^2", "sphere", lambda: Sphere(2), "distance", "local"),
    ("S^2", "sphere", lambda: Sphere(2), "distance", "heat"),
    ("S^2", "chordal", lambda: Sphere(2), "chordal_distance", "power"),
    ("S^2", "chordal", lambda: Sphere(2), "chordal_distance", "heat"),
    ("S^15", "sphere", lambda: Sphere(15), "distance", "power"),
    ("S^15", "chordal", lambda: Sphere(15), "chordal_distance", "power"),
]


def _kernel(profile: str, dim: float):
    if profile == "power":
        return functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE * 4, dim=dim)
    if profile == "local":
        return functools.partial(fna_kernel, alpha=3.0, scale=SCALE * 4, dim=dim)
    return functools.partial(heat_kernel, eps=0.01)


def _one_tile(op, X, td):
    """One off-diagonal tile of the operator's product, in its workspace, and its two GEMMs (``C X_j``, ``C^T X_i``)."""
    plan, t = op.plan, op.tile
    pa, _ = op._prepare()
    work = op._workspace()
    p, q = np.empty((t, X.shape[1])), np.empty((t, X.shape[1]))
    dtype = getattr(np, td)
    if plan.compiled:
        pt, buf, scratch = op._compiled_columns(), work.get("d", np.float64), work.get("scratch", np.float64, (3, t))

        def run():
            c = plan.compiled_tile(buf, pa, pt, (0, t), (t, 2 * t), dtype, scratch)
            np.matmul(c, X[t:2 * t], out=p)
            np.matmul(c.T, X[:t], out=q)
    else:
        acc = work.get("acc", np.float64)

        def run():
            c = plan.tile(pa[:t], pa[t:2 * t], dtype, work)
            if c.dtype != np.float64:
                np.copyto(acc, c, casting="same_kind")
                c = acc
            np.matmul(c, X[t:2 * t], out=p)
            np.matmul(c.T, X[:t], out=q)
    return run


def section_entry(n: int, repeats: int, costs: dict, gemm: float, engines):
    print(f"\n[2] one block product C @ X (X of 10 columns), n = {n}: ns per n^2 entry (min of {repeats}, "
          "interleaved) and the ratio to the roofline measured above")
    rows = []
    X = np.random.default_rng(1).standard_normal((n, 10))
    for label, geometry, make, method, profile in ENTRY_CASES:
        man = make()
        x = man.sample(n, rng=np.random.default_rng([SEED, n]))
        dims = int(x.shape[1])
        kern = _kernel(profile, float(getattr(man, "dim", 1)))
        ops = {e: KernelOperator(x, kernel=kern, distance=getattr(man, method), engine=e) for e in engines}
        fns = {(e, td): functools.partial(op.matmat, X, tile_dtype=td) for e, op in ops.items()
               for td in ("float64", "float32")}
        t = interleaved(fns, repeats, n * n, clock=time.process_time)  # whole products: CPU time
        # one off-diagonal tile and its two GEMMs alone (about 1 ms: as short as the roofline's loops, so that on a
        # loaded machine the minimum over many finds the same quiet moments), per n^2 entry: half a pair
        tiles = {(e, td): _one_tile(op, X, td) for e, op in ops.items() for td in ("float64", "float32")}
        tt = interleaved(tiles, repeats * 20, 2 * ops[engines[0]].tile ** 2)
        for td in ("float64", "float32"):
            pair = roofline_pair(costs, tile_ops(geometry, profile, dims, False) + profile_ops(profile, td, False))
            roof = pair / 2 + gemm  # half the pairs are evaluated, each used for two GEMM passes
            line = f"  {label:<5s} {geometry:<8s} {profile:<6s} {td}: roofline {roof:5.2f}"
            for e in engines:
                line += (f"   {e} tile {tt[(e, td)]:5.2f} ns ({tt[(e, td)] / roof:4.2f}x), product (CPU) "
                         f"{t[(e, td)]:6.2f} ns")
                rows.append(dict(section="entry", manifold=label, geometry=geometry, profile=profile, tile_dtype=td,
                                 engine=e, n=n, ns_per_entry=t[(e, td)], tile_ns_per_entry=tt[(e, td)],
                                 roofline_ns=roof, ratio=tt[(e, td)] / roof, load=_load()))
            print(line)
    return rows


def section_entry_ratios(rows, costs, gemm):
    """The entry rows' ratios against the roofline of both measurements (each operation's faster time)."""
    out = []
    for r in rows:
        dims = {"S^1": 2, "S^2": 3, "S^15": 16}[r["manifold"]]
        pair = roofline_pair(costs, tile_ops(r["geometry"], r["profile"], dims, False)
                             + profile_ops(r["profile"], r["tile_dtype"], False))
        roof = pair / 2 + gemm
        out.append(dict(r, roofline_ns=roof, ratio=r["tile_ns_per_entry"] / roof))
    by_case = {}
    for r in out:
        by_case.setdefault((r["manifold"], r["geometry"], r["profile"], r["tile_dtype"]), []).append(r)
    for (label, geometry, profile, td), rs in by_case.items():
        line = f"  {label:<5s} {geometry:<8s} {profile:<6s} {td}: roofline {rs[0]['roofline_ns']:5.2f}"
        for r in rs:
            line += (f"   {r['engine']} tile {r['tile_ns_per_entry']:5.2f} ns ({r['ratio']:4.2f}x), product "
                     f"{r['ns_per_entry']:6.2f} ns")
        print(line)
    return out


# ----------------------------------------------------------------------------- 3. spectrum (child processes)


def dense_child(n: int, ks) -> dict:
    """Baseline: the FNA kernel on S^2 with NumPy alone (geodesic distances, (1 + d/s)^-beta), its symmetric
    conjugate stored in float64, ARPACK ``eigsh`` (tol 0) for each k; the kernel's time counts in every k."""
    from scipy.sparse.linalg import eigsh

    rss0 = vmhwm_mb()
    x = sphere_points(n, np.random.default_rng([SEED, n]))
    t0, c0 = time.perf_counter(), time.process_time()
    c = np.empty((n, n))  # the one n x n array; row blocks of 256 rows for the distances (n = 20000: 3.2 GB)
    for r0 in range(0, n, 256):
        xb = x[r0:r0 + 256]
        minus = sum((xb[:, j, None] - x[None, :, j]) ** 2 for j in range(3))
        plus = sum((xb[:, j, None] + x[None, :, j]) ** 2 for j in range(3))
        d = 2.0 * np.arctan2(np.sqrt(minus), np.sqrt(plus))
        c[r0:r0 + 256] = (1.0 + d / SCALE) ** (-(2.0 + ALPHA))
    s = 1.0 / np.sqrt(c.sum(axis=1))
    c *= s[:, None]
    c *= s[None, :]
    build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {}
    for k in ks:
        t1, c1 = time.perf_counter(), time.process_time()
        w = eigsh(c, k=k, which="LA", v0=np.random.default_rng(SEED).standard_normal(n), tol=0,
                  return_eigenvectors=False)
        out[str(k)] = dict(seconds=build + time.perf_counter() - t1, eigenvalues=sorted(map(float, w), reverse=True),
                           cpu_s=build_cpu + time.process_time() - c1)
    return dict(kind="dense", n=n, build_s=build, runs=out, peak_rss_mib=vmhwm_mb(), start_rss_mib=rss0,
                load=_load())


def toolkit_child(n: int, ks) -> dict:
    """The toolkit: KernelOperator (fused tiles) + markov_spectrum(matrix-free) for each k (degrees included)."""
    import re

    rss0 = vmhwm_mb()
    x = sphere_points(n, np.random.default_rng([SEED, n]))
    kern = functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=2)
    t0 = time.perf_counter()  # the compiled tiles' one-off compilation (or loading from Numba's cache), apart
    warm = KernelOperator(x[:64], kernel=kern, distance=Sphere(2).distance)
    for td in ("float32", "float64"):
        warm.matmat(np.ones((64, 2)), tile_dtype=td)
    compile_s = time.perf_counter() - t0
    out = {}
    for k in ks:
        op = KernelOperator(x, kernel=kern, distance=Sphere(2).distance)
        t0, c0 = time.perf_counter(), time.process_time()
        spec = markov_spectrum(op, k, method="matrix-free", rng=SEED)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        found = re.search(r"(?:(\d+) float32 \+ )?(\d+) float64 block products, width (\d+)", spec.solver)
        out[str(k)] = dict(seconds=elapsed, cpu_s=cpu, eigenvalues=[float(v) for v in spec.eigenvalues],
                           solver=spec.solver,
                           float32_products=int(found.group(1) or 0) if found else None,
                           float64_products=int(found.group(2)) if found else None,
                           width=int(found.group(3)) if found else None, tiles=op.tiles)
    return dict(kind="toolkit", n=n, runs=out, peak_rss_mib=vmhwm_mb(), start_rss_mib=rss0, load=_load(),
                compile_s=compile_s)


def run_child(*args) -> dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *map(str, args)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return dict(error=proc.stderr.strip()[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fastest(runs):
    """The run with the smallest time per k (children of several rounds), or the first error."""
    bad = [r for r in runs if "error" in r]
    if bad:
        return bad[0]
    out = dict(runs[0])
    out["runs"] = {k: min((r["runs"][k] for r in runs), key=lambda v: v["cpu_s"]) for k in runs[0]["runs"]}
    out["load"] = max(r["load"] for r in runs)
    out["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    return out


def section_spectrum(sizes, ks, rounds: int = 1):
    print(f"\n[3] FNA top-k on random S^2 points (alpha {ALPHA}, scale {SCALE}): matrix-free against dense float64 "
          f"+ eigsh, each in its own child process, {rounds} round(s) in turn (the faster of each)")
    rows = []
    for n in sizes:
        kstr = ",".join(map(str, ks))
        dense_runs, tool_runs = [], []
        for _ in range(rounds):
            dense_runs.append(run_child("dense", n, kstr))
            tool_runs.append(run_child("toolkit", n, kstr))
        dense, tool = _fastest(dense_runs), _fastest(tool_runs)
        if "error" in dense or "error" in tool:
            print(f"  n={n}: failed: {dense.get('error', '')[-300:]} {tool.get('error', '')[-300:]}")
            rows.append(dict(section="spectrum", n=n, dense=dense, toolkit=tool))
            continue
        for k in ks:
            d, t = dense["runs"][str(k)], tool["runs"][str(k)]
            diff = float(np.max(np.abs(np.array(t["eigenvalues"]) - np.array(d["eigenvalues"]))))
            ratio = t["seconds"] / d["seconds"]
            cpu_ratio = t["cpu_s"] / d["cpu_s"]
            print(f"  n={n:<6d} k={k:<3d} toolkit {t['seconds']:7.1f} s, CPU {t['cpu_s']:7.1f} s ({t['float32_products']} "
                  f"float32 + {t['float64_products']} float64 products, width {t['width']})  dense {d['seconds']:7.1f} s,"
                  f" CPU {d['cpu_s']:7.1f} s (kernel {dense['build_s']:.1f} s)  ratio {ratio:4.2f} (CPU {cpu_ratio:4.2f})"
                  f"  max|eig diff| {diff:.1e} ({'within' if diff <= 1e-8 else 'NOT within'} 1e-8)")
            rows.append(dict(section="spectrum", n=n, k=k, toolkit_s=t["seconds"], dense_s=d["seconds"], ratio=ratio,
                             toolkit_cpu_s=t["cpu_s"], dense_cpu_s=d["cpu_s"], cpu_ratio=cpu_ratio,
                             eig_diff=diff, eig_within_1e8=bool(diff <= 1e-8), float32_products=t["float32_products"],
                             float64_products=t["float64_products"], width=t["width"], solver=t["solver"]))
        print(f"  n={n}: peak RSS toolkit {tool['peak_rss_mib']:.0f} MiB, dense {dense['peak_rss_mib']:.0f} MiB; "
              f"load {tool['load']:.1f} / {dense['load']:.1f}; compiling the tiles (apart, once per machine: Numba "
              f"caches them) {tool.get('compile_s', 0.0):.1f} s")
    return rows


# ----------------------------------------------------------------------------- 4. large n (child process)


def large_child(n: int, k: int) -> dict:
    """The FNA top-k on n random S^2 points by the matrix-free path: time, peak RSS, block products."""
    rss0 = vmhwm_mb()
    x = sphere_points(n, np.random.default_rng([SEED, n]))
    kern = functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=2)
    op = KernelOperator(x, kernel=kern, distance=Sphere(2).distance)
    warm = KernelOperator(x[:64], kernel=kern, distance=Sphere(2).distance)
    for td in ("float32", "float64"):  # compile (or load) the tiles before the clock starts
        warm.matmat(np.ones((64, 2)), tile_dtype=td)
    t0, c0 = time.perf_counter(), time.process_time()
    spec = markov_spectrum(op, k, method="matrix-free", rng=SEED)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(n=n, k=k, seconds=elapsed, cpu_s=cpu, peak_rss_mib=vmhwm_mb(), start_rss_mib=rss0, solver=spec.solver,
                tiles=op.tiles, residual=float(spec.residual), eigenvalues=[float(v) for v in spec.eigenvalues],
                load=_load())


def main(argv=None) -> int:
    sys.stdout.reconfigure(line_buffering=True)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sections", default="roofline,entry,spectrum")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--entry-n", type=int, default=3000)
    p.add_argument("--sizes", default="6000", help="n of section spectrum (comma-separated)")
    p.add_argument("--ks", default="9,10,16", help="k of section spectrum (comma-separated)")
    p.add_argument("--engines", default="numba,numpy", help="host engines of section entry")
    p.add_argument("--rounds", type=int, default=2, help="dense/toolkit child runs in turn per n (section spectrum)")
    p.add_argument("--large-n", type=int, default=100_000,
                   help="n of section large (default 10^5; FNA top 10 at n = 10^5 on S^2 measured 131 min wall (28 CPU min), 701 MiB peak on a shared 2-core AMD EPYC, load 6-15)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--json", default=None)
    p.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        kind, rest = args.child[0], args.child[1:]
        if kind == "large":
            print(json.dumps(large_child(int(rest[0]), int(rest[1]))))
        elif kind in ("dense", "toolkit"):
            fn = dense_child if kind == "dense" else toolkit_child
            print(json.dumps(fn(int(rest[0]), [int(v) for v in rest[1].split(",")])))
        return 0
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    numba = _optional("numba")
    print(f"{cpu_name()}, numpy {np.__version__}, NumPy SIMD {simd_level()}, numba "
          f"{getattr(numba, '__version__', 'absent')} (NUMBA_CPU_NAME={os.environ.get('NUMBA_CPU_NAME', 'host')}), "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, load {_load():.1f}")
    results = []
    costs = gemm = None
    if "roofline" in sections or "entry" in sections:
        costs, gemm, rows = section_roofline(args.repeats)
        results += rows
    if "entry" in sections:
        from spectral.tiles import host_engine

        engines = [e for e in args.engines.split(",") if e != "numba" or host_engine("auto") == "numba"]
        rows = section_entry(args.entry_n, args.repeats, costs, gemm, engines)
        # the roofline once more after the products (load moves on a shared machine): each op's faster time
        again = op_costs(args.repeats)
        for key, impls in again.items():
            for impl, ns in impls.items():
                costs[key][impl] = min(costs[key].get(impl, ns), ns)
        print("  (roofline re-measured after the products; the ratios below use each operation's faster time)")
        results += section_entry_ratios(rows, costs, min(gemm, gemm_cost(args.repeats)))
    if "spectrum" in sections:
        results += section_spectrum([int(v) for v in args.sizes.split(",")], [int(v) for v in args.ks.split(",")],
                                    args.rounds)
    if "large" in sections:
        r = large_child(args.large_n, args.k)
        print(json.dumps(r))
        results.append(r)
    write_json(args.json, results, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
