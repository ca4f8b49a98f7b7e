"""Benchmark: attention spectra with the toolkit vs a plain NumPy/SciPy baseline.

Run from the repository root::

    python benchmarks/bench_spectral.py --quick     # n in {2000, 5000}, a few minutes
    python benchmarks/bench_spectral.py             # adds n = 10000, 20000 (about 15 min on 2 cores)
    python benchmarks/bench_spectral.py --sections matrix-free --huge 100000   # issue 14: n = 2e4 and 1e5

Sections (each prints toolkit time, baseline time and their ratio; medians over
``--repeats`` runs, toolkit and baseline interleaved so that load on a shared
machine hits both alike):

1. ``fna``: FNA power-law kernel (alpha = 1.2, geodesic distance on S^1, n random
   points, scale 0.05) plus its top-30 Markov spectrum, dense (``eigh``; skipped
   above n = 5000: O(n^3), ~1 min at 5000) and Lanczos (ARPACK on the stored
   symmetric conjugate, float32 from n = 10^4 in both codes).
2. ``circulant``: exact spectrum of the FNA kernel on an equispaced grid of
   n = 10^6 points (scale 2h) by one real FFT of the first row.  Target: < 1 s.
   Two more rows time the spectrum step alone (first row given) against the same
   FFT + sort baseline and against a bare ``numpy.fft.rfft`` (the floor).
3. ``matrix-free``: top-10 spectrum of the FNA operator at n = 20000 (5000 with
   --quick): the toolkit's block Krylov solver on ``KernelOperator`` (tiles recomputed
   in every block product: float32 iterations refined by float64 products; also with
   tol = 1e-6 and with float32 tiles only) against the dense float64 path (the kernel
   stored, ``eigsh`` on its conjugate), each in its own child process so that its peak
   resident memory (``VmHWM``; ``getrusage`` in a child inherits the parent's peak on
   Linux) is its own. ``--huge 100000`` adds the toolkit alone at n = 10^5.
   Targets: within 1.5x of the dense path's time, < 1 GiB, eigenvalues within
   1e-8 of the dense path.
4. ``dmap``: heat-kernel diffusion map (eps = 0.04, cutoff 6 sqrt(eps), 10
   eigenpairs) of N = 20000 points (5000 with --quick) of a 2-D Gaussian mixture,
   toolkit (``heat_kernel_sparse`` + ``markov_spectrum`` matrix-free) vs cKDTree +
   eigsh; datafold (``DiffusionMaps``, alpha = 0, same kernel and cutoff) only when
   ``--datafold-python`` points at an interpreter that has it (install it in a
   throwaway venv outside the repository, never as a project dependency).
5. ``solver-choice``: top-10 spectrum of stored sparse heat-kernel scores (swiss roll,
   random S^2 points, the Gaussian mixture; n = 2000, 8000, 20000, without --quick) by
   ``markov_spectrum(SparseScores, method="matrix-free")`` (ARPACK on the conjugate: cheap
   products) against the block solver that path used before; and the FNA ``KernelOperator``
   (n = 5000, 2000 with --quick), where the toolkit keeps the block solver, against ARPACK
   on the same operator (one recomputed kernel sweep per vector).
6. ``entry-cost``: one block product ``C @ X`` (X of 20 columns) of the FNA operator on n = 6000
   random circle points (``--entry-n``): fused tiles (``KernelOperator``'s default) against
   ``fused=False`` (``kernel(distance(xa, xb))`` per tile), float32 and float64 tiles, interleaved;
   nanoseconds per kernel entry (n^2 per product) and NumPy's SIMD level (``NPY_DISABLE_CPU_FEATURES="X86_V4
   AVX512_ICL"`` runs the AVX2 machine class on an AVX-512 one).

Targets: toolkit within 1.2x of the baseline (1.1x for the diffusion map).
Timings include building the kernel.  This is a plain script, never run by pytest.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from scipy.spatial import cKDTree

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from manifolds import Circle  # noqa: E402
from spectral import KernelOperator, circulant_spectrum, fna_kernel, heat_kernel_sparse, markov_spectrum  # noqa: E402
from spectral.eigen import FLOAT32_FROM_N  # noqa: E402
from _common import sphere_points, swiss_roll, write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script

ALPHA = 1.2
BETA = 1.0 + ALPHA  # dim + alpha on S^1
SCALE = 0.05
K_TOP = 30
K_FREE = 10
DENSE_MAX = 5000
DMAP_EPS = 0.04
DMAP_CUTOFF = 6.0
DMAP_K = 10
DMAP_TAU = 1.0
SEED = 20261121


# ----------------------------------------------------------------------------- helpers


def compare(fns: dict, repeats: int):
    """Run each callable ``repeats`` times, interleaved; return {name: (median s, [times], last result)}."""
    times = {name: [] for name in fns}
    results = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: (statistics.median(ts), ts, results[name]) for name, ts in times.items()}


def circle_angles(n: int, rng) -> np.ndarray:
    return np.sort(rng.uniform(0.0, 2.0 * np.pi, n))


def v0_for(n: int) -> np.ndarray:
    return np.random.default_rng(SEED).standard_normal(n)


def row(name, t_tool, t_base, extra=""):
    ratio = t_tool / t_base if t_base else float("nan")
    print(f"  {name:<38s} toolkit {t_tool:9.3f} s   baseline {t_base:9.3f} s   ratio {ratio:5.2f}  {extra}",
          flush=True)
    return ratio


# ----------------------------------------------------------------------------- 1. FNA kernel + spectrum


def toolkit_fna(theta, method):
    x = Circle.embed(theta)
    c = fna_kernel(Circle().distance(x), alpha=ALPHA, scale=SCALE, dim=1)
    spec = markov_spectrum(c, K_TOP, method=method, rng=SEED)
    return np.asarray(spec.eigenvalues)


def baseline_power_law(theta):
    """The FNA power-law kernel with NumPy alone: wrapped angle differences ``d`` of ``theta``, ``c = (1 + d /
    SCALE)^(-BETA)`` (dense float64; ``d`` freed before returning) and the symmetric scaling ``1 / sqrt(c 1)``."""
    d = np.abs(theta[:, None] - theta[None, :])
    d = np.minimum(d, 2.0 * np.pi - d)
    c = (1.0 + d / SCALE) ** (-BETA)
    del d
    return c, 1.0 / np.sqrt(c.sum(axis=1))


def baseline_fna(theta, method):
    """What one writes with NumPy/SciPy alone: wrapped angle differences, power law, conjugate, eigh/eigsh."""
    n = theta.size
    c, s = baseline_power_law(theta)
    S = s[:, None] * c * s[None, :]
    del c
    if method == "dense":
        w, _ = np.linalg.eigh(S)
        return w[::-1][:K_TOP]
    if n >= FLOAT32_FROM_N:  # same storage as the toolkit's Lanczos path
        S = S.astype(np.float32)
    w = eigsh(S, k=K_TOP, which="LA", v0=v0_for(n), tol=0, return_eigenvectors=False)
    return np.sort(w)[::-1]


def toolkit_kernel_only(theta):
    x = Circle.embed(theta)
    return fna_kernel(Circle().distance(x), alpha=ALPHA, scale=SCALE, dim=1)


def baseline_kernel_only(theta):
    d = np.abs(theta[:, None] - theta[None, :])
    d = np.minimum(d, 2.0 * np.pi - d)
    return (1.0 + d / SCALE) ** (-BETA)


def section_fna(sizes, repeats_small, repeats_large):
    print(f"\n[1] FNA kernel (alpha={ALPHA}, scale={SCALE}, geodesic S^1) + top-{K_TOP} spectrum")
    out = []
    for n in sizes:
        theta = circle_angles(n, np.random.default_rng(SEED + n))
        reps = repeats_small if n <= DENSE_MAX else repeats_large
        # the kernel step alone (toolkit: Circle.distance + fna_kernel; baseline: angle differences + pow)
        res = compare({"toolkit": functools.partial(toolkit_kernel_only, theta),
                       "baseline": functools.partial(baseline_kernel_only, theta)}, reps)
        diff = float(np.max(np.abs(res["toolkit"][2] - res["baseline"][2])))
        ratio = row(f"n={n} kernel only (median of {reps})", res["toolkit"][0], res["baseline"][0],
                    f"max|C diff| {diff:.1e}")
        out.append(dict(section="fna", n=n, method="kernel-only", repeats=reps, toolkit_s=res["toolkit"][1],
                        baseline_s=res["baseline"][1], ratio=ratio, entry_diff=diff))
        del res
        for method in ("dense", "lanczos"):
            if method == "dense" and n > DENSE_MAX:
                print(f"  n={n:<6d} dense: skipped (O(n^3) eigh above n={DENSE_MAX})")
                continue
            res = compare({"toolkit": functools.partial(toolkit_fna, theta, method),
                           "baseline": functools.partial(baseline_fna, theta, method)}, reps)
            diff = float(np.max(np.abs(res["toolkit"][2] - res["baseline"][2])))
            ratio = row(f"n={n} {method} (median of {reps})", res["toolkit"][0], res["baseline"][0],
                        f"max|eig diff| {diff:.1e}")
            out.append(dict(section="fna", n=n, method=method, repeats=reps, toolkit_s=res["toolkit"][1],
                            baseline_s=res["baseline"][1], ratio=ratio, eig_diff=diff))
    return out


# ----------------------------------------------------------------------------- 2. circulant


def section_circulant(repeats, n=10**6):
    h = 2.0 * np.pi / n
    scale = 2.0 * h
    print(f"\n[2] circulant path: n = {n} equispaced grid, scale 2h = {scale:.3g}, top-{K_TOP} of the exact spectrum")

    def toolkit():
        x = Circle().grid(n)
        first = fna_kernel(Circle().distance(x[:1], x), alpha=ALPHA, scale=scale, dim=1)[0]
        return np.asarray(circulant_spectrum(first, K_TOP).eigenvalues)

    def baseline():
        j = np.arange(n)
        d = h * np.minimum(j, n - j)
        c = (1.0 + d / scale) ** (-BETA)
        eta = np.fft.rfft(c).real / c.sum()
        return np.sort(np.concatenate([eta, eta[1 : (n + 1) // 2]]))[::-1][:K_TOP]

    res = compare({"toolkit": toolkit, "baseline": baseline}, repeats)
    diff = float(np.max(np.abs(res["toolkit"][2] - res["baseline"][2])))
    t = res["toolkit"][0]
    ratio = row(f"n={n} (median of {repeats})", t, res["baseline"][0],
                f"max|eig diff| {diff:.1e}; target < 1 s: {'met' if t < 1.0 else 'MISSED'}")
    # the same comparison for the spectrum step alone (first row given): FFT + ordering, both with the
    # multiplicities (m and n - m) so that the two return the same top-k; and against a bare rfft
    first = fna_kernel(Circle().distance(Circle().grid(n)[:1], Circle().grid(n)), alpha=ALPHA, scale=scale, dim=1)[0]

    def baseline_spectrum_only():
        eta = np.fft.rfft(first).real / first.sum()
        return np.sort(np.concatenate([eta, eta[1 : (n + 1) // 2]]))[::-1][:K_TOP]

    only = compare({"toolkit": lambda: np.asarray(circulant_spectrum(first, K_TOP).eigenvalues),
                    "baseline": baseline_spectrum_only, "rfft": lambda: np.fft.rfft(first)}, repeats)
    diff_only = float(np.max(np.abs(only["toolkit"][2] - only["baseline"][2])))
    ratio_only = row("  spectrum step only (row given)", only["toolkit"][0], only["baseline"][0],
                     f"max|eig diff| {diff_only:.1e}")
    ratio_rfft = row("  spectrum step vs a bare numpy.fft.rfft", only["toolkit"][0], only["rfft"][0])
    return [dict(section="circulant", n=n, toolkit_s=res["toolkit"][1], baseline_s=res["baseline"][1],
                 ratio=ratio, eig_diff=diff, spectrum_only_toolkit_s=only["toolkit"][1],
                 spectrum_only_baseline_s=only["baseline"][1], spectrum_only_ratio=ratio_only,
                 rfft_only_s=only["rfft"][1], spectrum_vs_rfft_ratio=ratio_rfft)]


# ----------------------------------------------------------------------------- 3. matrix-free (child processes)


def peak_rss_mib() -> float:
    """Peak resident memory of this process in MiB.

    ``VmHWM`` from ``/proc/self/status`` where available: Linux carries
    ``getrusage().ru_maxrss`` over from the parent across fork + exec, so in a child
    process it reports the parent's peak if that is larger (measured here: 1294 MiB
    "at start" in a fresh child).  Elsewhere ``resource.getrusage``.
    """
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def free_dense_eigsh(theta) -> np.ndarray:
    """Baseline: the dense float64 kernel, its symmetric conjugate and ARPACK ``eigsh`` (tol = 0)."""
    n = theta.size
    c, s = baseline_power_law(theta)
    c *= s[:, None]
    c *= s[None, :]
    w = eigsh(c, k=K_FREE, which="LA", v0=v0_for(n), tol=0, return_eigenvectors=False)
    return np.sort(w)[::-1], "scipy eigsh on the dense float64 conjugate"


def free_toolkit(theta, **options):
    """Toolkit: ``KernelOperator`` (float64 points, tiles recomputed in every block product) + ``markov_spectrum``."""
    x = Circle.embed(theta)
    kern = functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=1)
    op = KernelOperator(x, kernel=kern, distance=Circle().distance)
    spec = markov_spectrum(op, K_FREE, method="matrix-free", rng=SEED, **options)
    return np.asarray(spec.eigenvalues), f"{spec.solver}, residual {spec.residual:.1e}"


FREE_RUNS = {
    "dense": (free_dense_eigsh, {}),
    "toolkit": (free_toolkit, {}),
    "toolkit-tol1e-6": (free_toolkit, {"tol": 1e-6}),
    "toolkit-float32": (free_toolkit, {"dtype": "float32"}),
}


def child_free(kind: str, n: int) -> dict:
    rss0 = peak_rss_mib()
    theta = circle_angles(n, np.random.default_rng(SEED + n))
    fn, options = FREE_RUNS[kind]
    t0 = time.perf_counter()
    ev, solver = fn(theta, **options)
    elapsed = time.perf_counter() - t0
    return dict(kind=kind, n=n, seconds=elapsed, peak_rss_mib=peak_rss_mib(), start_rss_mib=rss0,
                eigenvalues=[float(v) for v in ev], solver=solver, load=os.getloadavg()[0])


def run_child(kind: str, n: int) -> dict:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", kind, str(n)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return dict(kind=kind, n=n, error=proc.stderr.strip()[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def section_matrix_free(sizes, huge=None):
    """Top-10 of the FNA operator: the block matrix-free solver against the dense float64 path, each in a
    child process (time and peak RSS), one run each, in turn; then the toolkit alone at ``huge``."""
    print(f"\n[3] matrix-free top-{K_FREE}: block solver on KernelOperator vs dense float64 + eigsh "
          "(child processes, one run each)")
    out = []
    for n in sizes:
        runs = {kind: run_child(kind, n) for kind in ("dense", "toolkit", "toolkit-tol1e-6", "toolkit-float32")}
        base = runs["dense"]
        for kind, r in runs.items():
            r["section"] = "matrix-free"
            if "error" in r:
                print(f"  n={n} {kind}: failed: {r['error'][-300:]}")
                continue
            line = (f"  n={n:<6d} {kind:<16s} {r['seconds']:8.1f} s  peak RSS {r['peak_rss_mib']:7.0f} MiB  "
                    f"load {r.get('load', float('nan')):4.1f}")
            if kind != "dense" and "error" not in base:
                r["ratio"] = r["seconds"] / base["seconds"]
                r["eig_diff"] = float(np.max(np.abs(np.array(r["eigenvalues"]) - np.array(base["eigenvalues"]))))
                line += f"  ratio {r['ratio']:5.2f}  max|eig diff| vs dense {r['eig_diff']:.1e}"
            print(line + f"  [{r['solver']}]")
            out.append(r)
        tool = runs["toolkit"]
        if "error" not in tool and "error" not in base:
            print(f"  targets at n={n}: time within 1.5x of dense: {'met' if tool['ratio'] <= 1.5 else 'MISSED'}; "
                  f"memory < 1 GiB: {'met' if tool['peak_rss_mib'] < 1024 else 'MISSED'}; eigenvalues within 1e-8: "
                  f"{'met' if tool['eig_diff'] <= 1e-8 else 'MISSED'}")
    if huge:
        r = run_child("toolkit", huge)
        r["section"] = "matrix-free"
        if "error" in r:
            print(f"  n={huge} toolkit: failed: {r['error'][-300:]}")
        else:
            print(f"  n={huge:<6d} toolkit          {r['seconds']:8.1f} s  peak RSS {r['peak_rss_mib']:7.0f} MiB  "
                  f"(no baseline: the dense float64 kernel alone is {huge * huge * 8 / 2**30:.0f} GiB)  "
                  f"[{r['solver']}]")
            print(f"  top eigenvalues {np.round(r['eigenvalues'][:4], 8).tolist()} ...")
        out.append(r)
    return out


def simd_level() -> str:
    """NumPy's SIMD dispatch targets found on this CPU (what its exp/log/atan2 loops can use)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # pragma: no cover - other NumPy layouts
        return "unknown"
    return " ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f)) or "baseline only"


