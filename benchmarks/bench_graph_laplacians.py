"""Benchmark: k-NN and eps-graph Laplacians on S^2 at Calder & Garcia Trillos' sizes, against plain SciPy.

Run from the repository root::

    python benchmarks/bench_graph_laplacians.py --quick           # n = 8192
    python benchmarks/bench_graph_laplacians.py                   # n = 8192, 32768
    python benchmarks/bench_graph_laplacians.py --huge 262144     # one sample at n = 2^18 (k = 4096; about an hour)

Section ``build``: in a fresh child process each, :func:`spectral.graph_laplacian` (the k-NN graph with
``k = n^(2/3)`` symmetrised by the maximum, stored as a 0/1 pattern, and its 9 lowest eigenpairs) against a
baseline written out here with SciPy (``cKDTree.query``, a CSR matrix of the directed relation, ``A + A^T``
with unit data, ``eigsh(which="SA")`` on ``D - W``): build and solve times, stored pairs, peak resident
memory (``VmHWM``), and the largest eigenvalue difference (the two must agree to the solver tolerance).
Target: the toolkit within 1.5x of the baseline's time, with less memory (4 instead of 12 bytes per stored
pair once the graph passes 256 MiB).

Section ``huge`` (``--huge N``): one uniform sample of S^2 at ``N`` points through the three constructions of
``verify.gl_eps_knn`` (k-NN, the eps-graph at the smallest k-NN radius, the GGHS eps-graph), one at a time
in one child: times, peak memory, and the errors the check measures (mean ``|lambda - l(l+1)|`` of the
degree-1 and degree-2 groups, RMS sine to the exact eigenspaces). Calder & Garcia Trillos' published
table stops at ``n = 2^17``.

Timings on a shared machine are noisy; the load average is printed first. Plain script, never run by
pytest. A GPU run of the same graphs is ``verify.gl_eps_knn --device gpu --path streamed`` (matrix-free).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import queue as queues
import sys
import time
from pathlib import Path

import numpy as np
from _common import sphere_points, vmhwm_mb, write_json  # noqa: E402 - benchmarks/ is on sys.path when run as a script

# the toolkit of this checkout, also in the spawned children (they inherit sys.path)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

P = 1.0 / (4.0 * math.pi)


def _build_child(path, n, seed, queue):
    from verify.core.threads import single_blas_thread

    x = sphere_points(n, np.random.default_rng(seed))
    k = int(n ** (2.0 / 3.0))
    out = {"path": path, "n": n, "k": k}
    with single_blas_thread():
        t0 = time.perf_counter()
        if path == "baseline":
            import scipy.sparse as sp
            from scipy.sparse.linalg import eigsh
            from scipy.spatial import cKDTree

            _, idx = cKDTree(x).query(x, k + 1)
            rows = np.repeat(np.arange(n), k)
            a = sp.csr_array((np.ones(n * k), (rows, idx[:, 1:].ravel())), shape=(n, n))  # self first (no ties)
            del idx, rows
            w = (a + a.T).tocsr()
            w.data[:] = 1.0
            del a
            eps_k = (k / (n * P * math.pi)) ** 0.5
            scale = 2.0 / ((math.pi / 4) * P * n * eps_k**4)
            lap = scale * (sp.diags_array(np.asarray(w.sum(axis=1)).ravel()) - w)
            out["pairs"] = int(w.nnz)
            out["build_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            lam = np.sort(eigsh(lap, k=9, which="SA", tol=1e-10, v0=np.random.default_rng(0).standard_normal(n))[0])
        else:
            from spectral import graph_laplacian

            lap = graph_laplacian(x, graph="knn", m=2, k=k, density=P)
            out["pairs"] = lap.edges
            out["build_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            lam = np.asarray(lap.eigenpairs(9)[0])
        out["solve_s"] = time.perf_counter() - t1
    out["eigenvalues"] = lam.tolist()
    out["peak_mb"] = vmhwm_mb()
    queue.put(out)


def _huge_child(n, seed, queue):
    from manifolds import Sphere
    from verify import gl_eps_knn as check
    from verify.core.threads import single_blas_thread

    x = Sphere(2).sample(n, rng=np.random.default_rng(seed))
    k = check.k_neighbours(n, 2)
    out = {"n": n, "k": k, "constructions": {}}
    with single_blas_thread():
        eps_min = None
        for name in ("knn", "eps", "gghs"):
            t0 = time.perf_counter()
            if name == "knn":
                lap = check._laplacian(x, graph="knn", k=k, m=2, density=P)
                eps_min = float(np.min(lap.radii))
            else:
                eps = eps_min if name == "eps" else check.gghs_eps(n, 2, 1.5)
                lap = check._laplacian(x, graph="eps", eps=eps, m=2, density=P)
            built = time.perf_counter() - t0
            lam, sines = check._spectrum(lap, x, 2)
            row = {"eps": lap.eps, "pairs": lap.edges, "build_s": built, "solve_s": time.perf_counter() - t0 - built,
                   "eigenvalues": np.asarray(lam).tolist()}
            for a, l in enumerate(check.DEGREES):
                group, target = check._group(2, l)
                row[f"eigenvalue_error_l{l}"] = float(np.mean(np.abs(np.asarray(lam)[group] - target)))
                row[f"eigenvector_error_l{l}"] = float(sines[a])
            out["constructions"][name] = row
            del lap
    out["peak_mb"] = vmhwm_mb()
    queue.put(out)


def _in_child(target, *args):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    while True:
        try:
            out = queue.get(timeout=5.0)
            break
        except queues.Empty:
            if not proc.is_alive():
                raise RuntimeError(f"the child {target.__name__}{args} exited with code {proc.exitcode}") from None
    proc.join()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 8192 only")
    parser.add_argument("--sizes", default=None, help="comma list of n for the build section")
    parser.add_argument("--huge", type=int, default=0, help="also one sample at this n through gl_eps_knn's graphs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    print(f"load average: {os.getloadavg()}", flush=True)
    sizes = [int(v) for v in args.sizes.split(",")] if args.sizes else ([8192] if args.quick else [8192, 32768])
    results = {"build": [], "huge": None}
    for n in sizes:
        base = _in_child(_build_child, "baseline", n, args.seed)
        tool = _in_child(_build_child, "toolkit", n, args.seed)
        diff = float(np.max(np.abs(np.asarray(base["eigenvalues"]) - np.asarray(tool["eigenvalues"]))))
        ratio = (tool["build_s"] + tool["solve_s"]) / (base["build_s"] + base["solve_s"])
        results["build"].append({"baseline": base, "toolkit": tool, "time_ratio": ratio, "eigenvalue_diff": diff})
        print(f"n = {n}, k = {tool['k']}: toolkit build {tool['build_s']:.2f} s + solve {tool['solve_s']:.2f} s, "
              f"peak {tool['peak_mb']:.0f} MiB; baseline {base['build_s']:.2f} s + {base['solve_s']:.2f} s, "
              f"peak {base['peak_mb']:.0f} MiB; pairs {tool['pairs']} / {base['pairs']}; ratio {ratio:.2f} "
              f"(target <= 1.5); max eigenvalue difference {diff:.1e}", flush=True)
    if args.huge:
        out = _in_child(_huge_child, args.huge, args.seed)
        results["huge"] = out
        print(f"n = {out['n']}, k = {out['k']}, peak {out['peak_mb']:.0f} MiB", flush=True)
        for name, row in out["constructions"].items():
            print(f"  {name:5s} eps {row['eps']:.4f} pairs {row['pairs']} build {row['build_s']:.0f} s solve "
                  f"{row['solve_s']:.0f} s | eigenvalue errors l=1 {row['eigenvalue_error_l1']:.4f} l=2 "
                  f"{row['eigenvalue_error_l2']:.4f} | eigenvector errors l=1 {row['eigenvector_error_l1']:.4f} "
                  f"l=2 {row['eigenvector_error_l2']:.4f}", flush=True)
    write_json(args.json, results, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