def section_entry_cost(n: int, repeats: int):
    """Nanoseconds per kernel entry of one block product, fused tiles against kernel(distance(.)) per tile."""
    print(f"\n[6] cost per kernel entry: one product of width 20, FNA on n = {n} random circle points; "
          f"NumPy SIMD: {simd_level()}")
    theta = circle_angles(n, np.random.default_rng(SEED + n))
    x = Circle.embed(theta)
    kern = functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=1)
    ops = {"fused": KernelOperator(x, kernel=kern, distance=Circle().distance),
           "generic": KernelOperator(x, kernel=kern, distance=Circle().distance, fused=False)}
    X = np.random.default_rng(1).standard_normal((n, 20))
    fns = {f"{name} {td}": functools.partial(op.matmat, X, tile_dtype=td)
           for td in ("float32", "float64") for name, op in ops.items()}
    res = compare(fns, repeats)
    out = []
    for td in ("float32", "float64"):
        t_f, t_g = res[f"fused {td}"][0], res[f"generic {td}"][0]
        diff = float(np.max(np.abs(res[f"fused {td}"][2] - res[f"generic {td}"][2])) / np.max(np.abs(res[f"generic {td}"][2])))
        row(f"{td} tiles, fused vs per-tile kernel(distance)", t_f, t_g,
            f"{t_f / n**2 * 1e9:.2f} vs {t_g / n**2 * 1e9:.2f} ns per entry; relative difference {diff:.1e}")
        out.append(dict(section="entry-cost", n=n, tile_dtype=td, fused_s=res[f"fused {td}"][1],
                        generic_s=res[f"generic {td}"][1], fused_ns_per_entry=t_f / n**2 * 1e9,
                        generic_ns_per_entry=t_g / n**2 * 1e9, simd=simd_level(), load=os.getloadavg()[0]))
    return out


# ----------------------------------------------------------------------------- 4. diffusion map


def mixture(n: int, rng) -> np.ndarray:
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 5.2]])  # 6 sigma apart
    return centres[rng.integers(0, 3, n)] + rng.standard_normal((n, 2))


def toolkit_dmap(x):
    sc = heat_kernel_sparse(x, eps=DMAP_EPS, cutoff=DMAP_CUTOFF)
    spec = markov_spectrum(sc, DMAP_K, method="matrix-free", vectors=True, rng=SEED)
    lam = np.asarray(spec.eigenvalues)
    coords = np.asarray(spec.psi)[:, 1:] * lam[1:] ** DMAP_TAU
    return lam, coords


def baseline_dmap(x):
    tree = cKDTree(x)
    dist = tree.sparse_distance_matrix(tree, DMAP_CUTOFF * math.sqrt(DMAP_EPS), output_type="coo_matrix")
    w = sp.csr_array((np.exp(-dist.data**2 / (2 * DMAP_EPS)), (dist.row, dist.col)), shape=(len(x), len(x)))
    s = 1.0 / np.sqrt(np.asarray(w.sum(axis=1)).ravel())
    S = sp.diags_array(s) @ w @ sp.diags_array(s)
    lam, v = eigsh(S, k=DMAP_K, which="LA", v0=v0_for(len(x)), tol=0)
    order = np.argsort(lam)[::-1]
    lam, v = lam[order], v[:, order]
    coords = (v * s[:, None])[:, 1:] * lam[1:] ** DMAP_TAU
    return lam, coords


_DATAFOLD_CHILD = r"""
import json, sys, time, statistics
import numpy as np
import datafold.pcfold as pf
from datafold.dynfold import DiffusionMaps
x = np.load(sys.argv[1]); eps, cut, k, reps = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    kernel = pf.GaussianKernel(epsilon=eps, distance=dict(cut_off=cut))
    dm = DiffusionMaps(kernel=kernel, n_eigenpairs=k, alpha=0).fit(pf.PCManifold(x, kernel=kernel))
    times.append(time.perf_counter() - t0)
print(json.dumps(dict(times=times, eigenvalues=sorted(np.real(dm.eigenvalues_).tolist(), reverse=True))))
"""


def run_datafold(python: str, x, repeats: int):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "points.npy")
        np.save(path, x)
        script = os.path.join(tmp, "dfrun.py")
        with open(script, "w") as fh:
            fh.write(_DATAFOLD_CHILD)
        proc = subprocess.run([python, script, path, str(DMAP_EPS), str(DMAP_CUTOFF * math.sqrt(DMAP_EPS)),
                               str(DMAP_K), str(repeats)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def section_dmap(n: int, repeats: int, datafold_python):
    print(f"\n[4] heat-kernel diffusion map: N = {n} 2-D Gaussian-mixture points, eps = {DMAP_EPS}, "
          f"cutoff {DMAP_CUTOFF} sqrt(eps), {DMAP_K} eigenpairs")
    x = mixture(n, np.random.default_rng(SEED))
    res = compare({"toolkit": functools.partial(toolkit_dmap, x), "baseline": functools.partial(baseline_dmap, x)},
                  repeats)
    lt, lb = res["toolkit"][2][0], res["baseline"][2][0]
    diff = float(np.max(np.abs(lt - lb)))
    ratio = row(f"N={n} (median of {repeats})", res["toolkit"][0], res["baseline"][0],
                f"max|eig diff| {diff:.1e}; target 1.1x: {'met' if res['toolkit'][0] <= 1.1 * res['baseline'][0] else 'MISSED'}")
    out = dict(section="dmap", n=n, toolkit_s=res["toolkit"][1], baseline_s=res["baseline"][1], ratio=ratio,
               eig_diff=diff)
    if datafold_python:
        df, err = run_datafold(datafold_python, x, repeats)
        if df is None:
            print(f"  datafold: failed ({err})")
            out["datafold_error"] = err
        else:
            t_df = statistics.median(df["times"])
            ddiff = float(np.max(np.abs(np.array(df["eigenvalues"]) - lb)))
            print(f"  datafold DiffusionMaps(alpha=0)       {t_df:9.3f} s   toolkit/datafold {res['toolkit'][0] / t_df:5.2f}"
                  f"   max|eig diff| vs baseline {ddiff:.1e}")
            out.update(datafold_s=df["times"], datafold_eig_diff=ddiff)
    else:
        print("  datafold: not run (pass --datafold-python PATH of a venv where `pip install datafold` worked)")
    return [out]


# ----------------------------------------------------------------------------- 5. solver by operator kind


def sparse_points(name: str, n: int, rng) -> np.ndarray:
    """Swiss roll in R^3, uniform random points of S^2, or the 2-D Gaussian mixture of section 4."""
    if name == "swiss-roll":
        return swiss_roll(n, rng)
    if name == "sphere":
        return sphere_points(n, rng)
    return mixture(n, rng)


def sparse_eps(name: str, n: int) -> float:
    """Heat-kernel eps at n: swiss roll and S^2 keep ~120 and ~360 neighbours per point (eps ~ 1/n);
    the mixture's sparse tails disconnect at that rate, so it shrinks more slowly (0.04 is section 4's)."""
    if name == "mixture":
        return {2000: 0.1, 8000: 0.05}.get(n, 0.04)
    return {"swiss-roll": 1.0, "sphere": 0.02}[name] * 2000 / n


def block_on_sparse(sc):
    """The former matrix-free path for stored sparse scores: block Krylov-Schur on ``S X`` with its defaults."""
    from spectral import block_eigsh
    from spectral.block import basis_size, block_size
    from spectral.eigen import BLOCK_MAX_PRODUCTS

    m, n = sc.matrix, sc.shape[0]
    s = 1.0 / np.sqrt(sc.row_sums())
    b = block_size(K_FREE, n)
    res = block_eigsh(lambda X: s[:, None] * (m @ (s[:, None] * X)), n, K_FREE, like=s, tol=0.0, block=b,
                      max_basis=basis_size(K_FREE, b, n), rng=SEED, max_products=BLOCK_MAX_PRODUCTS)
    return np.asarray(res.eigenvalues), res.products


def arpack_on_operator(op):
    """ARPACK on a kernel operator (one recomputed kernel sweep per vector): what the block solver replaces."""
    from scipy.sparse.linalg import LinearOperator

    n = op.shape[0]
    s = 1.0 / np.sqrt(np.asarray(op.row_sums()))
    sweeps = [0]

    def mv(v):
        sweeps[0] += 1
        return s * np.asarray(op.matvec(s * np.ravel(v)))

    w = eigsh(LinearOperator((n, n), matvec=mv, dtype=np.float64), k=K_FREE, which="LA", v0=v0_for(n), tol=0,
              return_eigenvectors=False)
    return np.sort(w)[::-1], sweeps[0]


def section_solver_choice(sizes, repeats, operator_n):
    """Top-10 on stored sparse scores (heat kernel within 6 sqrt(eps)): the toolkit's matrix-free path
    (ARPACK on the conjugate) against the block solver it used before, interleaved; then the
    kernel operator, where the toolkit keeps the block solver, against ARPACK on the same operator."""
    print(f"\n[5] solver by operator kind: top-{K_FREE}, kernel built outside the timings (median of {repeats})")
    out = []
    for name in ("swiss-roll", "sphere", "mixture"):
        for n in sizes:
            eps = sparse_eps(name, n)
            sc = heat_kernel_sparse(sparse_points(name, n, np.random.default_rng([SEED, n])), eps=eps,
                                    cutoff=DMAP_CUTOFF)
            res = compare({"toolkit": lambda: markov_spectrum(sc, K_FREE, method="matrix-free", rng=SEED),
                           "block": functools.partial(block_on_sparse, sc)}, repeats)
            spec, (lam_b, products) = res["toolkit"][2], res["block"][2]
            diff = float(np.max(np.abs(np.asarray(spec.eigenvalues) - lam_b)))
            ratio = row(f"{name} n={n} ({sc.nnz // n}/row)", res["toolkit"][0], res["block"][0],
                        f"(baseline: block solver, {products} block products) max|eig diff| {diff:.1e}")
            out.append(dict(section="solver-choice", data=name, n=n, eps=eps, nnz=sc.nnz, toolkit_s=res["toolkit"][1],
                            block_s=res["block"][1], ratio=ratio, block_products=products, eig_diff=diff,
                            solver=spec.solver))
    if operator_n:
        n = operator_n
        x = Circle.embed(circle_angles(n, np.random.default_rng(SEED + n)))
        op = KernelOperator(x, kernel=functools.partial(fna_kernel, alpha=ALPHA, scale=SCALE, dim=1),
                            distance=Circle().distance)
        res = compare({"toolkit": lambda: markov_spectrum(op, K_FREE, method="matrix-free", rng=SEED),
                       "arpack": functools.partial(arpack_on_operator, op)}, 1)
        spec, (lam_a, sweeps) = res["toolkit"][2], res["arpack"][2]
        diff = float(np.max(np.abs(np.asarray(spec.eigenvalues) - lam_a)))
        ratio = row(f"KernelOperator FNA n={n} (one run)", res["toolkit"][0], res["arpack"][0],
                    f"(baseline: ARPACK, {sweeps} kernel sweeps) max|eig diff| {diff:.1e}")
        out.append(dict(section="solver-choice", data="fna-operator", n=n, toolkit_s=res["toolkit"][1],
                        arpack_s=res["arpack"][1], ratio=ratio, arpack_sweeps=sweeps, eig_diff=diff,
                        solver=spec.solver))
    return out


# ----------------------------------------------------------------------------- main


def main(argv=None) -> int:
    sys.stdout.reconfigure(line_buffering=True)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="n in {2000, 5000}; matrix-free and dmap at 5000")
    p.add_argument("--repeats", type=int, default=3, help="runs per timing (median); default 3")
    p.add_argument("--large-repeats", type=int, default=1,
                   help="runs per timing for n >= 10000 in section 1 (each ~1 min); default 1")
    p.add_argument("--sections", default="fna,circulant,matrix-free,dmap,solver-choice,entry-cost",
                   help="comma-separated subset of fna,circulant,matrix-free,dmap,solver-choice,entry-cost")
    p.add_argument("--entry-n", type=int, default=6000, help="n of section 6 (entry-cost); default 6000")
    p.add_argument("--sizes", default=None, help="comma-separated n for section 1 (overrides --quick)")
    p.add_argument("--big", type=int, default=None, help="n for section 4 and the first of section 3 (overrides --quick)")
    p.add_argument("--huge", type=int, default=None,
                   help="also run the toolkit's matrix-free path alone at this n in section 3 (e.g. 100000)")
    p.add_argument("--datafold-python", default=None, help="python of a throwaway venv with datafold installed")
    p.add_argument("--json", default=None, help="write all timings to this JSON file")
    p.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child_free(args.child[0], int(args.child[1]))))
        return 0
    if args.repeats < 1 or args.large_repeats < 1:
        print("--repeats and --large-repeats must be >= 1", file=sys.stderr)
        return 2
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    valid = ("fna", "circulant", "matrix-free", "dmap", "solver-choice", "entry-cost")
    bad = [s for s in sections if s not in valid]
    if bad:
        print(f"--sections: unknown {bad}; valid: {', '.join(valid)}", file=sys.stderr)
        return 2
    import scipy

    print(f"numpy {np.__version__}, scipy {scipy.__version__}, {os.cpu_count()} CPUs, NumPy SIMD {simd_level()}, "
          f"load average {os.getloadavg()[0]:.1f} (timings on a shared machine are noisy; ratios are interleaved)")
    sizes = [2000, 5000] if args.quick else [2000, 5000, 10000, 20000]
    if args.sizes:
        sizes = [int(v) for v in args.sizes.split(",")]
    big = 5000 if args.quick else 20000
    if args.big is not None:
        big = args.big
    results = []
    warnings.simplefilter("default")
    t_all = time.perf_counter()
    if "fna" in sections:
        results += section_fna(sizes, args.repeats, args.large_repeats)
    if "circulant" in sections:
        results += section_circulant(args.repeats)
    if "matrix-free" in sections:
        results += section_matrix_free([big], huge=args.huge)
    if "dmap" in sections:
        results += section_dmap(big, args.repeats, args.datafold_python)
    if "solver-choice" in sections:
        results += section_solver_choice([2000, 8000] if args.quick else [2000, 8000, 20000], args.repeats,
                                         2000 if args.quick else 5000)
    if "entry-cost" in sections:
        results += section_entry_cost(args.entry_n, args.repeats)
    print(f"\ntotal wall time {time.perf_counter() - t_all:.0f} s")
    write_json(args.json, results, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
